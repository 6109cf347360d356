/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The partition maintainer against a real MariaDB:
 *   - it creates the lookahead by splitting the tail, and a second round
 *     changes nothing;
 *   - it drops only the partitions past the retention;
 *   - it keeps an expired partition that still holds a pending row (and
 *     says so in the log), and drops it once the row is processed;
 *   - it refuses, changing nothing, a table that is not partitioned, one
 *     partitioned another way, one of the other period, and a missing one.
 */
#include "check.h"
#include "integ.h"
#include "maint_run.h"
#include "schema.h"

static const char *DB = "it_maint_part";

/* One row whose id carries `ms`, with created_at (and processed_at) then. */
static void insert_at(MYSQL *c, uint64_t ms, int status) {
    outbox_id id;
    outbox_id_from_ms(&id, ms);
    char hex[33];
    for (int i = 0; i < 16; i++)
        snprintf(hex + 2 * i, 3, "%02x", id.b[i]);
    ti_exec(c,
            "INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload, status, "
            "created_at, processed_at) VALUES (X'%s', 'order', 'a', 'created', '{}', %d, "
            "FROM_UNIXTIME(%.3f), IF(%d = 1, FROM_UNIXTIME(%.3f), NULL))",
            hex, status, (double)ms / 1000.0, status, (double)ms / 1000.0);
}

/* "p<day> ... pmax" for days first..last relative to `today`, with bounds. */
static void expected(uint64_t today, int first, int last, int skip, char *out, size_t len) {
    size_t used = 0;
    for (int i = first; i <= last; i++) {
        if (i == skip)
            continue;
        uint64_t s = ob_period_add(today, 0, i);
        char name[32];
        ob_period_name(s, 0, name);
        ob_buf b = OB_BUF_INIT;
        ob_period_bound(&b, ob_period_add(s, 0, 1));
        /* X'<hex>' -> <hex> */
        used += (size_t)snprintf(out + used, len - used, "%s<%.32s> ", name, b.p + 2);
        ob_buf_free(&b);
    }
    snprintf(out + used, len - used, "pmax<MAXVALUE>");
}

static MYSQL *fresh(uint64_t now_ms, uint32_t lookahead) {
    outbox_schema_options so;
    outbox_schema_options_init(&so);
    so.partitioned = 1;
    so.lookahead = lookahead;
    so.now_ms = now_ms;
    return ti_db_fresh(DB, &so);
}

static void lookahead(uv_loop_t *loop, uint64_t today) {
    MYSQL *c = fresh(0, 1);
    ti_seed(c, "outbox", 3, 3, 64);
    outbox_maint_options o;
    tm_options(&o, DB);
    o.partition_lookahead = 5;
    outbox_maint *m = tm_new(loop, &o);

    tm_result t = tm_run(loop, m, OUTBOX_MAINT_PARTITIONS);
    CHECK_EQ(t.r.status, OUTBOX_OK);
    CHECK_EQ(t.r.created, 4);
    CHECK_EQ(t.r.dropped, 0);
    char got[4096], want[4096];
    tm_partitions(c, DB, "outbox", got, sizeof(got));
    expected(today, 0, 5, 99, want, sizeof(want));
    CHECK_STR(got, want);
    CHECK_EQ(ti_int(c, "SELECT COUNT(*) FROM outbox PARTITION (pmax)"), 0);
    CHECK_EQ(ti_int(c, "SELECT COUNT(*) FROM outbox"), 3);

    /* Already as it should be: no DDL at all. */
    t = tm_run(loop, m, OUTBOX_MAINT_PARTITIONS);
    CHECK_EQ(t.r.status, OUTBOX_OK);
    CHECK_EQ(t.r.created + t.r.dropped + t.r.kept, 0);
    tm_partitions(c, DB, "outbox", got, sizeof(got));
    CHECK_STR(got, want);
    tm_close(loop, m);
    mysql_close(c);
}

