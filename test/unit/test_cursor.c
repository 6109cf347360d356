/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The cursor reader without servers: a fake connection (fake_db.c) whose
 * every statement the test answers by hand, a fake publisher that records
 * the rows published, and a fake owner (the lease's validity, the drain,
 * fatal). The reader is driven through its reader table (reader.h) and
 * cursor.h only; the tests assert what it sends (statements, cursor values
 * written), what it publishes, and what it tells its owner, never its
 * private fields.
 */
#include <mysqld_error.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "check.h"
#include "cursor_harness.h"

/* --- start-up ------------------------------------------------------------ */

static void starts_connects_probes_fits_and_reads_from_the_cursor(void) {
    make_reader();
    start_reading(0x3, 100);
    CHECK_EQ(own.fatal, 0);
    CHECK(rd.ops->refusal(rd.self) == NULL);
    CHECK_EQ(rd.ops->busy(rd.self), 0);
    close_reader();
}

/* The probe fails with `no`: fatal, with a reason that names `what`. */
static void probe_refused(unsigned no, const char *msg, const char *what) {
    make_reader();
    rd.ops->start(rd.self);
    ok();
    expect(S_PROBE);
    fake_db_complete(db(), 0, no, msg, 0);
    CHECK_EQ(own.fatal, 1);
    if (strstr(own.why, what) == NULL)
        CHECK_FAIL_("\"%s\" does not name \"%s\"", own.why, what);
    CHECK_EQ(fake_db_pending(db()), FAKE_NONE); /* and it sends nothing more */
    close_reader();
}

static void a_permanent_error_before_settling_is_fatal(void) {
    /* at the connection: a login refused */
    make_reader();
    rd.ops->start(rd.self);
    fake_db_complete(db(), 0, ER_ACCESS_DENIED_ERROR, "Access denied for user", 0);
    CHECK_EQ(own.fatal, 1);
    CHECK(strstr(own.why, "Access denied") != NULL);
    CHECK_EQ(fake_db_pending(db()), FAKE_NONE);
    close_reader();
    /* at the probe: no cursor table, no PROCESS, a grant missing */
    probe_refused(ER_NO_SUCH_TABLE, "Table 'x.outbox_cursor' doesn't exist", "schema --migrate");
    probe_refused(ER_SPECIFIC_ACCESS_DENIED_ERROR, "Access denied; PROCESS", "GRANT PROCESS");
    probe_refused(ER_TABLEACCESS_DENIED_ERROR, "UPDATE command denied to user 'relay'",
                  "GRANT SELECT, INSERT, UPDATE ON <database>.outbox_cursor");

    /* a transient error at the connection is tried again */
    make_reader();
    rd.ops->start(rd.self);
    fake_db_complete(db(), 0, 2003, "Can't connect", 1);
    CHECK_EQ(own.fatal, 0);
    while (fake_db_pending(db()) != FAKE_CONNECT)
        turn();
    ok();
    expect(S_PROBE);
    CHECK_EQ(own.fatal, 0);
    close_reader();
}

static void a_cursor_at_or_above_the_counter_is_refused(void) {
    make_reader();
    rd.ops->start(rd.self);
    ok();
    expect(S_PROBE);
    ok();
    CHECK_EQ(next_stmt_(0, __LINE__), S_FIT);
    counter = 500;
    answer_fit(500); /* a cursor at the counter: the table was reset */
    CHECK_EQ(own.fatal, 1);
    CHECK(strstr(own.why, "cursor-reset") != NULL);
    CHECK(strstr(own.why, "seq 500") != NULL);
    ob_cursor_owned(rd.self, 0x3);
    CHECK(db() != NULL && fake_db_pending(db()) == FAKE_NONE); /* reads nothing */
    CHECK_EQ(fp.published, 0);
    close_reader();
}

/* --- reading and publishing ---------------------------------------------- */

static void rows_read_are_published_and_acks_move_the_cursor(void) {
    make_reader();
    start_reading(0x3, 100);
    read_clock(NULL, 0);
    outbox_row(1, 101, 0, "a1", "0", NULL);
    outbox_row(1, 102, 1, "a2", "0", NULL);
    outbox_row(1, 103, 5, "a3", "0", NULL); /* a bucket not owned: seen, not published */
    outbox_row(1, 104, 1, "a4", "2", NULL); /* status 2: the lane's */
    ok_read();
    CHECK_EQ(fp.published, 2);
    CHECK_EQ(fp.seq[0], 101);
    CHECK_EQ(fp.seq[1], 102);
    CHECK_EQ(nadv, 0); /* nothing moves before the acks */
    ack_from(0);
    serve_until(S_ADVANCE);
    CHECK_EQ(adv[nadv - 1], 104); /* every seq up to the top read is done */
    CHECK_EQ(adv_mask[nadv - 1], 0x3);
    ok();
    CHECK_EQ(stats.acked, 2);
    CHECK_EQ(fp.published, 2); /* each row once */
    close_reader();
}

