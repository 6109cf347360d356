/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The ordered modes' fence (relay/relay_lease.c) at the two places a worker
 * asks it: the fetch statement and the check before each publish. The real
 * lease and cursor switch run against fake connections (fake_db.c), whose
 * session id is 42. Issue 29: a publish check that always passed was caught
 * by no test.
 */
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "check.h"
#include "fake_db.h"
#include "relay_int.h"

static uv_loop_t loop;
static outbox_relay r;
static int fatals, closes;

static void r_fatal(outbox_relay *rr, const char *why) {
    (void)rr;
    (void)why;
    fatals++;
}

static void r_closed(outbox_relay *rr) {
    (void)rr;
    closes++;
}

/* Runs the loop until db has an operation pending (a round's timer). */
static void wait_pending(ob_db *db, fake_op op) {
    for (int i = 0; i < 400 && fake_db_pending(db) != op; i++)
        uv_run(&loop, UV_RUN_ONCE);
    CHECK_EQ(fake_db_pending(db), op);
}

static void row(ob_db *db, int result, const char *a, const char *b) {
    char *cols[8] = {(char *)a, (char *)b};
    unsigned long lens[8] = {a ? strlen(a) : 0, b ? strlen(b) : 0};
    fake_db_add_row(db, result, cols, lens);
}

/* A leader's round, answered: the lock is this session's, leader mode only. */
static void answer_round(ob_db *db, const char *first) {
    row(db, 0, first, "42");
    row(db, 1, "1", NULL);
    char *cols[8] = {"0", "0", "1", "0"};
    unsigned long lens[8] = {1, 1, 1, 1};
    fake_db_add_row(db, 2, cols, lens);
    fake_db_complete(db, 1, 0, NULL, 0);
}

static int may_publish(void) {
    return r.env.owner.may_publish(&r);
}

static const char *fetch(void) {
    const char *sql = NULL;
    size_t len = r.env.owner.fetch_sql(&r, 0, 100, &sql);
    CHECK(len > 0 && sql != NULL);
    return sql;
}

/* Leader mode: leading, then silent past the validity (a round sent and
 * not answered), then proven again. */
static void an_expired_lease_fetches_and_publishes_nothing(void) {
    static ob_log quiet = {NULL, NULL, OUTBOX_LOG_ERROR};
    memset(&r, 0, sizeof(r));
    r.loop = &loop;
    r.log = quiet;
    r.phase = R_RUNNING;
    r.o.leader = 1;
    r.mode = &ob_mode_leader;
    r.o.table = "outbox";
    r.o.lease_timeout_ms = 3000; /* stale after 2 s, valid for 1 s, rounds every 500 ms */
    r.o.max_in_flight_bytes = 1 << 20;
    r.qtable = "`db`.`outbox`";
    r.db.database = "db";
    r.nreaders = 1;
    ob_flow_init(&r.flow, 100, 5, 20);
    CHECK_EQ(ob_relay_lease_prepare(&r, r_fatal, r_closed), 0);
    ob_relay_lease_start(&r);
    ob_db *lease = fake_db_last();
    wait_pending(lease, FAKE_CONNECT);
    fake_db_complete(lease, 1, 0, NULL, 0);
    wait_pending(lease, FAKE_QUERY); /* the check of the ordering columns */
    fake_db_complete(lease, 1, 0, NULL, 0);
    wait_pending(lease, FAKE_QUERY); /* the standby's survey */
    CHECK(!may_publish());
    answer_round(lease, "1");
    CHECK_EQ(r.order.owned, OB_ALL_BUCKETS);
    /* The switch looks for cursor rows before any bucket is read. */
    ob_db *sw = fake_db_last();
    CHECK(sw != lease);
    wait_pending(sw, FAKE_CONNECT);
    fake_db_complete(sw, 1, 0, NULL, 0);
    wait_pending(sw, FAKE_QUERY);
    fake_db_complete(sw, 1, 0, NULL, 0); /* no cursor row */
    CHECK_EQ(r.order.share[0], OB_ALL_BUCKETS);

    CHECK(may_publish());
    CHECK_CONTAINS(fetch(), "FOR UPDATE");
    CHECK_CONTAINS(fetch(), ":w42.0'"); /* the worker's lock, named after the lease session */

    wait_pending(lease, FAKE_QUERY); /* the next round, left unanswered */
    usleep(1100 * 1000);
    CHECK(!may_publish());
    CHECK_STR(fetch(), "START TRANSACTION; SELECT 1 FROM DUAL WHERE 0");
    CHECK_EQ(r.order.owned, OB_ALL_BUCKETS); /* still owned as far as it knows */
    /* A stopping relay finishes the batches its row locks still hold. */
    r.phase = R_STOPPING;
    CHECK(may_publish());
    r.phase = R_RUNNING;
    answer_round(lease, "1"); /* late: the proof counts from the sending */
    CHECK(!may_publish());
    CHECK_STR(fetch(), "START TRANSACTION; SELECT 1 FROM DUAL WHERE 0");
    wait_pending(lease, FAKE_QUERY);
    answer_round(lease, "1"); /* prompt */
    CHECK(may_publish());
    CHECK_CONTAINS(fetch(), "FOR UPDATE");

    ob_relay_lease_stop(&r);
    for (int i = 0; i < 20 && !closes; i++)
        uv_run(&loop, UV_RUN_NOWAIT);
    CHECK_EQ(closes, 1);
    CHECK_EQ(fatals, 0);
    ob_relay_lease_free(&r);
}

int main(void) {
    uv_loop_init(&loop);
    an_expired_lease_fetches_and_publishes_nothing();
    CHECK_EQ(uv_loop_close(&loop), 0);
    printf("test_relay_lease: ok\n");
    return 0;
}
