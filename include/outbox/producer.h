/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The producer API: enqueue events into the outbox table on the caller's own
 * MariaDB connection, inside the caller's own transaction.
 *
 *     mysql_query(conn, "START TRANSACTION");
 *     mysql_query(conn, "INSERT INTO orders ...");
 *     outbox_enqueue(producer, conn, &entry, &id);
 *     mysql_query(conn, "COMMIT");
 *
 * If the business transaction rolls back, so does the event. The relay only
 * ever sees committed rows.
 *
 * Threads: a producer holds a statement buffer, so one producer must not be
 * used by two threads at the same time. Create one per thread, or guard it.
 * The id generator behind it is shared and thread-safe.
 *
 * Blocking: outbox_enqueue() and outbox_enqueue_many() run one blocking
 * mysql_real_query() on the caller's connection, as the caller's own queries
 * do. Callers on a non-blocking connection use outbox_producer_build() and send
 * the statement themselves.
 */
#ifndef OUTBOX_PRODUCER_H
#define OUTBOX_PRODUCER_H

#include <stddef.h>
#include <mysql.h>

#include "outbox/common.h"
#include "outbox/id.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The widest value the VARCHAR(128) columns accept, in characters. */
#define OUTBOX_FIELD_MAX_CHARS 128

/* One event. The strings are read during the call and not kept. */
typedef struct outbox_entry {
    const char *aggregate_type; /* required, 1-128 characters, e.g. "order" */
    const char *aggregate_id;   /* required (may be ""), up to 128 characters */
    const char *event_type;     /* required, 1-128 characters, e.g. "created" */
    const char *payload;        /* required: JSON text, or bytes for a binary table */
    size_t payload_len;         /* bytes in payload; 0 means strlen(payload) */
    const char *headers;        /* optional JSON object of extra message headers: each
                                   value a string (see validate_headers) */
    size_t headers_len;         /* bytes in headers; 0 means strlen(headers) */
    const outbox_id *id;        /* optional caller-chosen id; NULL generates a UUIDv7 */
} outbox_entry;

typedef struct outbox_producer_options {
    /* Table name, optionally "schema.table", each part [A-Za-z0-9_]+.
     * Default "outbox". Copied by outbox_producer_create(). */
    const char *table;
    /* Validate the payload as JSON before sending (default 1): RFC 8259,
     * UTF-8 checked, nested at most 31 levels (MariaDB's limit). */
    int validate_payload;
    /* Validate headers before sending (default 1): a JSON object whose
     * values are all strings (the relay refuses a row with a number, a
     * boolean, null, an array or an object as a value), whose keys can be
     * NATS header names, which sets no header the relay reserves (Nats-*,
     * ce-*, a CloudEvents Content-Type), and whose traceparent and
     * tracestate members, if any, are W3C Trace Context. With 0 such an
     * entry is inserted and the relay marks its row dead with the reason. */
    int validate_headers;
    /* The table stores payloads as LONGBLOB (the binary schema variant). The
     * payload is sent as bytes and never validated as JSON (default 0). */
    int binary_payload;
} outbox_producer_options;

typedef struct outbox_producer outbox_producer;

/* Fills `o` with the defaults listed above. */
OUTBOX_EXPORT void outbox_producer_options_init(outbox_producer_options *o);

/* Creates a producer. `o` may be NULL for the defaults; it is copied, so the
 * caller may free it afterwards. On success *out owns a producer to be freed
 * with outbox_producer_destroy(). On error *out is NULL and errbuf (when not
 * NULL) says what was wrong: OUTBOX_EINVAL for a bad table name,
 * OUTBOX_ENOMEM. */
OUTBOX_EXPORT int outbox_producer_create(outbox_producer **out, const outbox_producer_options *o,
                                         char *errbuf, size_t errlen);

/* Frees the producer. NULL is a no-op. */
OUTBOX_EXPORT void outbox_producer_destroy(outbox_producer *p);