/* --- a gap ------------------------------------------------------------- */

static void the_cursor_never_passes_an_unproven_gap(void) {
    make_reader();
    start_reading(0x3, 10);
    read_clock(NULL, 0);
    outbox_row(1, 11, 0, "a", "0", NULL);
    outbox_row(1, 12, 1, "b", "0", NULL);
    outbox_row(1, 14, 0, "c", "0", NULL); /* 13 missing: a transaction may still commit it */
    ok_read();
    CHECK_EQ(fp.published, 3);
    ack_from(0);
    /* A live transaction that started before the gap was found: every
     * check fails, the cursor stays below 13. */
    int checks = 0;
    for (int n = 0; checks < 3 && n < 5000; n++) {
        stmt k = next_stmt();
        if (k == S_ADVANCE) {
            ok();
            continue;
        }
        if (k == S_LANE) {
            ok();
            continue;
        }
        CHECK_EQ(k, S_READ);
        CHECK(strstr(fake_db_sql(db()), "OR seq = 13") != NULL); /* the gap is read again */
        checks += read_checks();
        read_clock("1700000000", 14);
        ok();
    }
    CHECK_EQ(checks, 3);
    CHECK_INT(nadv, >=, 1);
    CHECK_EQ(max_written(), 12);
    /* The check finds no transaction left: the gap is resolved, the cursor
     * passes it. */
    for (int n = 0; n < 5000; n++) {
        stmt k = next_stmt();
        if (k == S_READ) {
            read_clock(NULL, 14);
            ok();
            continue;
        }
        if (k == S_LANE) {
            ok();
            continue;
        }
        CHECK_EQ(k, S_ADVANCE);
        if (adv[nadv - 1] == 14)
            break;
        CHECK_EQ(adv[nadv - 1], 12);
        ok();
    }
    CHECK_EQ(adv[nadv - 1], 14);
    ok();
    close_reader();
}

static void a_row_that_commits_into_the_gap_is_published(void) {
    make_reader();
    start_reading(0x3, 10);
    read_clock(NULL, 0);
    outbox_row(1, 11, 0, "a", "0", NULL);
    outbox_row(1, 13, 0, "c", "0", NULL);
    ok_read();
    ack_from(0);
    for (int n = 0; n < 5000; n++) {
        stmt k = next_stmt();
        if (k != S_READ) {
            ok();
            continue;
        }
        read_clock("1700000000", 0);
        outbox_row(1, 12, 1, "b", "0", NULL); /* committed late, read in its gap */
        ok_read();
        break;
    }
    CHECK_EQ(fp.published, 3);
    CHECK_EQ(fp.seq[2], 12);
    CHECK_INT(max_written(), <=, 11);
    ack_from(2);
    serve_until(S_ADVANCE);
    while (adv[nadv - 1] != 13) {
        CHECK_INT(adv[nadv - 1], <=, 11);
        ok();
        serve_until(S_ADVANCE);
    }
    ok();
    close_reader();
}

/* --- hand-off ------------------------------------------------------------ */

static void buckets_given_up_get_their_last_cursor(void) {
    make_reader();
    start_reading(0x3, 10);
    read_clock(NULL, 0);
    outbox_row(1, 11, 0, "a", "0", NULL);
    outbox_row(1, 12, 1, "b", "0", NULL);
    ok_read();
    ack_from(0);
    serve_until(S_ADVANCE);
    CHECK_EQ(adv[nadv - 1], 12);
    ok();
    /* Rows of bucket 1 read after it is given up are not published; its
     * cursor is written once for the new owner, below them. */
    serve_until(S_READ);
    read_clock(NULL, 0);
    outbox_row(1, 13, 1, "c", "0", NULL);
    outbox_row(1, 14, 0, "d", "0", NULL);
    ok_read();
    CHECK_EQ(fp.published, 4);
    ack_from(2);
    rd.ops->broker(rd.self, 1);
    ob_cursor_owned(rd.self, 0x1);
    int handed = 0;
    for (int n = 0; n < 5000; n++) {
        stmt k = next_stmt();
        if (k == S_LOAD) {
            CHECK(strstr(fake_db_sql(db()), "bucket IN (0)") != NULL);
            break;
        }
        if (k == S_ADVANCE && adv_mask[nadv - 1] == 0x2) {
            CHECK_EQ(adv[nadv - 1], 14);
            handed++;
        }
        CHECK(k != S_ADVANCE || adv_mask[nadv - 1] != 0x3);
        answer_empty();
    }
    CHECK_EQ(handed, 1);
    char *c0[2] = {"0", "14"};
    row_n(0, 2, c0);
    ok();
    serve_until(S_READ);
    CHECK(strstr(fake_db_sql(db()), "WHERE seq > 14") != NULL);
    CHECK(strstr(fake_db_sql(db()), "IF(bucket IN (0), payload, NULL)") != NULL);
    close_reader();
}

