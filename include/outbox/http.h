/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A small HTTP responder on the relay's loop, for monitoring:
 *   GET /metrics   the Prometheus text format (outbox/metrics.h)
 *   GET /healthz   200 while the loop runs
 *   GET /readyz    200 when every bound relay has a database connection up and
 *                  NATS and its stream answer, and neither refuses what every
 *                  row needs (outbox_relay_paused); 503 with a one-line reason.
 *                  A 200 names what waits while the rest flows
 *                  (outbox_relay_degraded: subjects paused)
 * HEAD works on the same paths. Anything else is refused: a malformed request
 * gets 400, another method 405, another path 404, headers larger than
 * max_request_bytes 431, and a request not complete within
 * request_timeout_ms 408; every response closes the connection. It runs no
 * thread and never blocks the loop.
 *
 * Threads: every function must be called on the loop thread.
 *
 * Life cycle:
 *   outbox_http_options_init(&o); o.listen = "127.0.0.1:9464";
 *   outbox_http_create(&h, loop, &o, err, len);   copies the options
 *   outbox_http_add_relay(h, relay, "orders");    once per relay, before start
 *   outbox_http_add_counter(h, name, help, &v);   optional: the embedder's counters
 *   outbox_http_start(h, err, len);               binds and listens
 *   ... uv_run(loop) ...
 *   outbox_http_stop(h, cb, data);                closes every handle, then cb
 *   outbox_http_destroy(h);                       before start or after the cb
 * The bound relays must stay valid (not destroyed) until the stop callback.
 */
#ifndef OUTBOX_HTTP_H
#define OUTBOX_HTTP_H

#include <stdint.h>
#include <uv.h>

#include "outbox/common.h"
#include "outbox/relay.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct outbox_http outbox_http;

typedef struct outbox_http_options {
    /* "127.0.0.1:9464", "[::1]:9464", ":9464" (every IPv4 address) or
     * "localhost:9464" (127.0.0.1). Addresses are literals: nothing is
     * resolved. Port 0 picks a free port (see outbox_http_port). */
    const char *listen;
    uint32_t request_timeout_ms; /* the whole request must arrive within this (5000) */
    uint32_t max_request_bytes;  /* request line and headers (8192) */
    uint32_t max_clients;        /* open connections; more are closed at once (64) */
    outbox_log_fn log;           /* NULL: silent */
    void *log_data;
    outbox_log_level log_level; /* info */
} outbox_http_options;

/* Fills `o` with the defaults given above; listen is "127.0.0.1:9464". */
OUTBOX_EXPORT void outbox_http_options_init(outbox_http_options *o);

/* Checks and copies the options; touches neither the loop nor the network.
 * On error *out is NULL and errbuf (may be NULL) says what was wrong. */
OUTBOX_EXPORT int outbox_http_create(outbox_http **out, uv_loop_t *loop,
                                     const outbox_http_options *o, char *errbuf, size_t errlen);

/* Serves the stats of `r` under the table label `table` (copied; NULL or ""
 * leaves the label out). Only before start. */
OUTBOX_EXPORT int outbox_http_add_relay(outbox_http *h, outbox_relay *r, const char *table);

/* Serves one more counter on /metrics, after the relays' and the process's
 * series: `name` (a metric name, no labels) with the HELP text `help` (one
 * line, no backslash), both copied; its value is read from *value at each
 * scrape, on the loop thread, so the caller keeps `value` valid until the
 * stop callback. Only before start. OUTBOX_EINVAL for a name or help the
 * text format cannot carry. */
OUTBOX_EXPORT int outbox_http_add_counter(outbox_http *h, const char *name, const char *help,
                                          const uint64_t *value);

/* Binds, listens and starts serving. OUTBOX_EINVAL when the address cannot
 * be bound (in use, not local), with the reason in errbuf; the responder is
 * then as before the call: destroy it at once, or start it again. (The
 * refused socket closes itself on the loop's next turn, as any closed handle
 * does before uv_loop_close.) */
OUTBOX_EXPORT int outbox_http_start(outbox_http *h, char *errbuf, size_t errlen);

/* The port listened on (useful with port 0), or -1 before start. */
OUTBOX_EXPORT int outbox_http_port(const outbox_http *h);

typedef void (*outbox_http_stop_cb)(outbox_http *h, void *data);

/* Closes the listener and every connection, then calls cb (may be NULL) once
 * every handle is closed. OUTBOX_ESTATE when not started or already stopping. */
OUTBOX_EXPORT int outbox_http_stop(outbox_http *h, outbox_http_stop_cb cb, void *data);

/* Frees the responder: before start or once the stop callback ran; NULL is a
 * no-op. Returns OUTBOX_ESTATE, freeing nothing, while it is on the loop. */
OUTBOX_EXPORT int outbox_http_destroy(outbox_http *h);

#ifdef __cplusplus
}
#endif

#endif
