/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The gap tracker of cursor mode (src/gaps.c) with a fake server clock and
 * fake reads: a gap closes when its row shows, or when a read that started
 * after a check proving its holder gone still misses it; never by time
 * alone, never before the check's margin, never while a transaction that
 * may hold it is alive.
 */
#include "check.h"
#include "gaps.h"

/* One statement of the reader: its clock, an optional check, then a read
 * returning `seqs` (ascending), complete up to `covered`. */
static void statement(ob_gaps *t, double now, double oldest, int check, const uint64_t *seqs, int n,
                      uint64_t covered) {
    ob_gaps_stamp(t, now);
    if (check)
        ob_gaps_check(t, now, oldest);
    for (int i = 0; i < n; i++)
        ob_gaps_take(t, seqs[i]);
    ob_gaps_read_end(t, covered);
}

#define ALL UINT64_MAX
#define NONE -1.0

static void rows_above_top_and_a_gap(void) {
    ob_gaps t = {0};
    ob_gaps_init(&t, 10);
    uint64_t r1[] = {11, 12, 14, 15};
    statement(&t, 100.0, NONE, 1, r1, 4, ALL);
    CHECK_EQ(t.top, 15);
    CHECK_EQ(t.n, 1);
    CHECK_EQ(t.g[0].lo, 13);
    CHECK_EQ(t.g[0].hi, 13);
    CHECK_EQ(ob_gaps_done(&t), 12);
    /* the row read again is not new; the gap's row is */
    CHECK_EQ(ob_gaps_take(&t, 12), 0);
    CHECK_EQ(ob_gaps_take(&t, 13), 1);
    CHECK_EQ(t.n, 0);
    CHECK_EQ(ob_gaps_done(&t), 15);
    ob_gaps_free(&t);
}

static void time_alone_never_closes(void) {
    ob_gaps t = {0};
    ob_gaps_init(&t, 0);
    uint64_t r1[] = {1, 3};
    statement(&t, 100.0, NONE, 0, r1, 2, ALL);
    /* many statements, an hour later, without a check: still open */
    for (int i = 1; i <= 100; i++)
        statement(&t, 100.0 + 36 * i, NONE, 0, NULL, 0, ALL);
    CHECK_EQ(t.n, 1);
    CHECK_EQ(ob_gaps_done(&t), 1);
    CHECK(ob_gaps_age(&t) >= 3599.0);
    ob_gaps_free(&t);
}

static void a_check_needs_the_margin_and_a_bound(void) {
    ob_gaps t = {0};
    ob_gaps_init(&t, 0);
    uint64_t r1[] = {1, 3};
    statement(&t, 100.00, NONE, 1, r1, 2, ALL); /* found at 100.00, no bound yet */
    CHECK_EQ(t.g[0].bound_s == 0, 1);
    statement(&t, 100.05, NONE, 1, NULL, 0, ALL); /* bound 100.05; check too early */
    CHECK_EQ(t.n, 1);
    CHECK_EQ(t.g[0].verify, 0);
    statement(&t, 100.24, NONE, 1, NULL, 0, ALL); /* 0.19 s past the bound: too early */
    CHECK_EQ(t.n, 1);
    statement(&t, 100.25, NONE, 1, NULL, 0, ALL); /* the margin reached, no trx: closed */
    CHECK_EQ(t.n, 0);
    CHECK_EQ(ob_gaps_done(&t), 3);
    CHECK_EQ(t.closed, 1);
    ob_gaps_free(&t);
}

static void a_live_old_transaction_keeps_it_open(void) {
    ob_gaps t = {0};
    ob_gaps_init(&t, 0);
    uint64_t r1[] = {1, 3};
    statement(&t, 100.4, NONE, 1, r1, 2, ALL);
    statement(&t, 100.5, NONE, 0, NULL, 0, ALL); /* bound 100.5 */
    /* a transaction that started in second 100 (maybe 100.45, the holder) */
    statement(&t, 101.0, 100.0, 1, NULL, 0, ALL);
    statement(&t, 110.0, 100.0, 1, NULL, 0, ALL);
    CHECK_EQ(t.n, 1);
    /* it ended: the oldest live one started in second 101 */
    statement(&t, 110.5, 101.0, 1, NULL, 0, ALL);
    CHECK_EQ(t.n, 0);
    ob_gaps_free(&t);
}

