/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the relay gives its readers: the environment shared by every reader
 * of a relay (loop, log, database settings, batch settings, the broker,
 * the flow control, the counters) and the worker's owner callbacks. The
 * worker (worker.h) and the cursor reader (cursor.h) both read it, and so
 * does their publishing context (publish.h); it sits below all three.
 *
 * Ownership: the relay owns the environment and everything it points to;
 * it outlives every reader. Every call runs on the loop thread.
 */
#ifndef OB_READER_ENV_H
#define OB_READER_ENV_H

#include <stdint.h>
#include <uv.h>

#include "batch.h"
#include "broker.h"
#include "db.h"
#include "flow.h"
#include "log.h"
#include "outbox/relay.h"
#include "paused.h"

struct ob_worker;

/* A reader's owner: the relay for its workers. The cursor reader, which
 * has an owner of its own (cursor.h), copies the environment and sets only
 * may_publish here, with itself as `data`: every other callback is NULL. */
typedef struct ob_reader_owner {
    /* 1 while someone waits for the table to drain: an empty fetch then
     * also asks whether any pending row is left. */
    int (*drain_wanted)(void *data);
    /* An empty fetch found no pending row due within the longest backoff
     * left in the table; `later` counts the rows scheduled after that
     * (decimal text), `next_at` is the earliest of them (NULL when none). */
    void (*table_empty)(void *data, struct ob_worker *w, const char *later, const char *next_at);
    /* A database operation failed; `ever_ok` is 0 until a worker of the
     * relay has completed a fetch, so an owner can refuse to start on errors
     * that cannot heal (a login refused, a missing table). */
    void (*db_failed)(void *data, struct ob_worker *w, unsigned err, const char *msg, int ever_ok);
    /* The worker is closed: every handle's close callback has run. */
    void (*on_closed)(void *data, struct ob_worker *w);
    void *data;
    /* Ordered modes: the fetch statement for worker `index` now (its share
     * of the buckets can change between batches), for at most `limit` rows
     * (the byte budget's); NULL: env->sql_fetch. */
    size_t (*fetch_sql)(void *data, uint32_t index, int limit, const char **sql);
    /* Ordered modes: 0 when this instance may no longer be sure it owns
     * what it fetched (its lease was not proven recently): the batch's
     * unsent rows go back untouched. NULL: always 1. */
    int (*may_publish)(void *data);
} ob_reader_owner;

/* Rows published but left unmarked by lost connections (or unanswered by
 * a broker's outage), across a relay's readers: the first reader that
 * connects again (that is told the broker is back) reports them. */
typedef struct ob_unmarked {
    int rows;
    uint64_t oldest_at; /* loop time the oldest of them was published by */
} ob_unmarked;

/* Shared by every reader of a relay, owned by the relay (the cursor reader
 * keeps a copy with its own owner). */
typedef struct ob_reader_env {
    uv_loop_t *loop;
    const ob_log *log;
    ob_db_config db; /* strings borrowed; they outlive the workers */
    ob_batch_config batch;
    const char *sql_fetch; /* START TRANSACTION; SELECT ... FOR UPDATE SKIP LOCKED */
    size_t sql_fetch_len;
    const char *sql_probe; /* SELECT 1 ... LIMIT 1 */
    size_t sql_probe_len;
    const char *sql_drain_probe; /* COMMIT; SELECT EXISTS(... status = 0) */
    size_t sql_drain_probe_len;
    int batch_size;
    int order;            /* 0, OB_ORDER_AGGREGATE or OB_ORDER_STRICT (batch.h) */
    uint64_t fetch_bytes; /* each worker's share of max_in_flight_bytes; 0: no byte limit */
    uint32_t poll_interval_ms;
    uint32_t ack_timeout_ms;
    ob_broker broker; /* the way out: the broker's table and handle (broker.h) */
    ob_reader_owner owner;
    ob_flow *flow;
    outbox_stats *stats; /* counters the worker adds to */
    ob_unmarked *unmarked;
    ob_unmarked *unanswered; /* published rows an outage of the broker left unanswered */
    int *any_fetched;        /* set once any worker of the relay completed a fetch (may be NULL) */
    /* The pending sampler will measure the clock skew (stats->clock_skew_s):
     * until it has, no delivery lag is observed (it would carry the skew). */
    int lag_awaits_clock;
    ob_paused *paused; /* subjects refused for themselves alone (may be NULL) */
} ob_reader_env;

#endif
