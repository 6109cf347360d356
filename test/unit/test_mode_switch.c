/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The cursor switch (relay/mode_switch.c) against a fake connection
 * (fake_db.c): when a failure is fatal and when it is waited out, by the
 * connection policy every owner shares (db_life.h).
 */
#include <mysqld_error.h>
#include <string.h>

#include "check.h"
#include "fake_db.h"
#include "mode_switch.h"

static uv_loop_t loop;
static ob_log quiet = {NULL, NULL, OUTBOX_LOG_ERROR};
static int fatals, closes;
static uint64_t ready;

static void on_ready(void *data, uint64_t buckets) {
    (void)data;
    ready |= buckets;
}

static void on_fatal(void *data, const char *why) {
    (void)data;
    (void)why;
    fatals++;
}

static void on_closed(void *data) {
    (void)data;
    closes++;
}

static ob_cursor_switch *new_switch(void) {
    ob_cursor_switch_config c = {
        .loop = &loop, .log = &quiet, .qtable = "`outbox`", .table = "outbox"};
    ob_cursor_switch_callbacks cb = {on_ready, on_fatal, on_closed, NULL};
    fatals = 0;
    ready = 0;
    return ob_cursor_switch_new(&c, &cb);
}

/* Runs the loop until the newest connection has `op` pending. */
static ob_db *wait_pending(fake_op op) {
    for (int i = 0; i < 400 && fake_db_pending(fake_db_last()) != op; i++)
        uv_run(&loop, UV_RUN_ONCE);
    CHECK_EQ(fake_db_pending(fake_db_last()), op);
    return fake_db_last();
}

/* Connects and answers the probe: bucket k has a cursor row. */
static ob_db *probe_finds_a_cursor(int k) {
    ob_db *db = wait_pending(FAKE_CONNECT);
    fake_db_complete(db, 1, 0, NULL, 0);
    wait_pending(FAKE_QUERY);
    CHECK_CONTAINS(fake_db_sql(db), "SELECT bucket, seq FROM");
    char kb[4];
    snprintf(kb, sizeof(kb), "%d", k);
    char *cols[8] = {kb, "100"};
    unsigned long lens[8] = {strlen(kb), 3};
    fake_db_add_row(db, 0, cols, lens);
    fake_db_complete(db, 1, 0, NULL, 0);
    wait_pending(FAKE_QUERY); /* the first chunk */
    return db;
}

static void close_switch(ob_cursor_switch *s) {
    closes = 0;
    ob_cursor_switch_close(s);
    for (int i = 0; i < 20 && !closes; i++)
        uv_run(&loop, UV_RUN_NOWAIT);
    CHECK_EQ(closes, 1);
}

/* A missing privilege before any bucket was converted is a
 * misconfiguration: the relay refuses to run with its cause. */
static void a_missing_privilege_at_first_is_fatal(void) {
    ob_cursor_switch *s = new_switch();
    ob_cursor_switch_want(s, 1);
    ob_db *db = probe_finds_a_cursor(0);
    fake_db_complete(db, 0, ER_TABLEACCESS_DENIED_ERROR, "UPDATE command denied", 0);
    CHECK_EQ(fatals, 1);
    CHECK_EQ(ready, 0);
    close_switch(s);
}

/* A read-only server is an outage (a failover under way), not a
 * misconfiguration: waited out, then the bucket is converted. */
static void a_read_only_server_is_waited_out(void) {
    ob_cursor_switch *s = new_switch();
    ob_cursor_switch_want(s, 1);
    ob_db *db = probe_finds_a_cursor(0);
    fake_db_complete(db, 0, ER_OPTION_PREVENTS_STATEMENT, "read-only", 0);
    CHECK_EQ(fatals, 0);
    db = probe_finds_a_cursor(0); /* from the probe again, on a new connection */
    fake_db_complete(db, 1, 0, NULL, 0);
    wait_pending(FAKE_QUERY); /* the transaction that ends the bucket's cursor mode */
    char *cols[8] = {"100"};
    unsigned long lens[8] = {3};
    fake_db_add_row(db, 1, cols, lens);
    fake_db_complete(db, 1, 0, NULL, 0);
    CHECK_EQ(ready, 1);
    /* Once a bucket was converted, a privilege taken away is waited out
     * like the workers wait it out. */
    ob_cursor_switch_want(s, 2);
    db = probe_finds_a_cursor(1);
    fake_db_complete(db, 0, ER_TABLEACCESS_DENIED_ERROR, "UPDATE command denied", 0);
    CHECK_EQ(fatals, 0);
    probe_finds_a_cursor(1);
    close_switch(s);
}

int main(void) {
    uv_loop_init(&loop);
    a_missing_privilege_at_first_is_fatal();
    a_read_only_server_is_waited_out();
    CHECK_EQ(uv_loop_close(&loop), 0);
    printf("test_mode_switch: ok\n");
    return 0;
}
