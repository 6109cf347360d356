/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Reading JetStream's publish acknowledgements:
 *   {"stream":"S","seq":12}         (the stream that stored it)
 *   {"stream":"S","seq":12,"duplicate":true}
 *   {"error":{"code":400,"err_code":10054,"description":"..."}}
 * The shape is fixed and small, so this is a targeted scan of the top-level
 * keys rather than a general JSON parser: it runs once per message.
 */
#ifndef OB_PUBACK_H
#define OB_PUBACK_H

#include <stddef.h>
#include <stdint.h>

#include "broker.h"

typedef struct ob_puback {
    int ok;        /* stored (possibly as a duplicate) */
    int duplicate; /* the stream already had this Msg-Id */
    uint64_t seq;
    const char *stream; /* the "stream" that stored it, NULL when not named; points into data */
    size_t stream_len;
    int code;         /* error "code", 0 when ok */
    int err_code;     /* error "err_code", 0 when ok */
    const char *desc; /* error "description" as written (escapes kept); points into data */
    size_t desc_len;
} ob_puback;

/* Returns 0 when `data` is an ack or an error reply, -1 when it is neither
 * (the caller then treats the raw text as the error). */
int ob_puback_parse(const char *data, size_t len, ob_puback *out);

/* Whose fault JetStream's refusal of a publish is (the table in puback.c,
 * and docs/failures.md). */
typedef enum ob_js_fault {
    OB_JS_ROW,     /* the message's: the row goes through its attempts to dead */
    OB_JS_BROKER,  /* the broker's: every row would meet it alike; pause, no attempt */
    OB_JS_FULL,    /* the stream is full: the broker's, unless the message alone is
                      larger than the stream's max_bytes (then the row's) */
    OB_JS_SUBJECT, /* the message's subject is full (max_msgs_per_subject with discard new
                      per subject): the broker's, for that subject alone; its rows wait */
    OB_JS_SUSPECT  /* not known: an attempt, and the link asks whether JetStream answers */
} ob_js_fault;

/* Classifies an error answer (its code, err_code and description as
 * written). *why gets a short reason for the log and /readyz (static text;
 * may be NULL). */
ob_js_fault ob_js_fault_of(int code, int err_code, const char *desc, size_t desc_len,
                           const char **why);

/* The broker's verdict (broker.h) on a failed answer to the publish of
 * `row`, JetStream's way: an error by the table above, where a full stream
 * is the broker's fault unless the message alone is larger than the
 * stream's `max_bytes` (0 or less: no limit, or not known); no responders
 * and a 5xx error are suspect; a garbled reply is the row's. */
void ob_js_verdict(const ob_ack *a, const ob_row *row, int64_t max_bytes, ob_verdict *v);

#endif
