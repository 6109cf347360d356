/* SPDX-License-Identifier: Apache-2.0 */
/*
 * 10,000 rows relayed by the library embedded on a caller-owned loop: each id
 * exactly once in the stream, every row processed, no handle left behind.
 */
#include <nats/nats.h>

#include "check.h"
#include "integ.h"

static volatile int drained, stopped;

static void on_drained(outbox_relay *r, void *data) {
    (void)r;
    (void)data;
    drained = 1;
}

static void on_stopped(outbox_relay *r, void *data) {
    (void)r;
    (void)data;
    stopped = 1;
}

int main(void) {
    const char *db = "it_relay_10k";
    MYSQL *m = ti_db_fresh(db, NULL);
    ti_seed(m, "outbox", 10000, 500, 512);
    CHECK_EQ(ti_int(m, "SELECT COUNT(*) FROM outbox WHERE status = 0"), 10000);
    ti_stream_delete("IT_10K");

    uv_loop_t loop;
    uv_loop_init(&loop);
    outbox_relay_options o;
    ti_relay_options(&o, db, "IT_10K", "it10k");
    o.connections = 3;
    o.batch_size = 200;
    o.on_drained = on_drained;
    outbox_relay *r = NULL;
    char err[256];
    CHECK_EQ(outbox_relay_create(&r, &loop, &o, err, sizeof(err)), OUTBOX_OK);
    CHECK_EQ(outbox_relay_start(r), OUTBOX_OK);
    CHECK_EQ(ti_run_until(&loop, &drained, 60000), 0);

    outbox_stats s;
    outbox_relay_stats(r, &s);
    CHECK_EQ(s.acked, 10000);
    CHECK_EQ(s.dead, 0);
    CHECK_EQ(s.in_flight, 0);
    CHECK_EQ(s.broker_ready, 1);
    CHECK_EQ(s.db_connected, 3);
    CHECK_INT(s.batches, >=, 50);

    CHECK_EQ(outbox_relay_stop(r, on_stopped, NULL), OUTBOX_OK);
    CHECK_EQ(ti_run_until(&loop, &stopped, 20000), 0);
    outbox_relay_destroy(r);
    /* A handle left on the loop makes this fail. */
    CHECK_EQ(uv_loop_close(&loop), 0);

    CHECK_EQ(ti_int(m, "SELECT COUNT(*) FROM outbox WHERE status = 1 AND processed_at IS NOT "
                       "NULL AND attempt_count = 0"),
             10000);
    long long distinct = 0;
    CHECK_EQ(ti_stream_count("IT_10K", &distinct), 10000);
    CHECK_EQ(distinct, 10000);
    mysql_close(m);
    mysql_library_end();
    nats_CloseAndWait(2000);
    puts("relay_10k: ok");
    return 0;
}
