/* SPDX-License-Identifier: Apache-2.0 */
/*
 * outbox-uvrelay run: one relay per table on one loop, with signal handling,
 * an optional progress line, --drain, the monitoring endpoints (--http) and
 * the log output (--log-format, --log-file).
 *
 * The tables come from the [table NAME] sections of the config file, or,
 * without sections, one table from the options. Each table is its own
 * outbox_relay with its own connections, so one busy table cannot hold up
 * another's batch cycles: they share only the loop.
 *
 * Signals: SIGINT and SIGTERM stop gracefully (a second one stops at once);
 * SIGHUP reopens --log-file, for log rotation; SIGUSR1 logs one line with
 * the totals (acked, dead, retried, pending, lag, in flight). Nothing is
 * reloaded: the relays' options are fixed at create.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <nats/nats.h>
#include <uv.h>

#include "commands.h"
#include "logout.h"
#include "sd_notify.h"

typedef struct run_ctx run_ctx;

/* One table: its relay, and the log callback's context. */
typedef struct run_table {
    run_ctx *x;
    const char *label; /* NULL with a single table from the options */
    outbox_relay *relay;
    int started, stopped, drained;
} run_table;

struct run_ctx {
    uv_loop_t loop;
    run_table *tables;
    int ntables;
    int running; /* relays started and not yet stopped */
    outbox_http *http;
    int http_running;
    uv_signal_t sigint, sigterm, sighup, sigusr1;
    uv_timer_t progress;
    int show_progress;
    int exit_code;
    int stopping;
    int closed;
    outbox_stats last;
    uint64_t last_ms;
    int line_shown;
    ob_logout out;
};

static void clear_progress(run_ctx *x) {
    if (x->line_shown) {
        ob_logout_raw(&x->out, "\r\033[K");
        x->line_shown = 0;
    }
}

static void log_line(outbox_log_level level, const char *msg, void *data) {
    run_table *t = data;
    run_ctx *x = t->x;
    if (ob_logout_on_stderr(&x->out))
        clear_progress(x);
    ob_logout_write(&x->out, level, t->label, msg);
}

/* The binary's own lines (not a relay's). */
static void log_main(run_ctx *x, outbox_log_level level, const char *msg) {
    if (ob_logout_on_stderr(&x->out))
        clear_progress(x);
    ob_logout_write(&x->out, level, NULL, msg);
}

static void http_log(outbox_log_level level, const char *msg, void *data) {
    log_main(data, level, msg);
}

static void sum_stats(run_ctx *x, outbox_stats *s) {
    memset(s, 0, sizeof(*s));
    s->pending = -1;
    s->oldest_pending_ms = -1;
    int ready = 1;
    for (int i = 0; i < x->ntables; i++) {
        outbox_stats t;
        outbox_relay_stats(x->tables[i].relay, &t);
        s->acked += t.acked;
        s->dead += t.dead;
        s->failed += t.failed;
        s->in_flight += t.in_flight;
        s->buckets_owned += t.buckets_owned;
        s->buckets_total += t.buckets_total;
        s->leader += t.leader;
        ready &= t.broker_ready != 0;
        if (t.pending >= 0)
            s->pending = (s->pending < 0 ? 0 : s->pending) + t.pending;
        if (t.oldest_pending_ms > s->oldest_pending_ms)
            s->oldest_pending_ms = t.oldest_pending_ms;
    }
    s->broker_ready = ready;
}

static void on_progress(uv_timer_t *t) {
    run_ctx *x = t->data;
    outbox_stats s;
    sum_stats(x, &s);
    uint64_t now = uv_now(&x->loop);
    double secs = (double)(now - x->last_ms) / 1000.0;
    double rate = secs > 0 ? (double)(s.acked - x->last.acked) / secs : 0;
    char pending[32] = "?";
    if (s.pending >= 0)
        snprintf(pending, sizeof(pending), "%lld", (long long)s.pending);
    char share[48] = ""; /* the ordered modes: the buckets owned here */
    if (s.buckets_total)
        snprintf(share, sizeof(share), "  buckets %u/%u%s", s.buckets_owned, s.buckets_total,
                 s.leader ? " (leading)" : "");
    char line[400];
    snprintf(line, sizeof(line),
             "\r\033[K%8.0f msg/s  acked %llu  dead %llu  retried %llu  pending %s  lag %lld ms  "
             "in flight %u%s%s",
             rate, (unsigned long long)s.acked, (unsigned long long)s.dead,
             (unsigned long long)s.failed, pending,
             (long long)(s.oldest_pending_ms < 0 ? 0 : s.oldest_pending_ms), s.in_flight, share,
             s.broker_ready ? "" : "  [NATS not ready]");
    ob_logout_raw(&x->out, line);
    x->line_shown = 1;
    x->last = s;
    x->last_ms = now;
}

