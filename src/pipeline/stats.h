/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Helpers that the relay's moving parts call to feed the histograms and the
 * per-kind failure counters of outbox_stats (include/outbox/relay.h). They
 * only touch the struct they are given: no allocation, no clock.
 */
#ifndef OB_STATS_H
#define OB_STATS_H

#include "outbox/relay.h"

/* Counts one observation of `seconds` (negative values count as 0). */
void ob_hist_observe(outbox_histogram *h, double seconds);

/* Counts one failed publish of the given kind; unknown kinds are ignored. */
void ob_stats_failure(outbox_stats *s, outbox_failure_kind kind);

#endif
