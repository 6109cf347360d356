/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Renders outbox_stats in the Prometheus text format into a growable buffer.
 * The public functions in outbox/metrics.h and the HTTP responder use it.
 */
#ifndef OB_METRICS_H
#define OB_METRICS_H

#include "buf.h"
#include "outbox/relay.h"

void ob_metrics_write(ob_buf *b, const outbox_stats *stats, const char *const *tables, size_t n);

/* The process-wide series (process_*, outbox_relay_build_info): once per
 * exposition, after the relays' series. In src/metrics_process.c. */
void ob_metrics_process(ob_buf *b);

#endif
