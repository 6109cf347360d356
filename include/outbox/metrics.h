/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The relay's statistics in the Prometheus text exposition format (0.0.4),
 * for embedders that serve metrics themselves. outbox/http.h serves the same
 * text on /metrics.
 *
 * Names: every metric starts with outbox_relay_, counters end in _total,
 * durations are in seconds. Each relay's series carry a table label when a
 * table name is given. docs/monitoring.md lists every metric.
 */
#ifndef OUTBOX_METRICS_H
#define OUTBOX_METRICS_H

#include <stddef.h>

#include "outbox/common.h"
#include "outbox/relay.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Renders the metrics of `n` tables from stats snapshots: stats[i] belongs
 * to tables[i]. `tables` may be NULL, and any entry NULL or "", to leave the
 * table label out. Writes at most `len` bytes including a NUL into `buf`
 * (which may be NULL when len is 0) and returns the length of the whole text,
 * like snprintf: a result >= len means the text was cut, and a buffer of
 * result + 1 bytes holds it all; 0 when out of memory. Pure apart from a
 * scratch allocation: callable from any thread. */
OUTBOX_EXPORT size_t outbox_metrics_format_sized(char *buf, size_t len, const outbox_stats *stats,
                                                 size_t stats_size, const char *const *tables,
                                                 size_t n);
/* `stats_size` is the caller's sizeof(outbox_stats) (the array's stride): a
 * program built against an older header passes smaller structs, whose
 * missing fields count as zero. The macro passes it. */
#define outbox_metrics_format(buf, len, stats, tables, n)                                          \
    outbox_metrics_format_sized((buf), (len), (stats), sizeof(outbox_stats), (tables), (n))

/* The same for live relays: takes each relay's stats with outbox_relay_stats.
 * Loop thread only; 0 when out of memory. */
OUTBOX_EXPORT size_t outbox_metrics_render(char *buf, size_t len, outbox_relay *const *relays,
                                           const char *const *tables, size_t n);

#ifdef __cplusplus
}
#endif

#endif
