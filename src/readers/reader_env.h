/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the relay gives its readers: the environment shared by every reader
 * of a relay (loop, log, database settings, batch settings, the publisher,
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

#include "ack.h"
#include "batch.h"
#include "db.h"
#include "flow.h"
#include "log.h"
#include "message.h"
#include "outbox/relay.h"

struct ob_worker;

/* The way out to the broker. */
typedef struct ob_publisher {
    /* 1 when rows may be published. */
    int (*ready)(void *data);
    /* Counts losses of readiness: a batch that saw it change was interrupted. */
    uint32_t (*epoch)(void *data);
    /* Loop time (ms) of the last answer the broker sent, of any kind. */
    uint64_t (*last_answer)(void *data);
    /* Publishes `row`; its answer comes back to the reader whose publisher
     * number is `worker` (reader.h's ack) with the same (worker, gen, slot). Returns 0, or -1 with
     * *fail filled. */
    int (*publish)(void *data, uint32_t worker, uint32_t gen, uint32_t slot, const ob_row *row,
                   ob_pub_fail *fail);
    /* The broker is not answering (no ack in time from a broker that
     * answered nothing since): stop being ready until it answers again. */
    void (*unavailable)(void *data, const char *why);
    /* A publish found no responders or a 503: find out whether the broker
     * is down (then readiness drops) or the message was at fault (then
     * readiness is confirmed with another "up"). */
    void (*suspect)(void *data, const char *why);
    /* 0 while such a check is under way. */
    int (*settled)(void *data);
    /* JetStream refused a message as it would any (a full stream, a
     * resource limit: the broker's fault, `why`): pause without counting
     * attempts. */
    void (*refused)(void *data, const char *why);
    /* The stream's duplicate window in ms, 0 when not known yet. */
    uint64_t (*window_ms)(void *data);
    /* The stream's max_bytes, 0 or less when unlimited or not known (may be
     * NULL): a payload larger than it can never be stored. */
    int64_t (*max_bytes)(void *data);
    void *data;
} ob_publisher;

/* The worker's owner. */
typedef struct ob_worker_owner {
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
} ob_worker_owner;

/* Rows published but left unmarked by lost connections, across a relay's
 * workers: the first worker that connects again reports them. */
typedef struct ob_unmarked {
    int rows;
    uint64_t oldest_at; /* loop time the oldest of them was published by */
} ob_unmarked;

/* Shared by every reader of a relay, owned by the relay. */
typedef struct ob_worker_env {
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
    ob_publisher pub;
    ob_worker_owner owner;
    ob_flow *flow;
    outbox_stats *stats; /* counters the worker adds to */
    ob_unmarked *unmarked;
    int *any_fetched; /* set once any worker of the relay completed a fetch (may be NULL) */
} ob_worker_env;

#endif
