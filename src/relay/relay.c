/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The relay handle: life cycle and phases, and the glue between the NATS
 * link, the readers (reader.h: the workers, or cursor mode's reader) and the
 * maintenance timers.
 *
 *   CREATED --start--> RUNNING --stop--> STOPPING (readers, timers, lease closing)
 *      |                                    | the last of them closed
 *      | destroy                            v
 *      v                              CLOSING_LINK (link and shutdown timer closing)
 *    freed                                  | both closed: the stop callback runs
 *      ^                                    v
 *      +------------- destroy ----------- STOPPED
 *
 * Every child is counted when it starts and counted down in its own close
 * callback, and only step() moves the phase on past STOPPING, so a child that
 * closes early or late can never unbalance the count. Every change of phase
 * goes through set_state(). Children never close behind the relay's back: on
 * a fatal error the readers halt and wait for the stop.
 */
#include "relay_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "message.h"
#include "sql.h"
#include "tls_options.h"

static const char *const state_names[] = {
    [R_CREATED] = "created",           [R_RUNNING] = "running", [R_STOPPING] = "stopping",
    [R_CLOSING_LINK] = "closing-link", [R_STOPPED] = "stopped",
};

static void set_state(outbox_relay *r, relay_phase p) {
    if (r->phase != p)
        OB_DEBUG(&r->log, "relay: %s -> %s", state_names[r->phase], state_names[p]);
    r->phase = p;
}

/* --- the owner callbacks for the readers --------------------------------- */

static int owner_drain_wanted(void *data) {
    outbox_relay *r = data;
    return r->o.on_drained != NULL && !r->drained;
}

static void owner_table_empty(void *data, ob_worker *w, const char *later, const char *next_at) {
    outbox_relay *r = data;
    if (r->drained || r->phase != R_RUNNING)
        return;
    /* Nothing is drained before the lease has checked that no relay of
     * another mode shares the table: a drain refused then must exit 1. */
    if (r->order.lease && !ob_lease_checked(r->order.lease))
        return;
    /* Nor while owned buckets wait to leave cursor mode (relay_lease.c). */
    if (r->order.owned & ~r->order.ready && r->order.sw)
        return;
    /* Another worker may have committed its last batch without having seen
     * the answer yet: wait for it, so that the counters are final. */
    for (int i = 0; i < r->nreaders; i++)
        if (r->readers[i].self != w && r->readers[i].ops->busy(r->readers[i].self))
            return;
    r->drained = 1;
    if (later && strcmp(later, "0") != 0)
        OB_INFO(&r->log, "drained: no row is due; %s row(s) scheduled later, the next at %s UTC",
                later, next_at ? next_at : "?");
    else
        OB_INFO(&r->log, "no pending rows left (drained)");
    if (r->o.on_drained)
        r->o.on_drained(r, r->o.drained_data);
}

static void relay_fatal(outbox_relay *r, const char *why);
static void step(outbox_relay *r);

static void owner_db_failed(void *data, ob_worker *w, unsigned err, const char *msg, int ever_ok) {
    (void)w;
    outbox_relay *r = data;
    /* A misconfiguration found before anything worked is not retried: the
     * relay refuses to run, with the cause named. So does a drain, which
     * must end, at any time. */
    if (r->fatal || !ob_db_errno_is_permanent(err))
        return;
    if ((ever_ok || r->stats.batches) && !owner_drain_wanted(r))
        return;
    char why[400];
    snprintf(why, sizeof(why), "database: %u %s%s", err, msg, ob_db_error_hint(err));
    relay_fatal(r, why);
}

static void owner_closed(void *data, ob_worker *w) {
    (void)w;
    outbox_relay *r = data;
    r->open_readers--;
    step(r);
}

/* --- link callbacks ------------------------------------------------------ */

static void on_link_ack(void *data, const ob_ack *ack) {
    outbox_relay *r = data;
    /* A reader's index is its publisher number (relay_int.h). */
    if (ack->worker < (uint32_t)r->nreaders)
        r->readers[ack->worker].ops->ack(r->readers[ack->worker].self, ack);
}

static void on_link_ready(void *data, int ready) {
    outbox_relay *r = data;
    r->stats.broker_ready = ready;
    if (!ready) {
        /* A refusal that lasts (a full store) pauses the link again at each
         * try until a message is stored: one outage, not one per try. */
        uint32_t episode = r->env.broker.ops->refusal_episode(r->env.broker.self);
        if (episode == 0 || episode != r->refusal_counted)
            r->stats.broker_outages++;
        r->refusal_counted = episode;
    }
    for (int i = 0; i < r->nreaders; i++)
        r->readers[i].ops->broker(r->readers[i].self, ready);
}

static void on_link_wake(void *data) {
    outbox_relay_notify(data);
}

void outbox_relay_notify(outbox_relay *r) {
    if (r->phase == R_RUNNING && !r->fatal)
        ob_flow_ring(&r->flow);
}

static void relay_fatal(outbox_relay *r, const char *why) {
    if (r->fatal)
        return;
    r->fatal = 1;
    snprintf(r->errmsg, sizeof(r->errmsg), "%s", why);
    OB_ERROR(&r->log, "relay cannot go on: %s", why);
    for (int i = 0; i < r->nreaders; i++)
        r->readers[i].ops->halt(r->readers[i].self);
    if (r->o.on_fatal)
        r->o.on_fatal(r, why, r->o.fatal_data);
}

/* --- the cluster watch --------------------------------------------------- */

/* What the watch found of the node, for /readyz and the metric: a Galera
 * node outside the primary component (or not ready) refuses every statement,
 * so nothing is delivered through it, in any mode, whatever the relay's
 * connections have found out (an --ordered relay whose lease no longer
 * proves anything makes no statement at all). An answer that cannot tell
 * changes nothing. */
static void node_seen(outbox_relay *r, const ob_cluster *c) {
    char why[160];
    if (!c->known)
        return;
    r->stats.db_node_unready = ob_cluster_unfit(c, why, sizeof(why));
    if (r->stats.db_node_unready)
        snprintf(r->node_why, sizeof(r->node_why), "the database node cannot serve: %s", why);
    else
        r->node_why[0] = '\0';
}

/* Every answer of the watch: at start, after each reconnect, and every
 * interval. Cursor mode on a Galera node whose members it cannot all name
 * stops at the first answer (the relay exits 1); otherwise its lease starts
 * at the first answer (the lease finds out for itself whether its leases
 * are locks or rows of the lease table). An answer that cannot tell (the
 * probe refused) lets it start too: the probe reads only information_schema. */
static void on_cluster(void *data, const ob_cluster *c, int fresh) {
    (void)fresh;
    outbox_relay *r = data;
    char why[600];
    node_seen(r, c);
    if (r->phase != R_RUNNING || r->fatal)
        return;
    /* Refused at start only: a member that joins later without a client
     * address pauses the cursor's gaps (relay_cursor.c says it, and
     * /readyz shows it) rather than end the relay and loop its restarts. */
    if (!r->locks_started && ob_cluster_refusal(c, r->mode, why, sizeof(why)) != NULL) {
        relay_fatal(r, why);
        return;
    }
    if (r->mode->cursor_reader)
        ob_relay_cursor_cluster(r, c);
    if (!r->locks_started) {
        r->locks_started = 1;
        ob_relay_lease_start(r);
    }
}

static void on_cluster_closed(void *data) {
    outbox_relay *r = data;
    r->watch = NULL;
    r->watch_open = 0;
    step(r);
}

static void on_link_fatal(void *data, const char *why) {
    relay_fatal(data, why);
}

void ob_relay_fatal(outbox_relay *r, const char *why) {
    relay_fatal(r, why);
}

/* --- creation ------------------------------------------------------------ */

/* Closes the broker (if it was made), then calls cb with the relay. */
static void broker_close(outbox_relay *r, void (*cb)(void *data)) {
    if (r->env.broker.self)
        r->env.broker.ops->close(r->env.broker.self, cb, r);
}

static void relay_free(outbox_relay *r) {
    if (r == NULL)
        return;
    for (int i = 0; r->readers && i < r->nreaders; i++)
        if (r->readers[i].ops) /* NULL: creation stopped before it was made */
            r->readers[i].ops->free(r->readers[i].self);
    free(r->readers);
    if (r->watch && !r->watch_open)
        ob_cluster_watch_free(r->watch);
    free(r->ctable);
    ob_timers_free(r->timers);
    ob_relay_lease_free(r);
    ob_db_url_free(&r->db);
    free(r->qtable);
    free(r->ce_source);
    ob_buf_free(&r->sql_fetch);
    ob_buf_free(&r->sql_probe);
    ob_buf_free(&r->sql_drain);
    ob_buf_free(&r->wake);
    ob_relay_free_options(&r->o);
    ob_paused_free(&r->paused);
    free(r);
}

/* Builds the statements and the environment the workers share. Returns 0,
 * or -1 when out of memory. */
/* The statements every worker shares, and the CloudEvents source. */
static int prepare_sql(outbox_relay *r) {
    const outbox_relay_options *o = &r->o;
    ob_buf b = OB_BUF_INIT, c = OB_BUF_INIT;
    ob_sql_quote_table(&b, o->table);
    r->qtable = b.p;
    ob_sql_fetch(&r->sql_fetch, r->qtable, o->batch_size);
    ob_sql_probe(&r->sql_probe, r->qtable);
    /* A drain waits for the rows due within the longest backoff (the
     * relay's own retries always are) and reports those scheduled later. */
    uint64_t h = (uint64_t)(o->backoff_max_ms > o->backoff_base_ms ? o->backoff_max_ms
                                                                   : o->backoff_base_ms) +
                 1000;
    const char *t = r->qtable ? r->qtable : "";
    ob_buf_printf(
        &r->sql_drain,
        "COMMIT; SELECT (SELECT COUNT(*) FROM %s WHERE status = 0 AND (next_attempt_at IS "
        "NULL OR next_attempt_at <= TIMESTAMPADD(MICROSECOND, %llu, NOW(6)))), (SELECT "
        "COUNT(*) FROM %s WHERE status = 0 AND next_attempt_at > "
        "TIMESTAMPADD(MICROSECOND, %llu, NOW(6))), (SELECT MIN(next_attempt_at) FROM %s "
        "WHERE status = 0 AND next_attempt_at > TIMESTAMPADD(MICROSECOND, %llu, NOW(6)))",
        t, (unsigned long long)h * 1000, t, (unsigned long long)h * 1000, t,
        (unsigned long long)h * 1000);
    ob_ce_encode(&c, o->ce_source, strlen(o->ce_source));
    r->ce_source = c.p;
    if (!r->qtable || !r->ce_source || r->sql_fetch.oom || r->sql_probe.oom || r->sql_drain.oom)
        return -1;
    return 0;
}

/* What every reader is given: the connection's settings, the batch's
 * rules, the shared statements, the way out to the broker and the owner's
 * callbacks. */
static void prepare_env(outbox_relay *r) {
    const outbox_relay_options *o = &r->o;
    ob_reader_env *e = &r->env;
    e->loop = r->loop;
    e->log = &r->log;
    ob_db_url_to_config(&r->db, &e->db);
    e->db.group = &r->dbgroup;
    e->db.connect_timeout_s = 10;
    e->db.read_timeout_s = 120;
    e->db.op_timeout_ms = 60000;
    e->db.failback_ms = o->db_failback_ms;
    e->db.init_command = "SET SESSION tx_isolation = 'READ-COMMITTED', time_zone = '+00:00'";
    ob_db_config_tls_from_options(&e->db, o);
    e->batch.qtable = r->qtable;
    e->batch.processing = o->processing;
    e->batch.max_attempts = o->max_attempts;
    e->batch.backoff.kind = o->backoff;
    e->batch.backoff.base_ms = o->backoff_base_ms;
    e->batch.backoff.max_ms = o->backoff_max_ms;
    e->batch.backoff.jitter = o->backoff_jitter;
    e->batch.classify = o->classify ? o->classify : outbox_classify_default;
    e->batch.classify_data = o->classify_data;
    e->sql_fetch = r->sql_fetch.p;
    e->sql_fetch_len = r->sql_fetch.len;
    e->sql_probe = r->sql_probe.p;
    e->sql_probe_len = r->sql_probe.len;
    e->sql_drain_probe = r->sql_drain.p;
    e->sql_drain_probe_len = r->sql_drain.len;
    e->batch_size = o->batch_size;
    e->fetch_bytes = o->max_in_flight_bytes / (uint64_t)o->connections;
    e->poll_interval_ms = o->poll_interval_ms;
    e->ack_timeout_ms = o->ack_timeout_ms;
    e->lag_awaits_clock = o->pending_sample_ms != 0;
    e->owner = (ob_reader_owner){.drain_wanted = owner_drain_wanted,
                                 .table_empty = owner_table_empty,
                                 .db_failed = owner_db_failed,
                                 .on_closed = owner_closed,
                                 .data = r};
    e->flow = &r->flow;
    e->stats = &r->stats;
    e->unmarked = &r->unmarked;
    e->unanswered = &r->unanswered;
    e->any_fetched = &r->any_fetched;
    ob_paused_init(&r->paused, o->subject_prefix, e->log);
    e->paused = &r->paused;
    ob_flow_init(&r->flow, o->max_in_flight, o->poll_min_ms, o->poll_interval_ms);
    if (o->wake_subject == NULL)
        ob_buf_printf(&r->wake, "outbox_wake.%s", o->table);
    else if (*o->wake_subject)
        ob_buf_puts(&r->wake, o->wake_subject);
    r->wake_subject = r->wake.p;
}

/* The readers, once the broker is installed in their environment (the
 * cursor reader takes a copy of it). */
static int prepare_readers(outbox_relay *r) {
    const outbox_relay_options *o = &r->o;
    ob_reader_env *e = &r->env;
    /* What the database is (on a Galera node cursor mode needs its members named). */
    ob_cluster_watch_callbacks wcb = {on_cluster, on_cluster_closed, r};
    r->watch = ob_cluster_watch_new(r->loop, &e->db, &r->log, 10000, &wcb);
    if (r->watch == NULL)
        return -1;
    if (r->mode->cursor_reader) /* one reader in place of the workers */
        return ob_relay_cursor_prepare(r, ob_relay_fatal, ob_relay_step);
    r->nreaders = r->mode->one_reader ? 1 : o->connections; /* a leader reads in one seq order */
    r->readers = calloc((size_t)r->nreaders, sizeof(*r->readers));
    if (r->readers == NULL || ob_relay_lease_prepare(r, ob_relay_fatal, ob_relay_step) != 0)
        return -1;
    for (int i = 0; i < r->nreaders; i++) {
        ob_worker *w = ob_worker_new(e, i); /* i: its publisher number */
        if (w == NULL)
            return -1;
        r->readers[i] = (ob_reader){&ob_worker_reader_ops, w};
    }
    return 0;
}

static ob_link *make_link(outbox_relay *r, char *err, size_t errlen) {
    const outbox_relay_options *o = &r->o;
    ob_link_config lc;
    memset(&lc, 0, sizeof(lc));
    lc.url = o->nats_url;
    lc.stream = o->stream;
    lc.subject_prefix = o->subject_prefix;
    lc.ce_source = o->cloudevents ? r->ce_source : NULL;
    lc.duplicate_window_ms = o->duplicate_window_ms;
    /* The longest a published row can wait before it is published again:
     * its ack timeout, then either its retry backoff or a finishing
     * statement that hangs until the operation timeout and a reconnect. */
    uint64_t db_wait = (uint64_t)r->env.db.op_timeout_ms + 10000;
    lc.retry_horizon_ms =
        (uint64_t)o->ack_timeout_ms + (o->backoff_max_ms > db_wait ? o->backoff_max_ms : db_wait);
    lc.strict_duplicate_window = o->strict_duplicate_window;
    lc.replicas = o->stream_replicas;
    lc.client = o->nats_client;
    lc.options = o;
    lc.wake_subject = r->wake_subject;
    lc.max_in_flight = o->max_in_flight;
    lc.log = &r->log;
    ob_link_callbacks cbs = {on_link_ack, on_link_ready, on_link_wake, on_link_fatal, r};
    return ob_link_new(r->loop, &lc, &cbs, err, errlen);
}

int outbox_relay_create(outbox_relay **out, uv_loop_t *loop, const outbox_relay_options *o,
                        char *errbuf, size_t errlen) {
    char err[512];
    *out = NULL;
    if (loop == NULL || o == NULL)
        return ob_errf(errbuf, errlen, OUTBOX_EINVAL, "loop and options are required");
    outbox_relay_options whole; /* the caller's options, sized as this library's */
    int rc = ob_relay_options_upgrade(o, &whole, errbuf, errlen);
    if (rc != OUTBOX_OK)
        return rc;
    o = &whole;
    rc = ob_relay_check_options(o, errbuf, errlen);
    if (rc != OUTBOX_OK)
        return rc;
    outbox_relay *r = calloc(1, sizeof(*r));
    if (r == NULL)
        return ob_errf(errbuf, errlen, OUTBOX_ENOMEM, "out of memory");
    if (ob_db_settings(o->db_url, o->db_password, &r->db, err, sizeof(err)) != 0) {
        free(r);
        return ob_errf(errbuf, errlen, OUTBOX_EINVAL, "%s", err);
    }
    r->loop = loop;
    set_state(r, R_CREATED);
    r->log.fn = o->log;
    r->log.data = o->log_data;
    r->log.level = o->log_level;
    r->stats.pending = -1;
    r->stats.oldest_pending_ms = -1;
    r->stats.clock_skew_error_s = -1;
    if (ob_relay_copy_options(r, o) != 0 || prepare_sql(r) != 0) {
        relay_free(r);
        return ob_errf(errbuf, errlen, OUTBOX_ENOMEM, "out of memory");
    }
    prepare_env(r);
    /* The broker: NATS JetStream, installed in the readers' environment. */
    ob_link *link = make_link(r, err, sizeof(err));
    if (link == NULL) {
        relay_free(r);
        return ob_errf(errbuf, errlen, OUTBOX_EINVAL, "%s", err);
    }
    r->env.broker = (ob_broker){&ob_link_broker_ops, link};
    rc = prepare_readers(r) != 0 ? ob_errf(errbuf, errlen, OUTBOX_ENOMEM, "out of memory")
                                 : OUTBOX_OK;
    if (rc == OUTBOX_OK && (o->pending_sample_ms || o->partition_check_ms || o->cleanup_check_ms)) {
        r->timers = ob_timers_new(loop, &r->o, &r->log, &r->stats, err, sizeof(err));
        if (r->timers == NULL)
            rc = ob_errf(errbuf, errlen, OUTBOX_EINVAL, "%s", err);
    }
    if (rc != OUTBOX_OK) {
        broker_close(r, NULL);
        relay_free(r);
        return rc;
    }
    *out = r;
    return OUTBOX_OK;
}

/* --- running ------------------------------------------------------------- */

int outbox_relay_start(outbox_relay *r) {
    if (r->phase != R_CREATED) {
        snprintf(r->errmsg, sizeof(r->errmsg), "relay already started");
        return OUTBOX_ESTATE;
    }
    set_state(r, R_RUNNING);
    char *db = ob_url_redact(r->o.db_url), *nats = ob_url_redact(r->o.nats_url);
    OB_INFO(&r->log,
            "relay starting: table %s, stream %s, subjects %s.<aggregate>.<event>, %d "
            "connection(s), batch %d%s, database %s, nats %s, doorbell %s",
            r->o.table, r->o.stream, r->o.subject_prefix, r->nreaders, r->o.batch_size,
            r->mode->about, db ? db : "?", nats ? nats : "?",
            r->wake_subject ? r->wake_subject : "off");
    free(db);
    free(nats);
    uv_timer_init(r->loop, &r->shutdown_timer);
    r->shutdown_timer.data = r;
    r->shutdown_timer_open = 1;
    r->link_open = 1;
    r->env.broker.ops->start(r->env.broker.self);
    for (int i = 0; i < r->nreaders; i++) {
        r->open_readers++;
        r->readers[i].ops->start(r->readers[i].self);
    }
    if (r->timers) {
        r->timers_open = 1;
        ob_timers_start(r->timers);
    }
    r->watch_open = 1;
    ob_cluster_watch_start(r->watch);
    /* The plain mode takes no lock that Galera would split: its mode lock
     * starts at once. The others wait for the watch (on_cluster). */
    if (!r->mode->waits_for_watch) {
        r->locks_started = 1;
        ob_relay_lease_start(r);
    }
    return OUTBOX_OK;
}

void outbox_relay_stats_sized(const outbox_relay *r, outbox_stats *out, size_t size) {
    size_t n = size < sizeof(r->stats) ? size : sizeof(r->stats);
    outbox_stats s = r->stats;
    /* The modes with a bucket lease own what they may publish: nothing
     * while the lease is not proven recently (a relay thawed after a freeze,
     * say, before its first round tells it what it lost). */
    if (r->mode->lease != OB_MODE_LEASE_NONE && r->order.lease && !ob_lease_valid(r->order.lease)) {
        s.buckets_owned = 0;
        s.leader = 0;
    }
    /* Read from the proof when asked: nothing else keeps it (a cursor
     * waiting for the members to initialise its buckets makes no read). */
    if (r->proof)
        s.cursor_members_down = (uint32_t)ob_gap_proof_missing(r->proof);
    const ob_broker *k = &r->env.broker;
    if (k->self && k->ops->store_lost) {
        uint32_t losses = 0;
        k->ops->store_lost(k->self, &s.stream_missing, &losses);
        s.stream_losses = losses;
    }
    s.subjects_paused = (uint32_t)ob_paused_count(&r->paused);
    s.db_failbacks = r->dbgroup.failbacks;
    memcpy(out, &s, n);
    if (size > n) /* a caller built against a newer header */
        memset((char *)out + n, 0, size - n);
}

const char *outbox_relay_errmsg(const outbox_relay *r) {
    return r->errmsg;
}

const char *outbox_relay_paused(const outbox_relay *r) {
    const ob_broker *k = &r->env.broker;
    const char *why = k->self ? k->ops->refusal(k->self) : NULL;
    for (int i = 0; why == NULL && i < r->nreaders; i++)
        why = r->readers[i].self ? r->readers[i].ops->refusal(r->readers[i].self) : NULL;
    if (why == NULL && r->node_why[0])
        why = r->node_why;
    return why ? why : ob_relay_cursor_members_why(r);
}

const char *outbox_relay_degraded(const outbox_relay *r, char *buf, size_t len) {
    return buf && len ? ob_paused_why(&r->paused, buf, len) : NULL;
}

/* --- stopping ------------------------------------------------------------ */

static void stop_readers(outbox_relay *r, int now) {
    for (int i = 0; i < r->nreaders; i++)
        r->readers[i].ops->stop(r->readers[i].self, now);
}

/* Once a stop has waited this long past the shutdown timeout, whatever is
 * still waiting (on a frozen database, say) is dropped. */
#define SHUTDOWN_GRACE_MS 600

static void on_shutdown_deadline(uv_timer_t *t) {
    outbox_relay *r = t->data;
    if (r->hard_stop)
        return;
    if (r->past_deadline) {
        OB_WARN(&r->log, "shutdown: still waiting on the database after the shutdown timeout; "
                         "dropping open transactions (their rows will be delivered again)");
        r->hard_stop = 1;
        stop_readers(r, 1);
        return;
    }
    r->past_deadline = 1;
    if (r->stats.in_flight)
        OB_WARN(&r->log, "shutdown: %u publish(es) still unacked after %u ms; giving them back",
                r->stats.in_flight, r->o.shutdown_timeout_ms);
    for (int i = 0; i < r->nreaders; i++)
        r->readers[i].ops->deadline(r->readers[i].self);
    uv_timer_start(&r->shutdown_timer, on_shutdown_deadline, SHUTDOWN_GRACE_MS, 0);
}

static void shutdown_timer_closed(uv_handle_t *h) {
    outbox_relay *r = h->data;
    r->shutdown_timer_open = 0;
    step(r);
}

static void link_closed(void *data) {
    outbox_relay *r = data;
    r->env.broker.self = NULL;
    r->link_open = 0;
    step(r);
}

static void timers_closed(void *data) {
    outbox_relay *r = data;
    r->timers_open = 0;
    step(r);
}

/* Moves the phase on when the children it waits for are closed. Readers and
 * timers close first (the readers may still need NATS while they finish),
 * then the link and the shutdown timer. */
static void step(outbox_relay *r) {
    /* On the lease table the lease closes after the readers (see the stop). */
    if (r->phase == R_STOPPING && r->open_readers == 0)
        ob_relay_lease_stop(r);
    if (r->phase == R_STOPPING && r->open_readers == 0 && !r->timers_open && !r->order.lease_open &&
        !r->watch_open) {
        set_state(r, R_CLOSING_LINK);
        uv_close((uv_handle_t *)&r->shutdown_timer, shutdown_timer_closed);
        broker_close(r, link_closed);
        return; /* the close callbacks come back here */
    }
    if (r->phase == R_CLOSING_LINK && !r->link_open && !r->shutdown_timer_open) {
        set_state(r, R_STOPPED);
        /* Rows given back untouched while running (a broker outage, a lease
         * not proven) were read again; those the stop gave back are pending. */
        OB_INFO(&r->log,
                "relay stopped: %llu acked, %llu dead; given back untouched: %llu while "
                "running (read again), %llu by the stop (left pending)",
                (unsigned long long)r->stats.acked, (unsigned long long)r->stats.dead,
                (unsigned long long)r->released_running,
                (unsigned long long)(r->stats.released - r->released_running));
        if (r->stop_cb)
            r->stop_cb(r, r->stop_data);
    }
}

void ob_relay_step(outbox_relay *r) {
    step(r);
}

int outbox_relay_stop(outbox_relay *r, outbox_relay_stop_cb cb, void *data) {
    if (r->phase == R_CREATED || r->phase == R_STOPPED) {
        snprintf(r->errmsg, sizeof(r->errmsg), "relay is not running");
        return OUTBOX_ESTATE;
    }
    if (r->phase != R_RUNNING) {
        if (!r->hard_stop) {
            r->hard_stop = 1;
            OB_WARN(&r->log, "stopping now: open transactions are dropped and their rows will "
                             "be delivered again");
            stop_readers(r, 1);
        }
        return OUTBOX_OK;
    }
    OB_INFO(&r->log, "stopping: no new claims; waiting up to %u ms for in-flight acks",
            r->o.shutdown_timeout_ms);
    set_state(r, R_STOPPING);
    r->released_running = r->stats.released;
    r->stop_cb = cb;
    r->stop_data = data;
    uv_timer_start(&r->shutdown_timer, on_shutdown_deadline, r->o.shutdown_timeout_ms, 0);
    if (r->timers)
        ob_timers_stop(r->timers, timers_closed, r);
    if (r->watch_open)
        ob_cluster_watch_close(r->watch);
    /* The modes differ here only (relay_int.h, order.readers_hold_lease):
     * readers that write under the lease to their end have it closed after
     * them (relay_cursor.c); and if it never started they own nothing and
     * have nothing to write, so they need not wait for a lease to finish
     * with. On the lease table (a Galera node) every mode's lease closes
     * after the readers: a closed connection releases nothing there, so it
     * gives its rows up as it closes, once nothing of its own can still be
     * published (step()); meanwhile it stays proven and the readers finish
     * their batches as on a single server. */
    if (!r->order.readers_hold_lease && !ob_lease_on_table(r->order.lease))
        ob_relay_lease_stop(r);
    stop_readers(r, r->order.readers_hold_lease && !r->locks_started);
    step(r); /* nothing may have been open */
    return OUTBOX_OK;
}

int outbox_relay_destroy(outbox_relay *r) {
    if (r == NULL)
        return OUTBOX_OK;
    if (r->phase != R_CREATED && r->phase != R_STOPPED) {
        snprintf(r->errmsg, sizeof(r->errmsg),
                 "relay is still on the loop: stop it and destroy it from the stop callback");
        return OUTBOX_ESTATE;
    }
    if (r->phase == R_CREATED)
        broker_close(r, NULL);
    relay_free(r);
    return OUTBOX_OK;
}
