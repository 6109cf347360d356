/* SPDX-License-Identifier: Apache-2.0 */
/*
 * --max-in-flight-bytes bounds what every mode holds: plain, ordered and
 * leader relays (two connections each; leader mode uses one) deliver 300
 * rows of 16 KiB under a 256 KiB budget, and the peak of the bytes they
 * held at once (stats.claimed_bytes_peak, the rows of each connection's
 * last batch) stays within the budget, while every row is delivered once.
 * Without the budget an ordered fetch of 500 rows would hold ~5 MiB.
 */
#include <string.h>

#include "check.h"
#include "integ.h"

#define ROWS 300
#define PAYLOAD (16 * 1024)
#define BUDGET (256 * 1024)

static void run(const char *db, const char *stream, const char *prefix, int ordered, int leader) {
    outbox_schema_options so;
    outbox_schema_options_init(&so);
    so.ordered = 1;
    MYSQL *m = ti_db_fresh(db, &so);
    ti_stream_delete(stream);
    ti_seed(m, "outbox", ROWS, 50, PAYLOAD);

    outbox_relay_options o;
    ti_relay_options(&o, db, stream, prefix);
    o.ordered = ordered;
    o.leader = leader;
    o.connections = 2;
    o.batch_size = 500;
    o.max_in_flight_bytes = BUDGET;
    outbox_stats s = ti_relay_drain(&o, 120000);
    printf("%s: peak %llu bytes held of a %d-byte budget, %llu batches\n", db,
           (unsigned long long)s.claimed_bytes_peak, BUDGET, (unsigned long long)s.batches);
    CHECK_INT(s.claimed_bytes_peak, >, PAYLOAD);
    CHECK_INT(s.claimed_bytes_peak, <=, BUDGET);
    CHECK_EQ(ti_int(m, "SELECT COUNT(*) FROM outbox WHERE status = 1"), ROWS);
    long long distinct = 0;
    CHECK_EQ(ti_stream_count(stream, &distinct), ROWS);
    CHECK_EQ(distinct, ROWS);
    mysql_close(m);
}

int main(void) {
    run("it_budget_plain", "IT_BUDGET_PLAIN", "itbudgetp", 0, 0);
    run("it_budget_ordered", "IT_BUDGET_ORDERED", "itbudgeto", 1, 0);
    run("it_budget_leader", "IT_BUDGET_LEADER", "itbudgetl", 0, 1);
    printf("budget_modes: ok\n");
    return 0;
}