static void the_holder_commits_late(void) {
    ob_gaps t = {0};
    ob_gaps_init(&t, 0);
    uint64_t r1[] = {1, 3, 4};
    statement(&t, 100.0, NONE, 1, r1, 3, ALL);
    statement(&t, 100.1, 99.0, 1, NULL, 0, ALL);
    statement(&t, 105.0, 99.0, 1, NULL, 0, ALL);
    CHECK_EQ(t.n, 1);
    CHECK(ob_gaps_age(&t) >= 5.0);
    /* it commits: the read returns it, the gap closes at once */
    uint64_t r2[] = {2, 5};
    statement(&t, 106.0, 99.0, 1, r2, 2, ALL);
    CHECK_EQ(t.n, 0);
    CHECK_EQ(t.top, 5);
    CHECK_EQ(ob_gaps_done(&t), 5);
    CHECK(ob_gaps_age(&t) == 0);
    ob_gaps_free(&t);
}

static void a_cut_read_decides_only_what_it_covered(void) {
    ob_gaps t = {0};
    ob_gaps_init(&t, 0);
    uint64_t r1[] = {1, 1000};
    statement(&t, 100.0, NONE, 1, r1, 2, ALL); /* gap 2..999, a multi-row insert */
    statement(&t, 100.1, NONE, 1, NULL, 0, ALL);
    /* the check proves the holder gone; the read (LIMIT 3) returns 2,3,4 */
    uint64_t r2[] = {2, 3, 4};
    statement(&t, 100.5, NONE, 1, r2, 3, 4);
    CHECK_EQ(t.n, 1);
    CHECK_EQ(t.g[0].lo, 5);
    CHECK_EQ(t.g[0].hi, 999);
    CHECK_EQ(t.g[0].verify, 1);
    /* the next read covers the rest: 5..998 visible, 999 stayed empty */
    ob_gaps_stamp(&t, 100.6);
    for (uint64_t s = 5; s <= 998; s++)
        CHECK_EQ(ob_gaps_take(&t, s), 1);
    ob_gaps_read_end(&t, ALL);
    CHECK_EQ(t.n, 0);
    CHECK_EQ(ob_gaps_done(&t), 1000);
    ob_gaps_free(&t);
}

static void a_read_started_before_the_check_decides_nothing(void) {
    ob_gaps t = {0};
    ob_gaps_init(&t, 0);
    uint64_t r1[] = {1, 3};
    statement(&t, 100.0, NONE, 1, r1, 2, ALL);
    ob_gaps_stamp(&t, 100.1);
    /* a read alone (no check in its statement) cannot close it */
    ob_gaps_read_end(&t, ALL);
    CHECK_EQ(t.n, 1);
    ob_gaps_free(&t);
}

static void many_gaps_split_and_merge(void) {
    ob_gaps t = {0};
    ob_gaps_init(&t, 0);
    /* every third seq missing: 1000 gaps */
    for (uint64_t s = 1; s <= 3000; s++)
        if (s % 3 != 0)
            ob_gaps_take(&t, s);
    CHECK_EQ(t.n, 999); /* 3000 itself is not read: top is 2999 */
    CHECK_EQ(ob_gaps_done(&t), 2);
    /* a wide gap split by a late row in its middle */
    ob_gaps_take(&t, 4010);
    int n = t.n;
    CHECK_EQ(ob_gaps_take(&t, 4005), 1);
    CHECK_EQ(t.n, n + 1);
    CHECK_EQ(t.g[t.n - 2].hi, 4004);
    CHECK_EQ(t.g[t.n - 1].lo, 4006);
    /* the old gaps show: the first gap is now the 3000..4004 one */
    for (uint64_t s = 3; s <= 2999; s += 3)
        CHECK_EQ(ob_gaps_take(&t, s), 1);
    CHECK_EQ(ob_gaps_done(&t), 2999);
    CHECK_EQ(t.oom, 0);
    ob_gaps_free(&t);
}

