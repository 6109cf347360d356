/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Cursor mode's statements (src/cursor_sql.c): the read takes the rows above
 * top and in the open gaps (runs of a stride named exactly, else merged into
 * at most 128 ranges), MAX(seq) when the gap tracker wants a mark, the payload only
 * of the owned buckets; a cursor only moves forward; a failed row to be
 * retried becomes status 2; a bucket's first cursor sits below its lowest
 * pending row.
 */
#include "check.h"
#include "cursor_fit.h"
#include "cursor_sql.h"

static void reads(void) {
    ob_gaps g = {0};
    ob_gaps_init(&g, 10);
    ob_gaps_take(&g, 12);
    ob_gaps_take(&g, 20);
    ob_buf b = OB_BUF_INIT;
    ob_cursor_sql_read(&b, "`outbox`", &g, UINT64_MAX, 500, 1, 0);
    CHECK_CONTAINS(b.p, "SELECT UNIX_TIMESTAMP(NOW(6)), (SELECT UNIX_TIMESTAMP(MIN(trx_started)) "
                        "FROM information_schema.INNODB_TRX WHERE trx_mysql_thread_id <> "
                        "CONNECTION_ID()), (SELECT MAX(seq) FROM `outbox`); SELECT id,");
    CHECK_CONTAINS(b.p, " payload, headers, attempt_count, created_at, NULL, seq, bucket, status "
                        "FROM `outbox` WHERE seq > 20 OR seq = 11 OR seq BETWEEN 13 AND 19 "
                        "ORDER BY seq LIMIT 500");
    ob_buf_reset(&b);
    ob_cursor_sql_read(&b, "`outbox`", &g, 0x5, 100, 0, 1);
    CHECK_CONTAINS(b.p, "SELECT UNIX_TIMESTAMP(NOW(6)), NULL, (SELECT MAX(seq) FROM `outbox`); ");
    CHECK_CONTAINS(b.p, "IF(bucket IN (0,2), payload, NULL), IF(bucket IN (0,2), headers, NULL)");
    CHECK_CONTAINS(b.p, " WHERE FALSE OR seq = 11 OR seq BETWEEN 13 AND 19 ORDER BY seq LIMIT 100");
    /* a mark waiting for its proof: no MAX(seq) */
    ob_gaps_mark(&g, 30);
    ob_buf_reset(&b);
    ob_cursor_sql_read(&b, "`outbox`", &g, UINT64_MAX, 500, 0, 0);
    CHECK_CONTAINS(b.p, "SELECT UNIX_TIMESTAMP(NOW(6)), NULL, NULL; ");
    /* 1,000 gaps of a counter stepping by 2: one clause names them exactly */
    ob_gaps_init(&g, 0);
    for (uint64_t s = 2; s <= 2000; s += 2)
        ob_gaps_take(&g, s);
    CHECK_EQ(g.n, 1000);
    ob_buf_reset(&b);
    ob_cursor_sql_read(&b, "`outbox`", &g, UINT64_MAX, 500, 0, 0);
    CHECK_CONTAINS(b.p, "WHERE seq > 2000 OR (seq BETWEEN 1 AND 1999 AND MOD(seq + 1, 2) < 1) "
                        "ORDER BY seq");
    /* stepping by 3 from offset 2 (2, 5, 8 ...), then one more gap of 4 */
    ob_gaps_init(&g, 0);
    for (uint64_t s = 2; s <= 302; s += 3)
        ob_gaps_take(&g, s);
    ob_gaps_take(&g, 307);
    ob_buf_reset(&b);
    ob_cursor_sql_read(&b, "`outbox`", &g, UINT64_MAX, 500, 0, 0);
    CHECK_CONTAINS(b.p, "WHERE seq > 307 OR seq = 1 OR (seq BETWEEN 3 AND 301 AND MOD(seq + 0, 3) "
                        "< 2) OR seq BETWEEN 303 AND 306 ORDER BY seq");
    /* 1,000 gaps of no common pattern: merged into at most 128 ranges that
     * cover them all */
    ob_gaps_init(&g, 0);
    uint64_t s = 0;
    for (int i = 0; i < 1000; i++) {
        s += 2 + (uint64_t)(i % 3 == 0) + (uint64_t)(i % 7 == 0);
        ob_gaps_take(&g, s);
    }
    CHECK_EQ(g.n, 1000);
    ob_buf_reset(&b);
    ob_cursor_sql_read(&b, "`outbox`", &g, UINT64_MAX, 500, 0, 0);
    int ranges = 0;
    for (const char *p = b.p; (p = strstr(p, " OR seq")) != NULL; p++)
        ranges++;
    CHECK_INT(ranges, <=, 128);
    CHECK(strstr(b.p, "MOD(") == NULL);
    CHECK_CONTAINS(b.p, "OR seq BETWEEN 1 AND ");
    char tail[64];
    snprintf(tail, sizeof(tail), " AND %llu ORDER BY seq", (unsigned long long)(s - 1));
    CHECK_CONTAINS(b.p, tail);
    ob_gaps_free(&g);
    ob_buf_free(&b);
}

