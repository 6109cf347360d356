/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A non-blocking MariaDB connection on a libuv loop, for services that write
 * their business rows and their events on the loop that also runs the relay
 * (the same connection code the relay uses: name resolution on the loop,
 * Connector/C's non-blocking API, never a wait on the network).
 *
 * Life cycle, as every handle of the library:
 *   outbox_conn_create(&c, loop, url, err, errlen)  nothing on the loop yet
 *   outbox_conn_start(c, cb, data)                  connects; cb(c, status, data)
 *   outbox_conn_query(c, sql, len, cb, data)        one operation at a time
 *   outbox_conn_stop(c, cb, data)                   cb(c, data) once closed
 *   outbox_conn_destroy(c)                          after the stop callback
 *
 * Threads: every call on the loop thread; callbacks run on it.
 */
#ifndef OUTBOX_CONN_H
#define OUTBOX_CONN_H

#include <mysql.h>
#include <stddef.h>
#include <uv.h>

#include "outbox/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct outbox_conn outbox_conn;

/* status: OUTBOX_OK, or OUTBOX_EDB with outbox_conn_errmsg() saying why. */
typedef void (*outbox_conn_cb)(outbox_conn *c, int status, void *data);
typedef void (*outbox_conn_stop_cb)(outbox_conn *c, void *data);

/* Parses the URL (mysql://user:pass@host:port/db[?socket=PATH], or several
 * nodes tried in order: mysql://user:pass@h1:p1,h2:p2/db) and copies it;
 * touches neither the loop nor the network. On error *out is NULL and
 * errbuf (when not NULL) says what was wrong. */
OUTBOX_EXPORT int outbox_conn_create(outbox_conn **out, uv_loop_t *loop, const char *db_url,
                                     char *errbuf, size_t errlen);

/* Connects (session time zone UTC, utf8mb4, multi-statements on). */
OUTBOX_EXPORT int outbox_conn_start(outbox_conn *c, outbox_conn_cb cb, void *data);

/* Sends `sql` (may hold several statements separated by ';', such as
 * "START TRANSACTION; INSERT ...; INSERT ...; COMMIT") and collects every
 * result; `sql` must stay valid until the callback. When a statement fails
 * the rest are skipped: a transaction it opened stays open, so send
 * "ROLLBACK" next. Returns OUTBOX_ESTATE when not connected or busy. */
OUTBOX_EXPORT int outbox_conn_query(outbox_conn *c, const char *sql, size_t len, outbox_conn_cb cb,
                                    void *data);

/* The connection's MYSQL handle, only for mysql_real_escape_string() and
 * outbox_producer_build(); never call blocking functions on it. NULL when
 * not connected. */
OUTBOX_EXPORT MYSQL *outbox_conn_mysql(const outbox_conn *c);

/* The detail message of the last error. Never NULL. */
OUTBOX_EXPORT const char *outbox_conn_errmsg(const outbox_conn *c);

/* Closes the connection (a polite goodbye when idle) and its handles; cb
 * (may be NULL) once closed. An operation under way is abandoned without
 * its callback. */
OUTBOX_EXPORT int outbox_conn_stop(outbox_conn *c, outbox_conn_stop_cb cb, void *data);

/* Frees the handle: before start, or once the stop callback ran. Returns
 * OUTBOX_ESTATE, freeing nothing, while it is still on the loop. */
OUTBOX_EXPORT int outbox_conn_destroy(outbox_conn *c);

#ifdef __cplusplus
}
#endif

#endif
