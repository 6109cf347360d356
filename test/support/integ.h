/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Helpers for integration tests against the throwaway servers started by
 * scripts/servers.sh (the ctest fixture exports their addresses).
 * Blocking calls are fine here: this is test code, not the relay.
 */
#ifndef OB_TEST_INTEG_H
#define OB_TEST_INTEG_H

#include <mysql.h>
#include <stdint.h>
#include <uv.h>

#include "outbox/outbox.h"

/* An OUTBOX_TEST_* variable, or exit(77) (skipped) when unset. */
const char *ti_env(const char *name);

/* Drops and creates database `db` holding a fresh outbox table made with
 * `o` (NULL: the plain schema). Returns a connection to it. */
MYSQL *ti_db_fresh(const char *db, const outbox_schema_options *o);
MYSQL *ti_db_connect(const char *db);
void ti_exec(MYSQL *m, const char *fmt, ...);
long long ti_int(MYSQL *m, const char *fmt, ...);
/* "mysql://outbox:outbox@127.0.0.1:port/<db>", static storage. */
const char *ti_db_url(const char *db);

/* Inserts n events through the producer API in transactions of `per_tx`
 * entries, each payload `payload_bytes` of JSON. */
void ti_seed(MYSQL *m, const char *table, int n, int per_tx, int payload_bytes);

/* Reads stream `stream` and returns the message count; *distinct gets the
 * number of distinct Nats-Msg-Id values. Deletes nothing. */
long long ti_stream_count(const char *stream, long long *distinct);
void ti_stream_delete(const char *stream);

/* Relay options for a test: defaults, plus the test servers' URLs for
 * database `db`, the stream and subject prefix, and warnings logged to
 * stderr. */
void ti_relay_options(outbox_relay_options *o, const char *db, const char *stream,
                      const char *prefix);

/* Runs `loop` until `*done` is nonzero or `timeout_ms` passes; returns 0 on
 * done, -1 on timeout. */
int ti_run_until(uv_loop_t *loop, volatile int *done, uint64_t timeout_ms);
/* A drained or stop callback that sets the volatile int `data` points to. */
void ti_set_flag(outbox_relay *r, void *data);

/* Runs a relay made from `o` on a loop of its own until it reports that it
 * drained (the test fails after timeout_ms), stops it, checks that the loop
 * closes with no handle left, and returns the relay's last stats. */
outbox_stats ti_relay_drain(const outbox_relay_options *o, uint64_t timeout_ms);

/* A log callback that prints to stderr with a prefix, for debugging. */
void ti_log(outbox_log_level level, const char *msg, void *data);

#endif
