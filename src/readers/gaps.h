/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The gap tracker of cursor mode: which sequence numbers below the highest
 * one read may still commit. Pure bookkeeping over the reads' results and
 * the server's clock, unit-tested with a fake clock (test/unit/test_gaps.c).
 *
 * Why a gap can be closed (the proof docs/modes.md repeats):
 *
 *   seq is an AUTO_INCREMENT value, assigned in time order at insert. When a
 *   read R sees seq h committed and seq g < h missing, the transaction that
 *   holds g (if any) got g before h was assigned, so it started before R
 *   completed. Any statement sent on the same connection after R completed
 *   reads the server's clock at a time `bound` after that: the holder's
 *   trx_started <= bound. information_schema.INNODB_TRX lists the live
 *   transactions with a start time of one-second resolution, from a cache
 *   refreshed at most every 0.1 s. A check answered at server time T_c that
 *   finds T_c >= bound + 0.2 s and no transaction started at or before
 *   FLOOR(bound) proves the holder ended (committed or rolled back) before
 *   the check. A read that starts after that check sees g if it committed;
 *   if g is still missing there, it never will be.
 *
 * A gap is therefore closed only (a) when its row becomes visible, or (b)
 * when a read that started after such a check still misses it. Never by
 * time alone, and never by probing the missing seq with NOWAIT or SKIP
 * LOCKED (a multi-row INSERT reserves its values before its rows reach the
 * index, so a probe would find nothing while they are still coming).
 *
 * One check proves many seqs at once. A statement that reads MAX(seq) = m
 * is a read that saw m: every seq <= m was assigned before it completed,
 * so the same proof (the next statement's clock as the bound, a check past
 * the margin) shows that every holder of a seq <= m has ended. From then on
 * (`proven` >= m) a read that misses a seq <= m resolves it on sight: the
 * seqs that a counter stepping by auto_increment_increment never takes, or
 * that rolled-back transactions left, cost no round of their own. No
 * stride or offset is assumed (each Galera node has its own offset, and a
 * session may set its own): what is skipped is what a read missed after
 * the proof.
 *
 * The caller's cycle, on one connection:
 *   ob_gaps_stamp(now)        the statement's server time: the bound of the
 *                             gaps the previous reads found
 *   ob_gaps_check(tc, oldest) a check's answer (optional, same statement)
 *   ob_gaps_take(seq) ...     each visible row of the read, in seq order
 *   ob_gaps_read_end(covered) the read is complete up to `covered`
 *   ob_gaps_round(r, done)    on Galera only: the members' round r begun
 *                             now that the read completed, and the latest
 *                             round proven on every member
 * Times are seconds since the epoch, as UNIX_TIMESTAMP(NOW(6)) gives them.
 */
#ifndef OB_GAPS_H
#define OB_GAPS_H

#include <stdint.h>

/* The margin a check needs past a gap's bound: INNODB_TRX's cache is
 * refreshed at most every 0.1 s; twice that. */
#define OB_GAPS_CACHE_MARGIN_S 0.2

typedef struct ob_gap {
    uint64_t lo, hi; /* the missing seqs, inclusive */
    double found_s;  /* server time of the read that revealed it */
    double bound_s;  /* server time after that read completed; 0 until known */
    int verify;      /* a check proved its holder gone: the next covering read decides */
    uint64_t round;  /* on Galera: the members' round its bound belongs to */
} ob_gap;

typedef struct ob_gaps {
    uint64_t top; /* the highest seq read */
    ob_gap *g;    /* unresolved gaps below top, in seq order */
    int n, cap;
    int oom;             /* a gap could not be recorded: the reader must start over */
    double found_s;      /* server time of the read under way (from the last stamp) */
    double now_s;        /* the latest server time seen */
    uint64_t closed;     /* gaps closed since init (visible or proven empty), for tests */
    uint64_t proven;     /* a read that starts now and misses a seq <= proven resolves it */
    uint64_t mark;       /* MAX(seq) read by a statement, waiting for its proof; 0 none */
    double mark_bound_s; /* server time after that statement completed; 0 until known */
    /* On a Galera cluster (gap_members.h): a bound holds only once the other
     * members proved the round begun after its read. */
    int members;           /* the members' proof is needed */
    uint64_t round;        /* the members' round under way: new bounds get it */
    uint64_t mark_round;   /* the mark's round */
    uint64_t members_done; /* the latest round proven on every member */
} ob_gaps;

/* Starts with every seq <= `start` resolved. */
void ob_gaps_init(ob_gaps *t, uint64_t start);
void ob_gaps_free(ob_gaps *t);

/* A statement started at server time `now_s`, after the previous read
 * completed: the gaps without a bound get it. */
void ob_gaps_stamp(ob_gaps *t, double now_s);

/* On a Galera cluster: from now on a check proves a gap or the mark only
 * when the members proved the round its bound was stamped in. */
void ob_gaps_members(ob_gaps *t, int on);
/* The members' round begun after the latest read completed (before the
 * next stamp), and the latest round proven on every member. */
void ob_gaps_round(ob_gaps *t, uint64_t round, uint64_t members_done);

/* 1 when a check at server time `tc`, whose oldest other live transaction
 * started at `oldest_s` (negative: none), proves that no transaction that
 * started at or before `bound_s` is alive. */
int ob_gaps_proves(double bound_s, double tc, double oldest_s);

/* A check at server time `tc`: `oldest_s` is UNIX_TIMESTAMP(MIN(trx_started))
 * of the other live transactions, or a negative value when there is none.
 * Marks the gaps whose holder is proven gone. Returns how many it marked. */
int ob_gaps_check(ob_gaps *t, double tc, double oldest_s);

/* A visible seq of the read under way, in ascending order. Returns 1 when
 * the row is new (above top, or in a gap: the gap shrinks), 0 when it was
 * read before. Seqs skipped above top become a gap. */
int ob_gaps_take(ob_gaps *t, uint64_t seq);

/* The read under way saw every visible seq of its range up to `covered`
 * (UINT64_MAX when its LIMIT did not cut it). The marked gaps' parts at or
 * below `covered` are closed: they stayed empty after their holder ended. */
void ob_gaps_read_end(ob_gaps *t, uint64_t covered);

/* The statement under way read MAX(seq) = `max_seq` (after any check it
 * carried was given to ob_gaps_check): once a later check proves the next
 * statement's clock, every seq <= max_seq is proven (see above). Ignored
 * while an earlier mark waits for its proof. */
void ob_gaps_mark(ob_gaps *t, uint64_t max_seq);

/* 1 when the next statement should read MAX(seq) for ob_gaps_mark. */
int ob_gaps_wants_mark(const ob_gaps *t);

/* Every holder of a seq <= `seq` is proven gone by a check made before the
 * reads to come (a bucket's initialisation): they resolve such seqs on
 * sight. */
void ob_gaps_proven(ob_gaps *t, uint64_t seq);

/* Every seq at or below this is resolved: the first gap's lo - 1, or top. */
uint64_t ob_gaps_done(const ob_gaps *t);

/* Seconds the oldest unresolved gap has been open at the latest server
 * time seen; 0 when there is none. */
double ob_gaps_age(const ob_gaps *t);

/* 1 when a gap or the mark waits for its bound (the next stamp): on Galera
 * the members' round must begin before that statement. */
int ob_gaps_unbound(const ob_gaps *t);

/* 1 when a gap has a bound and no verdict yet, or a mark has its bound
 * while gaps are open: a check may close them. */
int ob_gaps_checkable(const ob_gaps *t);

#endif
