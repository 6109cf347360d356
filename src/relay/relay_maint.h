/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The relay's maintenance (src/relay_maint.c): its timers, one per enabled
 * job (pending sampler, partition maintainer, cleanup maintainer), each
 * queueing its job on an
 * outbox_maint handle that runs the jobs one after another on its own
 * MariaDB connection. So maintenance never takes a worker's connection or
 * holds locks in a batch transaction, and the relay runs the very code that
 * `outbox-uvrelay partitions|cleanup --once` runs.
 *
 * The timers are unreferenced: they never keep an otherwise idle loop alive.
 */
#ifndef OB_RELAY_MAINT_H
#define OB_RELAY_MAINT_H

#include <uv.h>

#include "log.h"
#include "outbox/relay.h"

typedef struct ob_timers ob_timers;

/* Checks the maintenance options and touches nothing on the loop. Returns
 * NULL with a message in errbuf on bad options or out of memory. `o`, `log`
 * and `stats` must outlive the timers; samples are written into `stats`. */
ob_timers *ob_timers_new(uv_loop_t *loop, const outbox_relay_options *o, const ob_log *log,
                         outbox_stats *stats, char *errbuf, size_t errlen);
void ob_timers_start(ob_timers *t);
/* Closes the timers and the maintenance handle; calls cb once all are
 * closed (at once when never started). */
void ob_timers_stop(ob_timers *t, void (*cb)(void *data), void *data);
/* Frees timers that were never started or are closed. */
void ob_timers_free(ob_timers *t);

/* The pending sample's log line goes at info for the first sample, then only
 * when the count changed, and at most once per this interval (the progress
 * line samples every second); at debug otherwise, so an idle relay says
 * "pending: 0" once and then nothing. */
#define OB_SAMPLE_LOG_INTERVAL_MS 60000

typedef struct ob_sample_log {
    int said;        /* a sample was logged at info */
    uint64_t at_ms;  /* when */
    int64_t pending; /* with this count */
} ob_sample_log;

/* 1 when the sample of `pending` rows at `now_ms` goes at info (and records
 * it as said), 0 for debug. */
int ob_sample_log_info(ob_sample_log *s, uint64_t now_ms, int64_t pending);

#endif
