/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The cleanup maintainer deletes exactly what it should: processed rows
 * whose processing is older than the retention, within the round's limit,
 * and old dead rows only when asked; never pending rows, recent rows, or
 * rows that waited long but were processed recently.
 */
#include "check.h"
#include "integ.h"
#include "maint_run.h"

static const char *DB = "it_maint_cleanup";

#define MINUTE 60000ULL
#define HOUR (60 * MINUTE)
#define DAY (24 * HOUR)

/* n rows tagged `tag` (their aggregate_type), created at created_ms + i ms,
 * with `status`, processed at processed_ms (0: NULL). */
static void rows(MYSQL *c, const char *tag, int n, uint64_t created_ms, int status,
                 uint64_t processed_ms) {
    char processed[64] = "NULL";
    if (processed_ms)
        snprintf(processed, sizeof(processed), "FROM_UNIXTIME(%.3f)", (double)processed_ms / 1000);
    ti_exec(c,
            "INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload, status, "
            "created_at, processed_at) SELECT UNHEX(CONCAT(LPAD(HEX(%llu + seq), 12, '0'), "
            "'7000', '8', HEX('%s'), LPAD(HEX(seq), 13, '0'))), '%s', CONCAT('a', seq), "
            "'created', '{}', %d, FROM_UNIXTIME((%llu + seq) / 1000), %s FROM seq_1_to_%d",
            (unsigned long long)created_ms, tag, tag, status, (unsigned long long)created_ms,
            processed, n);
}

static long long count(MYSQL *c, const char *tag) {
    return ti_int(c, "SELECT COUNT(*) FROM outbox WHERE aggregate_type = '%s'", tag);
}

static tm_result round_of(uv_loop_t *loop, uint32_t limit, int include_dead) {
    outbox_maint_options o;
    tm_options(&o, DB);
    o.cleanup_retention_ms = 7 * DAY;
    o.cleanup_limit = limit;
    o.cleanup_include_dead = include_dead;
    outbox_maint *m = tm_new(loop, &o);
    tm_result t = tm_run(loop, m, OUTBOX_MAINT_CLEANUP);
    tm_close(loop, m);
    CHECK_EQ(t.r.status, OUTBOX_OK);
    return t;
}

int main(void) {
    MYSQL *c = ti_db_fresh(DB, NULL);
    uint64_t now = (uint64_t)ti_int(c, "SELECT UNIX_TIMESTAMP()") * 1000;
    uint64_t old = now - 10 * DAY, recent = now - HOUR;
    rows(c, "A", 2500, old, 1, old + MINUTE); /* processed long ago: deleted */
    rows(c, "B", 5, old, 1, recent);          /* waited long, processed recently: kept */
    rows(c, "C", 5, recent, 1, recent);       /* recent: kept */
    rows(c, "D", 5, old, 0, 0);               /* pending, however old: kept */
    rows(c, "E", 5, old + HOUR, -1, 0);       /* dead and old: only with include_dead */
    rows(c, "F", 5, recent, -1, 0);           /* dead and recent: kept */

    uv_loop_t loop;
    uv_loop_init(&loop);

    /* The limit bounds a round; rounds go on where the last one stopped. */
    tm_result t = round_of(&loop, 1000, 0);
    CHECK_EQ(t.r.changed, 1000);
    CHECK_EQ(t.r.changed_dead, 0);
    CHECK_EQ(count(c, "A"), 1500);
    t = round_of(&loop, 10000, 0);
    CHECK_EQ(t.r.changed, 1500);
    t = round_of(&loop, 10000, 0);
    CHECK_EQ(t.r.changed, 0);
    CHECK_EQ(count(c, "A"), 0);
    CHECK_EQ(count(c, "B"), 5);
    CHECK_EQ(count(c, "C"), 5);
    CHECK_EQ(count(c, "D"), 5);
    CHECK_EQ(count(c, "E"), 5);
    CHECK_EQ(count(c, "F"), 5);

    /* Dead rows only when asked, and only the old ones. */
    t = round_of(&loop, 10000, 1);
    CHECK_EQ(t.r.changed, 5);
    CHECK_EQ(t.r.changed_dead, 5);
    CHECK_EQ(count(c, "E"), 0);
    CHECK_EQ(count(c, "F"), 5);
    CHECK_EQ(count(c, "D"), 5);

    /* One limit for both kinds: processed rows first, then dead ones. */
    rows(c, "G", 30, old + 2 * HOUR, 1, old + 3 * HOUR);
    rows(c, "H", 30, old + 4 * HOUR, -1, 0);
    t = round_of(&loop, 40, 1);
    CHECK_EQ(t.r.changed, 40);
    CHECK_EQ(t.r.changed_dead, 10);
    CHECK_EQ(count(c, "G"), 0);
    CHECK_EQ(count(c, "H"), 20);
    CHECK_EQ(ti_int(c, "SELECT COUNT(*) FROM outbox"), 5 + 5 + 5 + 5 + 20);

    CHECK_EQ(uv_loop_close(&loop), 0);
    mysql_close(c);
    puts("maint_cleanup: ok");
    return 0;
}
