/*
 * The relay handle: options, life cycle, and the glue between the NATS link
 * and the workers (acks, broker readiness, in-flight capacity, drain).
 */
#include "relay_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "message.h"
#include "tls_options.h"

void outbox_relay_options_init(outbox_relay_options *o) {
    memset(o, 0, sizeof(*o));
    o->table = "outbox";
    o->stream = "OUTBOX";
    o->subject_prefix = "outbox";
    o->ce_source = "outbox-uvrelay";
    o->cloudevents = 1;
    o->connections = 2;
    o->batch_size = 500;
    o->poll_interval_ms = 100;
    o->max_in_flight = 8192;
    o->ack_timeout_ms = 5000;
    o->max_attempts = 5;
    o->backoff = OUTBOX_BACKOFF_EXPONENTIAL;
    o->backoff_base_ms = 1000;
    o->backoff_max_ms = 60000;
    o->backoff_jitter = 0.2;
    o->duplicate_window_ms = 120000;
    o->shutdown_timeout_ms = 5000;
    o->processing = OUTBOX_KEEP_PROCESSED;
    o->partition_period = OUTBOX_PARTITION_DAY;
    o->partition_lookahead = 7;
    o->cleanup_retention_ms = 7ULL * 24 * 3600 * 1000;
    o->cleanup_limit = 10000;
    o->log_level = OUTBOX_LOG_INFO;
}

outbox_verdict outbox_classify_default(const outbox_failure *f, void *data) {
    (void)data;
    switch (f->kind) {
    case OUTBOX_FAIL_MAX_PAYLOAD:
    case OUTBOX_FAIL_BAD_SUBJECT:
    case OUTBOX_FAIL_BAD_HEADERS:
        return OUTBOX_DEAD;
    case OUTBOX_FAIL_STREAM_ERROR:
        /* 400: the stream refuses this message as it is (too large, a failed
         * expectation header); sending it again cannot help. */
        return f->code == 400 ? OUTBOX_DEAD : OUTBOX_RETRY;
    case OUTBOX_FAIL_ACK_TIMEOUT:
    case OUTBOX_FAIL_NO_RESPONDERS:
    case OUTBOX_FAIL_DISCONNECTED:
    case OUTBOX_FAIL_PUBLISH_ERROR:
        return OUTBOX_RETRY;
    }
    return OUTBOX_RETRY;
}

/* --- creation ------------------------------------------------------------ */

static int check_stream_name(const char *s) {
    if (s == NULL || *s == '\0' || strlen(s) > 200)
        return -1;
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c <= ' ' || c >= 0x7f || c == '.' || c == '*' || c == '>' || c == '/' || c == '\\')
            return -1;
    }
    return 0;
}

/* A prefix is one or more dot-separated tokens: none empty, none a wildcard,
 * no whitespace or control characters. */
static int check_prefix(const char *s) {
    if (s == NULL || *s == '\0' || strlen(s) > 100)
        return -1;
    const char *tok = s;
    for (const char *p = s;; p++) {
        unsigned char c = (unsigned char)*p;
        if (c == '.' || c == '\0') {
            size_t n = (size_t)(p - tok);
            if (n == 0 || (n == 1 && (*tok == '*' || *tok == '>')))
                return -1;
            if (c == '\0')
                return 0;
            tok = p + 1;
        } else if (c <= ' ' || c == 0x7f) {
            return -1;
        }
    }
}

static char *sdup(const char *s) {
    return s ? strdup(s) : NULL;
}

static void free_options(outbox_relay_options *o) {
    free((char *)o->db_url);
    free((char *)o->db_password);
    free((char *)o->nats_url);
    free((char *)o->table);
    free((char *)o->stream);
    free((char *)o->subject_prefix);
    free((char *)o->ce_source);
    ob_tls_options_free(o);
}

static void on_link_ack(void *data, const ob_ack *ack);
static void on_link_ready(void *data, int ready);
static void on_link_fatal(void *data, const char *why);

