/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A stand-in for the connection module (src/db.h) in unit tests of the
 * worker, the cursor reader and the lease: no server, no socket. Every operation the worker starts
 * stays pending until the test completes it with fake_db_complete(), with rows or an error of its
 * choosing.
 */
#ifndef OB_TEST_FAKE_DB_H
#define OB_TEST_FAKE_DB_H

#include <uv.h>

#include "db.h"

typedef enum fake_op { FAKE_NONE, FAKE_CONNECT, FAKE_QUERY } fake_op;

/* The most recently created fake connection. */
ob_db *fake_db_last(void);
/* The newest open connection its user named `name` ("worker 0", "lease",
 * "cluster", "cursor"...), or NULL. */
ob_db *fake_db_named(const char *name);
/* How many connections are made and not closed. */
int fake_db_open_count(void);
/* Runs `loop` a turn at a time (at most 400) until the most recent fake
 * connection has `op` pending (a timer's work): that connection, or NULL. */
ob_db *fake_db_await(uv_loop_t *loop, fake_op op);
/* What is pending on db, and the statement text of a query. */
fake_op fake_db_pending(const ob_db *db);
const char *fake_db_sql(const ob_db *db);
/* Adds a row to result `i` of the next completion (8 columns, in the fetch
 * statement's order; values are copied). */
void fake_db_add_row(ob_db *db, int i, char *const *cols, const unsigned long *lens);
/* The same with `ncols` columns (at most 16), for statements of other
 * shapes (cursor mode's reads have 12). */
void fake_db_add_row_n(ob_db *db, int i, int ncols, char *const *cols, const unsigned long *lens);
/* Result `i` of the next completion is absent (ob_db_result returns NULL,
 * as for a DO); every other result is present, with or without rows. */
void fake_db_no_result(ob_db *db, int i);
/* The affected-row count of result `i` of the next completion (0 unless set). */
void fake_db_set_affected(ob_db *db, int i, uint64_t n);
/* Completes the pending operation: ok, or an error (errno, text, lost). */
void fake_db_complete(ob_db *db, int ok, unsigned err, const char *msg, int lost);
/* The connection dies while idle: the watch (ob_db_watch) is told, as the
 * real module tells it when the server closes an idle connection. */
void fake_db_lose_idle(ob_db *db, const char *msg);
/* The next ob_db_new returns NULL (out of memory); the next ob_db_query
 * fails to send. */
void fake_db_fail_next_new(void);
void fake_db_fail_next_query(void);
/* Nonzero once closed. */
int fake_db_closed_count(void);
/* How many times ob_db_leave_node() was called. */
int fake_db_nodes_left(void);
/* ob_db_failback_due answers `due` (1 a try, 2 following; 0 at start) for
 * an idle connection, until ob_db_failback drops one for it. */
void fake_db_failback_due(int due);

#endif
