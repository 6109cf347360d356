/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Processing mode OUTBOX_DELETE_PROCESSED: every row reaches the stream
 * exactly once and is deleted at ack time, leaving the table empty; the
 * default mode, on the same rows, keeps them as processed.
 */
#include "check.h"
#include "integ.h"

static void relay_once(const char *db, outbox_processing_mode mode, int rows) {
    outbox_relay_options o;
    ti_relay_options(&o, db, "IT_DELMODE", "itdelmode");
    o.processing = mode;
    outbox_stats s = ti_relay_drain(&o, 30000);
    CHECK_EQ(s.acked, rows);
    CHECK_EQ(s.dead, 0);
}

int main(void) {
    ti_stream_delete("IT_DELMODE");
    MYSQL *c = ti_db_fresh("it_delete_mode", NULL);
    ti_seed(c, "outbox", 1200, 300, 256);
    relay_once("it_delete_mode", OUTBOX_DELETE_PROCESSED, 1200);
    CHECK_EQ(ti_int(c, "SELECT COUNT(*) FROM outbox"), 0);
    long long distinct = 0;
    CHECK_EQ(ti_stream_count("IT_DELMODE", &distinct), 1200);
    CHECK_EQ(distinct, 1200);

    ti_seed(c, "outbox", 300, 300, 256);
    relay_once("it_delete_mode", OUTBOX_KEEP_PROCESSED, 300);
    CHECK_EQ(ti_int(c, "SELECT COUNT(*) FROM outbox WHERE status = 1 AND processed_at IS NOT "
                       "NULL"),
             300);
    CHECK_EQ(ti_stream_count("IT_DELMODE", &distinct), 1500);
    CHECK_EQ(distinct, 1500);
    mysql_close(c);
    puts("relay_delete_mode: ok");
    return 0;
}
