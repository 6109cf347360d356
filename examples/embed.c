/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Embedding the relay in a libuv program that has work of its own: here a
 * timer that prints the relay's counters every second. After SECONDS (or on
 * Ctrl-C) the program stops the relay, closes its own handles, and checks
 * that the loop closes cleanly.
 *
 *   example-embed DB_URL NATS_URL [SECONDS]
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include <outbox/outbox.h>
#include <uv.h>

typedef struct app {
    uv_loop_t loop;
    uv_timer_t tick;
    uv_timer_t deadline;
    uv_signal_t sigint;
    outbox_relay *relay;
    int ticks;
} app;

static void on_tick(uv_timer_t *t) {
    app *a = t->data;
    outbox_stats s;
    outbox_relay_stats(a->relay, &s);
    printf("tick %d: acked=%llu dead=%llu in_flight=%u broker_ready=%d db_connected=%u\n",
           ++a->ticks, (unsigned long long)s.acked, (unsigned long long)s.dead, s.in_flight,
           s.broker_ready, s.db_connected);
    fflush(stdout);
}

static void on_relay_stopped(outbox_relay *r, void *data) {
    (void)r;
    app *a = data;
    /* The relay has closed its handles; now close ours. */
    uv_close((uv_handle_t *)&a->tick, NULL);
    uv_close((uv_handle_t *)&a->deadline, NULL);
    uv_close((uv_handle_t *)&a->sigint, NULL);
}

static void shutdown_app(app *a) {
    uv_timer_stop(&a->tick);
    uv_timer_stop(&a->deadline);
    uv_signal_stop(&a->sigint);
    outbox_relay_stop(a->relay, on_relay_stopped, a);
}

static void on_deadline(uv_timer_t *t) {
    shutdown_app(t->data);
}

static void on_sigint(uv_signal_t *s, int signum) {
    (void)signum;
    shutdown_app(s->data);
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: example-embed DB_URL NATS_URL [SECONDS]\n");
        return 2;
    }
    app a = {0};
    uv_loop_init(&a.loop);

    outbox_relay_options o;
    outbox_relay_options_init(&o);
    o.db_url = argv[1];
    o.nats_url = argv[2];
    o.log = outbox_log_stderr;
    char err[256];
    if (outbox_relay_create(&a.relay, &a.loop, &o, err, sizeof(err)) != OUTBOX_OK) {
        fprintf(stderr, "example-embed: %s\n", err);
        return 2;
    }
    uv_timer_init(&a.loop, &a.tick);
    uv_timer_init(&a.loop, &a.deadline);
    uv_signal_init(&a.loop, &a.sigint);
    a.tick.data = a.deadline.data = a.sigint.data = &a;
    uv_timer_start(&a.tick, on_tick, 1000, 1000);
    uv_timer_start(&a.deadline, on_deadline, (uint64_t)(argc > 3 ? atoi(argv[3]) : 5) * 1000, 0);
    uv_signal_start(&a.sigint, on_sigint, SIGINT);

    if (outbox_relay_start(a.relay) != OUTBOX_OK) {
        fprintf(stderr, "example-embed: %s\n", outbox_relay_errmsg(a.relay));
        return 1;
    }
    uv_run(&a.loop, UV_RUN_DEFAULT);

    outbox_stats s;
    outbox_relay_stats(a.relay, &s);
    outbox_relay_destroy(a.relay);
    int rc = uv_loop_close(&a.loop);
    printf("example-embed: stopped after %d ticks, acked=%llu, loop_close=%d\n", a.ticks,
           (unsigned long long)s.acked, rc);
    return rc == 0 ? 0 : 1;
}
