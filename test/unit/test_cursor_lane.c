/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The cursor reader's retry lane without servers, as test_cursor.c drives
 * the rest of the reader (see there): status-2 rows read again when due, the
 * drain waiting for them, and the lane read in pages so that a row due past
 * a full page of rows due later is reached without passing a held one.
 */
#include <mysqld_error.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "check.h"
#include "cursor_harness.h"

/* --- the retry lane ------------------------------------------------------ */

static void a_failed_publish_goes_to_the_retry_lane_and_is_read_again(void) {
    make_reader();
    own.drain_wanted = 1;
    start_reading(0x3, 10);
    fp.fail_seq = 11;
    read_clock(NULL, 0);
    outbox_row(1, 11, 0, "a", "0", NULL);
    outbox_row(1, 12, 1, "b", "0", NULL);
    ok_read();
    CHECK_EQ(fp.published, 1);
    CHECK_EQ(fp.seq[0], 12);
    ack_from(0);
    /* The finish writes the failure (an attempt, status 2) and moves the
     * cursor past it in the same round trip: the lane has it now. */
    serve_until(S_FINISH);
    const char *sql = fake_db_sql(db());
    CHECK(strstr(sql, "status = IF(status = -1, -1, 2)") != NULL);
    CHECK(strstr(sql, "attempt_count = attempt_count + 1") != NULL);
    CHECK_EQ(nadv, 1);
    CHECK_EQ(adv[0], 12);
    ok();
    CHECK_EQ(own.drained, 0);
    /* The lane reads it (due) and publishes it again. */
    fp.fail_seq = 0;
    serve_until(S_LANE);
    CHECK_EQ(own.drained, 0); /* never drained while the lane has a row due */
    outbox_row(0, 11, 0, "a", "0", "0");
    ok();
    CHECK_EQ(fp.published, 2);
    CHECK_EQ(fp.seq[1], 11);
    ack_from(1);
    serve_until(S_FINISH);
    CHECK(starts(fake_db_sql(db()), "UPDATE `outbox` SET status = 1, processed_at = NOW(6)"));
    ok();
    CHECK_EQ(own.drained, 0);
    /* Empty lane and reads: drained. */
    for (int n = 0; n < 5000 && !own.drained; n++) {
        next_stmt();
        answer_empty();
    }
    CHECK_EQ(own.drained, 1);
    CHECK_EQ(stats.acked, 2);
    CHECK_EQ(stats.failed, 1);
    close_reader();
}

/* A status-2 row within the drain's horizon keeps the drain open, whether
 * it is due now or still waiting for its retry, and so do the rows held
 * behind it; a row due only past the horizon does not. */
static void the_drain_waits_for_the_lanes_rows_within_the_horizon(void) {
    make_reader();
    own.drain_wanted = 1;
    start_lane(0x3, 10);
    int lanes = 0;
    for (int n = 0; n < 5000 && lanes < 3; n++) {
        stmt k = n == 0 ? S_LANE : next_stmt();
        if (k == S_LANE) {
            /* a row waiting for its retry, due within the horizon, and a
             * row of its aggregate behind it */
            outbox_row(0, 5, 0, "a", "0", "1");
            outbox_row(0, 8, 0, "a", "0", "0");
            lanes++;
            ok();
            continue;
        }
        CHECK(k == S_READ || k == S_ADVANCE || k == S_FINISH);
        answer_empty();
    }
    CHECK_EQ(lanes, 3);
    CHECK_EQ(fp.published, 0); /* the row behind the waiting one waits too */
    CHECK_EQ(own.drained, 0);
    /* The waiting row now due only past the horizon, nothing behind it: the
     * drain ends (it is scheduled later, as the README says). */
    for (int n = 0; n < 5000 && !own.drained; n++) {
        stmt k = next_stmt();
        if (k == S_LANE)
            outbox_row(0, 5, 0, "a", "1", "1");
        answer_empty();
    }
    CHECK_EQ(own.drained, 1);
    close_reader();
}

/* A full lane read of rows due only past the horizon does not end the
 * drain while a row past its LIMIT is due within it: the lane's flag for
 * the whole lane says so. */
