/* SPDX-License-Identifier: Apache-2.0 */
/* SQL text of the batch cycle. */
#include "buf.h"
#include "check.h"
#include "sql.h"

static void table_names(void) {
    char err[256];
    CHECK_EQ(ob_sql_check_table("outbox", err, sizeof(err)), 0);
    CHECK_EQ(ob_sql_check_table("app_1.Outbox_2", err, sizeof(err)), 0);
    const char *bad[] = {"", "a.b.c", ".a", "a.", "a b", "a;drop", "a`b", "a-b", "é"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        CHECK_EQ(ob_sql_check_table(bad[i], err, sizeof(err)), -1);
        CHECK_CONTAINS(err, "table name");
    }
    char long_name[80];
    memset(long_name, 'a', 65);
    long_name[65] = '\0';
    CHECK_EQ(ob_sql_check_table(long_name, err, sizeof(err)), -1);
    ob_buf b = OB_BUF_INIT;
    ob_sql_quote_table(&b, "app.outbox");
    CHECK_STR(b.p, "`app`.`outbox`");
    ob_buf_reset(&b);
    ob_sql_quote_table(&b, "outbox");
    CHECK_STR(b.p, "`outbox`");
    ob_buf_free(&b);
}

static void fetch_is_one_round_trip(void) {
    ob_buf b = OB_BUF_INIT;
    ob_sql_fetch(&b, "`outbox`", 250);
    CHECK_CONTAINS(b.p, "START TRANSACTION; SELECT id, aggregate_type, aggregate_id, event_type, "
                        "payload, headers, attempt_count, created_at FROM `outbox`");
    CHECK_CONTAINS(b.p, "WHERE status = 0");
    CHECK_CONTAINS(b.p, "next_attempt_at <= NOW(6)");
    CHECK_CONTAINS(b.p, "ORDER BY id LIMIT 250 FOR UPDATE SKIP LOCKED");
    ob_buf_free(&b);
}

static void processed_and_failed_statements(void) {
    ob_buf b = OB_BUF_INIT;
    unsigned char id1[16] = {0x01, 0x9a}, id2[16] = {0xff};
    ob_sql_processed_head(&b, "`t`", OUTBOX_KEEP_PROCESSED);
    ob_sql_add_id(&b, id1, 1);
    ob_sql_add_id(&b, id2, 0);
    ob_sql_end_ids(&b);
    CHECK_STR(b.p, "UPDATE `t` SET status = 1, processed_at = NOW(6), next_attempt_at = NULL "
                   "WHERE id IN (X'019a0000000000000000000000000000',"
                   "X'ff000000000000000000000000000000');");
    ob_buf_reset(&b);
    ob_sql_processed_head(&b, "`t`", OUTBOX_DELETE_PROCESSED);
    CHECK_STR(b.p, "DELETE FROM `t` WHERE id IN (");

    ob_backoff bo = {OUTBOX_BACKOFF_EXPONENTIAL, 1000, 60000, 0.2};
    ob_buf_reset(&b);
    ob_sql_fail_head(&b, "`t`", "it's", 4, 0, 5, &bo);
    CHECK_CONTAINS(b.p, "attempt_count = attempt_count + 1, last_error = _utf8mb4 X'69742773'");
    CHECK_CONTAINS(b.p, "status = IF(attempt_count >= 5, -1, 0), processed_at = IF(attempt_count "
                        ">= 5, NOW(6), NULL)");
    CHECK_CONTAINS(b.p, "LEAST(60000000, 1000000 * POW(2, LEAST(attempt_count - 1, 40)))");
    CHECK_CONTAINS(b.p, "* (1 - 0.2000 * RAND())");
    ob_buf_reset(&b);
    ob_sql_fail_head(&b, "`t`", "x", 1, 1, 5, &bo);
    CHECK_CONTAINS(b.p, "status = -1, next_attempt_at = NULL, processed_at = NOW(6) WHERE id IN (");
    ob_backoff fixed = {OUTBOX_BACKOFF_FIXED, 500, 500, 0};
    ob_buf_reset(&b);
    ob_sql_fail_head(&b, "`t`", "x", 1, 0, 3, &fixed);
    CHECK_CONTAINS(b.p, "TIMESTAMPADD(MICROSECOND, FLOOR(500000), NOW(6))");
    ob_buf_free(&b);
}

static void error_text_is_valid_utf8_and_capped(void) {
    ob_buf b = OB_BUF_INIT;
    /* "é" stays, a lone 0xff becomes '?', a cut 3-byte sequence becomes '?' */
    ob_sql_text_literal(&b, "\xc3\xa9\xff\xe2\x82", 5, 100);
    CHECK_STR(b.p, "_utf8mb4 X'c3a93f3f3f'");
    ob_buf_reset(&b);
    char big[3000];
    memset(big, 'a', sizeof(big));
    ob_sql_text_literal(&b, big, sizeof(big), OB_LAST_ERROR_MAX);
    CHECK_EQ(b.len, strlen("_utf8mb4 X''") + 2 * OB_LAST_ERROR_MAX);
    ob_buf_free(&b);
}

static void backoff_delays(void) {
    ob_backoff e = {OUTBOX_BACKOFF_EXPONENTIAL, 1000, 60000, 0};
    CHECK_EQ(ob_backoff_delay_ms(&e, 1), 1000);
    CHECK_EQ(ob_backoff_delay_ms(&e, 2), 2000);
    CHECK_EQ(ob_backoff_delay_ms(&e, 4), 8000);
    CHECK_EQ(ob_backoff_delay_ms(&e, 7), 60000);
    CHECK_EQ(ob_backoff_delay_ms(&e, 100), 60000);
    ob_backoff f = {OUTBOX_BACKOFF_FIXED, 300, 60000, 0};
    CHECK_EQ(ob_backoff_delay_ms(&f, 9), 300);
}

int main(void) {
    table_names();
    fetch_is_one_round_trip();
    processed_and_failed_statements();
    error_text_is_valid_utf8_and_capped();
    backoff_delays();
    puts("test_sql: ok");
    return 0;
}