/* A bucket given up while the batch read ahead holds rows of it: those rows
 * are not published either (the new owner reads them from the cursor, after
 * the rows of the batch being published that were left unsent). */
static void the_batch_read_ahead_publishes_no_row_of_a_bucket_given_up(void) {
    make_reader();
    start_reading(0x3, 10);
    read_clock(NULL, 0);
    outbox_row(1, 11, 1, "b", "0", NULL);
    outbox_row(1, 12, 1, "b", "0", NULL); /* waits for 11's ack */
    ok_read();
    CHECK_EQ(fp.published, 1);
    serve_until(S_READ);
    read_clock(NULL, 0);
    outbox_row(1, 13, 1, "b", "0", NULL);
    outbox_row(1, 14, 0, "a", "0", NULL);
    ok_read();
    ob_cursor_owned(rd.self, 0x1);
    ack_from(0);
    for (int n = 0; n < 5000; n++) {
        stmt k = next_stmt();
        if (k == S_LOAD)
            break;
        answer_empty();
        if (fp.published > 1)
            ack_from(1);
    }
    for (int i = 0; i < fp.published; i++)
        CHECK(fp.seq[i] != 12 && fp.seq[i] != 13);
    /* The last cursor of bucket 1 is below the rows it left unpublished. */
    for (int i = 0; i < nadv; i++)
        CHECK(!(adv_mask[i] & 0x2) || adv[i] <= 11);
    close_reader();
}

/* --- a bucket given up and taken back ------------------------------------ */

/* The reader owning `buckets`, and its first read published: rows 11 and
 * 12 of aggregate b in bucket 1 (12 waits for 11's ack), 13 of a in bucket
 * 0. */
static void read_b11_b12_a13(uint64_t buckets) {
    make_reader();
    tab_add(11, 1, "b");
    tab_add(12, 1, "b");
    tab_add(13, 0, "a");
    start_reading(buckets, 10);
    serve_one(10);
}

/* Bucket 1 is given up and taken back while the row it left unsent (12)
 * waits for the load that reads it again, which waits for the hand-over:
 * meanwhile the cursor moves as far as the rows allow, bucket 1's only by
 * its hand-over, below 12. */
static void a_bucket_taken_back_keeps_its_released_rows_above_its_cursor(void) {
    read_b11_b12_a13(0x3);
    CHECK_EQ(fp.published, 2);
    ob_cursor_owned(rd.self, 0x1); /* 12 is given back, unsent */
    ob_cursor_owned(rd.self, 0x3); /* and the bucket taken back */
    ack_new();
    serve_until_done(10, 0x3);
    CHECK_EQ(cursor_of(0, 10), 13);
    close_reader();
}

/* The same, the batch still in flight when the bucket's own hand-over is
 * over: when it finishes, the load comes first (`other` 0), or it waits for
 * the hand-over of another bucket given up meanwhile while the cursors
 * move (`other` 1). */
static void a_bucket_taken_back_while_its_batch_is_in_flight(int other) {
    make_reader();
    tab_add(11, 1, "b");
    tab_add(12, 1, "b");
    start_reading(0x7, 10);
    serve_one(10);
    CHECK_EQ(fp.published, 1);
    ob_cursor_owned(rd.self, 0x5);
    ob_cursor_owned(rd.self, 0x7);
    uint64_t until = uv_now(&loop) + 1200; /* past the hand-over's time */
    while (uv_now(&loop) < until)
        serve_one(10);
    if (other)
        ob_cursor_owned(rd.self, 0x3); /* bucket 2 given up: its hand-over begins */
    ack_new();
    serve_until_done(10, 0x3);
    close_reader();
}

