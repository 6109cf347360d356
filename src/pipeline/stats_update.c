/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Updates outbox_stats (declared in src/stats.h): the histograms' bounds and
 * observations, and the per-kind failure counters.
 */
#include "stats.h"

/* From 1 ms to 5 minutes: a batch cycle takes milliseconds, while delivery
 * lag under an outage or a retry backoff reaches minutes. */
const double outbox_hist_bounds[OUTBOX_HIST_BOUNDS] = {
    0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300,
};

void ob_hist_observe(outbox_histogram *h, double seconds) {
    if (!(seconds > 0)) /* also catches NaN */
        seconds = 0;
    int i = 0;
    while (i < OUTBOX_HIST_BOUNDS && seconds > outbox_hist_bounds[i])
        i++;
    h->bucket[i]++;
    h->count++;
    h->sum += seconds;
}

void ob_stats_failure(outbox_stats *s, outbox_failure_kind kind) {
    if ((int)kind > 0 && (int)kind < OUTBOX_FAIL_KINDS)
        s->failures[kind]++;
}
