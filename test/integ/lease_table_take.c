/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The lease table's take, run as the relay writes it (lease_table.c) on a
 * real server: a bucket or the leadership is taken only when it is free,
 * already this instance's, or held by an identity whose presence row is
 * gone. A live holder keeps it, however the taker came to ask for it (a
 * survey read before the holder took it, on another node).
 *   - buckets: a claim of two buckets, one held by a live instance, takes
 *     the free one only; once the holder's presence row is deleted (its
 *     instance went stale), the same claim takes it;
 *   - the leadership: a standby's round leaves a live leader its row, and
 *     takes it once the leader's presence row is gone;
 *   - a taker whose own presence row is gone takes nothing.
 */
#include <inttypes.h>
#include <string.h>

#include "buf.h"
#include "check.h"
#include "integ.h"
#include "lease_table.h"

static const char *DB = "it_lease_table_take";
static const char *KEY = "0123456789abcdef";

static void registered(MYSQL *c, ob_lease_tbl *t) {
    ob_lease_tbl_init(t, "it_lease_table_take.outbox", KEY, 'm', 15000);
    ti_exec(c,
            "INSERT INTO outbox_lease (lease_key, kind, slot, holder, mode, stale_ms, renewed) "
            "VALUES ('%s', 'i', %" PRIu64 ", %" PRIu64 ", 'm', 15000, NOW(6))",
            KEY, t->me, t->me);
    t->registered = 1;
}

static void gone(MYSQL *c, const ob_lease_tbl *t) {
    ti_exec(c, "DELETE FROM outbox_lease WHERE lease_key = '%s' AND kind = 'i' AND slot = %" PRIu64,
            KEY, t->me);
}

static long long holder(MYSQL *c, char kind, int slot) {
    return ti_int(c,
                  "SELECT IFNULL(holder, 0) FROM outbox_lease WHERE lease_key = '%s' AND kind = "
                  "'%c' AND slot = %d",
                  KEY, kind, slot);
}

static void claim(MYSQL *c, const ob_lease_tbl *t, uint64_t take) {
    ob_buf sql = OB_BUF_INIT;
    ob_lease_tbl_claims(t, &sql, take, 0);
    CHECK(!sql.oom);
    ti_exec(c, "%s", sql.p);
    ob_buf_free(&sql);
}

static void survey_as_standby(MYSQL *c, ob_lease_tbl *t) {
    ob_buf sql = OB_BUF_INIT;
    ob_lease_tbl_survey(t, &sql, 1, 0);
    CHECK(!sql.oom);
    ti_exec(c, "%s", sql.p);
    ob_buf_free(&sql);
}

static void buckets(MYSQL *c) {
    ob_lease_tbl me, live;
    registered(c, &me);
    registered(c, &live);
    ti_exec(
        c,
        "INSERT INTO outbox_lease (lease_key, kind, slot, holder) VALUES ('%s', 'b', 5, %" PRIu64
        ")",
        KEY, live.me);
    claim(c, &me, (1ULL << 5) | (1ULL << 7));
    CHECK_EQ(holder(c, 'b', 5), (long long)live.me);
    CHECK_EQ(holder(c, 'b', 7), (long long)me.me);
    gone(c, &live);
    claim(c, &me, 1ULL << 5);
    CHECK_EQ(holder(c, 'b', 5), (long long)me.me);
    CHECK_EQ(holder(c, 'b', 7), (long long)me.me); /* its own: kept */
    /* A taker whose presence row went takes nothing, even a free bucket. */
    gone(c, &me);
    claim(c, &me, 1ULL << 9);
    CHECK_EQ(holder(c, 'b', 9), 0);
}

static void leadership(MYSQL *c) {
    ob_lease_tbl standby, leader;
    registered(c, &standby);
    registered(c, &leader);
    ti_exec(
        c,
        "INSERT INTO outbox_lease (lease_key, kind, slot, holder) VALUES ('%s', 'l', 0, %" PRIu64
        ")",
        KEY, leader.me);
    survey_as_standby(c, &standby);
    CHECK_EQ(holder(c, 'l', 0), (long long)leader.me);
    gone(c, &leader);
    survey_as_standby(c, &standby);
    CHECK_EQ(holder(c, 'l', 0), (long long)standby.me);
}

int main(void) {
    outbox_schema_options so;
    outbox_schema_options_init(&so);
    so.ordered = 1;
    MYSQL *c = ti_db_fresh(DB, &so);
    buckets(c);
    ti_exec(c, "DELETE FROM outbox_lease");
    leadership(c);
    mysql_close(c);
    printf("lease_table_take: ok\n");
    return 0;
}
