/* SPDX-License-Identifier: Apache-2.0 */
/*
 * SQL text of cursor mode (cursor.c), pure string building into an ob_buf
 * so that it is unit-tested without a server. `qtable` is the quoted outbox
 * table, `ctable` the cursor table (ob_cursor_table_name), `table` the
 * table's name as configured (checked: [A-Za-z0-9_.] only), `mask` a set of
 * buckets (bit k: bucket k, not empty).
 */
#ifndef OB_CURSOR_SQL_H
#define OB_CURSOR_SQL_H

#include <stdint.h>

#include "buf.h"
#include "gaps.h"
#include "sql.h"

/* "(k1,k2,...)" of the buckets in mask, "(NULL)" when none: the operand of
 * an IN. */
void ob_cursor_sql_buckets(ob_buf *b, uint64_t mask);

/* The read's and the retry lane's columns: OB_COL_ID .. OB_COL_WAITING
 * (sql.h), then these. */
enum {
    OB_CCOL_SEQ = OB_COL_COUNT,
    OB_CCOL_BUCKET,
    OB_CCOL_STATUS, /* the read: the row's status; the lane: 1 when due only after the horizon */
    OB_CCOL_COUNT,
    OB_CCOL_SOON = OB_CCOL_COUNT /* the lane only: 1 when any row of its WHERE is due within the
                                    horizon, read or past its LIMIT (NULL: not asked) */

};

/* Start-up: INNODB_TRX (needs PROCESS) and the cursor table. */
void ob_cursor_sql_probe(ob_buf *b, const char *ctable);
/* The gap check alone: SELECT UNIX_TIMESTAMP(NOW(6)), UNIX_TIMESTAMP of the
 * oldest other live transaction's start (NULL when none). */
void ob_cursor_sql_check(ob_buf *b);
/* A bucket's initialisation, first step: the server's clock and MAX(seq). */
void ob_cursor_sql_mark(ob_buf *b, const char *qtable);
/* The index of (bucket, status, seq) that `schema` gives a table with seq. */
#define OB_CURSOR_BUCKET_INDEX "idx_bucket_seq"
/* Its last step, once every seq <= max is resolved: rows waiting for an
 * ordered retry become status 2, and each bucket of `mask` gets a cursor
 * row (lowest pending seq - 1, or max), unless it has one. With `hint`, the
 * lowest pending seq of each bucket is looked up in OB_CURSOR_BUCKET_INDEX
 * by name: statistics left stale by a TRUNCATE or a bulk load can make the
 * server pick the index of (status, seq) instead and read every pending row
 * once per bucket (64 times the table). */
void ob_cursor_sql_init(ob_buf *b, const char *qtable, const char *ctable, const char *table,
                        uint64_t mask, uint64_t max, int hint);
/* The owned buckets' cursors (result 0: bucket, seq) and the aggregates
 * with status-2 rows (result 1), after taking the fencing lock `lock`
 * (quoted; NULL: none) in a statement of its own. */
void ob_cursor_sql_load(ob_buf *b, const char *qtable, const char *ctable, const char *table,
                        uint64_t mask, const char *lock);
/* The read: result 0 the clock, (with `check`) the gap check and (when the
 * tracker wants a mark) MAX(seq); result 1
 * the rows above `top` (unless `gaps_only`) and in the gaps, in seq order,
 * at most `limit`; the payload and headers only of the buckets in `mask`. */
void ob_cursor_sql_read(ob_buf *b, const char *qtable, const ob_gaps *gaps, uint64_t mask,
                        int limit, int check, int gaps_only);
/* The retry lane: status-2 rows of `mask` with seq above `after` (a page
 * of the lane's pass; 0: from the start) in seq order; OB_COL_WAITING is 1
 * while the row's retry is not due, OB_CCOL_STATUS 1 when it is due only
 * after `horizon_ms`; OB_CCOL_SOON, with `whole` (the same on every row, an
 * uncorrelated subquery run once), 1 when any status-2 row of `mask`, on
 * any page and past the LIMIT too, is due within `horizon_ms`; without,
 * NULL. */
void ob_cursor_sql_lane(ob_buf *b, const char *qtable, uint64_t mask, uint64_t after, int limit,
                        uint64_t horizon_ms, int whole);
/* Moves the cursors of `mask` forward to `seq` (never back). */
void ob_cursor_sql_advance(ob_buf *b, const char *ctable, const char *table, uint64_t mask,
                           uint64_t seq);
/* Head of the statement for failed rows: as ob_sql_fail_head, but a row
 * that is to be retried becomes status 2 (cursor mode's "waiting"). */
void ob_cursor_sql_fail_head(ob_buf *b, const char *qtable, const char *error, size_t error_len,
                             int dead, int max_attempts, const ob_backoff *bo);
/* Head of the statement that holds rows behind their aggregate's: status 2. */
void ob_cursor_sql_hold_head(ob_buf *b, const char *qtable);

#endif
