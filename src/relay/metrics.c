/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Prometheus text format 0.0.4: for each metric family one HELP and one TYPE
 * line, then its samples for every table, so that a family is never split.
 */
#include "metrics.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outbox/metrics.h"

typedef struct family {
    const char *name;
    const char *type; /* counter | gauge */
    const char *help;
} family;

/* Writes `{table="x"` (or just `{` without a table) and leaves the brace open
 * when `more` says other labels follow; closes it otherwise. Writes nothing
 * when there is no label at all. */
static void labels(ob_buf *b, const char *table, const char *more) {
    int has_table = table && *table;
    if (!has_table && !more)
        return;
    ob_buf_putc(b, '{');
    if (has_table) {
        ob_buf_puts(b, "table=\"");
        for (const char *p = table; *p; p++) {
            if (*p == '\\' || *p == '"')
                ob_buf_putc(b, '\\');
            if (*p == '\n')
                ob_buf_puts(b, "\\n");
            else
                ob_buf_putc(b, *p);
        }
        ob_buf_putc(b, '"');
        if (more)
            ob_buf_putc(b, ',');
    }
    if (more)
        ob_buf_puts(b, more);
    ob_buf_putc(b, '}');
}

static void head(ob_buf *b, const family *f) {
    ob_buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", f->name, f->help, f->name, f->type);
}

static void sample_u64(ob_buf *b, const char *name, const char *table, const char *more,
                       uint64_t v) {
    ob_buf_puts(b, name);
    labels(b, table, more);
    ob_buf_putc(b, ' ');
    ob_buf_u64(b, v);
    ob_buf_putc(b, '\n');
}

static void sample_f(ob_buf *b, const char *name, const char *table, const char *more, double v) {
    ob_buf_puts(b, name);
    labels(b, table, more);
    ob_buf_printf(b, " %.9g\n", v);
}

static const char *table_of(const char *const *tables, size_t i) {
    return tables ? tables[i] : NULL;
}

/* The plain counters and gauges, in the order they are written. */
enum scalar {
    S_RETRIES,
    S_DEAD,
    S_RELEASED,
    S_BATCHES,
    S_FETCHED,
    S_PUBLISH_ATTEMPTS,
    S_DB_RECONNECTS,
    S_NATS_OUTAGES,
    S_STREAM_MISSING,
    S_STREAM_LOSSES,
    S_IN_FLIGHT,
    S_DB_CONNECTIONS,
    S_HELD_BACK,
    S_BUCKETS_OWNED,
    S_LEADER,
    S_CLAIMED_BYTES,
    S_CLAIMED_BYTES_PEAK,
    S_TABLE_REPLACED,
    S_SUBJECTS_PAUSED,
    S_DEFERRED,
    S_DB_FAILBACKS,
    S_COUNT
};

