/* SPDX-License-Identifier: Apache-2.0 */
/*
 * outbox_relay_notify: an embedding service that commits events and
 * notifies the relay on the same loop gets them delivered at once, long
 * before the relay's poll: with a poll interval of an hour, the relay reads
 * the empty table once at start and would not read it again within the
 * test, so a row delivered at all was delivered by the notify.
 */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "integ.h"

typedef struct ctx {
    outbox_relay *r;
    MYSQL *m;
    uv_timer_t step;
    int phase;
    uint64_t notified_at, delivered_at;
    volatile int done, stopped;
} ctx;

static void on_stopped(outbox_relay *r, void *data) {
    (void)r;
    ((ctx *)data)->stopped = 1;
}

static void on_step(uv_timer_t *t) {
    ctx *c = t->data;
    outbox_stats st;
    outbox_relay_stats(c->r, &st);
    if (c->phase == 0) {
        /* Once the relay is connected to both, commit one event and
         * notify (a worker that waits for the lease's first look takes the
         * ring as soon as the look ends). */
        if (st.db_connected < 1 || !st.broker_ready)
            return;
        ti_seed(c->m, "outbox", 1, 1, 64);
        c->notified_at = uv_now(t->loop);
        outbox_relay_notify(c->r);
        c->phase = 1;
        uv_timer_start(t, on_step, 5, 5);
        return;
    }
    if (st.acked >= 1 && !c->delivered_at) {
        c->delivered_at = uv_now(t->loop);
        c->done = 1;
        uv_timer_stop(t);
    }
}

int main(void) {
    const char *db = "it_notify", *stream = "IT_NOTIFY";
    ctx c;
    memset(&c, 0, sizeof(c));
    c.m = ti_db_fresh(db, NULL);
    ti_stream_delete(stream);
    uv_loop_t loop;
    uv_loop_init(&loop);
    outbox_relay_options o;
    ti_relay_options(&o, db, stream, "itnotify");
    o.poll_interval_ms = 3600000;
    o.wake_subject = "";
    char err[256];
    CHECK_EQ(outbox_relay_create(&c.r, &loop, &o, err, sizeof(err)), OUTBOX_OK);
    CHECK_EQ(outbox_relay_start(c.r), OUTBOX_OK);
    uv_timer_init(&loop, &c.step);
    c.step.data = &c;
    uv_timer_start(&c.step, on_step, 5, 5);
    /* A generous deadline: a loaded machine is slow, not wrong. */
    CHECK_EQ(ti_run_until(&loop, &c.done, 30000), 0);
    uint64_t ms = c.delivered_at - c.notified_at;
    printf("ok: delivered %llu ms after the notify (poll interval 1 h)\n", (unsigned long long)ms);
    CHECK_EQ(outbox_relay_stop(c.r, on_stopped, &c), OUTBOX_OK);
    CHECK_EQ(ti_run_until(&loop, &c.stopped, 10000), 0);
    uv_close((uv_handle_t *)&c.step, NULL);
    uv_run(&loop, UV_RUN_DEFAULT);
    CHECK_EQ(outbox_relay_destroy(c.r), OUTBOX_OK);
    CHECK_EQ(uv_loop_close(&loop), 0);
    mysql_close(c.m);
    return 0;
}
