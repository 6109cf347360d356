/* SPDX-License-Identifier: Apache-2.0 */
/* republish's statements: which rows, in which order, and the checked
 * time bounds (republish_rows.h). */
#include <string.h>

#include "buf.h"
#include "check.h"
#include "republish_rows.h"

static void times_are_checked_and_normalized(void) {
    char t[40];
    CHECK_EQ(ob_rp_time("2026-11-27", t, sizeof(t)), 0);
    CHECK_STR(t, "2026-11-27 00:00:00.000000");
    CHECK_EQ(ob_rp_time("2026-11-27T10:20Z", t, sizeof(t)), 0);
    CHECK_STR(t, "2026-11-27 10:20:00.000000");
    CHECK_EQ(ob_rp_time("2026-11-27 10:20:30.25", t, sizeof(t)), 0);
    CHECK_STR(t, "2026-11-27 10:20:30.250000");
    const char *bad[] = {"",
                         "yesterday",
                         "2026-13-01",
                         "2026-11-32",
                         "2026-11-27 25:00",
                         "2026-11-27 10:20:61",
                         "2026-11-27 10:20:30.1234567",
                         "2026-11-27'; DROP TABLE outbox; --",
                         "2026/11/27"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        CHECK_EQ(ob_rp_time(bad[i], t, sizeof(t)), -1);
}

static void plain_rows_by_id(void) {
    ob_rp_names n = {"outbox", "`outbox`", NULL, 0};
    outbox_republish_options o = {0};
    outbox_id to = {{0x01, 0x9a}};
    o.id_to = &to;
    ob_buf w = OB_BUF_INIT, b = OB_BUF_INIT;
    ob_rp_where(&w, &n, &o, "2026-11-27 00:00:00.000000", NULL);
    CHECK_STR(w.p, " FROM `outbox` o WHERE (o.status = 1) AND o.created_at >= '2026-11-27 "
                   "00:00:00.000000' AND o.id <= X'019a0000000000000000000000000000'");
    unsigned char after[16] = {0xff};
    ob_rp_page_sql(&b, &n, w.p, 1, 0, after);
    CHECK_CONTAINS(b.p, "SELECT o.id, o.aggregate_type, o.aggregate_id, o.event_type, o.payload, "
                        "o.headers, o.attempt_count, o.created_at, NULL FROM `outbox` o");
    CHECK_CONTAINS(b.p, " AND o.id > X'ff000000000000000000000000000000' ORDER BY o.id LIMIT 500");
    CHECK_EQ(strstr(b.p, "UPDATE") == NULL && strstr(b.p, "FOR UPDATE") == NULL, 1);
    ob_buf_free(&w);
    ob_buf_free(&b);
}

static void cursor_rows_by_seq(void) {
    ob_rp_names n = {"shop.outbox", "`shop`.`outbox`", "`shop`.`outbox_cursor`", 1};
    outbox_republish_options o = {0};
    o.has_seq_range = 1;
    o.seq_from = 10;
    o.seq_to = 20;
    o.include_dead = 1;
    ob_buf w = OB_BUF_INIT, b = OB_BUF_INIT;
    ob_rp_where(&w, &n, &o, NULL, NULL);
    CHECK_STR(w.p, " FROM `shop`.`outbox` o LEFT JOIN `shop`.`outbox_cursor` c ON c.table_name = "
                   "'shop.outbox' AND c.bucket = o.bucket WHERE (o.status = 1 OR (o.status = 0 "
                   "AND o.seq <= c.seq) OR o.status = -1) AND o.seq >= 10 AND o.seq <= 20");
    ob_rp_page_sql(&b, &n, w.p, 1, 14, NULL);
    CHECK_CONTAINS(b.p, "o.created_at, o.seq FROM");
    CHECK_CONTAINS(b.p, " AND o.seq > 14 ORDER BY o.seq LIMIT 500");
    ob_buf_free(&w);
    ob_buf_free(&b);
}

int main(void) {
    times_are_checked_and_normalized();
    plain_rows_by_id();
    cursor_rows_by_seq();
    puts("test_republish_sql: ok");
    return 0;
}
