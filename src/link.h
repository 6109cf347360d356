/*
 * The relay's link to NATS: one connection, one wildcard subscription on a
 * private inbox that receives every publish ack and control reply, and the
 * stream check that must pass before rows are claimed.
 *
 * Threads: nats.c runs its own threads (reader, flusher, reconnect, message
 * delivery). Everything they produce for us (ack messages, disconnects,
 * reconnects, close) is put in a mailbox under a mutex and handed to the loop
 * with one uv_async_t. The callbacks below therefore all run on the loop.
 *
 * Nothing here blocks the loop on the network: the host is resolved with
 * uv_getaddrinfo, the server is probed with a non-blocking TCP connect before
 * nats.c's own connect (whose handshake then completes against a listening
 * server), and JetStream API calls are plain publishes whose replies come back
 * through the inbox.
 *
 * Reply subjects: "<inbox>.<worker>.<gen>.<slot>" for publishes and
 * "<inbox>.c.<n>" for control requests.
 */
#ifndef OB_LINK_H
#define OB_LINK_H

#include <nats/nats.h>
#include <stdint.h>
#include <uv.h>

#include "log.h"
#include "outbox/relay.h"
#include "url.h"

typedef struct ob_link ob_link;

typedef enum ob_ack_kind {
    OB_ACK_STORED = 0,        /* JetStream stored the message */
    OB_ACK_DUPLICATE = 1,     /* JetStream already had this Msg-Id */
    OB_ACK_ERROR = 2,         /* JetStream refused it: code, err_code, text */
    OB_ACK_NO_RESPONDERS = 3, /* no stream listens on the subject */
    OB_ACK_GARBLED = 4,       /* a reply that is not a PubAck: text is the raw reply */
} ob_ack_kind;

/* The answer to one publish, read on nats.c's delivery thread so that the
 * loop gets a small record instead of a message (and the thread that
 * allocated the message frees it). */
typedef struct ob_ack {
    uint32_t worker, gen, slot; /* from the reply subject */
    ob_ack_kind kind;
    int code, err_code;
    const char *text; /* ERROR: the description; GARBLED: the reply; else NULL */
    size_t text_len;
    natsMsg *msg; /* kept only while text points into it */
} ob_ack;

typedef struct ob_link_callbacks {
    /* The answer to a publish made with a reply subject from ob_link_reply().
     * The record and its text are only valid during the call. */
    void (*on_ack)(void *data, const ob_ack *ack);
    /* Readiness changed: 1 when rows may be published, 0 when not. */
    void (*on_ready)(void *data, int ready);
    /* The link cannot go on (strict duplicate-window check). */
    void (*on_fatal)(void *data, const char *why);
    void *data;
} ob_link_callbacks;

typedef struct ob_link_config {
    const char *url; /* as given; parsed by ob_link_new */
    const char *stream;
    const char *subject_prefix;
    uint64_t duplicate_window_ms; /* for a stream we create */
    uint64_t retry_horizon_ms;    /* ack timeout + maximum backoff */
    int strict_duplicate_window;
    uint32_t max_in_flight;
    const ob_log *log;
    /* TLS, credentials and stream replicas; must outlive the link. */
    const outbox_relay_options *options;
} ob_link_config;

/* Returns NULL with a message in err on a bad URL or out of memory. */
ob_link *ob_link_new(uv_loop_t *loop, const ob_link_config *cfg, const ob_link_callbacks *cbs,
                     char *err, size_t errlen);
int ob_link_start(ob_link *l);

/* 1 when connected and the stream answered. */
int ob_link_ready(const ob_link *l);
/* Counts losses of readiness. A batch that saw it change was interrupted. */
uint32_t ob_link_epoch(const ob_link *l);
/* For publishing while ready. */
natsConnection *ob_link_conn(const ob_link *l);
/* Writes "<inbox>.<worker>.<gen>.<slot>" into out (room for 64 bytes) and
 * returns its length. */
size_t ob_link_reply(const ob_link *l, uint32_t worker, uint32_t gen, uint32_t slot, char *out);

/* A publish showed that JetStream is not answering (no responders, or a 503
 * error): stop being ready and probe the stream until it answers again. */
void ob_link_unavailable(ob_link *l, const char *why);

/* Closes the subscription and the connection, waits for nats.c to report
 * both closed, closes the uv_async_t, frees the link, then calls cb. */
void ob_link_close(ob_link *l, void (*cb)(void *data), void *data);

#endif