/* The batch's write of a failure moves the cursors in the same round trip:
 * not bucket 1's, given up and taken back, whose 13 was left unsent. */
static void a_finish_that_writes_moves_no_cursor_of_a_bucket_taken_back(void) {
    make_reader();
    tab_add(11, 0, "a"); /* its publish fails: written status 2 */
    tab_add(12, 1, "b");
    tab_add(13, 1, "b");
    start_reading(0x3, 10);
    fp.fail_seq = 11;
    serve_one(10);
    CHECK_EQ(fp.published, 1);
    ob_cursor_owned(rd.self, 0x1);
    ob_cursor_owned(rd.self, 0x3);
    tab[tab_at(11)].done = 1; /* the finish writes it status 2: the lane's */
    ack_new();
    int finishes = 0;
    for (int n = 0; n < 5000 && finishes == 0; n++)
        finishes += serve_one(10) == S_FINISH;
    CHECK_EQ(finishes, 1);
    serve_until_done(10, 0x3);
    close_reader();
}

/* A graceful stop's last cursor write leaves bucket 1's unsent 12 above
 * its cursor, the bucket given up and taken back. */
static void a_stop_moves_no_cursor_of_a_bucket_taken_back(void) {
    read_b11_b12_a13(0x3);
    CHECK_EQ(fp.published, 2);
    ob_cursor_owned(rd.self, 0x1);
    ob_cursor_owned(rd.self, 0x3);
    rd.ops->stop(rd.self, 0);
    ack_new();
    for (int n = 0; n < 5000 && own.closed == 0; n++) {
        if (db() != NULL && fake_db_pending(db()) == FAKE_QUERY)
            serve_one(10);
        else
            turn();
    }
    CHECK_EQ(own.closed, 1);
    check_cursor_writes();
    CHECK_INT(cursor_of(1, 10), <, 12);
    rd.ops->free(rd.self);
}

/* A second hand-over while the first is pending: the first bucket's row
 * left unsent (12) stays above its cursor. */
static void a_second_hand_over_keeps_the_first_ones_rows_above_its_cursor(void) {
    read_b11_b12_a13(0x7);
    ob_cursor_owned(rd.self, 0x5);
    ack_new();
    for (int n = 0; n < 5000 && cursor_of(1, 10) < 11; n++)
        serve_one(10);
    CHECK_EQ(cursor_of(1, 10), 11);
    ob_cursor_owned(rd.self, 0x1);
    int second = 0;
    for (int n = 0; n < 5000; n++) {
        if (serve_one(10) == S_LOAD)
            break;
        second += nadv > 0 && adv_mask[nadv - 1] == 0x6;
    }
    CHECK_INT(second, >=, 1); /* written for both buckets given up */
    CHECK_EQ(cursor_of(1, 10), 11);
    CHECK_EQ(tab[tab_at(12)].done, 0);
    close_reader();
}

/* Rows of a bucket taken back, read before its load: they wait for it, so
 * that they leave after the row it left unsent. */
static void rows_of_a_bucket_taken_back_wait_for_its_load(void) {
    make_reader();
    tab_add(11, 1, "b");
    tab_add(12, 1, "b");
    start_reading(0x3, 10);
    serve_one(10);
    ob_cursor_owned(rd.self, 0x1);
    ob_cursor_owned(rd.self, 0x3);
    tab_add(13, 1, "b"); /* committed now: read before the load */
    for (int n = 0; n < 5000; n++)
        if (serve_one(10) == S_READ)
            break;
    ack_new();
    serve_until_done(10, 0x3);
    close_reader();
}

/* --- fencing -------------------------------------------------------------- */

static void without_a_valid_lease_nothing_is_published_or_written(void) {
    make_reader();
    start_reading(0x3, 10);
    own.lease_valid = 0;
    read_clock(NULL, 0);
    outbox_row(1, 11, 0, "a", "0", NULL);
    outbox_row(1, 12, 1, "b", "0", NULL);
    ok_read();
    uint64_t until = uv_now(&loop) + 700;
    while (uv_now(&loop) < until) {
        stmt k = next_stmt();
        CHECK(k == S_READ || k == S_LANE);
        answer_empty();
    }
    CHECK_EQ(fp.published, 0);
    CHECK_EQ(nadv, 0);
    /* The lease proven again: the rows leave, then the cursor moves. */
    own.lease_valid = 1;
    rd.ops->broker(rd.self, 1);
    for (int n = 0; n < 5000 && fp.published < 2; n++) {
        next_stmt();
        answer_empty();
    }
    CHECK_EQ(fp.published, 2);
    ack_from(0);
    serve_until(S_ADVANCE);
    CHECK_EQ(adv[nadv - 1], 12);
    ok();
    close_reader();
}

