/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One MariaDB connection driven through Connector/C's non-blocking API on a
 * libuv loop.
 *
 * The connection runs one operation at a time: connect, query, or quit. A
 * query may hold several statements; every result is collected (stored)
 * before the callback runs, and kept until the next operation starts.
 *
 * Rules this module keeps so that its users need not know them:
 *   - MYSQL_OPT_NONBLOCK is set before any _start call;
 *   - host names are resolved with uv_getaddrinfo, never inside connect;
 *   - a _start call is made at once, never after waiting for readability,
 *     because the library reads ahead;
 *   - the poll handle is stopped before any call into the library, closed
 *     before the library may close the socket, and made anew after connect;
 *   - MYSQL_OPT_RECONNECT stays off: a lost connection is reported, and the
 *     owner connects again on a fresh handle;
 *   - TCP connections keep alive (probes after 2 s of silence), so that a
 *     dead server is noticed within OB_DB_LOSS_BOUND_MS;
 *   - the session's wait_timeout is read at connect, and a connection idle
 *     for half of it is pinged (mysql_ping), so that the server does not end
 *     a live session; a query asked for during the ping is sent after it;
 *   - with TLS, the server's certificate is always verified, and the socket
 *     is put back in non-blocking mode once connect completes. Connector/C
 *     3.3 runs the TLS handshake itself with blocking waits (once per
 *     connection, about one round trip), each bounded by the connect timeout
 *     and at most 5 s; ob_db_connect_block_us() says how long the longest
 *     call into connect took.
 *
 * Nodes: given several (ob_db_config's nodes, a --db URL with several
 * hosts), a connect tries them in order, from the node in use, and stays on
 * the first that answers; a session lost on its node (the node died, refused
 * it, left the primary component with error 1047, or gave no answer within
 * op_timeout_ms) makes the next connect start at the node after it. One
 * connect tries each node once at most before it fails, so the owner's
 * backoff applies between rounds, and an error retrying cannot heal
 * (ob_db_errno_is_permanent) ends the round at once. Each move is logged
 * once, at info level, when the session on the new node is made.
 *
 * Callbacks run on the loop and may run before the function that started the
 * operation returns (when the answer was already buffered), so callers set
 * their own state first.
 */
#ifndef OB_DB_H
#define OB_DB_H

#include <mysql.h>
#include <stdint.h>
#include <uv.h>

#include "db_config.h"
#include "log.h"
#include "url.h"

typedef struct ob_db ob_db;

/* ok is 1 on success, 0 on error (see ob_db_errno / ob_db_error / ob_db_lost). */
typedef void (*ob_db_cb)(ob_db *db, int ok, void *data);
typedef void (*ob_db_close_cb)(void *data);

/* Creates the connection object and its timers on `loop`. Strings in cfg are
 * copied. `name` labels log lines ("worker 1", "maint"). Returns NULL on OOM. */
ob_db *ob_db_new(uv_loop_t *loop, const ob_db_config *cfg, const ob_log *log, const char *name);

/* Starts connecting; only from the down state. */
int ob_db_connect(ob_db *db, ob_db_cb cb, void *data);

/* Sends `sql` (len bytes, may hold several statements separated by ';') and
 * collects every result. Only when connected and idle. `sql` must stay valid
 * until the callback. Results of the previous operation are freed here. */
int ob_db_query(ob_db *db, const char *sql, size_t len, ob_db_cb cb, void *data);

/* Results of the last query: one entry per statement that ran. A statement
 * without a result set has a NULL result and its affected-row count. */
MYSQL_RES *ob_db_result(const ob_db *db, int i);
uint64_t ob_db_affected(const ob_db *db, int i);

/* The next row of result i, or NULL at its end (or when statement i gave no
 * rows); *lengths (when not NULL) gets the column lengths. Valid until the
 * next operation starts. */
char **ob_db_next_row(ob_db *db, int i, unsigned long **lengths);

/* 1 when column `col` of result i holds binary data (a BLOB, charset 63). */
int ob_db_col_binary(const ob_db *db, int i, unsigned col);

/* The MYSQL handle while connected (NULL otherwise), for string escaping
 * only: never call into the library with it. */
MYSQL *ob_db_mysql(const ob_db *db);

