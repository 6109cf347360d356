/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Two maintainers at once never both run DDL:
 *   - while another session holds the maintenance lock, a round is skipped
 *     (OUTBOX_EBUSY) and changes nothing;
 *   - while maintainer A's REORGANIZE waits behind an open transaction (so A
 *     certainly holds the lock), maintainer B's round is skipped; A's DDL
 *     then completes once the transaction ends;
 *   - two maintainers started together: exactly the missing partitions are
 *     created, by one of them only.
 */
#include <unistd.h>

#include "check.h"
#include "integ.h"
#include "maint_run.h"

static const char *DB = "it_maint_lock";
static const char *LOCK = "outbox-uvrelay:it_maint_lock.outbox";

static MYSQL *fresh(void) {
    outbox_schema_options so;
    outbox_schema_options_init(&so);
    so.partitioned = 1;
    so.lookahead = 1;
    return ti_db_fresh(DB, &so);
}

static outbox_maint *maintainer(uv_loop_t *loop, const char *name, uint32_t lookahead) {
    outbox_maint_options o;
    tm_options(&o, DB);
    o.partition_lookahead = lookahead;
    o.log_data = (void *)name;
    return tm_new(loop, &o);
}

static long long npartitions(MYSQL *c) {
    return ti_int(c,
                  "SELECT COUNT(*) FROM information_schema.PARTITIONS WHERE TABLE_SCHEMA = "
                  "'%s' AND TABLE_NAME = 'outbox'",
                  DB);
}

static void held_elsewhere(uv_loop_t *loop) {
    MYSQL *c = fresh();
    MYSQL *other = ti_db_connect(DB);
    CHECK_EQ(ti_int(other, "SELECT GET_LOCK('%s', 0)", LOCK), 1);
    outbox_maint *a = maintainer(loop, "A", 4);
    tm_result t = tm_run(loop, a, OUTBOX_MAINT_PARTITIONS);
    CHECK_EQ(t.r.status, OUTBOX_EBUSY);
    CHECK_CONTAINS(t.message, "another instance holds the maintenance lock");
    CHECK_EQ(t.r.created, 0);
    CHECK_EQ(npartitions(c), 3);
    /* Cleanup rounds take the same lock. */
    t = tm_run(loop, a, OUTBOX_MAINT_CLEANUP);
    CHECK_EQ(t.r.status, OUTBOX_EBUSY);
    /* Status names the holder. */
    t = tm_run(loop, a, OUTBOX_MAINT_STATUS);
    CHECK_EQ(t.r.status, OUTBOX_OK);
    CHECK_EQ(t.r.lock_holder, ti_int(other, "SELECT CONNECTION_ID()"));

    ti_exec(other, "DO RELEASE_LOCK('%s')", LOCK);
    t = tm_run(loop, a, OUTBOX_MAINT_PARTITIONS);
    CHECK_EQ(t.r.status, OUTBOX_OK);
    CHECK_EQ(t.r.created, 3);
    CHECK_EQ(npartitions(c), 6);
    tm_close(loop, a);
    mysql_close(other);
    mysql_close(c);
}

static void ddl_in_progress(uv_loop_t *loop) {
    MYSQL *c = fresh();
    MYSQL *tx = ti_db_connect(DB);
    /* An open transaction that read the table holds a metadata lock, so
     * REORGANIZE waits for it (up to the maintainer's lock_wait_timeout). */
    ti_exec(tx, "START TRANSACTION");
    CHECK_EQ(ti_int(tx, "SELECT COUNT(*) FROM outbox"), 0);

    outbox_maint *a = maintainer(loop, "A", 4);
    tm_result ta, tb;
    tm_start(a, OUTBOX_MAINT_PARTITIONS, &ta);
    /* Wait until A's DDL is on the server, waiting. */
    int waiting = 0;
    for (int i = 0; i < 500 && !waiting; i++) {
        uv_run(loop, UV_RUN_NOWAIT);
        waiting = ti_int(c, "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE "
                            "'ALTER TABLE%%REORGANIZE%%'") > 0;
        if (!waiting)
            usleep(10000);
    }
    CHECK(waiting);
    CHECK(!ta.done);

    /* B is made only now: made beside A, its connect could win the race
     * for the lock under load, and A would be the one refused. */
    outbox_maint *b = maintainer(loop, "B", 4);
    tm_start(b, OUTBOX_MAINT_PARTITIONS, &tb);
    CHECK_EQ(ti_run_until(loop, &tb.done, 10000), 0);
    CHECK_EQ(tb.r.status, OUTBOX_EBUSY);
    CHECK_EQ(tb.r.created, 0);
    CHECK(!ta.done);

    ti_exec(tx, "COMMIT");
    CHECK_EQ(ti_run_until(loop, &ta.done, 10000), 0);
    CHECK_EQ(ta.r.status, OUTBOX_OK);
    CHECK_EQ(ta.r.created, 3);
    CHECK_EQ(npartitions(c), 6);
    tm_close(loop, a);
    tm_close(loop, b);
    mysql_close(tx);
    mysql_close(c);
}

static void started_together(uv_loop_t *loop) {
    MYSQL *c = fresh();
    outbox_maint *a = maintainer(loop, "A", 6);
    outbox_maint *b = maintainer(loop, "B", 6);
    tm_result ta, tb;
    tm_start(a, OUTBOX_MAINT_PARTITIONS, &ta);
    tm_start(b, OUTBOX_MAINT_PARTITIONS, &tb);
    CHECK_EQ(ti_run_until(loop, &ta.done, 10000), 0);
    CHECK_EQ(ti_run_until(loop, &tb.done, 10000), 0);
    fprintf(stderr, "together: A %s created %u, B %s created %u\n", outbox_strerror(ta.r.status),
            ta.r.created, outbox_strerror(tb.r.status), tb.r.created);
    CHECK(ta.r.status == OUTBOX_OK || ta.r.status == OUTBOX_EBUSY);
    CHECK(tb.r.status == OUTBOX_OK || tb.r.status == OUTBOX_EBUSY);
    CHECK(ta.r.created == 0 || tb.r.created == 0);
    CHECK_EQ(ta.r.created + tb.r.created, 5);
    CHECK_EQ(npartitions(c), 8);
    tm_close(loop, a);
    tm_close(loop, b);
    mysql_close(c);
}

int main(void) {
    uv_loop_t loop;
    uv_loop_init(&loop);
    held_elsewhere(&loop);
    ddl_in_progress(&loop);
    for (int i = 0; i < 5; i++)
        started_together(&loop);
    CHECK_EQ(uv_loop_close(&loop), 0);
    puts("maint_lock: ok");
    return 0;
}
