/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What a publish comes back with, below both the NATS link (which reads the
 * answers) and the readers (which act on them): the answer to one publish,
 * and why a publish did not leave at all.
 */
#ifndef OB_ACK_H
#define OB_ACK_H

#include <stddef.h>
#include <stdint.h>

#include "outbox/relay.h"

/* What the answer to one publish says. */
typedef enum ob_ack_result {
    OB_ACKED_STORED,
    OB_ACKED_DUPLICATE,
    OB_ACKED_ERROR,         /* JetStream refused it: code, err_code, text */
    OB_ACKED_NO_RESPONDERS, /* nothing listens on the subject */
    OB_ACKED_GARBLED        /* not a PubAck: text is the raw reply */
} ob_ack_result;

/* The answer to one publish. The link fills it (on nats.c's delivery thread
 * with the threaded client, on the loop otherwise) from the reply subject
 * and the reply; the reader whose (worker, gen, slot) it names takes it.
 * `text` points into the reply (`msg`) and is valid only during the call
 * that hands the record on. */
typedef struct ob_ack {
    uint32_t worker, gen, slot; /* from the reply subject */
    ob_ack_result result;
    int code, err_code;
    const char *text; /* ERROR: the description; GARBLED: the reply; else NULL */
    size_t text_len;
    void *msg; /* the natsMsg, kept only while text points into it */
} ob_ack;

/* Why a publish did not leave. */
typedef struct ob_pub_fail {
    outbox_failure_kind kind;
    int code;
    char text[512];
    size_t len;
} ob_pub_fail;

#endif