static void writes(void) {
    ob_buf b = OB_BUF_INIT;
    ob_cursor_sql_advance(&b, "outbox_cursor", "outbox", 0x3, 42);
    CHECK_STR(b.p, "UPDATE outbox_cursor SET seq = 42 WHERE table_name = 'outbox' AND bucket IN "
                   "(0,1) AND seq < 42");
    ob_buf_reset(&b);
    ob_backoff bo = {OUTBOX_BACKOFF_FIXED, 1000, 1000, 0};
    ob_cursor_sql_fail_head(&b, "`outbox`", "boom", 4, 0, 5, &bo);
    CHECK_CONTAINS(b.p, ", status = IF(attempt_count >= 5, -1, 0)");
    CHECK_CONTAINS(b.p, ", status = IF(status = -1, -1, 2) WHERE id IN (");
    ob_buf_reset(&b);
    ob_cursor_sql_fail_head(&b, "`outbox`", "boom", 4, 1, 5, &bo);
    CHECK_CONTAINS(b.p, "status = -1, next_attempt_at = NULL, processed_at = NOW(6) WHERE id IN (");
    CHECK(strstr(b.p, "2)") == NULL);
    ob_buf_reset(&b);
    ob_cursor_sql_init(&b, "`outbox`", "outbox_cursor", "outbox", 0x1, 77, 0);
    CHECK_STR(b.p, "UPDATE `outbox` SET status = 2 WHERE bucket IN (0) AND status = 0 AND seq <= "
                   "77 AND next_attempt_at > NOW(6); INSERT IGNORE INTO outbox_cursor (table_name, "
                   "bucket, seq) SELECT 'outbox', s_.seq, IFNULL((SELECT MIN(o.seq) - 1 FROM "
                   "`outbox` o WHERE o.bucket = s_.seq AND o.status = 0 AND o.seq <= 77), 77) FROM "
                   "(WITH RECURSIVE s_(seq) AS (SELECT 0 UNION ALL SELECT seq + 1 FROM s_ WHERE "
                   "seq < 63) SELECT seq FROM s_) s_ WHERE s_.seq IN (0)");
    /* With the bucket index, the lookup names it: stale statistics cannot
     * turn it into a read of every pending row per bucket. */
    ob_buf_reset(&b);
    ob_cursor_sql_init(&b, "`outbox`", "outbox_cursor", "outbox", 0x1, 77, 1);
    CHECK_CONTAINS(b.p, "(SELECT MIN(o.seq) - 1 FROM `outbox` o FORCE INDEX (idx_bucket_seq) WHERE "
                        "o.bucket = s_.seq AND");
    ob_buf_free(&b);
}

/* The checked assumptions: the highest cursor is read before the counter
 * (a cursor never passes a seq handed out before it was written), the
 * grants probe writes nothing, the messages name the repair and the
 * grants. */
