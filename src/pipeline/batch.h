/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One claimed batch: its rows, the fate of each, and the statement that
 * finishes it. Pure bookkeeping over a reusable slot array and buffers, so
 * the hot path allocates only while the buffers grow to working size; the
 * worker (worker.c) drives it, and unit tests drive it without servers.
 */
#ifndef OB_BATCH_H
#define OB_BATCH_H

#include <stdint.h>

#include "buf.h"
#include "outbox/relay.h"
#include "row.h"
#include "sql.h"

typedef enum ob_slot_state {
    OB_SLOT_UNSENT,   /* claimed, not yet published */
    OB_SLOT_INFLIGHT, /* published, waiting for the ack */
    OB_SLOT_ACKED,    /* stored by JetStream */
    OB_SLOT_FAILED,   /* the publish failed; see kind and the error text */
    OB_SLOT_RELEASED, /* given back untouched: outage or shutdown */
    OB_SLOT_WRITTEN,  /* failed, and its UPDATE is in the finishing statement */
    OB_SLOT_HELD,     /* ordered: left for a later batch, behind an earlier row of its aggregate */
    OB_SLOT_DEFERRED  /* its subject is paused (paused.h): written due later, no attempt */
} ob_slot_state;

typedef struct ob_slot {
    ob_row row; /* points into the fetch result, valid until the next statement is sent;
                   row.id points at id below, which stays valid for the whole batch */
    unsigned char id[16];
    uint8_t state;
    uint8_t kind; /* outbox_failure_kind when failed */
    uint8_t dead; /* verdict when failed */
    int code, err_code;
    uint32_t err_off; /* into the batch's errs */
    uint32_t err_len;
    uint64_t sent_at;    /* loop time of the publish */
    uint32_t defer_ms;   /* DEFERRED: how long the row waits */
    uint8_t deferred_in; /* DEFERRED: the finishing statement writes it */
    int prev;            /* ordered: the batch's previous slot of the same aggregate, -1 none */
    int next;            /* ordered: the batch's next slot of the same aggregate, -1 none */
    uint64_t seq;        /* the workers' ordered fetches (OB_OCOL_SEQ), else 0 */
    uint64_t before;     /* the seq of the aggregate's previous pending row, 0 none */
} ob_slot;

/* What finishing a batch needs to know; owned by the relay, shared. */
typedef struct ob_batch_config {
    const char *qtable;
    outbox_processing_mode processing;
    int max_attempts;
    ob_backoff backoff;
    outbox_classify_fn classify; /* never NULL */
    void *classify_data;
} ob_batch_config;

typedef struct ob_batch {
    ob_slot *slots;
    int cap;
    int n;           /* rows claimed */
    int next_pub;    /* next slot to publish */
    int outstanding; /* slots in flight */
    uint32_t gen;    /* batch number, part of every reply subject */
    uint32_t epoch;  /* broker epoch when the batch was claimed */
    /* tallies of the finishing statement, folded into the stats on commit */
    int n_acked, n_dup, n_retry, n_dead, n_released, n_held, n_deferred;
    /* Ordered batches (see ob_batch_next_ready): 0 none, OB_ORDER_AGGREGATE
     * or OB_ORDER_STRICT. Their fetch adds the OB_COL_WAITING column. */
    int order;
    /* 1 when the fetch adds OB_OCOL_SEQ and OB_OCOL_BEFORE (the workers'
     * ordered fetches): a row whose aggregate's previous pending row is not
     * the previous row of its aggregate in the batch is held, with the
     * aggregate's later rows (sql.h). */
    int check_before;
    int n_late; /* rows held so by the last load */
    int *chain; /* open-addressed table: aggregate -> its last slot while loading */
    /* OB_ORDER_AGGREGATE: the slots that may be ready to publish, a stack
     * that an ack pushes the next row of its aggregate onto, so that each
     * ack costs one look, not a scan of the batch. Any other change of a
     * slot's state sets `rescan` (see ob_batch_touched): the next
     * ob_batch_next_ready builds the stack again from the whole batch. */
    int *ready;
    int nready;
    int rescan;
    ob_buf sql;  /* the finishing statement */
    ob_buf errs; /* error texts of this batch */
} ob_batch;

/* How an ordered batch is published. */
#define OB_ORDER_AGGREGATE 1 /* a row waits for the ack of its aggregate's previous row */
#define OB_ORDER_STRICT 2    /* and rows leave in the batch's order, never passing one */

/* Added to an order: the fetch adds OB_OCOL_SEQ and OB_OCOL_BEFORE (sql.h). */
#define OB_BATCH_CHECK_BEFORE 4

/* 0, or -1 when out of memory. `order`: 0, OB_ORDER_AGGREGATE or
 * OB_ORDER_STRICT, with OB_BATCH_CHECK_BEFORE for the workers' ordered
 * fetches. */
int ob_batch_init(ob_batch *b, int cap, int order);
void ob_batch_free(ob_batch *b);

/* Starts a new batch from the rows of `next_row` (a cursor over the fetch
 * result, in OB_COL_* order). Returns the number of rows. */
typedef char **(*ob_row_cursor)(void *cur, unsigned long **lengths);
int ob_batch_load(ob_batch *b, ob_row_cursor next_row, void *cur, uint32_t epoch);
/* The row's created_at ("YYYY-MM-DD HH:MM:SS[.ffffff]", UTC) in seconds
 * since the epoch, 0 when it has another shape; and the wall clock. */