static const family scalars[S_COUNT] = {
    {"outbox_relay_retries_total", "counter", "Failed publishes that will be retried."},
    {"outbox_relay_dead_total", "counter", "Rows marked dead."},
    {"outbox_relay_released_total", "counter",
     "Rows given back untouched, each time (a NATS outage, a lease not proven or moved, "
     "the stop); a row given back is read again, so it may count more than once."},
    {"outbox_relay_batches_total", "counter", "Batch cycles that fetched at least one row."},
    {"outbox_relay_fetched_rows_total", "counter", "Rows fetched from the outbox table."},
    {"outbox_relay_publish_attempts_total", "counter", "Publishes handed to the NATS client."},
    {"outbox_relay_database_reconnects_total", "counter",
     "Database connections lost (each is made again)."},
    {"outbox_relay_nats_outages_total", "counter", "Times NATS or the stream stopped answering."},
    {"outbox_relay_nats_stream_missing", "gauge",
     "1 while the stream, once seen, is missing (deleted under the relay): nothing is published "
     "until it exists again."},
    {"outbox_relay_nats_stream_losses_total", "counter",
     "Times the stream was found deleted under the relay (the events it held are gone)."},
    {"outbox_relay_in_flight_messages", "gauge", "Publishes awaiting an ack."},
    {"outbox_relay_database_connections", "gauge", "Database connections up."},
    {"outbox_relay_held_back_rows_total", "counter",
     "Ordered modes: rows left for a later batch behind an earlier row of their aggregate."},
    {"outbox_relay_buckets_owned", "gauge",
     "Ordered modes: aggregate buckets this instance owns (of 64; all of them when leading)."},
    {"outbox_relay_leader", "gauge", "Leader mode: 1 while this instance leads."},
    {"outbox_relay_claimed_bytes", "gauge",
     "Bytes of claimed rows held, as --max-in-flight-bytes counts them."},
    {"outbox_relay_claimed_bytes_peak", "gauge",
     "The highest outbox_relay_claimed_bytes since start."},
    {"outbox_relay_table_replaced_total", "counter",
     "Times the table was found re-created or renamed (a RENAME TABLE swap, a table dropped "
     "and created again): rows left in a table swapped out are not delivered."},
    {"outbox_relay_subjects_paused", "gauge",
     "Subjects the stream refuses for themselves alone (max_msgs_per_subject, discard new per "
     "subject): their rows wait, without attempts; the other subjects flow."},
    {"outbox_relay_subject_waits_total", "counter",
     "Rows that waited for their paused subject, each time (no attempt counted)."},
    {"outbox_relay_database_failbacks_total", "counter",
     "Database connections moved back to the first node of the --db list (--db-failback)."},
};

static uint64_t scalar_value(const outbox_stats *s, enum scalar k) {
    switch (k) {
    case S_RETRIES:
        return s->failed;
    case S_DEAD:
        return s->dead;
    case S_RELEASED:
        return s->released;
    case S_BATCHES:
        return s->batches;
    case S_FETCHED:
        return s->fetched;
    case S_PUBLISH_ATTEMPTS:
        return s->published;
    case S_DB_RECONNECTS:
        return s->db_reconnects;
    case S_NATS_OUTAGES:
        return s->broker_outages;
    case S_STREAM_MISSING:
        return (uint64_t)(s->stream_missing != 0);
    case S_STREAM_LOSSES:
        return s->stream_losses;
    case S_IN_FLIGHT:
        return s->in_flight;
    case S_DB_CONNECTIONS:
        return s->db_connected;
    case S_HELD_BACK:
        return s->held_back;
    case S_BUCKETS_OWNED:
        return s->buckets_owned;
    case S_LEADER:
        return (uint64_t)(s->leader != 0);
    case S_CLAIMED_BYTES:
        return s->claimed_bytes;
    case S_CLAIMED_BYTES_PEAK:
        return s->claimed_bytes_peak;
    case S_TABLE_REPLACED:
        return s->table_replaced;
    case S_SUBJECTS_PAUSED:
        return s->subjects_paused;
    case S_DEFERRED:
        return s->deferred;
    case S_DB_FAILBACKS:
        return s->db_failbacks;
    case S_COUNT:
        break;
    }
    return 0;
}

/* Label values of the failure kinds, indexed by outbox_failure_kind. */
static const char *const failure_reasons[OUTBOX_FAIL_KINDS] = {
    NULL,          "ack_timeout", "no_responders", "disconnected",  "max_payload",
    "bad_subject", "bad_headers", "stream_error",  "publish_error",
};

static void histogram(ob_buf *b, const family *f, const outbox_stats *stats, size_t offset,
                      const char *const *tables, size_t n) {
    head(b, f);
    char name[128], more[48];
    for (size_t i = 0; i < n; i++) {
        const outbox_histogram *h = (const outbox_histogram *)((const char *)&stats[i] + offset);
        const char *t = table_of(tables, i);
        uint64_t cum = 0;
        snprintf(name, sizeof(name), "%s_bucket", f->name);
        for (int k = 0; k <= OUTBOX_HIST_BOUNDS; k++) {
            cum += h->bucket[k];
            if (k < OUTBOX_HIST_BOUNDS)
                snprintf(more, sizeof(more), "le=\"%g\"", outbox_hist_bounds[k]);
            else
                snprintf(more, sizeof(more), "le=\"+Inf\"");
            sample_u64(b, name, t, more, cum);
        }
        snprintf(name, sizeof(name), "%s_sum", f->name);
        sample_f(b, name, t, NULL, h->sum);
        snprintf(name, sizeof(name), "%s_count", f->name);
        sample_u64(b, name, t, NULL, h->count);
    }
}