/* One statement carrying MAX(seq) (when the tracker asks for it): the same
 * cycle, with ob_gaps_mark after the check. */
static void statement_max(ob_gaps *t, double now, double oldest, int check, uint64_t max,
                          const uint64_t *seqs, int n, uint64_t covered) {
    ob_gaps_stamp(t, now);
    if (check)
        ob_gaps_check(t, now, oldest);
    if (ob_gaps_wants_mark(t))
        ob_gaps_mark(t, max);
    for (int i = 0; i < n; i++)
        ob_gaps_take(t, seqs[i]);
    ob_gaps_read_end(t, covered);
}

/* A counter stepping by 3 (1, 4, 7 ...): one check proves every seq up to
 * the MAX(seq) a statement read before it, so the gaps found below it are
 * closed by that check, and those found after it are resolved on sight. */
static void one_check_proves_everything_below_a_mark(void) {
    ob_gaps t = {0};
    ob_gaps_init(&t, 0);
    uint64_t r1[] = {1, 4, 7, 10};
    statement_max(&t, 100.00, NONE, 0, 3001, r1, 4, 10); /* the table's MAX: 3001 */
    CHECK_EQ(t.n, 3);
    CHECK_EQ(t.mark, 3001);
    CHECK_EQ(ob_gaps_checkable(&t), 0);                  /* no bound yet */
    statement_max(&t, 100.05, NONE, 0, 0, NULL, 0, ALL); /* the mark's bound: 100.05 */
    CHECK_EQ(ob_gaps_checkable(&t), 1);
    statement_max(&t, 100.20, NONE, 1, 0, NULL, 0, ALL); /* too early for the mark */
    CHECK_EQ(t.proven, 0);
    CHECK_EQ(t.n, 3);
    /* the margin reached: every seq <= 3001 proven, the three gaps closed */
    uint64_t r2[] = {13, 16, 19};
    statement_max(&t, 100.30, NONE, 1, 0, r2, 3, ALL);
    CHECK_EQ(t.proven, 3001);
    CHECK_EQ(t.n, 0);
    CHECK_EQ(ob_gaps_done(&t), 19);
    /* later reads skip seqs <= 3001 without a gap; above it they open one */
    uint64_t r3[] = {22, 25, 2998, 3001, 3004, 3007};
    statement_max(&t, 100.35, NONE, 0, 3007, r3, 6, ALL);
    CHECK_EQ(t.n, 2);
    CHECK_EQ(t.g[0].lo, 3002);
    CHECK_EQ(t.g[0].hi, 3003);
    CHECK_EQ(ob_gaps_done(&t), 3001);
    ob_gaps_free(&t);
}

/* The mark waits for the same proof as a gap: a transaction that may hold
 * a seq below it (started before its bound) keeps everything open. */
static void a_mark_waits_for_an_old_transaction(void) {
    ob_gaps t = {0};
    ob_gaps_init(&t, 0);
    uint64_t r1[] = {1, 4};
    statement_max(&t, 100.4, NONE, 0, 50, r1, 2, ALL);
    statement_max(&t, 100.5, NONE, 0, 0, NULL, 0, ALL); /* the bound: 100.5 */
    statement_max(&t, 101.0, 100.0, 1, 0, NULL, 0, ALL);
    statement_max(&t, 109.0, 100.0, 1, 0, NULL, 0, ALL);
    CHECK_EQ(t.proven, 0);
    CHECK_EQ(t.n, 1);
    /* its row shows meanwhile: the gap closes, the mark still waits */
    uint64_t r2[] = {2, 3, 7};
    statement_max(&t, 109.5, 100.0, 1, 0, r2, 3, ALL);
    CHECK_EQ(t.n, 1); /* 5..6 */
    CHECK_EQ(t.proven, 0);
    /* a read missing seqs <= 50 before the proof opens gaps for them */
    CHECK_EQ(t.g[0].lo, 5);
    statement_max(&t, 110.0, 101.0, 1, 0, NULL, 0, ALL);
    CHECK_EQ(t.proven, 50);
    CHECK_EQ(t.n, 0);
    /* a bucket's initialisation proved a seq: resolved on sight too */
    ob_gaps_init(&t, 0);
    CHECK_EQ(t.proven, 0);
    ob_gaps_proven(&t, 9);
    uint64_t r3[] = {3, 9, 12};
    statement_max(&t, 120.0, NONE, 0, 12, r3, 3, ALL);
    CHECK_EQ(t.n, 1);
    CHECK_EQ(t.g[0].lo, 10);
    CHECK_EQ(t.g[0].hi, 11);
    ob_gaps_free(&t);
}