static void relay_free(outbox_relay *r) {
    if (r == NULL)
        return;
    for (int i = 0; i < r->nworkers; i++)
        ob_worker_free(r->workers[i]);
    free(r->workers);
    if (r->maint)
        ob_maint_free(r->maint);
    ob_db_url_free(&r->db);
    free(r->qtable);
    free(r->ce_source);
    free(r->sql_fetch);
    free(r->sql_probe);
    free_options(&r->o);
    free(r);
}

int outbox_relay_create(outbox_relay **out, uv_loop_t *loop, const outbox_relay_options *o,
                        char *errbuf, size_t errlen) {
    char err[512];
    *out = NULL;
    if (loop == NULL || o == NULL)
        return ob_errf(errbuf, errlen, OUTBOX_EINVAL, "loop and options are required");
    if (o->connections < 1 || o->connections > 256)
        return ob_errf(errbuf, errlen, OUTBOX_EINVAL, "connections must be 1-256 (got %d)",
                       o->connections);
    if (o->batch_size < 1 || o->batch_size > 10000)
        return ob_errf(errbuf, errlen, OUTBOX_EINVAL, "batch size must be 1-10000 (got %d)",
                       o->batch_size);
    if (o->poll_interval_ms < 1 || o->poll_interval_ms > 3600000)
        return ob_errf(errbuf, errlen, OUTBOX_EINVAL,
                       "poll interval must be 1 ms to 1 hour (got %u ms)", o->poll_interval_ms);
    if (o->max_in_flight < 1)
        return ob_errf(errbuf, errlen, OUTBOX_EINVAL, "max in flight must be at least 1");
    if (o->ack_timeout_ms < 10)
        return ob_errf(errbuf, errlen, OUTBOX_EINVAL, "ack timeout must be at least 10 ms (got %u)",
                       o->ack_timeout_ms);
    if (o->max_attempts < 1 || o->max_attempts > 1000000)
        return ob_errf(errbuf, errlen, OUTBOX_EINVAL, "max attempts must be 1-1000000 (got %d)",
                       o->max_attempts);
    if (o->backoff_jitter < 0 || o->backoff_jitter > 1)
        return ob_errf(errbuf, errlen, OUTBOX_EINVAL, "backoff jitter must be between 0 and 1");
    if (o->backoff_base_ms < 1 || o->backoff_max_ms < o->backoff_base_ms)
        return ob_errf(errbuf, errlen, OUTBOX_EINVAL,
                       "backoff needs 1 <= base (%u ms) <= max (%u ms)", o->backoff_base_ms,
                       o->backoff_max_ms);
    if (o->duplicate_window_ms < 1000)
        return ob_errf(errbuf, errlen, OUTBOX_EINVAL, "duplicate window must be at least 1000 ms");
    if (ob_sql_check_table(o->table, err, sizeof(err)) != 0)
        return ob_errf(errbuf, errlen, OUTBOX_EINVAL, "%s", err);
    if (check_stream_name(o->stream) != 0)
        return ob_errf(errbuf, errlen, OUTBOX_EINVAL,
                       "stream name '%s' is not allowed: no spaces, '.', '*', '>', '/' or '\\'",
                       o->stream ? o->stream : "");
    if (check_prefix(o->subject_prefix) != 0)
        return ob_errf(errbuf, errlen, OUTBOX_EINVAL,
                       "subject prefix '%s' is not allowed: dot-separated tokens without "
                       "wildcards or whitespace",
                       o->subject_prefix ? o->subject_prefix : "");
    if (o->ce_source == NULL || *o->ce_source == '\0')
        return ob_errf(errbuf, errlen, OUTBOX_EINVAL, "ce-source must not be empty");
    ob_nats_url nu;
    if (ob_nats_url_parse(o->nats_url, &nu, err, sizeof(err)) != 0)
        return ob_errf(errbuf, errlen, OUTBOX_EINVAL, "%s", err);
    ob_nats_url_free(&nu);

    outbox_relay *r = calloc(1, sizeof(*r));
    if (r == NULL)
        return OUTBOX_ENOMEM;
    if (ob_db_url_parse(o->db_url, &r->db, err, sizeof(err)) != 0) {
        free(r);
        return ob_errf(errbuf, errlen, OUTBOX_EINVAL, "%s", err);
    }
    r->loop = loop;
    r->state = R_CREATED;
    r->o = *o;
    r->o.db_url = sdup(o->db_url);
    r->o.db_password = sdup(o->db_password);
    r->o.nats_url = sdup(o->nats_url);
    r->o.table = sdup(o->table);
    r->o.stream = sdup(o->stream);
    r->o.subject_prefix = sdup(o->subject_prefix);
    r->o.ce_source = sdup(o->ce_source);
    int tls_ok = ob_tls_options_dup(&r->o) == 0;
    r->log.fn = o->log;
    r->log.data = o->log_data;
    r->log.level = o->log_level;
    r->stats.pending = -1;
    r->stats.oldest_pending_ms = -1;
    if (o->db_password) {
        free(r->db.password);
        r->db.password = strdup(o->db_password);
    }

    ob_buf b = OB_BUF_INIT;
    ob_sql_quote_table(&b, r->o.table);
    r->qtable = b.p;
    ob_buf f = OB_BUF_INIT;
    ob_sql_fetch(&f, r->qtable, r->o.batch_size);
    r->sql_fetch = f.p;
    r->sql_fetch_len = f.len;
    ob_buf pr = OB_BUF_INIT;
    ob_sql_probe(&pr, r->qtable);
    r->sql_probe = pr.p;
    r->sql_probe_len = pr.len;
    ob_buf c = OB_BUF_INIT;
    ob_ce_encode(&c, r->o.ce_source, strlen(r->o.ce_source));
    r->ce_source = c.p;
    r->backoff.kind = o->backoff;
    r->backoff.base_ms = o->backoff_base_ms;
    r->backoff.max_ms = o->backoff_max_ms;
    r->backoff.jitter = o->backoff_jitter;

    r->dbcfg.host = r->db.host;
    r->dbcfg.port = r->db.port;
    r->dbcfg.user = r->db.user;
    r->dbcfg.password = r->db.password;
    r->dbcfg.database = r->db.database;
    r->dbcfg.socket = r->db.socket;
    r->dbcfg.connect_timeout_s = 10;
    r->dbcfg.read_timeout_s = 120;
    r->dbcfg.op_timeout_ms = 60000;
    r->dbcfg.init_command = "SET SESSION tx_isolation = 'READ-COMMITTED', time_zone = '+00:00'";
    ob_db_config_tls_from_options(&r->dbcfg, &r->o);

    r->nworkers = o->connections;
    r->workers = calloc((size_t)r->nworkers, sizeof(*r->workers));
    int ok = r->o.db_url && r->o.nats_url && r->o.table && r->o.stream && r->o.subject_prefix &&
             r->o.ce_source && r->qtable && r->sql_fetch && r->sql_probe && r->ce_source &&
             r->workers && (!o->db_password || r->o.db_password) && tls_ok;
    for (int i = 0; ok && i < r->nworkers; i++) {
        r->workers[i] = ob_worker_new(r, i);
        ok = r->workers[i] != NULL;
    }
    if (ok) {
        ob_link_config lc;
        memset(&lc, 0, sizeof(lc));
        lc.url = r->o.nats_url;
        lc.stream = r->o.stream;
        lc.subject_prefix = r->o.subject_prefix;
        lc.duplicate_window_ms = o->duplicate_window_ms;
        lc.retry_horizon_ms = (uint64_t)o->ack_timeout_ms + o->backoff_max_ms;
        lc.strict_duplicate_window = o->strict_duplicate_window;
        lc.max_in_flight = o->max_in_flight;
        lc.log = &r->log;
        lc.options = &r->o;
        ob_link_callbacks cbs = {on_link_ack, on_link_ready, on_link_fatal, r};
        r->link = ob_link_new(loop, &lc, &cbs, err, sizeof(err));
        if (r->link == NULL) {
            relay_free(r);
            return ob_errf(errbuf, errlen, OUTBOX_EINVAL, "%s", err);
        }
    }
    if (ok && (o->pending_sample_ms || o->partition_check_ms || o->cleanup_check_ms)) {
        r->maint = ob_maint_new(r, err, sizeof(err));
        if (r->maint == NULL) {
            ob_link_close(r->link, NULL, NULL);
            relay_free(r);
            return ob_errf(errbuf, errlen, OUTBOX_EINVAL, "%s", err);
        }
    }
    if (!ok) {
        if (r->link)
            ob_link_close(r->link, NULL, NULL);
        relay_free(r);
        return ob_errf(errbuf, errlen, OUTBOX_ENOMEM, "out of memory");
    }
    *out = r;
    return OUTBOX_OK;
}

