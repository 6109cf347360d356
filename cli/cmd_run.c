/*
 * outbox-uvrelay run: the relay on its own loop, with signal handling, an
 * optional progress line, and --drain.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <nats/nats.h>
#include <uv.h>

#include "commands.h"

typedef struct run_ctx {
    uv_loop_t loop;
    outbox_relay *relay;
    uv_signal_t sigint, sigterm;
    uv_timer_t progress;
    int show_progress;
    int exit_code;
    int stopping;
    outbox_stats last;
    uint64_t last_ms;
    int line_shown;
    int leader_mode; /* --leader: show leading or standing by */
} run_ctx;

static void log_line(outbox_log_level level, const char *msg, void *data) {
    run_ctx *x = data;
    if (x && x->line_shown) {
        fputs("\r\033[K", stderr);
        x->line_shown = 0;
    }
    outbox_log_stderr(level, msg, NULL);
}

static void on_progress(uv_timer_t *t) {
    run_ctx *x = t->data;
    outbox_stats s;
    outbox_relay_stats(x->relay, &s);
    uint64_t now = uv_now(&x->loop);
    double secs = (double)(now - x->last_ms) / 1000.0;
    double rate = secs > 0 ? (double)(s.acked - x->last.acked) / secs : 0;
    char pending[32] = "?";
    if (s.pending >= 0)
        snprintf(pending, sizeof(pending), "%lld", (long long)s.pending);
    char share[40] = ""; /* the ordered modes: this instance's share */
    if (s.buckets_total && x->leader_mode)
        snprintf(share, sizeof(share), "  %s", s.leader ? "leading" : "standing by");
    else if (s.buckets_total)
        snprintf(share, sizeof(share), "  buckets %u/%u", s.buckets_owned, s.buckets_total);
    fprintf(stderr,
            "\r\033[K%8.0f msg/s  acked %llu  dead %llu  retried %llu  pending %s  lag %lld ms  "
            "in flight %u%s%s",
            rate, (unsigned long long)s.acked, (unsigned long long)s.dead,
            (unsigned long long)s.failed, pending,
            (long long)(s.oldest_pending_ms < 0 ? 0 : s.oldest_pending_ms), s.in_flight, share,
            s.broker_ready ? "" : "  [NATS not ready]");
    fflush(stderr);
    x->line_shown = 1;
    x->last = s;
    x->last_ms = now;
}

static void close_cb(uv_handle_t *h) {
    (void)h;
}

static void on_stopped(outbox_relay *r, void *data) {
    (void)r;
    run_ctx *x = data;
    if (x->line_shown) {
        on_progress(&x->progress);
        fputc('\n', stderr);
        x->line_shown = 0;
    }
    uv_close((uv_handle_t *)&x->sigint, close_cb);
    uv_close((uv_handle_t *)&x->sigterm, close_cb);
    uv_close((uv_handle_t *)&x->progress, close_cb);
}

static void stop(run_ctx *x) {
    x->stopping++;
    uv_timer_stop(&x->progress);
    outbox_relay_stop(x->relay, on_stopped, x);
}

static void on_signal(uv_signal_t *s, int signum) {
    run_ctx *x = s->data;
    if (x->stopping)
        fprintf(stderr, "\r\033[K%s again: stopping now\n",
                signum == SIGINT ? "SIGINT" : "SIGTERM");
    stop(x);
}

static void on_drained(outbox_relay *r, void *data) {
    (void)r;
    run_ctx *x = data;
    if (!x->stopping)
        stop(x);
}

static void on_fatal(outbox_relay *r, const char *why, void *data) {
    (void)r;
    (void)why;
    run_ctx *x = data;
    x->exit_code = 1;
    if (!x->stopping)
        stop(x);
}

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

int ob_cmd_run(ob_cli *c) {
    run_ctx x;
    memset(&x, 0, sizeof(x));
    x.show_progress = c->progress < 0 ? isatty(STDERR_FILENO) : c->progress;
    outbox_relay_options o = c->relay;
    o.log = log_line;
    o.log_data = &x;
    if (c->drain) {
        o.on_drained = on_drained;
        o.drained_data = &x;
    }
    o.on_fatal = on_fatal;
    o.fatal_data = &x;
    if (x.show_progress && o.pending_sample_ms == 0)
        o.pending_sample_ms = 1000;
    ob_cli_maint_options(c, &o);

    uv_loop_init(&x.loop);
    char err[512];
    x.leader_mode = o.leader;
    int rc = outbox_relay_create(&x.relay, &x.loop, &o, err, sizeof(err));
    if (rc != OUTBOX_OK) {
        fprintf(stderr, "outbox-uvrelay: %s\nTry 'outbox-uvrelay --help'.\n", err);
        uv_loop_close(&x.loop);
        return rc == OUTBOX_EINVAL ? 2 : 1;
    }
    if (check_database(&x.loop, &o, err, sizeof(err)) != 0 ||
        outbox_nats_check(&o, 5000, err, sizeof(err)) == OUTBOX_EREFUSED) {
        fprintf(stderr, "outbox-uvrelay: %s\n", err);
        outbox_relay_destroy(x.relay);
        uv_loop_close(&x.loop);
        nats_CloseAndWait(2000);
        return 1;
    }
    uv_signal_init(&x.loop, &x.sigint);
    uv_signal_init(&x.loop, &x.sigterm);
    uv_timer_init(&x.loop, &x.progress);
    x.sigint.data = x.sigterm.data = x.progress.data = &x;
    uv_signal_start(&x.sigint, on_signal, SIGINT);
    uv_signal_start(&x.sigterm, on_signal, SIGTERM);
    /* Signals must not keep the loop alive once the relay has stopped. */
    if (x.show_progress) {
        x.last_ms = uv_now(&x.loop);
        uv_timer_start(&x.progress, on_progress, 1000, 1000);
    }
    rc = outbox_relay_start(x.relay);
    if (rc != OUTBOX_OK) {
        fprintf(stderr, "outbox-uvrelay: %s\n", outbox_relay_errmsg(x.relay));
        x.exit_code = 1;
        on_stopped(x.relay, &x);
    }
    uv_run(&x.loop, UV_RUN_DEFAULT);
    outbox_relay_destroy(x.relay);
    if (uv_loop_close(&x.loop) != 0) {
        fprintf(stderr, "outbox-uvrelay: internal error: handles left open on the loop\n");
        x.exit_code = 1;
    }
    nats_CloseAndWait(2000);
    return x.exit_code;
}