/* Cursor mode's gauges. */
static void cursor_families(ob_buf *b, const outbox_stats *stats, const char *const *tables,
                            size_t n) {
    static const family gap = {"outbox_relay_cursor_gap_age_seconds", "gauge",
                               "Cursor mode: age of the oldest unresolved seq gap, 0 if none."};
    head(b, &gap);
    for (size_t i = 0; i < n; i++)
        sample_f(b, gap.name, table_of(tables, i), NULL, stats[i].cursor_gap_age_s);
    static const family mismatch = {
        "outbox_relay_cursor_mismatch", "gauge",
        "Cursor mode: 1 while a cursor is at or above the table's AUTO_INCREMENT counter."};
    head(b, &mismatch);
    for (size_t i = 0; i < n; i++)
        sample_u64(b, mismatch.name, table_of(tables, i), NULL, (uint64_t)stats[i].cursor_mismatch);
    static const family members = {"outbox_relay_cursor_members_down", "gauge",
                                   "Cursor mode on Galera: other members missing, down or not "
                                   "Synced (their gaps wait)."};
    head(b, &members);
    for (size_t i = 0; i < n; i++)
        sample_u64(b, members.name, table_of(tables, i), NULL,
                   (uint64_t)stats[i].cursor_members_down);
    static const family node = {"outbox_relay_database_node_unready", "gauge",
                                "1 while the database node is a Galera node outside the primary "
                                "component or not ready (nothing is delivered through it)."};
    head(b, &node);
    for (size_t i = 0; i < n; i++)
        sample_u64(b, node.name, table_of(tables, i), NULL, (uint64_t)stats[i].db_node_unready);
}

void ob_metrics_write(ob_buf *b, const outbox_stats *stats, const char *const *tables, size_t n) {
    static const family published = {"outbox_relay_published_total", "counter",
                                     "Rows acked by JetStream and committed, by result."};
    head(b, &published);
    for (size_t i = 0; i < n; i++) {
        const outbox_stats *s = &stats[i];
        uint64_t dup = s->duplicates <= s->acked ? s->duplicates : s->acked;
        sample_u64(b, published.name, table_of(tables, i), "result=\"stored\"", s->acked - dup);
        sample_u64(b, published.name, table_of(tables, i), "result=\"duplicate\"", dup);
    }

    static const family failures = {
        "outbox_relay_failures_total", "counter",
        "Failed publishes by reason, and failed database operations (reason database)."};
    head(b, &failures);
    char more[64];
    for (size_t i = 0; i < n; i++) {
        for (int k = 1; k < OUTBOX_FAIL_KINDS; k++) {
            snprintf(more, sizeof(more), "reason=\"%s\"", failure_reasons[k]);
            sample_u64(b, failures.name, table_of(tables, i), more, stats[i].failures[k]);
        }
        sample_u64(b, failures.name, table_of(tables, i), "reason=\"database\"",
                   stats[i].db_errors);
    }

    for (int k = 0; k < S_COUNT; k++) {
        head(b, &scalars[k]);
        for (size_t i = 0; i < n; i++)
            sample_u64(b, scalars[k].name, table_of(tables, i), NULL,
                       scalar_value(&stats[i], (enum scalar)k));
    }

    static const family up = {"outbox_relay_up", "gauge",
                              "1 when the dependency is up: database (at least one connection), "
                              "nats (connected and the stream answers)."};
    head(b, &up);
    for (size_t i = 0; i < n; i++) {
        sample_u64(b, up.name, table_of(tables, i), "dependency=\"database\"",
                   stats[i].db_connected > 0);
        sample_u64(b, up.name, table_of(tables, i), "dependency=\"nats\"",
                   stats[i].broker_ready != 0);
    }

    /* The pending figures exist only once the sampler ran: leave them out
     * rather than report a made-up zero. */
    static const family pending = {"outbox_relay_pending_rows", "gauge",
                                   "Pending rows (status 0) at the last sample."};
    static const family oldest = {"outbox_relay_oldest_pending_age_seconds", "gauge",
                                  "Age of the oldest pending row at the last sample."};
    head(b, &pending);
    for (size_t i = 0; i < n; i++)
        if (stats[i].pending >= 0)
            sample_u64(b, pending.name, table_of(tables, i), NULL, (uint64_t)stats[i].pending);
    head(b, &oldest);
    for (size_t i = 0; i < n; i++)
        if (stats[i].oldest_pending_ms >= 0)
            sample_f(b, oldest.name, table_of(tables, i), NULL,
                     (double)stats[i].oldest_pending_ms / 1000.0);
    /* Measured by the same sampler; left out until it was. */
    static const family skew = {"outbox_relay_clock_skew_seconds", "gauge",
                                "The relay's clock minus the database's (the delivery lag is "
                                "corrected by it)."};
    head(b, &skew);
    for (size_t i = 0; i < n; i++)
        if (stats[i].clock_skew_error_s >= 0)
            sample_f(b, skew.name, table_of(tables, i), NULL, stats[i].clock_skew_s);

    cursor_families(b, stats, tables, n);

    static const family batch = {"outbox_relay_batch_duration_seconds", "histogram",
                                 "Duration of batch cycles, from fetch to commit."};
    static const family lag = {"outbox_relay_delivery_lag_seconds", "histogram",
                               "Time from a row's created_at to its ack."};
    histogram(b, &batch, stats, offsetof(outbox_stats, batch_duration), tables, n);
    histogram(b, &lag, stats, offsetof(outbox_stats, delivery_lag), tables, n);
}

