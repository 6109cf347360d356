/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Cursor mode's assumptions, checked: that the table's rows and its cursors
 * belong together, and that the relay's user holds the grants cursor mode
 * needs.
 *
 * A cursor says "every row of the bucket at or below this seq is done".
 * That holds only while seq keeps growing: a reset of the table's
 * AUTO_INCREMENT counter (a TRUNCATE, an ALTER TABLE ... AUTO_INCREMENT on
 * an emptied table, a restore that recreates it, a cursor table copied from
 * another server) hands out again values at or below the cursors, and the
 * rows that get them would be taken for delivered. A counter at or below a
 * cursor can only come from such a reset; a reset followed by as many rows
 * as before, or a table swapped in, shows in the witness (the stamp,
 * below). The reader checks both at start (and refuses to run) and about
 * once a second while it runs (and stops publishing and moving that
 * table's cursors), and the operator's jobs check them before they trust a
 * cursor. `outbox-uvrelay cursor-reset` repairs it (maint_cursor.c). The
 * same check requires the trigger that makes seq the server's
 * (schema.c), unless the operator vouches for the producers.
 */
#ifndef OB_CURSOR_FIT_H
#define OB_CURSOR_FIT_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "db.h"

/* How often a running reader compares the counter with the cursors. */
#define OB_CURSOR_FIT_EVERY_MS 1000

/* The names the statements use: the table as configured (passed
 * ob_sql_check_table), quoted, and its cursor table; trust_seq, the
 * operator's word that no producer writes seq (--cursor-trust-seq). */
typedef struct ob_cursor_fit_names {
    const char *table, *qtable, *ctable;
    int trust_seq;
} ob_cursor_fit_names;

/* The statements: the table's highest cursor (one row, NULL without one),
 * its AUTO_INCREMENT counter (one row, NULL when unknown), the stamp's
 * check (ob_cursor_stamp_check_sql) and, unless trust_seq, the table's
 * BEFORE INSERT triggers. */
void ob_cursor_fit_sql(ob_buf *b, const ob_cursor_fit_names *t);
/* One row: 1 when table has an index named `index` that starts with column
 * `first`, else 0. */
void ob_cursor_index_sql(ob_buf *b, const char *table, const char *index, const char *first);

/* Reads their answer: 1 when the highest cursor is at or above the counter
 * (or above `read_top`, the highest seq the reader has read and still
 * trusts, 0 none), the stamp's witness was replaced, or no trigger sets
 * seq, with the reason in `why`; else 0. *stamped: the table has a stamp. */
int ob_cursor_fit_result(ob_db *db, const ob_cursor_fit_names *t, uint64_t read_top, int *stamped,
                         char *why, size_t n);

/*
 * The stamp: what tells the table the cursors were written for from a
 * table put in its place with as many rows or more (the counter tells the
 * others). The witness column of the table's cursor rows names a witness,
 * "<seq>:<md5 of its id>": a delivered row of the table. A table
 * truncated, restored or swapped in has another row at that seq, or none
 * while it has rows below it; the table the cursors were written for keeps
 * the witness (cleanup spares it) or, emptied below it by partitions
 * dropped, has no row below it either. Cursor relays write it with a
 * cursor move while the table has none; cursor-reset clears it.
 */

/* One row: the witness's seq, whether a row is at it, whether that row is
 * the witness, and whether a row is at or below it (each 1 or 0); no row
 * without a witness. Each is one dive into an index of seq. */
void ob_cursor_stamp_check_sql(ob_buf *b, const ob_cursor_fit_names *t);
/* Takes that row (NULL none): 1 when the witness was replaced, with why;
 * *stamped, there is a witness. */
int ob_cursor_stamp_result(char **row, const char *table, int *stamped, char *why, size_t n);
/* A statement that names the witness, the highest row of status 0 at or
 * below `seq` (a cursor just written: a delivered row), unless the table
 * has one. */
void ob_cursor_stamp_sql(ob_buf *b, const ob_cursor_fit_names *t, uint64_t seq);
/* A SELECT of the witness's seq, for a NOT IN. */
void ob_cursor_witness_seq_sql(ob_buf *b, const char *ctable, const char *table);

/* The reason, for the relay's log and /readyz and the operator's jobs:
 * what happened and the command that repairs it. */
void ob_cursor_mismatch_why(char *out, size_t n, const char *table, uint64_t top, uint64_t counter);

/* A statement that writes nothing but needs every privilege cursor mode
 * writes with: UPDATE on the outbox table, INSERT and UPDATE on the cursor
 * table. */
void ob_cursor_grants_sql(ob_buf *b, const char *qtable, const char *ctable);

/* The grants cursor mode needs, as GRANT statements for `user`, for a
 * message. */
void ob_cursor_grants_text(char *out, size_t n, const char *table, const char *user);

#endif
