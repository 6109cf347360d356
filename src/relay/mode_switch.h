/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Moving buckets out of cursor mode: an ordered relay (--ordered, --leader)
 * that takes a bucket with a row in the cursor table converts the bucket's
 * rows to the ordered modes' meaning before it fetches from it.
 *
 * In cursor mode a row with status 0 at or below the bucket's cursor was
 * delivered and status 2 waits for a retry; in the ordered modes status 0
 * is pending and 1 delivered. The conversion, per bucket:
 *   1. status 0 with seq <= cursor -> 1 (processed_at = NOW(6)), in chunks
 *      of OB_CURSOR_SWITCH_CHUNK rows, each its own short transaction that
 *      reads the cursor under a shared lock (and changes nothing once the
 *      row is gone: another relay finished the bucket);
 *   2. one transaction that takes the cursor row FOR UPDATE, converts what
 *      step 1 left, turns status 2 into 0 (attempt_count and
 *      next_attempt_at kept) and deletes the cursor row.
 * A crash between chunks leaves a bucket that is still in cursor mode and
 * means the same (1 is delivered in both modes): the next owner starts over
 * from the probe. Step 2 is atomic, so no row is ever both at or below a
 * cursor and pending with status 0. Nothing is published, so the
 * conversion needs no fencing: two relays converting the same bucket do
 * the same idempotent work, and the row lock orders their step 2. A cursor
 * relay cannot run meanwhile (a table runs one mode at a time).
 *
 * The switch has its own connection, made when there is work and closed
 * when there is none. Errors that retrying may cure are retried with a
 * growing delay; a permanent error (a missing privilege) before a bucket was
 * ever converted is fatal, and waited out like an outage after that.
 */
#ifndef OB_CURSOR_SWITCH_H
#define OB_CURSOR_SWITCH_H

#include <stdint.h>
#include <uv.h>

#include "db.h"
#include "log.h"

#define OB_CURSOR_SWITCH_CHUNK 10000

typedef struct ob_cursor_switch ob_cursor_switch;

typedef struct ob_cursor_switch_config {
    uv_loop_t *loop;
    const ob_log *log;  /* borrowed: outlives the switch */
    ob_db_config db;    /* strings copied by the connection */
    const char *qtable; /* the table quoted for SQL; copied */
    const char *table;  /* the table as configured (outbox_cursor.table_name); copied */
} ob_cursor_switch_config;

typedef struct ob_cursor_switch_callbacks {
    /* These buckets hold no cursor row (any more): the ordered modes may
     * fetch from them. Called once per bucket over the switch's life. */
    void (*ready)(void *data, uint64_t buckets);
    /* The database refuses the conversion for a reason retrying cannot
     * cure; `why` names it. The switch stays idle afterwards. */
    void (*fatal)(void *data, const char *why);
    /* ob_cursor_switch_close finished: the switch is freed. */
    void (*closed)(void *data);
    void *data;
} ob_cursor_switch_callbacks;

/* Creates the switch (no connection yet). NULL when out of memory. */
ob_cursor_switch *ob_cursor_switch_new(const ob_cursor_switch_config *c,
                                       const ob_cursor_switch_callbacks *cb);

/* Asks for these buckets to be checked (and converted when they have a
 * cursor row); buckets already reported ready are ignored. */
void ob_cursor_switch_want(ob_cursor_switch *s, uint64_t buckets);

/* Stops: the work in flight is abandoned (a chunk in flight commits or not
 * on the server, either is safe), the connection and timer close, then
 * `closed` runs and the switch is freed. */
void ob_cursor_switch_close(ob_cursor_switch *s);

#endif
