/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Retries with exponential backoff through a custom classifier: a row the
 * stream refuses is retried (the embedder's classifier says so), never
 * fetched before its next_attempt_at, never blocking the rows behind it, and
 * dead after max_attempts with its reason stored.
 */
#include <nats/nats.h>

#include "check.h"
#include "integ.h"

#define BASE_MS 500

static volatile int drained;
static int calls;
static uint64_t call_ns[8];
static uint64_t acked_at_call[8];
static int attempt_at_call[8];
static outbox_relay *relay;

static outbox_verdict classify(const outbox_failure *f, void *data) {
    (void)data;
    CHECK_EQ(f->kind, OUTBOX_FAIL_STREAM_ERROR);
    CHECK_EQ(f->code, 400);
    CHECK_CONTAINS(f->message, "JetStream error 400");
    if (calls < 8) {
        outbox_stats s;
        outbox_relay_stats(relay, &s);
        call_ns[calls] = uv_hrtime();
        acked_at_call[calls] = s.acked;
        attempt_at_call[calls] = f->attempt;
    }
    calls++;
    return OUTBOX_RETRY; /* the default would say dead at once */
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
    const char *db = "it_retry";
    MYSQL *m = ti_db_fresh(db, NULL);
    ti_stream_delete("IT_RETRY");
    char cmd[1024];
    snprintf(cmd, sizeof(cmd),
             "%s --nats '%s' --stream IT_RETRY --create 'itretry.>' "
             "--max-msg-size 1024",
             ti_env("OUTBOX_TEST_STREAMCHECK"), ti_env("OUTBOX_TEST_NATS_URL"));
    CHECK_EQ(system(cmd), 0);
    /* The refused row comes first; 50 good rows follow it. */
    ti_exec(m, "INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload) "
               "VALUES (outbox_uuid_v7(), 'order', 'big', 'created', "
               "JSON_OBJECT('pad', REPEAT('x', 2000)))");
    ti_seed(m, "outbox", 50, 50, 100);

    uv_loop_t loop;
    uv_loop_init(&loop);
    outbox_relay_options o;
    ti_relay_options(&o, db, "IT_RETRY", "itretry");
    o.batch_size = 10;
    o.connections = 1;
    o.poll_interval_ms = 20;
    o.backoff = OUTBOX_BACKOFF_EXPONENTIAL;
    o.backoff_base_ms = BASE_MS;
    o.backoff_max_ms = 10000;
    o.backoff_jitter = 0;
    o.max_attempts = 4;
    o.classify = classify;
    o.on_drained = on_drained;
    char err[256];
    CHECK_EQ(outbox_relay_create(&relay, &loop, &o, err, sizeof(err)), OUTBOX_OK);
    CHECK_EQ(outbox_relay_start(relay), OUTBOX_OK);
    CHECK_EQ(ti_run_until(&loop, &drained, 60000), 0);

    CHECK_EQ(calls, 4);
    for (int i = 0; i < 4; i++)
        CHECK_EQ(attempt_at_call[i], i + 1);
    /* Never fetched before its backoff: BASE, 2*BASE, 4*BASE apart. */
    for (int i = 1; i < 4; i++) {
        uint64_t gap_ms = (call_ns[i] - call_ns[i - 1]) / 1000000;
        uint64_t want = (uint64_t)BASE_MS << (i - 1);
        printf("attempt %d came %llu ms after attempt %d (backoff %llu ms)\n", i + 1,
               (unsigned long long)gap_ms, i, (unsigned long long)want);
        CHECK_INT(gap_ms + 5, >=, want);
    }
    /* The waiting row blocked nothing: the 50 rows behind it were done by
     * its second attempt. */
    CHECK_EQ(acked_at_call[1], 50);

    outbox_stats s;
    outbox_relay_stats(relay, &s);
    CHECK_EQ(s.acked, 50);
    CHECK_EQ(s.failed, 3);
    CHECK_EQ(s.dead, 1);
    CHECK_EQ(ti_int(m, "SELECT COUNT(*) FROM outbox WHERE aggregate_id = 'big' AND status = -1 "
                       "AND attempt_count = 4 AND next_attempt_at IS NULL AND last_error LIKE "
                       "'JetStream error 400%%'"),
             1);
    CHECK_EQ(ti_int(m, "SELECT COUNT(*) FROM outbox WHERE status = 1"), 50);

    CHECK_EQ(outbox_relay_stop(relay, on_stopped, NULL), OUTBOX_OK);
    CHECK_EQ(ti_run_until(&loop, &stopped, 20000), 0);
    outbox_relay_destroy(relay);
    CHECK_EQ(uv_loop_close(&loop), 0);
    long long distinct;
    CHECK_EQ(ti_stream_count("IT_RETRY", &distinct), 50);
    mysql_close(m);
    nats_CloseAndWait(1000);
    puts("retry_backoff: ok");
    return 0;
}