/* Inserts one event with one INSERT on `conn`. On success the generated (or
 * given) id is written to *id_out when it is not NULL.
 *
 * Errors: OUTBOX_EINVAL (missing field; an aggregate_type or event_type that
 * cannot be a NATS subject part: empty tokens, '*', '>', whitespace, invalid
 * UTF-8; a header value that is not a string; a header the relay reserves:
 * Nats-*, ce-*, a CloudEvents Content-Type; a traceparent or tracestate
 * header that is not W3C Trace Context), OUTBOX_ETOOLONG (field over 128 characters), OUTBOX_EJSON
 * (invalid payload or headers), OUTBOX_EDB (the server refused the statement). On any error nothing
 * is inserted, the caller's transaction stays open and usable, and outbox_producer_errmsg() says
 * what was wrong and, for a batch, which entry. */
OUTBOX_EXPORT int outbox_enqueue(outbox_producer *p, MYSQL *conn, const outbox_entry *e,
                                 outbox_id *id_out);

/* Inserts `n` events with a single multi-row INSERT: one round trip. The
 * whole batch is checked before anything is sent, so either every entry is
 * inserted or none is. `ids_out` (may be NULL) receives n ids in order.
 * The statement must fit the server's max_allowed_packet. */
OUTBOX_EXPORT int outbox_enqueue_many(outbox_producer *p, MYSQL *conn, const outbox_entry *entries,
                                      size_t n, outbox_id *ids_out);

/* Checks the entries and builds the INSERT text without sending it, for
 * callers that drive their connection themselves (for example through the
 * non-blocking API). `conn` is used only for string escaping in its
 * character set. On success *sql and *sql_len point into the producer's
 * buffer, valid until the next call on this producer. */
OUTBOX_EXPORT int outbox_producer_build(outbox_producer *p, MYSQL *conn,
                                        const outbox_entry *entries, size_t n, outbox_id *ids_out,
                                        const char **sql, size_t *sql_len);

/* W3C Trace Context: the same calls, with the trace of the request that
 * wrote the events, so that a consumer continues it. `traceparent` is
 * required: 00-<32 hex trace-id>-<16 hex parent-id>-<2 hex flags>, lowercase,
 * with neither id all zeros, as OpenTelemetry's propagators write it (a
 * later version may append fields after a '-'; version ff is invalid);
 * `tracestate` is optional (NULL or "": none): the W3C list of at most 32
 * key=value members, at most 512 characters. Both are added to each
 * entry's headers object (one is made when an entry has none) as
 * "traceparent" and "tracestate", which the relay publishes unchanged as the
 * NATS headers of those names. The strings are read during the call and not
 * kept.
 *
 * Errors, beside those of the calls above, with nothing inserted:
 * OUTBOX_EINVAL for a NULL or malformed traceparent, a malformed
 * tracestate, or an entry whose headers already hold a traceparent or
 * tracestate (in any letter case: give the trace once); OUTBOX_EJSON for
 * an entry's headers that are not a JSON object (they must be read to add
 * the trace, whatever validate_headers says). The message says which. */
OUTBOX_EXPORT int outbox_enqueue_traced(outbox_producer *p, MYSQL *conn, const outbox_entry *e,
                                        const char *traceparent, const char *tracestate,
                                        outbox_id *id_out);
OUTBOX_EXPORT int outbox_enqueue_many_traced(outbox_producer *p, MYSQL *conn,
                                             const outbox_entry *entries, size_t n,
                                             const char *traceparent, const char *tracestate,
                                             outbox_id *ids_out);
OUTBOX_EXPORT int outbox_producer_build_traced(outbox_producer *p, MYSQL *conn,
                                               const outbox_entry *entries, size_t n,
                                               const char *traceparent, const char *tracestate,
                                               outbox_id *ids_out, const char **sql,
                                               size_t *sql_len);

/* The detail message of the last failed call. Never NULL; "" after success. */
OUTBOX_EXPORT const char *outbox_producer_errmsg(const outbox_producer *p);

/* A convenience for producer programs: opens a blocking connection from a
 * URL in the relay's form, mysql://user:pass@host:port/db[?socket=PATH], with
 * utf8mb4. A URL naming several nodes (host1:port1,host2:port2) connects to
 * the first that accepts, in that order. Returns NULL with a message in err
 * on failure (the last node's). Free the result
 * with mysql_close(). This blocks (DNS and connect): do not call it on a
 * loop thread. */
OUTBOX_EXPORT MYSQL *outbox_connect(const char *url, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
