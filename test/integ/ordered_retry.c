/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Ordered mode and failures: an event waiting for its retry holds back the
 * later events of its aggregate and no other aggregate; once it is dead, the
 * later ones proceed and the log names the dead event they passed.
 *
 * Aggregate "A" has four events; the stream refuses the second (too large)
 * and the classifier retries it twice before it goes dead. Fifty events of
 * other aggregates, inserted after A's, flow meanwhile.
 */
#include <nats/nats.h>
#include <string.h>

#include "check.h"
#include "integ.h"

static MYSQL *m;
static volatile int drained;
static int calls;
static long long a_done_at_call[4], others_done_at_call[4];
static int passed_logged;

static outbox_verdict classify(const outbox_failure *f, void *data) {
    (void)data;
    CHECK_EQ(f->code, 400);
    if (calls < 4) {
        a_done_at_call[calls] =
            ti_int(m, "SELECT COUNT(*) FROM outbox WHERE aggregate_id = 'A' AND status <> 0");
        others_done_at_call[calls] =
            ti_int(m, "SELECT COUNT(*) FROM outbox WHERE aggregate_id <> 'A' AND status = 1");
    }
    calls++;
    return OUTBOX_RETRY; /* dead once max_attempts is reached */
}

static void on_log(outbox_log_level level, const char *msg, void *data) {
    if (strstr(msg, "is dead; the later events of that aggregate now pass it") &&
        strstr(msg, "order/A"))
        passed_logged++;
    ti_log(level, msg, data);
}

static void on_drained(outbox_relay *r, void *data) {
    (void)r;
    (void)data;
    drained = 1;
}

static volatile int stopped;
static void on_stopped(outbox_relay *r, void *data) {
    (void)r;
    (void)data;
    stopped = 1;
}

int main(void) {
    const char *db = "it_ord_retry";
    outbox_schema_options so;
    outbox_schema_options_init(&so);
    so.ordered = 1;
    m = ti_db_fresh(db, &so);
    ti_stream_delete("IT_ORD_RETRY");
    char cmd[1024];
    snprintf(cmd, sizeof(cmd),
             "%s --nats '%s' --stream IT_ORD_RETRY --create 'itordretry.>' --max-msg-size 1024",
             ti_env("OUTBOX_TEST_STREAMCHECK"), ti_env("OUTBOX_TEST_NATS_URL"));
    CHECK_EQ(system(cmd), 0);
    for (int i = 1; i <= 4; i++)
        ti_exec(m,
                "INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload, "
                "headers) VALUES (outbox_uuid_v7(), 'order', 'A', 'changed', JSON_OBJECT('pad', "
                "REPEAT('x', %d)), JSON_OBJECT('agg_seq', '%d'))",
                i == 2 ? 2000 : 10, i);
    ti_seed(m, "outbox", 50, 10, 100);

    uv_loop_t loop;
    uv_loop_init(&loop);
    outbox_relay_options o;
    ti_relay_options(&o, db, "IT_ORD_RETRY", "itordretry");
    o.ordered = 1;
    o.connections = 2;
    o.batch_size = 128; /* four rows of each bucket: A's events in one batch */
    o.poll_interval_ms = 20;
    o.backoff = OUTBOX_BACKOFF_FIXED;
    o.backoff_base_ms = 700;
    o.backoff_jitter = 0;
    o.max_attempts = 3;
    o.classify = classify;
    o.on_drained = on_drained;
    o.log = on_log;
    o.log_level = OUTBOX_LOG_INFO;
    outbox_relay *relay;
    char err[256];
    CHECK_EQ(outbox_relay_create(&relay, &loop, &o, err, sizeof(err)), OUTBOX_OK);
    CHECK_EQ(outbox_relay_start(relay), OUTBOX_OK);
    CHECK_EQ(ti_run_until(&loop, &drained, 60000), 0);

    CHECK_EQ(calls, 3);
    /* While A's second event waited (the second and third attempts came
     * after a backoff each), only A's first was done, and every other
     * aggregate's events were. */
    for (int i = 1; i < 3; i++) {
        CHECK_EQ(a_done_at_call[i], 1);
        CHECK_EQ(others_done_at_call[i], 50);
    }
    CHECK_EQ(ti_int(m, "SELECT COUNT(*) FROM outbox WHERE aggregate_id = 'A' AND status = -1 AND "
                       "attempt_count = 3"),
             1);
    CHECK_EQ(ti_int(m, "SELECT COUNT(*) FROM outbox WHERE status = 1"), 53);
    CHECK_INT(passed_logged, >=, 1);
    outbox_stats s;
    outbox_relay_stats(relay, &s);
    CHECK_EQ(s.buckets_total, 64);
    CHECK_EQ(s.buckets_owned, 64);
    CHECK_INT(s.held_back, >=, 2);

    CHECK_EQ(outbox_relay_stop(relay, on_stopped, NULL), OUTBOX_OK);
    CHECK_EQ(ti_run_until(&loop, &stopped, 20000), 0);
    outbox_relay_destroy(relay);
    CHECK_EQ(uv_loop_close(&loop), 0);
    snprintf(cmd, sizeof(cmd),
             "%s --nats '%s' --stream IT_ORD_RETRY --subject '>' --check-order agg_seq",
             ti_env("OUTBOX_TEST_STREAMCHECK"), ti_env("OUTBOX_TEST_NATS_URL"));
    CHECK_EQ(system(cmd), 0);
    long long distinct;
    CHECK_EQ(ti_stream_count("IT_ORD_RETRY", &distinct), 53);
    mysql_close(m);
    nats_CloseAndWait(1000);
    puts("ordered_retry: ok");
    return 0;
}