/* The text of `n` whole stats into buf, snprintf-style. */
static size_t format_whole(char *buf, size_t len, const outbox_stats *stats,
                           const char *const *tables, size_t n) {
    ob_buf b = OB_BUF_INIT;
    ob_metrics_write(&b, stats, tables, n);
    size_t need = b.oom ? 0 : b.len;
    if (len > 0) {
        size_t k = need < len ? need : len - 1;
        if (k)
            memcpy(buf, b.p, k);
        buf[k] = '\0';
    }
    ob_buf_free(&b);
    return need;
}

size_t outbox_metrics_format_sized(char *buf, size_t len, const outbox_stats *stats,
                                   size_t stats_size, const char *const *tables, size_t n) {
    if (stats_size == sizeof(outbox_stats))
        return format_whole(buf, len, stats, tables, n);
    /* Built against another header: each caller's struct, its stride
     * stats_size, copied into a whole one (missing fields zero). */
    outbox_stats *whole = calloc(n ? n : 1, sizeof(*whole));
    if (whole == NULL)
        return 0;
    size_t k = stats_size < sizeof(*whole) ? stats_size : sizeof(*whole);
    for (size_t i = 0; i < n; i++) {
        memcpy(&whole[i], (const char *)stats + i * stats_size, k);
        if (k < offsetof(outbox_stats, clock_skew_error_s) + sizeof(double))
            whole[i].clock_skew_error_s = -1; /* not measured: left out */
    }
    size_t need = format_whole(buf, len, whole, tables, n);
    free(whole);
    return need;
}

size_t outbox_metrics_render(char *buf, size_t len, outbox_relay *const *relays,
                             const char *const *tables, size_t n) {
    enum { MAX_ON_STACK = 16 };
    outbox_stats local[MAX_ON_STACK];
    size_t total = 0;
    if (n <= MAX_ON_STACK) {
        for (size_t i = 0; i < n; i++)
            outbox_relay_stats(relays[i], &local[i]);
        return format_whole(buf, len, local, tables, n);
    }
    /* Rare: more relays than fit on the stack. */
    outbox_stats *heap = calloc(n, sizeof(*heap));
    if (heap == NULL)
        return 0;
    for (size_t i = 0; i < n; i++)
        outbox_relay_stats(relays[i], &heap[i]);
    total = format_whole(buf, len, heap, tables, n);
    free(heap);
    return total;
}
