/* SPDX-License-Identifier: Apache-2.0 */
/*
 * An embedder whose on_fatal callback defers the stop gets its stop
 * callback, even when a worker's database connection completes after the
 * fatal error.
 *
 * The stream keeps Msg-Ids for 2 s, shorter than the retry horizon, and the
 * relay is strict about it: the link reports a fatal error as soon as it
 * has read the stream. The database answers only after a second (a
 * forwarder on the test's loop holds every byte back until then), so the
 * workers' connects complete after the fatal error. on_fatal stops the relay 3 s later; the stop
 * callback must run and the loop must close with no handle left.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "integ.h"
#include "proxy.h"

typedef struct ctx {
    outbox_relay *r;
    ti_proxy *proxy;
    uv_timer_t up_timer, stop_timer;
    int fatal_seen, stopped;
    int connected_before_stop;
} ctx;

static void on_stopped(outbox_relay *r, void *data) {
    ctx *c = data;
    (void)r;
    c->stopped = 1;
}

static void on_stop_timer(uv_timer_t *t) {
    ctx *c = t->data;
    outbox_stats st;
    outbox_relay_stats(c->r, &st);
    c->connected_before_stop = (int)st.db_connected;
    CHECK_EQ(outbox_relay_stop(c->r, on_stopped, c), OUTBOX_OK);
}

static void on_fatal(outbox_relay *r, const char *why, void *data) {
    (void)r;
    ctx *c = data;
    fprintf(stderr, "fatal (stop deferred by 3 s): %s\n", why);
    c->fatal_seen++;
    uv_timer_start(&c->stop_timer, on_stop_timer, 3000, 0);
}

static void on_up(uv_timer_t *t) {
    ctx *c = t->data;
    ti_proxy_freeze(c->proxy, 0);
}

int main(void) {
    const char *stream = "IT_DEFERRED_STOP";
    MYSQL *m = ti_db_fresh("it_deferred_stop", NULL);
    ti_seed(m, "outbox", 10, 10, 64);
    mysql_close(m);

    /* A stream whose duplicate window (2 s) is shorter than the relay's
     * retry horizon (ack timeout + maximum backoff). */
    ti_stream_delete(stream);
    char cmd[512];
    snprintf(cmd, sizeof(cmd),
             "%s --nats '%s' --stream %s --create 'itdefer.>' --dup-window-ms 2000",
             ti_env("OUTBOX_TEST_STREAMCHECK"), ti_env("OUTBOX_TEST_NATS_URL"), stream);
    CHECK_EQ(system(cmd), 0);

    uv_loop_t loop;
    uv_loop_init(&loop);
    ctx c;
    memset(&c, 0, sizeof(c));
    c.proxy =
        ti_proxy_new(&loop, ti_env("OUTBOX_TEST_DB_HOST"), atoi(ti_env("OUTBOX_TEST_DB_PORT")));
    char url[256];
    snprintf(url, sizeof(url), "mysql://outbox:outbox@127.0.0.1:%d/it_deferred_stop",
             ti_proxy_port(c.proxy));

    outbox_relay_options o;
    ti_relay_options(&o, "it_deferred_stop", stream, "itdefer");
    o.db_url = url;
    o.strict_duplicate_window = 1;
    o.on_fatal = on_fatal;
    o.fatal_data = &c;
    char err[512];
    CHECK_EQ(outbox_relay_create(&c.r, &loop, &o, err, sizeof(err)), OUTBOX_OK);
    uv_timer_init(&loop, &c.up_timer);
    uv_timer_init(&loop, &c.stop_timer);
    c.up_timer.data = c.stop_timer.data = &c;
    CHECK_EQ(ti_proxy_listen(c.proxy), 0);
    ti_proxy_freeze(c.proxy, 1);
    uv_timer_start(&c.up_timer, on_up, 1000, 0);
    CHECK_EQ(outbox_relay_start(c.r), OUTBOX_OK);
    /* A running relay is not destroyed behind the loop's back. */
    CHECK_EQ(outbox_relay_destroy(c.r), OUTBOX_ESTATE);

    int rc = ti_run_until(&loop, &c.stopped, 20000);
    CHECK_EQ(rc, 0);
    CHECK_EQ(c.fatal_seen, 1);
    /* The workers connected after the fatal error and waited, halted. */
    CHECK_INT(c.connected_before_stop, >=, 1);
    outbox_stats st;
    outbox_relay_stats(c.r, &st);
    CHECK_EQ(st.acked, 0);
    CHECK_EQ(st.published, 0);
    CHECK_EQ(outbox_relay_destroy(c.r), OUTBOX_OK);

    ti_proxy_close(c.proxy);
    uv_close((uv_handle_t *)&c.up_timer, NULL);
    uv_close((uv_handle_t *)&c.stop_timer, NULL);
    uv_run(&loop, UV_RUN_DEFAULT);
    CHECK_EQ(uv_loop_close(&loop), 0);
    printf("ok: deferred stop completed after a late database connect\n");
    return 0;
}
