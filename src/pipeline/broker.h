/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The seam between the readers and the broker (hiredis's adapters): what a
 * publish comes back with, whose fault a failed answer is, and the one
 * table of operations through which the readers and the relay reach the
 * broker. nats/ provides the table (ob_link_broker_ops, link.h) and the
 * relay installs it in the readers' environment (reader_env.h), so neither
 * readers/ nor pipeline/ includes a header of the broker's client.
 *
 * Threads: every operation runs on the loop thread. The events the broker
 * raises (ob_broker_events) run on the loop too, never inside an operation
 * of the table: a change of readiness is posted and delivered later, from
 * the loop's check phase, so it cannot re-enter a reader that is inside
 * its own ack handler.
 */
#ifndef OB_BROKER_H
#define OB_BROKER_H

#include <stddef.h>
#include <stdint.h>

#include "outbox/relay.h"
#include "row.h"
#include "sql.h"

/* What the answer to one publish says. */
typedef enum ob_ack_result {
    OB_ACKED_STORED,
    OB_ACKED_DUPLICATE,
    OB_ACKED_ERROR,         /* the broker refused it: code, err_code, text */
    OB_ACKED_NO_RESPONDERS, /* nothing listens on the subject */
    OB_ACKED_GARBLED,       /* not an answer the broker gives: text is the raw reply */
    OB_ACKED_ELSEWHERE      /* stored, but by a store other than the relay's (text: which): not
                               delivered; the broker pauses */
} ob_ack_result;

/* The answer to one publish. The broker fills it from its reply; the
 * reader whose (worker, gen, slot) it names takes it. `text` points into
 * the reply, which the broker keeps while the record is handed on: valid
 * only during that call. */
typedef struct ob_ack {
    uint32_t worker, gen, slot; /* as the publish gave them */
    ob_ack_result result;
    int code, err_code;
    const char *text; /* ERROR: the description; GARBLED: the reply; ELSEWHERE: the store's
                         name; else NULL */
    size_t text_len;
    uint64_t seq;       /* STORED, DUPLICATE: the message's sequence in the stream */
    const char *stream; /* STORED, DUPLICATE: the stream that stored it, NULL if not named */
    size_t stream_len;
} ob_ack;

/* Why a publish did not leave. */
typedef struct ob_pub_fail {
    outbox_failure_kind kind;
    int code;
    char text[512];
    size_t len;
} ob_pub_fail;

/* Whose fault a failed answer is. */
typedef enum ob_blame {
    OB_BLAME_ROW,     /* the message's: an attempt, and dead after the last */
    OB_BLAME_BROKER,  /* the broker's: every message would meet it; pause, no attempt */
    OB_BLAME_SUSPECT, /* not known: an attempt, and the broker is asked whether it answers */
    OB_BLAME_SUBJECT  /* the broker's, for the message's subject alone (its per-subject
                         limit): no attempt; the subject pauses, the others flow */
} ob_blame;

/* The broker's reading of a failed answer. */
typedef struct ob_verdict {
    ob_blame blame;
    outbox_failure_kind kind; /* ROW, SUSPECT: how the row failed */
    int code, err_code;       /* ROW, SUSPECT: recorded with the failure */
    const char *suspect;      /* SUSPECT: what the broker is asked about (static text) */
    size_t len;
    char text[OB_LAST_ERROR_MAX]; /* the row's failure, or the broker's refusal (BROKER,
                                     SUBJECT) */
} ob_verdict;

/* What the broker tells its owner (the relay), always on the loop. */
typedef struct ob_broker_events {
    /* The answer to a publish. The record is only valid during the call. */
    void (*on_ack)(void *data, const ob_ack *ack);
    /* Readiness changed: 1 when rows may be published, 0 when not. Posted
     * when it changes and delivered from the loop's check phase, in order. */
    void (*on_ready)(void *data, int ready);
    /* A doorbell rang: rows were committed. Bursts arrive as one call. */
    void (*on_wake)(void *data);
    /* The broker cannot go on: a check that must pass failed, or the server
     * refused the first connection for good (credentials, TLS). */
    void (*on_fatal)(void *data, const char *why);
    void *data;
} ob_broker_events;

/* The operations of a broker. `self` is the broker's handle (ob_broker). */
typedef struct ob_broker_ops {
    /* Adds the broker's handles to the loop and starts connecting. */
    int (*start)(void *self);
    /* 1 when rows may be published. */
    int (*ready)(const void *self);
    /* Counts losses of readiness: a batch that saw it change was interrupted. */
    uint32_t (*epoch)(const void *self);
    /* Loop time (ms) of the last answer the broker sent, of any kind. */
    uint64_t (*last_answer)(const void *self);
    /* The broker's deduplication window in ms, 0 when not known yet. */
    uint64_t (*window_ms)(const void *self);
    /* Publishes `row`; its answer comes back through on_ack with the same
     * (worker, gen, slot). Returns 0, or -1 with *fail filled (a row that
     * cannot be a message, or a client that refused it). */
    int (*publish)(void *self, uint32_t worker, uint32_t gen, uint32_t slot, const ob_row *row,
                   ob_pub_fail *fail);
    /* Whose fault a failed answer (any result but STORED and DUPLICATE) to
     * the publish of `row` is, with the text the row or the pause records. */
    void (*verdict)(const void *self, const ob_ack *a, const ob_row *row, ob_verdict *v);
    /* The broker is not answering (no ack in time from a broker that
     * answered nothing since): stop being ready until it answers again. */
    void (*unavailable)(void *self, const char *why);
    /* A failure of the SUSPECT kind: find out whether the broker is down
     * (then readiness drops) or the message was at fault (then readiness is
     * confirmed with another "up"). */
    void (*suspect)(void *self, const char *why);
    /* 0 while such a check is under way. */
    int (*settled)(const void *self);
    /* The broker refused a message as it would any (a BROKER verdict,
     * `why`): pause without counting attempts. */
    void (*refused)(void *self, const char *why);
    /* The reason of the refusal or pause that holds, or NULL (for /readyz). */
    const char *(*refusal)(const void *self);
    /* While such a refusal holds, the number of its episode, else 0: a
     * refusal that lasts is one outage, not one per try. */
    uint32_t (*refusal_episode)(const void *self);
    /* The broker's store of the relay's messages (a stream) that it had
     * seen was found missing (deleted under the relay): *missing 1 while it
     * is, *losses how many times since the start. May be NULL (never). */
    void (*store_lost)(const void *self, int *missing, uint32_t *losses);
    /* Closes the broker's handles and frees it, then calls cb (may be NULL).
     * Also valid before start. */
    void (*close)(void *self, void (*cb)(void *data), void *data);
} ob_broker_ops;

/* A broker as the relay installed it: its table and its handle. */
typedef struct ob_broker {
    const ob_broker_ops *ops;
    void *self;
} ob_broker;

#endif
