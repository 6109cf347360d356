/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Graceful stop through the API in the middle of a drain: every row is
 * either processed or still pending (never half-done), every processed row
 * is in the stream, the loop closes clean. A second relay then finishes:
 * each id ends up in the stream exactly once. Then a hard stop (stop called
 * twice) loses nothing either.
 */
#include <nats/nats.h>

#include "check.h"
#include "integ.h"

static volatile int stopped;
static uint64_t stop_after_acked;
static int hard;

static void on_stopped(outbox_relay *r, void *data) {
    (void)r;
    (void)data;
    stopped = 1;
}

static void on_tick(uv_timer_t *t) {
    outbox_relay *r = t->data;
    outbox_stats s;
    outbox_relay_stats(r, &s);
    if (s.acked < stop_after_acked || s.in_flight == 0)
        return;
    uv_timer_stop(t);
    CHECK_EQ(outbox_relay_stop(r, on_stopped, NULL), OUTBOX_OK);
    if (hard)
        CHECK_EQ(outbox_relay_stop(r, NULL, NULL), OUTBOX_OK);
}

static volatile int drained;
static void on_drained(outbox_relay *r, void *data) {
    (void)data;
    drained = 1;
    outbox_relay_stop(r, on_stopped, NULL);
}

static void run(const char *db, int drain, outbox_stats *out) {
    uv_loop_t loop;
    uv_loop_init(&loop);
    outbox_relay_options o;
    ti_relay_options(&o, db, "IT_SHUTDOWN", "itshutdown");
    if (drain)
        o.on_drained = on_drained;
    outbox_relay *r = NULL;
    char err[256];
    CHECK_EQ(outbox_relay_create(&r, &loop, &o, err, sizeof(err)), OUTBOX_OK);
    /* Stopping before start is refused. */
    CHECK_EQ(outbox_relay_stop(r, NULL, NULL), OUTBOX_ESTATE);
    CHECK_EQ(outbox_relay_start(r), OUTBOX_OK);
    uv_timer_t tick;
    uv_timer_init(&loop, &tick);
    tick.data = r;
    if (!drain)
        uv_timer_start(&tick, on_tick, 1, 1);
    stopped = 0;
    CHECK_EQ(ti_run_until(&loop, &stopped, 60000), 0);
    uv_close((uv_handle_t *)&tick, NULL);
    uv_run(&loop, UV_RUN_DEFAULT);
    outbox_relay_stats(r, out);
    CHECK_EQ(out->in_flight, 0);
    CHECK_EQ(out->db_connected, 0);
    outbox_relay_destroy(r);
    CHECK_EQ(uv_loop_close(&loop), 0);
}

static void scenario(const char *db, int hard_stop) {
    MYSQL *m = ti_db_fresh(db, NULL);
    ti_stream_delete("IT_SHUTDOWN");
    ti_seed(m, "outbox", 20000, 1000, 512);
    hard = hard_stop;
    stop_after_acked = 3000;
    outbox_stats s;
    run(db, 0, &s);
    /* One statement, so both counts come from one snapshot: after a hard
     * stop the server may still be finishing the dropped connection's last
     * COMMIT. */
    long long both = ti_int(m, "SELECT SUM(status = 0) + 1000000 * SUM(status = 1) FROM outbox");
    long long done = both / 1000000, pending = both % 1000000;
    printf("%s stop: %lld processed, %lld pending, %llu released\n",
           hard_stop ? "hard" : "graceful", done, pending, (unsigned long long)s.released);
    CHECK_EQ(done + pending, 20000);
    /* A hard stop may drop a connection whose COMMIT the server still runs. */
    if (hard_stop)
        CHECK_INT(done, >=, (long long)s.acked);
    else
        CHECK_EQ((long long)s.acked, done);
    CHECK_INT(pending, >, 0);
    CHECK_EQ(ti_int(m, "SELECT SUM(attempt_count) FROM outbox"), 0);
    long long distinct;
    long long in_stream = ti_stream_count("IT_SHUTDOWN", &distinct);
    CHECK_EQ(in_stream, distinct);
    CHECK_INT(in_stream, >=, done);
    /* A graceful stop waits for the acks of everything published and
     * commits them; a batch fetched during the stop is given back unpublished.
     * So the stream holds exactly the processed rows. */
    if (!hard_stop)
        CHECK_EQ(in_stream, done);

    drained = 0;
    run(db, 1, &s);
    CHECK_EQ(ti_int(m, "SELECT COUNT(*) FROM outbox WHERE status = 1"), 20000);
    CHECK_EQ(ti_stream_count("IT_SHUTDOWN", &distinct), 20000);
    CHECK_EQ(distinct, 20000);
    mysql_close(m);
}

int main(void) {
    scenario("it_shutdown", 0);
    scenario("it_shutdown", 1);
    nats_CloseAndWait(1000);
    puts("shutdown: ok");
    return 0;
}