static void close_cb(uv_handle_t *h) {
    (void)h;
}

/* Once every relay and the responder have stopped, the binary's own handles
 * go, and the loop ends. */
static void maybe_finished(run_ctx *x) {
    if (x->running > 0 || x->http_running || x->closed)
        return;
    x->closed = 1;
    if (x->line_shown) {
        on_progress(&x->progress);
        ob_logout_raw(&x->out, "\n");
        x->line_shown = 0;
    }
    /* What the log's reader has not taken yet waits for ob_logout_close. */
    ob_logout_detach(&x->out);
    uv_close((uv_handle_t *)&x->sigint, close_cb);
    uv_close((uv_handle_t *)&x->sigterm, close_cb);
    uv_close((uv_handle_t *)&x->sighup, close_cb);
    uv_close((uv_handle_t *)&x->sigusr1, close_cb);
    uv_close((uv_handle_t *)&x->progress, close_cb);
}

static void on_stopped(outbox_relay *r, void *data) {
    (void)r;
    run_table *t = data;
    if (!t->stopped) {
        t->stopped = 1;
        t->x->running--;
    }
    maybe_finished(t->x);
}

static void on_http_stopped(outbox_http *h, void *data) {
    (void)h;
    run_ctx *x = data;
    x->http_running = 0;
    maybe_finished(x);
}

static void stop(run_ctx *x) {
    x->stopping++;
    ob_sd_stopping();
    uv_timer_stop(&x->progress);
    if (x->http_running && x->stopping == 1)
        outbox_http_stop(x->http, on_http_stopped, x);
    for (int i = 0; i < x->ntables; i++)
        if (x->tables[i].started && !x->tables[i].stopped)
            outbox_relay_stop(x->tables[i].relay, on_stopped, &x->tables[i]);
    maybe_finished(x);
}

/* SIGUSR1: one line with the totals, whatever the log level. */
static void log_totals(run_ctx *x) {
    outbox_stats s;
    sum_stats(x, &s);
    char msg[400];
    snprintf(msg, sizeof(msg),
             "SIGUSR1: acked %llu, dead %llu, retried %llu, pending %lld, lag %lld ms, in flight "
             "%u, NATS %s",
             (unsigned long long)s.acked, (unsigned long long)s.dead, (unsigned long long)s.failed,
             (long long)s.pending, (long long)(s.oldest_pending_ms < 0 ? 0 : s.oldest_pending_ms),
             s.in_flight, s.broker_ready ? "ready" : "not ready");
    log_main(x, OUTBOX_LOG_INFO, msg);
}

static void on_signal(uv_signal_t *s, int signum) {
    run_ctx *x = s->data;
    if (signum == SIGUSR1) {
        log_totals(x);
        return;
    }
    if (signum == SIGHUP) {
        if (x->out.path == NULL) {
            log_main(x, OUTBOX_LOG_INFO, "SIGHUP: logging to stderr, nothing to reopen");
        } else if (ob_logout_reopen(&x->out) != 0) {
            /* The output fell back to stderr and said so there, once. */
        } else {
            log_main(x, OUTBOX_LOG_INFO, "SIGHUP: log file reopened");
        }
        return;
    }
    if (x->stopping)
        log_main(x, OUTBOX_LOG_WARN,
                 signum == SIGINT ? "SIGINT again: stopping now" : "SIGTERM again: stopping now");
    stop(x);
}

static void on_drained(outbox_relay *r, void *data) {
    (void)r;
    run_table *t = data;
    run_ctx *x = t->x;
    t->drained = 1;
    for (int i = 0; i < x->ntables; i++)
        if (!x->tables[i].drained)
            return;
    if (!x->stopping)
        stop(x);
}

static void on_fatal(outbox_relay *r, const char *why, void *data) {
    (void)r;
    (void)why;
    run_table *t = data;
    t->x->exit_code = 1;
    if (!t->x->stopping)
        stop(t->x);
}

/* The options of table i, made ready for create. */
/* --- start-up check of the database connection ----------------------------
 * The relay retries an unreachable database or NATS server for ever, as it
 * should for an outage. A refusal that retrying cannot cure (TLS required
 * but off, a certificate that does not verify, bad credentials) is found
 * here first, with one connection to each made the way the relay makes its
 * own, and ends the run with status 1 and the cause. */