static void the_drain_waits_for_a_lane_row_past_the_limit(void) {
    make_reader();
    own.drain_wanted = 1;
    start_lane(0x3, 100);
    lane_soon_past = "1";
    int lanes = 0;
    for (int n = 0; n < 5000 && lanes < 3; n++) {
        stmt k = n == 0 ? S_LANE : next_stmt();
        if (k == S_LANE) {
            CHECK(strstr(fake_db_sql(db()), "EXISTS(SELECT 1 FROM `outbox` WHERE status = 2") !=
                  NULL);
            for (int i = 0; i < 10; i++) { /* the batch size: the LIMIT */
                char agg[8];
                snprintf(agg, sizeof(agg), "a%d", i);
                outbox_row(0, (uint64_t)(5 + i), i % 2, agg, "1", "1");
            }
            lanes++;
            ok();
            continue;
        }
        CHECK(k == S_READ || k == S_ADVANCE || k == S_FINISH);
        answer_empty();
    }
    CHECK_EQ(lanes, 3);
    CHECK_EQ(fp.published, 0);
    CHECK_EQ(own.drained, 0);
    /* Nothing past the LIMIT is due within the horizon any more: drained. */
    lane_soon_past = "0";
    for (int n = 0; n < 5000 && !own.drained; n++) {
        stmt k = next_stmt();
        if (k == S_LANE)
            outbox_row(0, 5, 0, "a0", "1", "1");
        answer_empty();
    }
    CHECK_EQ(own.drained, 1);
    close_reader();
}

/* --- the retry lane's pages --------------------------------------------- */

/* The lane's status-2 rows as a server holds them (bucket 0, in seq order):
 * `waiting` 1 while the row's retry is not due (then due only past the
 * horizon); gone once acked. */
typedef struct lane_row {
    uint64_t seq;
    const char *agg;
    int waiting;
    int gone;
} lane_row;
static lane_row lane_tab[32];
static int lane_n;
static uint64_t lane_after[64]; /* each lane read's `seq >` (0: none) */
static int lane_reads;

static void lane_add(uint64_t seq, const char *agg, int waiting) {
    CHECK(lane_n < 32);
    lane_tab[lane_n++] = (lane_row){seq, agg, waiting, 0};
}

/* Answers the lane statement under way from lane_tab: its rows above the
 * statement's `seq >`, at most the batch size (10). */
static void answer_lane(void) {
    const char *sql = fake_db_sql(db());
    const char *p = strstr(sql, " AND seq > ");
    uint64_t after = p ? strtoull(p + strlen(" AND seq > "), NULL, 10) : 0;
    CHECK(lane_reads < 64);
    lane_after[lane_reads++] = after;
    int soon = 0;
    for (int i = 0; i < lane_n; i++)
        soon |= !lane_tab[i].gone && !lane_tab[i].waiting;
    lane_soon_past = strstr(sql, "EXISTS(") ? (soon ? "1" : "0") : NULL;
    for (int i = 0, n = 0; i < lane_n && n < 10; i++) {
        const lane_row *r = &lane_tab[i];
        if (r->gone || r->seq <= after)
            continue;
        outbox_row(0, r->seq, 0, r->agg, r->waiting ? "1" : "0", r->waiting ? "1" : "0");
        n++;
    }
    ok();
}

/* Serves the reader (empty reads, lanes from lane_tab, writes) until it
 * made `lanes` lane reads; what it publishes is acked and leaves the lane. */
static void serve_lanes(int lanes) {
    for (int n = 0; n < 5000 && lane_reads < lanes; n++) {
        stmt k = next_stmt();
        int before = fp.published;
        if (k == S_LANE)
            answer_lane();
        else
            answer_empty();
        for (int j = 0; j < lane_n && k == S_LANE; j++)
            lane_tab[j].waiting |= lane_tab[j].seq == fp.fail_seq; /* its next retry */
        for (int i = before; i < fp.published; i++)
            for (int j = 0; j < lane_n; j++)
                lane_tab[j].gone |= lane_tab[j].seq == fp.seq[i];
        ack_from(before);
    }
    CHECK_EQ(lane_reads, lanes);
}

static void start_lane_pages(void) {
    make_reader();
    lane_n = lane_reads = 0;
    start_lane(0x1, 1000);
}

/* A full page of rows due later (a bad subject at a long backoff) does not
 * keep the lane from a due row of another aggregate past it. */
static void a_due_row_past_a_full_page_of_rows_due_later_is_published(void) {
    start_lane_pages();
    for (uint64_t s = 1; s <= 10; s++)
        lane_add(s, "bad", 1);
    lane_add(11, "good", 0);
    serve_lanes(2);
    CHECK_EQ(fp.published, 1); /* at the second lane read */
    CHECK_EQ(fp.seq[0], 11);
    serve_lanes(6);
    CHECK_EQ(fp.published, 1);
    close_reader();
}

/* A row on a later page whose aggregate has a row waiting on an earlier
 * page is not published before it: the pass carries the aggregate. */
