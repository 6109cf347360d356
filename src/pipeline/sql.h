/* SPDX-License-Identifier: Apache-2.0 */
/*
 * SQL text for the relay's batch cycle. Everything here is pure string
 * building into an ob_buf, so it is unit-tested without a server.
 *
 * Values never pass through string escaping: ids are written as X'..' hex
 * literals and error texts as _utf8mb4 X'..' literals, so the statements are
 * correct whatever the server's sql_mode.
 */
#ifndef OB_SQL_H
#define OB_SQL_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "outbox/relay.h"

/* The column order of the fetch statement's result. */
enum {
    OB_COL_ID = 0,
    OB_COL_AGGREGATE_TYPE,
    OB_COL_AGGREGATE_ID,
    OB_COL_EVENT_TYPE,
    OB_COL_PAYLOAD,
    OB_COL_HEADERS,
    OB_COL_ATTEMPTS,
    OB_COL_CREATED_AT,
    OB_COL_WAITING, /* ordered fetches only: 1 while the row waits for its retry */
    OB_COL_COUNT
};

/* The workers' ordered fetches add two columns after OB_COL_WAITING: the
 * row's seq and, with `late` set, the seq of its aggregate's previous
 * pending row (NULL when none, and always without `late`). On a Galera node
 * a row written on another node keeps the seq its node gave it, and can
 * appear below the position of a locking read that waited on a row: the
 * read then returns the aggregate's next row without it. The previous
 * pending row is read with a lock, which sees it once committed, and the
 * batch holds such a row back (ob_batch_load). On one server every row of an aggregate
 * exists before a later one's seq is handed out, and the locking read waits
 * on it: there `late` is 0, and the per-row subquery is not paid. */
enum { OB_OCOL_SEQ = OB_COL_COUNT, OB_OCOL_BEFORE, OB_OCOL_COUNT };

/* last_error holds at most this many characters. */
#define OB_LAST_ERROR_MAX 1024

/* A derived table of the integers 0 to N as column `seq`, for a FROM
 * clause, with N given to printf as %d. Unlike MariaDB's seq_0_to_N tables
 * it needs no privilege: a user granted the outbox table alone may read it. */
#define OB_SQL_SEQ_0_TO                                                                            \
    "(WITH RECURSIVE s_(seq) AS (SELECT 0 UNION ALL SELECT seq + 1 FROM s_ WHERE seq < %d) "       \
    "SELECT seq FROM s_) s_"

/* Checks a table name: "name" or "schema.name", each part 1-64 characters of
 * [A-Za-z0-9_]. Returns 0, or -1 with a message in err. */
int ob_sql_check_table(const char *name, char *err, size_t errlen);

/* Appends the name quoted with backticks: `schema`.`name`. The name must
 * have passed ob_sql_check_table(). */
void ob_sql_quote_table(ob_buf *b, const char *name);

/* START TRANSACTION; SELECT <columns> FROM t WHERE status = 0 AND the row is
 * due ORDER BY id LIMIT n FOR UPDATE SKIP LOCKED */
void ob_sql_fetch(ob_buf *b, const char *qtable, int limit);

/* Ordered fetches (OB_COL_WAITING added). They read with FOR UPDATE and
 * never SKIP LOCKED, so each aggregate's rows in the result are a prefix of
 * its pending rows in seq order; rows of an aggregate that has a row waiting
 * for its retry are left out, so they cannot fill the batch. */
/* `lock` (a quoted name, or NULL for none): the statement takes that named
 * lock (GET_LOCK, no wait) before it reads a row, in a first UNION branch
 * that returns nothing; the lease's fencing finds the session by it. */
/* The pending rows of the buckets in `mask` (bit k: bucket k), at most
 * max(limit / buckets, 1) of each: START TRANSACTION; (SELECT ... WHERE
 * bucket = k ...) UNION ALL ...; an empty mask gives an empty result. */
void ob_sql_fetch_buckets(ob_buf *b, const char *qtable, uint64_t mask, int limit, const char *lock,
                          int late);
/* The first `limit` pending rows of the table in seq order (leader mode). */
void ob_sql_fetch_strict(ob_buf *b, const char *qtable, int limit, const char *lock, int late);

/* SELECT 1 ... LIMIT 1: is any row due? A non-locking read without a
 * transaction, for the idle poll: one round trip, no locks held. */
void ob_sql_probe(ob_buf *b, const char *qtable);

/* Statements that change a set of rows are written as
 *   ob_sql_*_head(...); ob_sql_add_id(...) for each row; ob_sql_end_ids(...)
 * which gives "<head> WHERE id IN (X'..',X'..');". */
void ob_sql_add_id(ob_buf *b, const unsigned char id[16], int first);
void ob_sql_end_ids(ob_buf *b);

/* Head of the statement for acked rows: UPDATE ... status=1 or DELETE. */
void ob_sql_processed_head(ob_buf *b, const char *qtable, outbox_processing_mode mode);

/* Head of the statement for failed rows sharing one error text. With `dead`
 * the rows become status=-1 now; otherwise the attempt is counted, the row
 * dies once attempt_count reaches max_attempts, and else waits for its
 * backoff (computed per row by the server, with jitter). */
typedef struct ob_backoff {
    outbox_backoff_kind kind;
    uint32_t base_ms;
    uint32_t max_ms;
    double jitter;
} ob_backoff;

void ob_sql_fail_head(ob_buf *b, const char *qtable, const char *error, size_t error_len, int dead,
                      int max_attempts, const ob_backoff *bo);

/* Head of the statement for rows whose subject is paused: they wait `ms`
 * (next_attempt_at), with `error` as last_error, and no attempt counted.
 * `waiting_status` (cursor mode's 2) also sets the status; 0 leaves it. */
void ob_sql_defer_head(ob_buf *b, const char *qtable, const char *error, size_t error_len,
                       uint64_t ms, int waiting_status);

/* Appends _utf8mb4 X'..' for `s`, cut at `max_chars` characters and with
 * invalid UTF-8 bytes replaced by '?'. */
void ob_sql_text_literal(ob_buf *b, const char *s, size_t len, size_t max_chars);

/* The delay before retry number `attempt` (1 = after the first failure),
 * without jitter, in milliseconds. Mirrors the SQL expression. */
uint64_t ob_backoff_delay_ms(const ob_backoff *bo, int attempt);

#endif