static void a_lease_lost_with_acked_rows_writes_no_cursor(void) {
    make_reader();
    start_reading(0x3, 10);
    read_clock(NULL, 0);
    outbox_row(1, 11, 0, "a", "0", NULL);
    ok_read();
    CHECK_EQ(fp.published, 1);
    own.lease_valid = 0;
    ack_from(0);
    uint64_t until = uv_now(&loop) + 700;
    while (uv_now(&loop) < until) {
        stmt k = next_stmt();
        CHECK(k == S_READ || k == S_LANE);
        answer_empty();
    }
    CHECK_EQ(nadv, 0);
    close_reader();
}

/* The lease lapsed (a freeze outlived it) while a batch waited, and its
 * next round found the buckets gone: the batch's rows are left unpublished
 * for the new owner, no cursor is written (not even the hand-over's), and
 * the reader says so once. Owned again, it reads from the cursors. */
static void a_lapsed_lease_gives_up_its_buckets_writing_nothing(void) {
    make_reader();
    start_reading(0x3, 10);
    own.lease_valid = 0;
    read_clock(NULL, 0);
    outbox_row(1, 11, 0, "a", "0", NULL);
    outbox_row(1, 12, 1, "b", "0", NULL);
    ok_read();
    CHECK_EQ(fp.published, 0);
    ob_cursor_owned(rd.self, 0);
    /* Owning nothing, the reader may fall silent: the loop turns on. */
    uint64_t until = uv_now(&loop) + 700;
    while (uv_now(&loop) < until) {
        if (fake_db_pending(db()) != FAKE_QUERY) {
            turn();
            continue;
        }
        stmt k = kind_of(fake_db_sql(db()));
        CHECK(k == S_READ || k == S_LANE || k == S_LOAD || k == S_FIT);
        if (k == S_FIT)
            answer_fit(0);
        else
            answer_empty();
    }
    CHECK_EQ(fp.published, 0);
    CHECK_EQ(nadv, 0);
    CHECK(strstr(logged, "2 bucket(s) given up without a proven lease: 2 unsent row(s)") != NULL);
    CHECK(strstr(strstr(logged, "given up without") + 1, "given up without") == NULL);
    own.lease_valid = 1;
    ob_cursor_owned(rd.self, 0x3);
    expect(S_LOAD);
    char *c0[2] = {"0", "10"}, *c1[2] = {"1", "10"};
    row_n(0, 2, c0);
    row_n(0, 2, c1);
    ok();
    serve_until(S_READ);
    CHECK(strstr(fake_db_sql(db()), "seq > 10") != NULL);
    close_reader();
}

/* --- a lost connection --------------------------------------------------- */

static void a_connection_lost_mid_statement_reads_again_from_the_cursor(void) {
    make_reader();
    start_reading(0x3, 10);
    read_clock(NULL, 0);
    outbox_row(1, 11, 0, "a", "0", NULL);
    outbox_row(1, 13, 1, "b", "0", NULL); /* 12 missing */
    ok_read();
    CHECK_EQ(fp.published, 2);
    /* Lost while the next read runs, before any ack. */
    serve_until(S_READ);
    fake_db_complete(db(), 0, 2013, "Lost connection to server during query", 1);
    CHECK_EQ(fake_db_pending(db()), FAKE_NONE); /* waits before connecting again */
    CHECK_EQ(stats.db_reconnects, 1);
    ack_from(0); /* late answers of the dropped batch are ignored */
    while (fake_db_pending(db()) != FAKE_CONNECT)
        turn();
    ok();
    expect(S_PROBE);
    ok();
    CHECK_EQ(next_stmt_(0, __LINE__), S_FIT);
    answer_fit(10);
    expect(S_LOAD);
    char *c0[2] = {"0", "10"}, *c1[2] = {"1", "10"};
    row_n(0, 2, c0);
    row_n(0, 2, c1);
    ok();
    serve_until(S_READ);
    CHECK(strstr(fake_db_sql(db()), "WHERE seq > 10") != NULL); /* from the cursor */
    CHECK_EQ(nadv, 0);                                          /* nothing was proven */
    read_clock(NULL, 0);
    outbox_row(1, 11, 0, "a", "0", NULL);
    outbox_row(1, 13, 1, "b", "0", NULL);
    ok_read();
    CHECK_EQ(fp.published, 4); /* published again: at least once */
    ack_from(2);
    for (int n = 0; n < 5000; n++) {
        if (next_stmt() == S_ADVANCE)
            CHECK_INT(adv[nadv - 1], <=, 11);
        answer_empty();
        if (nadv > 0)
            break;
    }
    CHECK_EQ(max_written(), 11);
    close_reader();
}