double ob_row_created_s(const ob_row *row);
double ob_wall_s(void);

/* Marks the loaded rows' payloads binary (a LONGBLOB column). */
void ob_batch_set_binary(ob_batch *b, int binary);

/* Ordered batches. Rows come in seq order per aggregate, each aggregate's
 * rows a prefix of its pending rows (the fetch reads them with locking
 * reads, never skipping one). A row may be published once the previous row
 * of its aggregate in the batch is acked; when that row failed or was held,
 * the row is held too (OB_SLOT_HELD: nothing is written, the next fetch
 * takes it again). A row still waiting for its retry (OB_COL_WAITING) is
 * held with everything after it. Returns the next slot that may be
 * published now, or -1: with OB_ORDER_STRICT at the first row that must
 * wait, otherwise after looking at every unsent row. Unordered batches
 * return the next unsent slot. */
int ob_batch_next_ready(ob_batch *b);

/* Slots' states were changed by hand (held, given back, made unsent
 * again): the next ob_batch_next_ready looks at the whole batch. */
void ob_batch_touched(ob_batch *b);

/* Slot i was published at loop time `now`: in flight until its answer. */
void ob_batch_sent(ob_batch *b, int i, uint64_t now);
/* Slot i failed; returns 1 when it was in flight (capacity to give back). */
int ob_batch_fail(ob_batch *b, int i, outbox_failure_kind kind, int code, int err_code,
                  const char *msg, size_t len);
/* Slot i waits `ms` for its paused subject, without an attempt (`msg`
 * becomes its last_error); returns 1 when it was in flight. */
int ob_batch_defer(ob_batch *b, int i, uint64_t ms, const char *msg, size_t len);
/* Slot i goes back untouched; returns 1 when it was in flight. */
int ob_batch_release(ob_batch *b, int i);
/* Slot i was stored (dup: already stored); returns 1 when it was in flight. */
int ob_batch_acked(ob_batch *b, int i, int dup);
/* Releases every slot unsent or in flight; returns how many were in flight. */
int ob_batch_release_open(ob_batch *b);
/* Fails every slot in flight since `before` or earlier with `kind`, or
 * releases them when `release` is set; returns how many were in flight. */
int ob_batch_expire(ob_batch *b, uint64_t before, int release, const char *msg, size_t len);

/* A row failed with no responders, a server error or no ack: maybe the
 * broker's fault. */
int ob_batch_suspect(const ob_batch *b);
/* Every row published and answered. */
int ob_batch_complete(const ob_batch *b);
/* Loop time of the oldest publish still in flight, UINT64_MAX when none. */
uint64_t ob_batch_oldest_inflight(const ob_batch *b);

/* What the finishing knows of the broker (`interrupted` below, flags):
 * it was lost during the batch; its check after a suspect failure (no
 * responders, no ack, a server error) has not answered yet. */
#define OB_DECIDE_INTERRUPTED 1
#define OB_DECIDE_UNSETTLED 2

/* Decides every failure: its verdict in `dead` (the classifier's), or, for
 * a retryable failure during an outage (OB_DECIDE_INTERRUPTED) or a
 * disconnection, OB_SLOT_RELEASED (no attempt is counted). While the
 * broker's check is unsettled (OB_DECIDE_UNSETTLED), a suspect failure
 * that would end the row (its last attempt, or dead) is released too: the
 * broker's fault must not kill it; the failure after the check is charged.
 * Part of ob_batch_finish_sql; cursor mode calls it alone. */
void ob_batch_decide(ob_batch *b, const ob_batch_config *cfg, int interrupted);

/* Decides every failure (classifier; `interrupted`: OB_DECIDE_* flags, as
 * ob_batch_decide)
 * and builds the finishing statement in b->sql, ending in COMMIT. Returns
 * the statement's length; 0 when there is nothing to write (every row
 * released), or when memory ran out (then every row counts as released). */
size_t ob_batch_finish_sql(ob_batch *b, const ob_batch_config *cfg, int interrupted);

/* The count of released rows, once: a batch with nothing to write is
 * rolled back, and its released rows are counted then. */
int ob_batch_take_released(ob_batch *b);

/* The rows of the batch not acked (whatever else became of them). */
int ob_batch_unacked(const ob_batch *b);

/* Isolating a row the database cannot write. When the finishing statement
 * fails for a reason of a row (a CHECK constraint on the UPDATE, say), the
 * transaction is still open: the rows are written one statement each, and
 * a row the server refuses is marked dead by a statement that does not
 * check constraints.
 *
 * The next slot at or after `from` that has something to write (acked, or
 * failed and written), or -1. */
int ob_batch_next_written(const ob_batch *b, int from);
/* Builds in b->sql the statement that writes slot i alone; returns its
 * length. */
size_t ob_batch_row_sql(ob_batch *b, const ob_batch_config *cfg, int i);
/* Builds in b->sql the statement that marks slot i dead because the server
 * refused to write it (`why`), without checking constraints, and moves the
 * slot's count to the dead. Returns the length. */
size_t ob_batch_refused_sql(ob_batch *b, const ob_batch_config *cfg, int i, const char *why,
                            size_t why_len);

#endif