typedef struct preflight {
    int status;
    char msg[600];
} preflight;

static void preflight_done(outbox_maint *m, const outbox_maint_result *res, void *data) {
    preflight *p = data;
    p->status = res->status;
    snprintf(p->msg, sizeof(p->msg), "%s", res->message);
    outbox_maint_stop(m, NULL, NULL);
}

static int check_database(uv_loop_t *loop, const outbox_relay_options *o, char *err,
                          size_t errlen) {
    outbox_maint_options mo;
    outbox_maint_options_from_relay(&mo, o);
    outbox_maint *m;
    preflight p = {OUTBOX_OK, ""};
    if (outbox_maint_create(&m, loop, &mo, err, errlen) != OUTBOX_OK)
        return 0; /* bad options are the relay's to report */
    outbox_maint_job job = {.kind = OUTBOX_MAINT_SAMPLE};
    if (outbox_maint_run(m, &job, preflight_done, &p) != OUTBOX_OK) {
        outbox_maint_stop(m, NULL, NULL);
        outbox_maint_destroy(m);
        return 0;
    }
    uv_run(loop, UV_RUN_DEFAULT);
    outbox_maint_destroy(m);
    if (p.status != OUTBOX_EREFUSED)
        return 0;
    snprintf(err, errlen, "%s", p.msg);
    return -1;
}

static outbox_relay_options table_options(const ob_cli *c, int i, run_ctx *x) {
    outbox_relay_options o = c->ntables ? c->tables[i].relay : c->relay;
    ob_cli_maint_options(c, &o);
    o.log = log_line;
    o.log_data = &x->tables[i];
    if (c->drain) {
        o.on_drained = on_drained;
        o.drained_data = &x->tables[i];
    }
    o.on_fatal = on_fatal;
    o.fatal_data = &x->tables[i];
    /* The progress line and the metrics show the pending figures: sample
     * them unless the operator chose an interval. */
    if (x->show_progress && o.pending_sample_ms == 0)
        o.pending_sample_ms = 1000;
    if (c->http && o.pending_sample_ms == 0)
        o.pending_sample_ms = 10000;
    return o;
}

static void destroy_all(run_ctx *x) {
    for (int i = 0; i < x->ntables; i++)
        outbox_relay_destroy(x->tables[i].relay);
    outbox_http_destroy(x->http);
    free(x->tables);
}

/* Creates a relay per table, checks for refusals that retrying cannot cure,
 * and starts the HTTP responder when asked. Returns OUTBOX_OK, or an error
 * with a message in err (*http_failed: the responder failed to start). */
static int create_all(ob_cli *c, run_ctx *x, char *err, size_t errlen, int *http_failed) {
    int rc = OUTBOX_OK;
    for (int i = 0; i < x->ntables && rc == OUTBOX_OK; i++) {
        run_table *t = &x->tables[i];
        t->x = x;
        t->label = c->ntables ? c->tables[i].name : NULL;
        outbox_relay_options o = table_options(c, i, x);
        rc = outbox_relay_create(&t->relay, &x->loop, &o, err, errlen);
        if (rc != OUTBOX_OK && t->label) {
            char msg[512];
            snprintf(msg, sizeof(msg), "%s", err);
            snprintf(err, errlen, "table [%.64s]: %.400s", t->label, msg);
        }
    }
    /* Refusals that retrying cannot cure end the run before it starts. */
    for (int i = 0; i < x->ntables && rc == OUTBOX_OK; i++) {
        outbox_relay_options o = table_options(c, i, x);
        if (check_database(&x->loop, &o, err, errlen) != 0 ||
            outbox_nats_check(&o, 5000, err, errlen) == OUTBOX_EREFUSED)
            rc = OUTBOX_EREFUSED;
    }
    if (rc == OUTBOX_OK && c->http) {
        outbox_http_options ho;
        outbox_http_options_init(&ho);
        ho.listen = c->http;
        ho.log = http_log;
        ho.log_data = x;
        ho.log_level = c->relay.log_level;
        rc = outbox_http_create(&x->http, &x->loop, &ho, err, errlen);
        for (int i = 0; rc == OUTBOX_OK && i < x->ntables; i++) {
            const char *label = x->tables[i].label;
            if (label == NULL)
                label = c->relay.table;
            rc = outbox_http_add_relay(x->http, x->tables[i].relay, label);
        }
        if (rc == OUTBOX_OK)
            rc = outbox_http_add_counter(x->http, "outbox_relay_log_dropped_total",
                                         "Log lines the binary dropped (or lost) because its log "
                                         "output did not keep up; one line says how many once it "
                                         "caught up.",
                                         &x->out.dropped_total);
        if (rc == OUTBOX_OK) {
            rc = outbox_http_start(x->http, err, errlen);
            *http_failed = rc != OUTBOX_OK;
            x->http_running = !*http_failed;
        }
    }
    return rc;
}