/* --- a bucket without a cursor row ----------------------------------------- */

/* The answer to an initialisation's check: the server's clock, the oldest
 * other transaction's start (NULL: none). */
static void answer_check(double tc, const char *oldest) {
    char t[40];
    snprintf(t, sizeof(t), "%.6f", tc);
    char *cols[2] = {t, (char *)oldest};
    row_n(0, 2, cols);
    ok();
}

static void a_bucket_without_a_cursor_starts_once_its_mark_is_proven(void) {
    make_reader();
    rd.ops->start(rd.self);
    ob_cursor_owned(rd.self, 0x3);
    ok();
    expect(S_PROBE);
    ok();
    CHECK_EQ(next_stmt_(0, __LINE__), S_FIT);
    answer_fit(20);
    expect(S_LOAD);
    char *c0[2] = {"0", "20"};
    row_n(0, 2, c0); /* bucket 1 has no cursor row */
    ok();
    expect(S_MARK);
    char *m[2] = {"1700000100.000000", "50"};
    row_n(0, 2, m);
    ok();
    /* A transaction that started before the mark may still commit a seq
     * below it: not yet. */
    expect(S_CHECK);
    answer_check(1700000100.1, "1700000099");
    expect(S_CHECK);
    answer_check(1700000100.5, NULL); /* none left, past the cache's margin */
    expect(S_INIT);
    const char *sql = fake_db_sql(db());
    CHECK(strstr(sql, "bucket IN (1) AND status = 0 AND seq <= 50") != NULL);
    CHECK(strstr(sql, "INSERT IGNORE INTO `outbox_cursor`") != NULL);
    CHECK(strstr(sql, "WHERE s_.seq IN (1)") != NULL);
    CHECK_EQ(fp.published, 0);
    ok();
    expect(S_LOAD);
    char *c1[2] = {"1", "50"};
    row_n(0, 2, c0);
    row_n(0, 2, c1);
    ok();
    serve_until(S_READ);
    CHECK(strstr(fake_db_sql(db()), "WHERE seq > 20") != NULL); /* from the lowest cursor */
    read_clock(NULL, 0);
    outbox_row(1, 30, 1, "x", "0", NULL); /* bucket 1 at or below its cursor: done */
    outbox_row(1, 31, 0, "y", "0", NULL);
    ok_read();
    CHECK_EQ(fp.published, 1);
    CHECK_EQ(fp.seq[0], 31);
    close_reader();
}

/* --- a refused write ------------------------------------------------------ */

/* A reader whose row 11 fails, up to the write of that failure and of the
 * cursor, which the case then answers. */
static void until_the_failures_write(void) {
    make_reader();
    start_reading(0x3, 10);
    fp.fail_seq = 11;
    read_clock(NULL, 0);
    outbox_row(1, 11, 0, "a", "0", NULL);
    ok_read();
    serve_until(S_FINISH); /* the failure's write, and the cursor's */
}

/* A read-only server (1290) is no missing grant: the refusal names the fix. */
static void a_read_only_server_is_not_a_grant(void) {
    until_the_failures_write();
    own.drain_wanted = 1; /* under a drain a refusal ends the run, saying why */
    fake_db_complete(db(), 0, ER_OPTION_PREVENTS_STATEMENT,
                     "The MariaDB server is running with the --read-only option", 0);
    CHECK_EQ(own.fatal, 1);
    CHECK(strstr(own.why, "read-only: point the relay at the primary") != NULL);
    CHECK(strstr(own.why, "GRANT") == NULL);
    own.drain_wanted = 0;
    fp.fail_seq = 0;
    close_reader();
}