static void assumptions(void) {
    ob_buf b = OB_BUF_INIT;
    ob_cursor_fit_names app = {"app.outbox", "`app`.`outbox`", "`app`.outbox_cursor", 0};
    ob_cursor_fit_sql(&b, &app);
    CHECK_CONTAINS(b.p, "SELECT MAX(seq) FROM `app`.outbox_cursor WHERE table_name = 'app.outbox'; "
                        "SELECT AUTO_INCREMENT FROM information_schema.TABLES WHERE TABLE_SCHEMA = "
                        "'app' AND TABLE_NAME = 'outbox'; SELECT s.q, ");
    /* The witness: in the cursor rows, each check one dive into an index of seq. */
    CHECK_CONTAINS(b.p, "FROM (SELECT CAST(SUBSTRING_INDEX(witness, ':', 1) AS UNSIGNED) AS q, "
                        "SUBSTRING_INDEX(witness, ':', -1) AS h FROM `app`.outbox_cursor WHERE "
                        "table_name = 'app.outbox' AND witness IS NOT NULL LIMIT 1) s");
    CHECK_CONTAINS(b.p, "EXISTS (SELECT 1 FROM `app`.`outbox` o WHERE o.seq <= s.q)");
    /* The trigger that sets seq, unless the operator vouches for the producers. */
    CHECK_CONTAINS(b.p, "FROM information_schema.TRIGGERS WHERE EVENT_MANIPULATION = 'INSERT' AND "
                        "ACTION_TIMING = 'BEFORE' AND EVENT_OBJECT_SCHEMA = 'app' AND "
                        "EVENT_OBJECT_TABLE = 'outbox'");
    ob_buf_reset(&b);
    ob_cursor_fit_names plain = {"outbox", "`outbox`", "outbox_cursor", 1};
    ob_cursor_fit_sql(&b, &plain);
    CHECK_CONTAINS(b.p, "WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'outbox'");
    CHECK(strstr(b.p, "TRIGGERS") == NULL);
    ob_buf_reset(&b);
    ob_cursor_stamp_sql(&b, &plain, 300);
    CHECK_STR(b.p, "UPDATE outbox_cursor SET witness = (SELECT CONCAT(o.seq, ':', MD5(o.id)) FROM "
                   "`outbox` o WHERE o.seq = (SELECT MAX(seq) FROM `outbox` WHERE status = 0 AND "
                   "seq <= 300) LIMIT 1) WHERE table_name = 'outbox' AND witness IS NULL AND "
                   "(SELECT COUNT(*) FROM (SELECT 1 FROM outbox_cursor WHERE table_name = "
                   "'outbox' AND witness IS NOT NULL) w_) = 0");
    ob_buf_reset(&b);
    ob_cursor_grants_sql(&b, "`outbox`", "outbox_cursor");
    CHECK_STR(b.p, "UPDATE `outbox` SET status = status WHERE 1 = 0; INSERT INTO outbox_cursor "
                   "(table_name, bucket, seq) SELECT '', 0, 0 FROM DUAL WHERE 1 = 0; UPDATE "
                   "outbox_cursor SET seq = seq WHERE 1 = 0");
    ob_buf_free(&b);
    /* The stamp's verdicts: the witness at its seq, another row there, no
     * row there while rows below remain (a table put in its place), none
     * at or below it at all (emptied by partitions dropped: the same table). */
    char w[700];
    int stamped = 9;
    CHECK(ob_cursor_stamp_result(NULL, "outbox", &stamped, w, sizeof(w)) == 0 && stamped == 0);
    char *same[] = {"300", "1", "1", "300"}, *other[] = {"300", "1", "0", "300"};
    char *gone[] = {"300", "0", "0", "1"}, *empty[] = {"300", "0", "0", "0"};
    CHECK(ob_cursor_stamp_result(same, "outbox", &stamped, w, sizeof(w)) == 0 && stamped == 1);
    CHECK(ob_cursor_stamp_result(empty, "outbox", &stamped, w, sizeof(w)) == 0 && stamped == 1);
    CHECK(ob_cursor_stamp_result(other, "outbox", &stamped, w, sizeof(w)) == 1);
    CHECK_CONTAINS(w, "the row at seq 300 of table outbox, which its cursors were checked "
                      "against, is another row");
    CHECK_CONTAINS(w, "outbox-uvrelay cursor-reset --table outbox");
    CHECK(ob_cursor_stamp_result(gone, "outbox", &stamped, w, sizeof(w)) == 1);
    CHECK_CONTAINS(w, "is gone while rows below it remain");
    char t[600];
    ob_cursor_mismatch_why(t, sizeof(t), "outbox", 300, 256);
    CHECK_CONTAINS(t, "(up to seq 300) are at or above its AUTO_INCREMENT counter (256)");
    CHECK_CONTAINS(t, "repair with outbox-uvrelay cursor-reset --table outbox");
    ob_cursor_grants_text(t, sizeof(t), "shop.outbox", "relay");
    CHECK_STR(t, "GRANT SELECT, UPDATE ON shop.outbox TO 'relay'@'<host>'; GRANT SELECT, INSERT, "
                 "UPDATE ON shop.outbox_cursor TO 'relay'@'<host>'; GRANT PROCESS ON *.* TO "
                 "'relay'@'<host>'");
}

int main(void) {
    reads();
    writes();
    assumptions();
    return 0;
}
