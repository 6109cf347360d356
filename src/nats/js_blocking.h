/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A blocking JetStream publisher for the one-shot commands that run no loop
 * (outbox/republish.h): one connection, the stream checked, rows made into
 * messages exactly as the relay makes them (message.h) with the reply
 * subject "<inbox>.<tag>", and the acks read from a synchronous
 * subscription on the inbox. The caller keeps its own window of
 * outstanding tags. Every call may block on the network; none may run on a
 * loop. nats.c runs its own threads for the connection, as it does for
 * outbox_nats_check().
 */
#ifndef OB_JS_BLOCKING_H
#define OB_JS_BLOCKING_H

#include <stddef.h>
#include <stdint.h>

#include "message.h"
#include "outbox/relay.h"
#include "puback.h"
#include "row.h"

typedef struct ob_jsb ob_jsb;

/* What the stream's configuration says. */
typedef struct ob_jsb_stream {
    uint64_t window_ms; /* the duplicate window */
    int64_t max_bytes;  /* 0 or less: no limit */
    uint64_t messages;  /* messages stored now */
} ob_jsb_stream;

/* Connects with the URL, TLS and credentials of `o` and subscribes to a
 * new inbox. Returns OUTBOX_OK with *out, or the status of
 * outbox_nats_check() with the cause in err. */
int ob_jsb_open(ob_jsb **out, const outbox_relay_options *o, char *err, size_t errlen);

/* Asks JetStream about `stream`. Returns OUTBOX_OK with *info when it
 * exists and its subjects take some of "<prefix>.*.>"; OUTBOX_ENOTFOUND
 * when there is no such stream, OUTBOX_ESCHEMA when it takes none of those
 * subjects, OUTBOX_EINVAL for a name that cannot be a stream's,
 * OUTBOX_ENATS when JetStream does not answer; err says which. */
int ob_jsb_stream_check(ob_jsb *j, const char *stream, const char *prefix, ob_jsb_stream *info,
                        char *err, size_t errlen);

/* Creates `stream` on "<prefix>.>" as the relay creates one (file storage,
 * limits retention, the duplicate window and replicas given). Returns
 * OUTBOX_OK, or OUTBOX_ENATS with err (one that exists already is refused). */
int ob_jsb_stream_create(ob_jsb *j, const char *stream, const char *prefix, uint64_t window_ms,
                         int replicas, char *err, size_t errlen);

/* Publishes `row` on "<prefix>.<aggregate_type>.<event_type>" with the
 * headers and data of ob_message_create(), its ack to come back with
 * `tag`. Returns 0; 1 when the row cannot be a message (a bad subject or
 * headers: err says why, nothing was sent); -1 when NATS refused the
 * publish (err). */
int ob_jsb_publish(ob_jsb *j, uint64_t tag, const char *prefix, const ob_message_opts *mo,
                   const ob_row *row, char *err, size_t errlen);

/* Waits up to timeout_ms for the next answer on the inbox. Returns 0 with
 * *tag and *ack (ack->desc points into the answer, valid until the next
 * call); 1 when none came in time; -1 when the connection failed or no
 * stream took a subject ("no responders"), with err. */
int ob_jsb_next_ack(ob_jsb *j, uint32_t timeout_ms, uint64_t *tag, ob_puback *ack, char *err,
                    size_t errlen);

/* Sends what is buffered and waits up to timeout_ms for the server to have
 * it. Returns 0 or -1 with err. */
int ob_jsb_flush(ob_jsb *j, uint32_t timeout_ms, char *err, size_t errlen);

void ob_jsb_close(ob_jsb *j);

#endif