static void a_refused_write_publishes_nothing_until_the_grants_are_back(void) {
    until_the_failures_write();
    int sent = nadv;
    fake_db_complete(db(), 0, ER_TABLEACCESS_DENIED_ERROR, "UPDATE command denied", 0);
    CHECK_EQ(own.fatal, 0);
    CHECK(rd.ops->refusal(rd.self) != NULL);
    CHECK(strstr(rd.ops->refusal(rd.self), "UPDATE command denied") != NULL);
    expect(S_GRANTS); /* on its own pace */
    fake_db_complete(db(), 0, ER_TABLEACCESS_DENIED_ERROR, "UPDATE command denied", 0);
    CHECK_EQ(nadv, sent); /* no cursor write tried meanwhile */
    fp.fail_seq = 0;
    expect(S_GRANTS);
    ok();
    CHECK(rd.ops->refusal(rd.self) == NULL);
    CHECK_EQ(next_stmt_(0, __LINE__), S_FIT);
    answer_fit(10);
    expect(S_LOAD);
    char *c0[2] = {"0", "10"}, *c1[2] = {"1", "10"};
    row_n(0, 2, c0);
    row_n(0, 2, c1);
    ok();
    serve_until(S_READ);
    CHECK(strstr(fake_db_sql(db()), "WHERE seq > 10") != NULL); /* read again */
    read_clock(NULL, 0);
    outbox_row(1, 11, 0, "a", "0", NULL);
    ok_read();
    CHECK_EQ(fp.published, 1);
    CHECK_EQ(fp.seq[0], 11);
    close_reader();
}

/* --- a graceful stop ------------------------------------------------------ */

static void a_graceful_stop_finishes_the_batch_and_writes_the_cursor(void) {
    make_reader();
    start_reading(0x3, 10);
    read_clock(NULL, 0);
    outbox_row(1, 11, 0, "a", "0", NULL);
    outbox_row(1, 12, 1, "b", "0", NULL);
    ok_read();
    CHECK_EQ(fp.published, 2);
    rd.ops->stop(rd.self, 0);
    CHECK_EQ(own.closed, 0); /* the batch in flight finishes first */
    ack_from(0);
    serve_until(S_ADVANCE);
    CHECK_EQ(adv[nadv - 1], 12);
    ok();
    uv_run(&loop, UV_RUN_DEFAULT);
    CHECK_EQ(own.closed, 1);
    CHECK_EQ(fp.published, 2);
    rd.ops->free(rd.self);
}

/* --- the duties ---------------------------------------------------------- */

/* What the reader does in IDLE comes from one table, tried in this order;
 * a graceful stop comes before a read that is due (a read cut at its
 * LIMIT): the last cursor write, then it closes without reading. */
static void the_duties_come_in_their_order(void) {
    static const char *const order[] = {
        "halt",    "publish", "finish", "stop",    "wake",     "check", "hand-over", "load",
        "unowned", "take-in", "lane",   "advance", "failback", "read",  "drained",   "idle"};
    size_t n = sizeof(order) / sizeof(order[0]);
    for (size_t i = 0; i < n; i++)
        CHECK_STR(ob_cursor_duty_name(i), order[i]);
    CHECK(ob_cursor_duty_name(n) == NULL);

    make_reader();
    start_reading(0x3, 100);
    read_clock(NULL, 0);
    for (uint64_t seq = 101; seq <= 110; seq++)
        outbox_row(1, seq, 5, "x", "0", NULL); /* a bucket not owned: seen, not published */
    rd.ops->stop(rd.self, 0);                  /* taken once the read is answered */
    ok_read();
    expect(S_ADVANCE);
    CHECK_EQ(adv[nadv - 1], 110);
    ok();
    uv_run(&loop, UV_RUN_DEFAULT);
    CHECK_EQ(own.closed, 1);
    CHECK_EQ(fp.published, 0);
    rd.ops->free(rd.self);
}

/* --- the broker --------------------------------------------------------- */

/* A row left unanswered while the broker answers others, then the broker
 * gone before its check answered: the row goes back without an attempt,
 * leaves again once the broker is back, and is counted as left unanswered
 * (the broker may have stored it: the duplicate window decides whether its
 * second copy is dropped, and the relay says so when it may not be). */
static ob_unmarked gone;
static void short_ack_timeout(ob_reader_env *e) {
    e->ack_timeout_ms = 50;
    e->unanswered = &gone;
}