/* A signal that arrives during the start-up checks (before the handlers
 * below are in place) ends the process with the signal's default action:
 * nothing has been claimed yet, and a check that waits on a frozen server
 * must not hold the stop back. */
int ob_cmd_run(ob_cli *c, ob_logout *err_log) {
    run_ctx x;
    memset(&x, 0, sizeof(x));
    x.show_progress = c->progress < 0 ? isatty(STDERR_FILENO) : c->progress;
    if (ob_logout_open(&x.out, c->log_format, c->log_file) != 0) {
        ob_logout_printf(err_log, OUTBOX_LOG_ERROR, "cannot open log file %s: %s", c->log_file,
                         strerror(errno));
        ob_logout_close(&x.out);
        return 1;
    }
    if (!ob_logout_on_stderr(&x.out))
        x.show_progress = 0;
    x.ntables = c->ntables ? c->ntables : 1;
    x.tables = calloc((size_t)x.ntables, sizeof(*x.tables));
    if (x.tables == NULL) {
        ob_logout_printf(&x.out, OUTBOX_LOG_ERROR, "out of memory");
        ob_logout_close(&x.out);
        return 1;
    }
    uv_loop_init(&x.loop);
    char err[512];
    int http_failed = 0;
    int rc = create_all(c, &x, err, sizeof(err), &http_failed);
    if (rc != OUTBOX_OK) {
        ob_logout_printf(&x.out, OUTBOX_LOG_ERROR, "%s%s", err,
                         rc == OUTBOX_EREFUSED ? "" : " (see 'outbox-uvrelay --help')");
        if (http_failed) /* the responder closes its listener on the next turn */
            uv_run(&x.loop, UV_RUN_NOWAIT);
        destroy_all(&x);
        uv_loop_close(&x.loop);
        ob_logout_close(&x.out);
        return rc == OUTBOX_EINVAL ? 2 : 1;
    }

    uv_signal_init(&x.loop, &x.sigint);
    uv_signal_init(&x.loop, &x.sigterm);
    uv_signal_init(&x.loop, &x.sighup);
    uv_signal_init(&x.loop, &x.sigusr1);
    uv_timer_init(&x.loop, &x.progress);
    x.sigint.data = x.sigterm.data = x.sighup.data = x.sigusr1.data = x.progress.data = &x;
    uv_signal_start(&x.sigint, on_signal, SIGINT);
    uv_signal_start(&x.sigterm, on_signal, SIGTERM);
    uv_signal_start(&x.sighup, on_signal, SIGHUP);
    uv_signal_start(&x.sigusr1, on_signal, SIGUSR1);
    ob_logout_attach(&x.out, &x.loop); /* until maybe_finished: a stalled reader costs lines */
    if (x.show_progress) {
        x.last_ms = uv_now(&x.loop);
        uv_timer_start(&x.progress, on_progress, 1000, 1000);
    }
    for (int i = 0; i < x.ntables; i++) {
        run_table *t = &x.tables[i];
        if (outbox_relay_start(t->relay) != OUTBOX_OK) {
            char msg[600];
            snprintf(msg, sizeof(msg), "%s%s%s%s", t->label ? "table [" : "",
                     t->label ? t->label : "", t->label ? "]: " : "",
                     outbox_relay_errmsg(t->relay));
            log_main(&x, OUTBOX_LOG_ERROR, msg);
            x.exit_code = 1;
            break;
        }
        t->started = 1;
        x.running++;
    }
    if (x.exit_code)
        stop(&x);
    else
        ob_sd_ready(&x.loop);
    uv_run(&x.loop, UV_RUN_DEFAULT);
    /* Closing the handle restored the default action, which kills. */
    signal(SIGUSR1, SIG_IGN);
    destroy_all(&x);
    if (uv_loop_close(&x.loop) != 0) {
        log_main(&x, OUTBOX_LOG_ERROR, "internal error: handles left open on the loop");
        x.exit_code = 1;
    }
    ob_logout_close(&x.out);
    nats_CloseAndWait(2000);
    return x.exit_code;
}