/* --- running ------------------------------------------------------------- */

int outbox_relay_start(outbox_relay *r) {
    if (r->state != R_CREATED) {
        snprintf(r->errmsg, sizeof(r->errmsg), "relay already started");
        return OUTBOX_ESTATE;
    }
    r->state = R_RUNNING;
    char *db = ob_url_redact(r->o.db_url), *nats = ob_url_redact(r->o.nats_url);
    OB_INFO(&r->log,
            "relay starting: table %s, stream %s, subjects %s.<aggregate>.<event>, %d "
            "connection(s), batch %d, database %s, nats %s",
            r->o.table, r->o.stream, r->o.subject_prefix, r->nworkers, r->o.batch_size,
            db ? db : "?", nats ? nats : "?");
    free(db);
    free(nats);
    uv_timer_init(r->loop, &r->shutdown_timer);
    r->shutdown_timer.data = r;
    if (ob_link_start(r->link) != 0) {
        snprintf(r->errmsg, sizeof(r->errmsg), "cannot start the NATS link");
        return OUTBOX_ENATS;
    }
    for (int i = 0; i < r->nworkers; i++)
        ob_worker_start(r->workers[i]);
    if (r->maint)
        ob_maint_start(r->maint);
    return OUTBOX_OK;
}

static void on_link_ack(void *data, const ob_ack *ack) {
    outbox_relay *r = data;
    if (ack->worker < (uint32_t)r->nworkers)
        ob_worker_ack(r->workers[ack->worker], ack);
}