static void retention(uv_loop_t *loop, uint64_t today) {
    /* Days -10..+2, one processed row in each; a pending row in day -6 and
     * a dead one in day -5. */
    MYSQL *c = fresh(ob_period_add(today, 0, -10), 12);
    for (int i = -10; i <= 2; i++)
        insert_at(c, ob_period_add(today, 0, i) + 3600 * 1000, 1);
    uint64_t pending_day = ob_period_add(today, 0, -6);
    insert_at(c, pending_day + 7200 * 1000, 0);
    insert_at(c, ob_period_add(today, 0, -5) + 7200 * 1000, -1);
    char pending_name[32];
    ob_period_name(pending_day, 0, pending_name);

    outbox_maint_options o;
    tm_options(&o, DB);
    o.partition_lookahead = 2;
    o.partition_retention = 3;
    outbox_maint *m = tm_new(loop, &o);
    tm_logbuf[0] = '\0';
    tm_result t = tm_run(loop, m, OUTBOX_MAINT_PARTITIONS);
    CHECK_EQ(t.r.status, OUTBOX_OK);
    CHECK_EQ(t.r.created, 0);
    CHECK_EQ(t.r.dropped, 6); /* days -10..-4 but -6 */
    CHECK_EQ(t.r.kept, 1);
    char line[128];
    snprintf(line, sizeof(line),
             "keeping expired partition %s of it_maint_part.outbox: it still "
             "holds pending rows",
             pending_name);
    CHECK_CONTAINS(tm_logbuf, line);
    CHECK_CONTAINS(tm_logbuf, "(1 dead row(s) go with them)");

    char got[4096], want[4096], tail[4096];
    tm_partitions(c, DB, "outbox", got, sizeof(got));
    expected(today, -6, -6, 99, want, sizeof(want));
    want[strlen(want) - strlen("pmax<MAXVALUE>")] = '\0';
    expected(today, -3, 2, 99, tail, sizeof(tail));
    strcat(want, tail);
    CHECK_STR(got, want);
    /* Day -6 keeps both its rows; days -3..2 keep theirs; the rest is gone. */
    CHECK_EQ(ti_int(c, "SELECT COUNT(*) FROM outbox WHERE status = 0"), 1);
    CHECK_EQ(ti_int(c, "SELECT COUNT(*) FROM outbox WHERE status = -1"), 0);
    CHECK_EQ(ti_int(c, "SELECT COUNT(*) FROM outbox"), 1 + 1 + 6);

    /* Once the row is processed, its partition goes too. */
    ti_exec(c, "UPDATE outbox SET status = 1, processed_at = NOW(6) WHERE status = 0");
    t = tm_run(loop, m, OUTBOX_MAINT_PARTITIONS);
    CHECK_EQ(t.r.status, OUTBOX_OK);
    CHECK_EQ(t.r.dropped, 1);
    CHECK_EQ(t.r.kept, 0);
    tm_partitions(c, DB, "outbox", got, sizeof(got));
    CHECK_STR(got, tail);
    CHECK_EQ(ti_int(c, "SELECT COUNT(*) FROM outbox"), 6);
    tm_close(loop, m);
    mysql_close(c);
}

/* Runs a round that must be refused with `status` and a message holding
 * `says`, and checks that the table's partitions did not change. */
static void refused(uv_loop_t *loop, MYSQL *c, const char *table, int monthly, int status,
                    const char *says) {
    char before[4096], after[4096];
    tm_partitions(c, DB, table, before, sizeof(before));
    outbox_maint_options o;
    tm_options(&o, DB);
    o.table = table;
    o.partition_lookahead = 30;
    o.partition_retention = 1;
    o.partition_period = monthly ? OUTBOX_PARTITION_MONTH : OUTBOX_PARTITION_DAY;
    outbox_maint *m = tm_new(loop, &o);
    tm_result t = tm_run(loop, m, OUTBOX_MAINT_PARTITIONS);
    CHECK_EQ(t.r.status, status);
    CHECK_CONTAINS(t.message, says);
    CHECK_EQ(t.r.created + t.r.dropped, 0);
    tm_partitions(c, DB, table, after, sizeof(after));
    CHECK_STR(after, before);
    /* The lock was given back: a status job sees it free. */
    t = tm_run(loop, m, OUTBOX_MAINT_STATUS);
    CHECK_EQ(t.r.status, status == OUTBOX_ENOTFOUND ? OUTBOX_ENOTFOUND : OUTBOX_OK);
    CHECK_EQ(t.r.lock_holder, 0);
    tm_close(loop, m);
}

static void refusals(uv_loop_t *loop) {
    MYSQL *c = fresh(0, 2);
    outbox_schema_options so;
    outbox_schema_options_init(&so);
    so.table = "plain";
    so.with_function = 0;
    char *ddl = NULL;
    CHECK_EQ(outbox_schema_ddl(&so, &ddl, NULL, 0), OUTBOX_OK);
    ti_exec(c, "%s", ddl);
    free(ddl);
    ti_exec(c, "CREATE TABLE hashed LIKE plain; ALTER TABLE hashed PARTITION BY KEY (id) "
               "PARTITIONS 2");
    ti_exec(c, "CREATE TABLE nomax LIKE plain; ALTER TABLE nomax PARTITION BY RANGE COLUMNS "
               "(id) (PARTITION p20000101 VALUES LESS THAN (X'00dc6ff6080000000000000000000000'))");

    refused(loop, c, "plain", 0, OUTBOX_ESCHEMA, "table it_maint_part.plain is not partitioned");
    refused(loop, c, "hashed", 0, OUTBOX_ESCHEMA, "not RANGE COLUMNS(id)");
    refused(loop, c, "nomax", 0, OUTBOX_ESCHEMA, "has no MAXVALUE tail partition");
    refused(loop, c, "outbox", 1, OUTBOX_ESCHEMA, "is not a monthly partition name (pYYYYMM)");
    refused(loop, c, "missing", 0, OUTBOX_ENOTFOUND, "table it_maint_part.missing does not exist");

    /* A bad table name never reaches the server. */
    outbox_maint_options o;
    tm_options(&o, DB);
    o.table = "outbox; DROP TABLE outbox";
    outbox_maint *m = NULL;
    char err[256];
    CHECK_EQ(outbox_maint_create(&m, loop, &o, err, sizeof(err)), OUTBOX_EINVAL);
    CHECK(m == NULL);
    CHECK_CONTAINS(err, "is not allowed");
    mysql_close(c);
}

int main(void) {
    MYSQL *c = ti_db_connect(NULL);
    uint64_t today = ob_period_start((uint64_t)ti_int(c, "SELECT UNIX_TIMESTAMP()") * 1000, 0);
    mysql_close(c);
    uv_loop_t loop;
    uv_loop_init(&loop);
    lookahead(&loop, today);
    retention(&loop, today);
    refusals(&loop);
    CHECK_EQ(uv_loop_close(&loop), 0);
    puts("maint_partitions: ok");
    return 0;
}