static void a_row_unanswered_before_an_outage_is_counted(void) {
    gone = (ob_unmarked){0, 0};
    env_tweak = short_ack_timeout;
    make_reader();
    start_reading(0x1, 10);
    read_clock(NULL, 0);
    outbox_row(1, 11, 0, "a", "0", NULL);
    outbox_row(1, 12, 0, "b", "0", NULL);
    ok_read();
    CHECK_EQ(fp.published, 2);
    ob_ack a = {.worker = 3, .gen = fp.gen[0], .slot = fp.slot[0], .result = OB_ACKED_STORED};
    rd.ops->ack(rd.self, &a);
    fp.last_answer = uv_now(&loop) + 1; /* it answered after the second row left */
    while (!fp.checking)
        turn();
    CHECK_EQ(gone.rows, 0);
    fp.ready = 0; /* the check found no answer: the broker is down */
    fp.epoch++;
    fp.checking = 0;
    rd.ops->broker(rd.self, 0);
    for (int n = 0; n < 2000 && gone.rows == 0; n++) {
        if (fake_db_pending(db()) == FAKE_QUERY)
            answer_empty(); /* the next read, under way */
        else
            turn();
    }
    CHECK_EQ(gone.rows, 1);
    CHECK_EQ(stats.failed, 0);
    fp.ready = 1;
    rd.ops->broker(rd.self, 1);
    for (int n = 0; n < 5000 && fp.published < 3; n++) {
        next_stmt();
        answer_empty();
    }
    CHECK_EQ(fp.published, 3);
    CHECK_EQ(fp.seq[2], 12);
    ack_from(2);
    serve_until(S_ADVANCE);
    CHECK_EQ(adv[nadv - 1], 12);
    ok();
    CHECK_EQ(stats.failed, 0);
    close_reader();
}

/* Failback (db.h): between batches, once the cursor moved, the reader drops
 * its session for the first node and reads again from the cursors there, as
 * after a loss but at once and without counting one; a batch under way
 * holds it off. */
static void a_failback_waits_for_the_batch_then_reads_from_the_cursors(void) {
    make_reader();
    start_reading(0x1, 10);
    read_clock(NULL, 0);
    outbox_row(1, 11, 0, "a", "0", NULL);
    ok_read();
    CHECK_EQ(fp.published, 1);
    fake_db_failback_due(1);
    for (int n = 0; n < 20; n++) { /* the batch in flight: reads go on, no failback */
        CHECK(next_stmt() != (stmt)-1);
        answer_empty();
    }
    ack_from(0);
    serve_until(S_ADVANCE);
    CHECK_EQ(adv[nadv - 1], 11);
    ok();
    CHECK_EQ(next_stmt(), (stmt)-1); /* the connect, to the first node */
    connect_and_load(0x1, 11);
    serve_until(S_READ);
    CHECK(strstr(fake_db_sql(db()), "WHERE seq > 11") != NULL);
    CHECK_EQ(stats.db_reconnects, 0); /* a move, not a loss */
    CHECK_EQ(fp.published, 1);
    close_reader();
}

int main(void) {
    uv_loop_init(&loop);
    starts_connects_probes_fits_and_reads_from_the_cursor();
    a_permanent_error_before_settling_is_fatal();
    a_cursor_at_or_above_the_counter_is_refused();
    rows_read_are_published_and_acks_move_the_cursor();
    the_cursor_never_passes_an_unproven_gap();
    a_row_that_commits_into_the_gap_is_published();
    buckets_given_up_get_their_last_cursor();
    the_batch_read_ahead_publishes_no_row_of_a_bucket_given_up();
    a_bucket_taken_back_keeps_its_released_rows_above_its_cursor();
    a_bucket_taken_back_while_its_batch_is_in_flight(0);
    a_bucket_taken_back_while_its_batch_is_in_flight(1);
    a_finish_that_writes_moves_no_cursor_of_a_bucket_taken_back();
    a_stop_moves_no_cursor_of_a_bucket_taken_back();
    a_second_hand_over_keeps_the_first_ones_rows_above_its_cursor();
    rows_of_a_bucket_taken_back_wait_for_its_load();
    without_a_valid_lease_nothing_is_published_or_written();
    a_lease_lost_with_acked_rows_writes_no_cursor();
    a_lapsed_lease_gives_up_its_buckets_writing_nothing();
    a_connection_lost_mid_statement_reads_again_from_the_cursor();
    a_bucket_without_a_cursor_starts_once_its_mark_is_proven();
    a_refused_write_publishes_nothing_until_the_grants_are_back();
    a_read_only_server_is_not_a_grant();
    a_graceful_stop_finishes_the_batch_and_writes_the_cursor();
    the_duties_come_in_their_order();
    a_row_unanswered_before_an_outage_is_counted();
    a_failback_waits_for_the_batch_then_reads_from_the_cursors();
    harness_end();
    CHECK_EQ(uv_loop_close(&loop), 0);
    printf("ok\n");
    return 0;
}