static void on_link_ready(void *data, int ready) {
    outbox_relay *r = data;
    r->stats.broker_ready = ready;
    if (!ready)
        r->stats.broker_outages++;
    if (r->state != R_RUNNING && ready)
        return;
    for (int i = 0; i < r->nworkers; i++)
        ob_worker_broker(r->workers[i], ready);
}

static void on_link_fatal(void *data, const char *why) {
    outbox_relay *r = data;
    r->fatal = 1;
    snprintf(r->errmsg, sizeof(r->errmsg), "%s", why);
    if (r->o.on_fatal)
        r->o.on_fatal(r, why, r->o.fatal_data);
}

void ob_relay_wake_all(outbox_relay *r, ob_worker *except) {
    for (int i = 0; i < r->nworkers; i++)
        if (r->workers[i] != except)
            ob_worker_wake(r->workers[i]);
}

void ob_relay_capacity_freed(outbox_relay *r) {
    for (int i = 0; i < r->nworkers && r->waiting_capacity > 0; i++) {
        if (r->in_flight >= r->o.max_in_flight)
            return;
        ob_worker_capacity(r->workers[i]);
    }
}

void ob_relay_maybe_drained(outbox_relay *r, ob_worker *w) {
    if (r->drained || r->state != R_RUNNING)
        return;
    /* Another worker may have committed its last batch without having seen
     * the answer yet: wait for it, so that the counters are final. */
    for (int i = 0; i < r->nworkers; i++)
        if (r->workers[i] != w && ob_worker_busy(r->workers[i]))
            return;
    r->drained = 1;
    OB_INFO(&r->log, "no pending rows left (drained)");
    if (r->o.on_drained)
        r->o.on_drained(r, r->o.drained_data);
}

