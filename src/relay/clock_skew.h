/* SPDX-License-Identifier: Apache-2.0 */
/*
 * How far the relay's clock is from the database's. A row's created_at is
 * the database's clock; the delivery lag is taken at the ack on the relay's
 * clock, so a relay whose host clock runs ahead would report the skew as
 * lag. The pending sampler reads the database's clock in a statement it
 * sends anyway (no extra round trip), between the relay's wall-clock
 * readings at send and at answer: each sample bounds the skew to an
 * interval as wide as the round trip. Intervals of successive samples are
 * intersected (the skew of two steady clocks does not change), so the
 * estimate narrows to the fastest round trip seen; an interval that misses
 * the estimate means a clock was stepped (or drifted past it), and the
 * estimate starts again from that sample.
 *
 * Pure bookkeeping: no loop, no network, unit-tested (test_clock_skew).
 */
#ifndef OB_CLOCK_SKEW_H
#define OB_CLOCK_SKEW_H

/* A skew is said when it is certainly (past its error bound) above this,
 * and said again when it moves by at least as much. */
#define OB_SKEW_SAY_S 1.0

typedef struct ob_skew {
    int known;     /* a sample was taken */
    double lo, hi; /* the relay's clock minus the database's lies within */
    double said;   /* the skew last said (0 before any) */
} ob_skew;

/* What ob_skew_add asks its caller to say. */
typedef enum ob_skew_say {
    OB_SKEW_QUIET, /* nothing new */
    OB_SKEW_APART, /* a skew above OB_SKEW_SAY_S, or one that moved that much */
    OB_SKEW_AGREE  /* a skew said before is gone: the clocks agree again */
} ob_skew_say;

/* One sample: the database read its clock (db_s, seconds since the epoch)
 * after the relay's wall clock read sent_s and before it read answered_s.
 * A sample without a reading (db_s 0) or answered before sent is ignored. */
ob_skew_say ob_skew_add(ob_skew *s, double db_s, double sent_s, double answered_s);

/* The estimate (the middle of the interval) and its error bound (half its
 * width), in seconds; 0 and -1 before the first sample. */
double ob_skew_value(const ob_skew *s);
double ob_skew_error(const ob_skew *s);

#endif
