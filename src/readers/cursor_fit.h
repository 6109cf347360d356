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
 * cursor can only come from such a reset, so the reader compares the two at
 * start (and refuses to run) and about once a second while it runs (and
 * stops publishing and moving that table's cursors), and the operator's
 * jobs compare them before they trust a cursor. `outbox-uvrelay
 * cursor-reset` repairs it (maint_cursor.c).
 */
#ifndef OB_CURSOR_FIT_H
#define OB_CURSOR_FIT_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "db.h"

/* How often a running reader compares the counter with the cursors. */
#define OB_CURSOR_FIT_EVERY_MS 1000

/* The statements: the table's highest cursor (one row, NULL without one)
 * and its AUTO_INCREMENT counter (one row, NULL when unknown). `table` is
 * the table's name as configured (passed ob_sql_check_table). */
void ob_cursor_fit_sql(ob_buf *b, const char *table, const char *ctable);

/* Reads their answer: 1 when the highest cursor is at or above the counter
 * (or above `read_top`, the highest seq the reader has read and still
 * trusts, 0 none), with the reason in `why`; else 0. */
int ob_cursor_fit_result(ob_db *db, uint64_t read_top, const char *table, char *why, size_t n);

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