/* On Galera a check proves a gap, or the mark, only once every other
 * member proved the round begun after the read that revealed it. */
static void members_must_prove_the_round_too(void) {
    ob_gaps t = {0};
    ob_gaps_members(&t, 1);
    ob_gaps_init(&t, 10);
    CHECK_EQ(t.members, 1);
    uint64_t r1[] = {11, 13};
    CHECK_EQ(ob_gaps_unbound(&t), 0); /* nothing to bound: no round needed */
    statement(&t, 100.0, NONE, 0, r1, 2, ALL);
    CHECK_EQ(ob_gaps_unbound(&t), 1); /* the gap 12 waits for its bound */
    ob_gaps_round(&t, 1, 0);          /* the read completed: round 1 */
    ob_gaps_mark(&t, 13);
    statement(&t, 100.1, NONE, 0, NULL, 0, ALL); /* bound of the gap and the mark: round 1 */
    CHECK_EQ(ob_gaps_unbound(&t), 0);            /* both bound: reads go on without rounds */
    CHECK_EQ(t.g[0].round, 1);
    CHECK_EQ(t.mark_round, 1);
    ob_gaps_round(&t, 2, 0);
    /* the local check alone proves nothing */
    CHECK_EQ(ob_gaps_check(&t, 101.5, NONE), 0);
    CHECK_EQ(t.proven, 0);
    /* round 1 proven on the members: the same check proves both */
    ob_gaps_round(&t, 2, 1);
    CHECK_EQ(ob_gaps_check(&t, 101.6, NONE), 1);
    CHECK_EQ(t.proven, 13);
    statement(&t, 101.7, NONE, 0, NULL, 0, ALL);
    CHECK_EQ(t.n, 0);
    /* a later gap stamped in round 3 waits for round 3 */
    uint64_t r2[] = {20};
    statement(&t, 102.0, NONE, 0, r2, 1, ALL);
    ob_gaps_round(&t, 3, 2);
    statement(&t, 102.1, NONE, 0, NULL, 0, ALL);
    CHECK_EQ(t.g[0].round, 3);
    CHECK_EQ(ob_gaps_check(&t, 103.0, NONE), 0);
    ob_gaps_round(&t, 4, 3);
    CHECK_EQ(ob_gaps_check(&t, 103.1, NONE), 1);
    /* a resync keeps the members' rounds */
    ob_gaps_init(&t, 30);
    CHECK_EQ(t.members, 1);
    CHECK_EQ(t.round, 4);
    CHECK_EQ(t.members_done, 3);
    ob_gaps_free(&t);
}

int main(void) {
    rows_above_top_and_a_gap();
    time_alone_never_closes();
    a_check_needs_the_margin_and_a_bound();
    a_live_old_transaction_keeps_it_open();
    the_holder_commits_late();
    a_cut_read_decides_only_what_it_covered();
    a_read_started_before_the_check_decides_nothing();
    many_gaps_split_and_merge();
    one_check_proves_everything_below_a_mark();
    a_mark_waits_for_an_old_transaction();
    members_must_prove_the_round_too();
    return 0;
}
