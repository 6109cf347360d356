/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Cursor mode's reader: one per relay, on its own MariaDB connection. It
 * reads the table in seq order without locks, publishes the owned buckets'
 * rows through the relay's publisher, and keeps each owned bucket's
 * progress in the cursor table; a delivered row is never written. The
 * comment at the top of cursor.c draws its states and its pipeline of two
 * batches; gaps.h says why it never passes a row that may still commit.
 *
 * Reading. Each read is one round trip of two statements: the server's clock
 * (and, while a gap waits for one, the gap check on INNODB_TRX), then the
 * rows with seq above the highest read (top) or inside an open gap, in seq
 * order: seq and bucket of every row (gaps are the table's, not a
 * bucket's), the payload and headers only of the owned buckets. The gap
 * tracker (gaps.h) sees every seq; a row is published when it is new, of an
 * owned bucket, above that bucket's cursor and status 0. A row that commits
 * into an old gap is read when it shows, so nothing is read twice and
 * nothing that later commits is passed.
 *
 * Publishing goes through a publishing context (publish.h, batch.c), the
 * one the workers embed too: rows of one aggregate leave one at a time,
 * each after the previous one's ack; a row of an aggregate held by a
 * status-2 row is not published.
 *
 * Finishing a batch writes only what failed: a row's fault counts an attempt
 * (status 2, or -1 dead at the last attempt) and holds its aggregate; rows
 * held behind it become status 2. In the same round trip the owned buckets'
 * cursors move forward, only while the lease is proven, to the highest seq
 * below which everything is resolved and done: min(first open gap - 1,
 * first row not yet finished - 1, top). The broker's and the database's
 * faults cost no attempt: such rows are published again when the broker is
 * back, and a lost connection reads again from the cursors.
 *
 * The retry lane (between batches) publishes the status-2 rows of the owned
 * buckets whose retry is due, in seq order per aggregate, and writes status
 * 1 (or -1, or another attempt); an aggregate with no status-2 row left is
 * no longer held. It reads them in pages of a batch in seq order, each
 * above the last seq of the previous full one, and from the lowest again
 * after a short page: a pass sees every status-2 row, so rows due later
 * never keep it from a due row past them. An aggregate with a row left
 * waiting on an earlier page of the pass, or written status 2 during it,
 * is held on its later pages; a whole pass names the aggregates held.
 *
 * A change of the owned buckets waits until nothing is in flight, then
 * loads the cursors again and reads on from the lowest of them, skipping
 * each bucket's rows at or below its own cursor. Until that load, a bucket
 * given up is neither published nor advanced, even when taken back
 * meanwhile: the rows of it left unacked stay above its cursor, which only
 * its hand-over moves (below them), and are read again from there.
 *
 * It knows nothing of the relay: it gets its settings, the publisher, the
 * flow control and the counters through ob_cursor_config, and reaches its
 * owner (the lease, the drain, the stop) through ob_cursor_owner.
 *
 * Life cycle: ob_cursor_new (nothing on the loop) -> ob_cursor_start ->
 * ob_cursor_stop -> the owner's closed(), from the last close callback ->
 * ob_cursor_free. Every function runs on the loop thread.
 */
#ifndef OB_CURSOR_H
#define OB_CURSOR_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "gap_proof.h"
#include "reader.h"
#include "reader_env.h"

typedef struct ob_cursor ob_cursor;

typedef struct ob_cursor_owner {
    /* 1 while the lease on the owned buckets is proven recently: publishes
     * and cursor writes happen only then. */
    int (*lease_valid)(void *data);
    /* The lease session's id (0 when down): the reader's connection holds
     * the fencing lock named after it (ob_lease_worker_lock). */
    unsigned long (*lease_session)(void *data);
    /* 1 while someone waits for the owned buckets to drain. */
    int (*drain_wanted)(void *data);
    /* Every owned bucket's cursor passed the last committed row (no gap
     * open, everything acked) and no status-2 row is due. */
    void (*drained)(void *data);
    /* The reader cannot run (no PROCESS privilege, no cursor table, a grant
     * missing at start or under a drain, the cursors above the table's
     * counter at start or under a drain). */
    void (*fatal)(void *data, const char *why);
    /* Every handle is closed. */
    void (*closed)(void *data);
    void *data;
} ob_cursor_owner;

typedef struct ob_cursor_config {
    /* The relay's reader environment (reader_env.h): loop, log, database settings,
     * publisher, flow control, counters, batch settings (max_attempts,
     * backoff, classifier), batch size, poll interval, ack timeout. Borrowed:
     * it outlives the reader. Its owner callbacks are not used. */
    const ob_reader_env *env;
    const char *qtable;    /* the outbox table, quoted */
    const char *ctable;    /* the cursor table (ob_cursor_table_name) */
    const char *table;     /* the table's name as configured: the cursor rows' table_name */
    const char *lock_base; /* the lease's lock name prefix */
    const char *db_user;   /* for the PROCESS grant in a message */
    uint32_t poll_min_ms;  /* the poll interval while rows keep coming */
    uint64_t horizon_ms;   /* a drain waits for status-2 rows due within this */
    uint32_t index;        /* the publisher's worker number for this reader's publishes */
    /* On a Galera cluster, the other members' side of the gap proof
     * (gap_proof.h); NULL on a single server. Borrowed: it outlives the
     * reader. */
    ob_gap_proof *proof;
    const struct ob_lease *lease;
    /* The operator's word that no producer writes seq: the reader does not
     * require a trigger that sets it (cursor_fit.h). */
    int trust_seq;
} ob_cursor_config;

/* Returns NULL when out of memory. Strings are borrowed: they outlive the
 * reader. */
ob_cursor *ob_cursor_new(const ob_cursor_config *cfg, const ob_cursor_owner *owner);
void ob_cursor_start(ob_cursor *c);
/* On a Galera cluster: the members' gap proof, before the lease starts
 * (cfg.proof), and the lease whose presence row fences the cursor's
 * advance (cfg.lease). Borrowed: they outlive the reader. */
void ob_cursor_members(ob_cursor *c, ob_gap_proof *p, const struct ob_lease *lease);
/* The lease's owned buckets changed. */
void ob_cursor_owned(ob_cursor *c, uint64_t owned);
/* The answer to one of its publishes. */
void ob_cursor_ack(ob_cursor *c, const ob_ack *a);
/* The broker became ready (1) or not (0). */
void ob_cursor_broker(ob_cursor *c, int ready);
/* The relay cannot go on: publish and write nothing more, wait for the stop. */
void ob_cursor_halt(ob_cursor *c);
/* Graceful (now = 0: the batch in flight finishes and its cursor is written,
 * until the deadline) or immediate (now = 1). */
void ob_cursor_stop(ob_cursor *c, int now);
/* The shutdown deadline passed: give back what is in flight and close. */
void ob_cursor_deadline(ob_cursor *c);
/* Frees a reader that was never started or is closed. */
void ob_cursor_free(ob_cursor *c);
/* Why the reader holds back while the servers are up (the cursors above the
 * table's counter, a write refused, no PROCESS privilege), for /readyz;
 * NULL when it does not. Valid until the next call into the reader. */
const char *ob_cursor_paused(const ob_cursor *c);
/* The state's name, for logs and tests. */
const char *ob_cursor_state_name(const ob_cursor *c);
/* The name of the i-th of the duties that the reader tries in IDLE, in
 * their order (cursor.c's duties[]), for tests; NULL past the last. */
const char *ob_cursor_duty_name(size_t i);

/* The cursor reader as a reader (reader.h): self is an ob_cursor; its
 * publisher number (ack->worker) is cfg->index; busy is always 0 (it tells
 * its owner of its drain itself); refusal is ob_cursor_paused. */
extern const ob_reader_ops ob_cursor_reader_ops;

#endif
