/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The relay's link to NATS: one connection, one wildcard subscription on a
 * private inbox that receives every publish ack and control reply, and the
 * stream check that must pass before rows are published.
 *
 * Threads: two clients stand behind the link (link_ops), chosen by
 * ob_link_config.client. On the loop (link_client_loop.c, the default but
 * over TLS) nats.c's socket is polled on the loop (nats_loop.c) and acks
 * are read there; only closes come from nats.c's callback thread, through a
 * mailbox under a mutex and one uv_async_t (link_mailbox.c). On its threads
 * (link_client_threads.c, the default over TLS) nats.c runs its reader,
 * flusher, reconnect and delivery threads, and everything they produce for
 * us (acks, disconnects, reconnects, closes) comes through that mailbox.
 * The callbacks below all run on the loop.
 *
 * Nothing here blocks the loop on the network: nats.c's connect (name
 * resolution, TCP, the INFO/CONNECT handshake and TLS, trying every listed
 * server) runs on libuv's thread pool through uv_queue_work, and JetStream
 * API calls are plain publishes whose replies come back through the inbox.
 * A connection that nats.c closes for good (it gives up after repeated
 * authentication errors on reconnect) is replaced by a new one, with backoff.
 *
 * Reply subjects: "<inbox>.<worker>.<gen>.<slot>" for publishes and
 * "<inbox>.c.<n>" for control requests.
 */
#ifndef OB_LINK_H
#define OB_LINK_H

#include <stdint.h>
#include <uv.h>

#include "log.h"
#include "outbox/relay.h"
#include "broker.h"
#include "message.h"
#include "url.h"

typedef struct ob_link ob_link;

/* What the link tells its owner (broker.h): acks, readiness (posted, and
 * delivered from the loop's check phase), the doorbell, a fatal error. */
typedef ob_broker_events ob_link_callbacks;

/* The link as a broker (broker.h): the table the relay installs in its
 * readers' environment, with the link as `self`. link_broker.c. */
extern const ob_broker_ops ob_link_broker_ops;

typedef struct ob_link_config {
    const char *url; /* as given; parsed by ob_link_new */
    const char *stream;
    const char *subject_prefix;
    const char *ce_source;        /* percent-encoded; NULL leaves the ce-* headers out */
    uint64_t duplicate_window_ms; /* for a stream we create */
    uint64_t retry_horizon_ms;    /* ack timeout + maximum backoff */
    int strict_duplicate_window;
    int replicas;              /* for a stream we create; 0 means 1 */
    outbox_nats_client client; /* where nats.c reads and writes (AUTO: loop, threads over TLS) */
    const char *wake_subject;  /* core NATS subject of the doorbell; NULL for none */
    uint32_t max_in_flight;
    const ob_log *log;
    /* TLS and credentials (see tls_options.h); must outlive the link. May
     * be NULL: no TLS, credentials from the URL only. */
    const outbox_relay_options *options;
} ob_link_config;

/* Returns NULL with a message in err on a bad URL or out of memory.
 * Touches nothing on the loop. */
ob_link *ob_link_new(uv_loop_t *loop, const ob_link_config *cfg, const ob_link_callbacks *cbs,
                     char *err, size_t errlen);
/* Adds the link's handles to the loop and starts connecting. */
int ob_link_start(ob_link *l);

/* 1 when rows may be published. */
int ob_link_ready(const ob_link *l);
/* Counts losses of readiness. A batch that saw it change was interrupted. */
uint32_t ob_link_epoch(const ob_link *l);
/* The stream's duplicate window as last read (0 before). */
uint64_t ob_link_window_ms(const ob_link *l);
/* The stream's max_bytes, once read; 0 or less when it has no limit. */
int64_t ob_link_max_bytes(const ob_link *l);
/* Loop time of the last reply that came in on the inbox. */
uint64_t ob_link_last_answer(const ob_link *l);

/* Publishes a row as a message with the reply subject of (worker, gen,
 * slot); the answer comes back through on_ack. Returns 0, or -1 with *fail
 * filled (a row that cannot be a message, or a client that refused it). */
int ob_link_publish(ob_link *l, uint32_t worker, uint32_t gen, uint32_t slot, const ob_row *row,
                    ob_pub_fail *fail);

/* JetStream did not answer (no ack from a broker that answered nothing):
 * stop being ready and ask about the stream until it answers again. */
void ob_link_unavailable(ob_link *l, const char *why);

/* A publish found no responders, or JetStream answered 503: while still
 * publishing, ask whether JetStream answers at all. It does, and its stream
 * takes some of the relay's subjects: the failure was the message's (its
 * subject has no stream), and on_ready(1) tells so. It does not answer: an
 * outage, and on_ready(0). It answers but lists none of the relay's
 * subjects: the broker's configuration is at fault, a pause as for a
 * refusal (below) that lasts until a stream takes them, and on_ready(0). */
void ob_link_suspect(ob_link *l, const char *why);
/* 0 while such a check is under way. */
int ob_link_settled(const ob_link *l);

/* JetStream refused a message as it would refuse any (a full stream or
 * store, a resource limit, no leader: the broker's fault, `why`): pause, say
 * so once, and try again later. */
void ob_link_refused(ob_link *l, const char *why);
/* The reason of the refusal that holds (until a message is stored again),
 * or of the pause while the stream lists none of the relay's subjects, or
 * NULL. */
const char *ob_link_refusal(const ob_link *l);
/* While a refusal or that pause holds, the number of its episode (1, 2,
 * ...: one per stretch of refusals that a stored message ends, one per
 * stretch without the subjects), else 0. */
uint32_t ob_link_refusal_episode(const ob_link *l);

/* 1 while the stream, once seen, is missing (deleted under the relay):
 * publishing pauses until it exists again, never re-created. */
int ob_link_stream_missing(const ob_link *l);
/* How many times the stream seen was found missing since the start. */
uint32_t ob_link_stream_losses(const ob_link *l);

/* Closes the subscription and the connection, waits for nats.c to report
 * both closed (and for a connect under way to end), closes the handles,
 * frees the link, then calls cb (may be NULL). Also valid before start. */
void ob_link_close(ob_link *l, void (*cb)(void *data), void *data);

#endif