void outbox_relay_stats(const outbox_relay *r, outbox_stats *out) {
    *out = r->stats;
    out->in_flight = r->in_flight;
}

const char *outbox_relay_errmsg(const outbox_relay *r) {
    return r->errmsg;
}

/* --- stopping ------------------------------------------------------------ */

static void on_shutdown_deadline(uv_timer_t *t) {
    outbox_relay *r = t->data;
    if (r->in_flight)
        OB_WARN(&r->log, "shutdown: %u publish(es) still unacked after %u ms; giving them back",
                r->in_flight, r->o.shutdown_timeout_ms);
    for (int i = 0; i < r->nworkers; i++)
        ob_worker_shutdown_deadline(r->workers[i]);
}

static void child_closed_cb(uv_handle_t *h) {
    ob_relay_child_closed(h->data);
}

static void link_closed_cb(void *data) {
    outbox_relay *r = data;
    r->link = NULL;
    ob_relay_child_closed(r);
}

/* Children close in order: workers and maintenance first (they may still
 * need NATS while they finish), then the link and the shutdown timer. */
void ob_relay_child_closed(outbox_relay *r) {
    r->open_children--;
    if (r->open_children == 2 && r->link != NULL &&
        !uv_is_closing((uv_handle_t *)&r->shutdown_timer)) {
        uv_close((uv_handle_t *)&r->shutdown_timer, child_closed_cb);
        ob_link_close(r->link, link_closed_cb, r);
        return;
    }
    if (r->open_children == 0) {
        r->state = R_STOPPED;
        OB_INFO(&r->log, "relay stopped: %llu acked, %llu dead, %llu released",
                (unsigned long long)r->stats.acked, (unsigned long long)r->stats.dead,
                (unsigned long long)r->stats.released);
        if (r->stop_cb)
            r->stop_cb(r, r->stop_data);
    }
}

int outbox_relay_stop(outbox_relay *r, outbox_relay_stop_cb cb, void *data) {
    if (r->state == R_CREATED || r->state == R_STOPPED) {
        snprintf(r->errmsg, sizeof(r->errmsg), "relay is not running");
        return OUTBOX_ESTATE;
    }
    if (r->state == R_STOPPING) {
        if (!r->hard_stop) {
            r->hard_stop = 1;
            OB_WARN(&r->log, "stopping now: open transactions are dropped and their rows will "
                             "be delivered again");
            for (int i = 0; i < r->nworkers; i++)
                ob_worker_stop(r->workers[i], 1);
        }
        return OUTBOX_OK;
    }
    OB_INFO(&r->log, "stopping: no new claims; waiting up to %u ms for in-flight acks",
            r->o.shutdown_timeout_ms);
    r->state = R_STOPPING;
    r->stop_cb = cb;
    r->stop_data = data;
    /* workers + maintenance + link + shutdown timer, plus one held while the
     * stop calls below run, so that nothing completes underneath them. */
    r->open_children = r->nworkers + (r->maint ? 1 : 0) + 2 + 1;
    uv_timer_start(&r->shutdown_timer, on_shutdown_deadline, r->o.shutdown_timeout_ms, 0);
    if (r->maint)
        ob_maint_stop(r->maint);
    for (int i = 0; i < r->nworkers; i++)
        ob_worker_stop(r->workers[i], 0);
    ob_relay_child_closed(r);
    return OUTBOX_OK;
}

void outbox_relay_destroy(outbox_relay *r) {
    if (r == NULL)
        return;
    if (r->state == R_RUNNING || r->state == R_STOPPING)
        return; /* still on the loop: stop first and destroy from the callback */
    if (r->state == R_CREATED && r->link)
        ob_link_close(r->link, NULL, NULL);
    relay_free(r);
}