static void a_later_page_does_not_pass_a_row_waiting_on_an_earlier_one(void) {
    start_lane_pages();
    lane_add(1, "x", 1);
    for (uint64_t s = 2; s <= 10; s++)
        lane_add(s, "bad", 1);
    lane_add(11, "x", 0); /* held behind x's row 1: due, but not its turn */
    lane_add(12, "y", 0);
    serve_lanes(6);
    CHECK_EQ(fp.published, 1);
    CHECK_EQ(fp.seq[0], 12);
    /* The pass read every status-2 row: x is held, and its new row is
     * written status 2 rather than published. */
    while (next_stmt() != S_READ) {
        if (kind_of(fake_db_sql(db())) == S_LANE)
            answer_lane();
        else
            answer_empty();
    }
    read_clock(NULL, 0);
    outbox_row(1, 1001, 0, "x", "0", NULL);
    outbox_row(1, 1002, 0, "z", "0", NULL);
    ok_read();
    CHECK_EQ(fp.published, 2);
    CHECK_EQ(fp.seq[1], 1002);
    ack_from(1);
    stmt k;
    while ((k = next_stmt()) != S_FINISH) {
        CHECK(k == S_LANE || k == S_READ || k == S_ADVANCE);
        if (k == S_LANE)
            answer_lane();
        else
            answer_empty();
    }
    CHECK(strstr(fake_db_sql(db()), "UPDATE `outbox` SET status = 2 WHERE id IN (") != NULL);
    ok();
    close_reader();
}

/* A row that fails again on a page holds its aggregate on the pages after
 * it in the same pass: its due row there waits for the next pass. */
static void a_row_failing_again_holds_its_aggregate_on_later_pages(void) {
    start_lane_pages();
    lane_add(1, "w", 0);
    for (uint64_t s = 2; s <= 10; s++)
        lane_add(s, "bad", 1);
    lane_add(11, "w", 0);
    fp.fail_seq = 1;
    serve_lanes(6);
    CHECK_EQ(fp.published, 0);
    CHECK_EQ(stats.failed, 1);
    close_reader();
}

/* A row written status 2 above the pass's page (a new row failing) is
 * seen in turn by the pass: its aggregate's due row below it, on the next
 * page, is published, not held for a pass. */
static void a_row_failing_above_the_page_does_not_hold_its_aggregate_below(void) {
    start_lane_pages();
    for (uint64_t s = 1; s <= 10; s++)
        lane_add(s, "bad", 1);
    lane_add(11, "hot", 0);
    serve_lanes(1);
    stmt k;
    while ((k = next_stmt()) != S_READ) {
        CHECK(k != S_LANE);
        answer_empty();
    }
    fp.fail_seq = 1001;
    read_clock(NULL, 0);
    outbox_row(1, 1001, 0, "hot", "0", NULL);
    ok_read();
    while ((k = next_stmt()) != S_FINISH) {
        CHECK(k != S_LANE);
        answer_empty();
    }
    CHECK(strstr(fake_db_sql(db()), "status = IF(status = -1, -1, 2)") != NULL);
    ok();
    lane_add(1001, "hot", 1);
    serve_lanes(3);
    CHECK_EQ(fp.published, 1);
    CHECK_EQ(fp.seq[0], 11);
    close_reader();
}

/* A pass reads its pages in seq order and starts again from the lowest seq
 * after a short page; a lane that fits one page is read whole each time. */
static void the_lanes_pass_starts_again_after_a_short_page(void) {
    start_lane_pages();
    for (uint64_t s = 1; s <= 13; s++)
        lane_add(s * 2, "bad", 1);
    serve_lanes(5);
    CHECK_EQ(lane_after[0], 0);
    CHECK_EQ(lane_after[1], 20); /* the first page's last seq */
    CHECK_EQ(lane_after[2], 0);  /* its 3 rows: a short page, the pass is whole */
    CHECK_EQ(lane_after[3], 20);
    CHECK_EQ(lane_after[4], 0);
    CHECK_EQ(fp.published, 0);
    close_reader();
    start_lane_pages();
    for (uint64_t s = 1; s <= 9; s++)
        lane_add(s, "bad", 1);
    serve_lanes(3);
    for (int i = 0; i < 3; i++)
        CHECK_EQ(lane_after[i], 0);
    close_reader();
}

int main(void) {
    uv_loop_init(&loop);
    a_failed_publish_goes_to_the_retry_lane_and_is_read_again();
    the_drain_waits_for_the_lanes_rows_within_the_horizon();
    the_drain_waits_for_a_lane_row_past_the_limit();
    a_due_row_past_a_full_page_of_rows_due_later_is_published();
    a_later_page_does_not_pass_a_row_waiting_on_an_earlier_one();
    a_row_failing_again_holds_its_aggregate_on_later_pages();
    a_row_failing_above_the_page_does_not_hold_its_aggregate_below();
    the_lanes_pass_starts_again_after_a_short_page();
    harness_end();
    CHECK_EQ(uv_loop_close(&loop), 0);
    printf("ok\n");
    return 0;
}