unsigned ob_db_errno(const ob_db *db);
const char *ob_db_error(const ob_db *db);
/* Nonzero once the connection is gone: the owner must ob_db_reset() it. */
int ob_db_lost(const ob_db *db);
int ob_db_is_idle(const ob_db *db);
/* The server's id for this session (CONNECTION_ID()), 0 when down. */
unsigned long ob_db_thread_id(const ob_db *db);

/* How long a lost connection may go unnoticed, whether a statement runs or
 * not: a server that closes it is seen at once (the watch below, or the
 * statement's read); a server or network gone silent is given up by TCP
 * keepalive and the TCP user timeout within 8 s. */
#define OB_DB_LOSS_BOUND_MS 10000

/* While the connection is idle (connected, no operation), watches it: if
 * the server closes it or TCP keepalive gives up on it, the handle goes down
 * at once (ob_db_lost() is 1, ob_db_error() says why) and cb(db, 0, data)
 * runs. Without a watch such a loss is found by the next operation. cb NULL
 * ends the watch. */
void ob_db_watch(ob_db *db, ob_db_cb cb, void *data);

/* Drops the connection like ob_db_reset() and gives its node up: the next
 * connect starts at the node after it (why says why, for the log). For a
 * node found unfit by a statement that succeeded, such as wsrep_ready OFF. */
void ob_db_leave_node(ob_db *db, const char *why);

/* Failback to the first node of the list (db_nodes.h): when the session has
 * been on another node for the config's failback_ms, and the group's turn
 * allows, drops it (the owner calls this with no transaction open) so that
 * the next ob_db_connect starts on the first node: 1 then when it tries the
 * first node for the group, 2 when it follows one that went back, else 0. */
int ob_db_failback(ob_db *db);
/* What ob_db_failback would return now, dropping nothing. */
int ob_db_failback_due(const ob_db *db);

/* The cluster probe just answered on this connection's node: a sign of life
 * for the other connections of its group (db_config.h, ob_db_group), whose
 * late statements on that node then keep the node. */
void ob_db_node_answered(ob_db *db);

/* Drops the connection without a goodbye: used after a loss. The handle
 * returns to the down state at once; any operation in progress is abandoned
 * without its callback. */
void ob_db_reset(ob_db *db);

/* Says goodbye to the server if connected and idle (COM_QUIT, non-blocking),
 * drops the connection otherwise, closes every libuv handle, frees the object
 * and then calls cb (may be NULL). The object must not be used afterwards. */
void ob_db_close(ob_db *db, ob_db_close_cb cb, void *data);

/* MariaDB's "Access denied, this account is locked" (ALTER USER ...
 * ACCOUNT LOCK). Error names come from <mysqld_error.h> (Connector/C
 * installs it; Debian's libmariadb-dev ships it), but older copies of it
 * predate this error, so this one is named here. (A server run with
 * --require-secure-transport=ON refuses a connection without TLS with 1045,
 * as it refuses a wrong password.) */
#define OB_ER_ACCOUNT_LOCKED 4151

/* db_errors.c: a connect error's text, with the cause named for the TLS cases an
 * operator meets: msg itself, or buf (len bytes) holding the longer text. */
const char *ob_db_connect_error_text(unsigned no, const char *msg, int tls, char *buf, size_t len);

/* True for client and server error numbers that mean the connection is gone. */
int ob_db_errno_is_lost(unsigned err);

/* True for errors that retrying cannot heal while nothing changes: TLS
 * required or refused, a certificate that does not verify, bad credentials,
 * an unknown database, a missing table or column, a missing privilege. */
int ob_db_errno_is_permanent(unsigned err);

/* True for errors that every row would meet alike, so that they are the
 * database's fault, never a row's: a privilege taken away (a table's or a
 * column's), a server or table made read-only, a full disk or table, a
 * table or column gone. */
int ob_db_errno_is_refusal(unsigned err);

/* What an operator should do about an error, as " (...)" to append to a
 * message; "" when there is nothing to add. */
const char *ob_db_error_hint(unsigned err);

/* The longest single call into the library during the last connect, in
 * microseconds: with TLS, about the handshake's blocking wait. */
uint64_t ob_db_connect_block_us(const ob_db *db);

/* The connection's socket, -1 when down. For checks only: never poll or
 * close it outside this module. */
int ob_db_fd(const ob_db *db);

/* The TLS cipher of the connection, or NULL when it is not encrypted. */
const char *ob_db_tls_cipher(const ob_db *db);

#endif
