/* SPDX-License-Identifier: Apache-2.0 */
/*
 * From an outbox row to a NATS message: subject, headers and data.
 *
 *   subject  <prefix>.<aggregate_type>.<event_type>
 *   headers  every member of the row's `headers` object (each must be a
 *            string), then Nats-Msg-Id, ce-specversion, ce-id, ce-type,
 *            ce-source, ce-subject, ce-time, ce-datacontenttype, and
 *            Content-Type with the same value unless the row set one
 *   data     the payload bytes, unchanged
 *
 * A row may not set a header the relay owns or one that steers JetStream:
 * a member named Nats-* or ce-* (in any letter case), a Content-Type of
 * application/cloudevents*, or a member that is not a string makes the row
 * fail with OUTBOX_FAIL_BAD_HEADERS (dead, with the reason), rather than
 * being dropped unseen. So does a traceparent or tracestate member that is
 * not W3C Trace Context (trace_context.h): it is passed on unchanged or not
 * at all, and the relay never makes one up.
 *
 * CloudEvents values are percent-encoded as the binary content mode asks:
 * space, '"', '%' and bytes outside printable ASCII.
 */
#ifndef OB_MESSAGE_H
#define OB_MESSAGE_H

#include <stddef.h>
#include <stdint.h>
#include <nats/nats.h>

#include "buf.h"
#include "outbox/relay.h"
#include "row.h"

/* How the relay was configured to shape messages. */
typedef struct ob_message_opts {
    const char *ce_source;      /* percent-encoded; NULL leaves the ce-* headers out */
    int ce_type_with_aggregate; /* ce-type = <aggregate_type>.<event_type> */
} ob_message_opts;

/* Appends <prefix>.<aggregate_type>.<event_type> to `out` after checking
 * both row fields with ob_subject_check() (subject.h): no empty token, no '*'
 * or '>' anywhere, no whitespace or control characters, valid UTF-8. Returns
 * 0, or -1 with a reason in err (the row is then OUTBOX_FAIL_BAD_SUBJECT). */
int ob_message_subject(ob_buf *out, const char *prefix, const ob_row *row, char *err,
                       size_t errlen);

/* NATS header rules: a key is printable ASCII without ':' or space; a value
 * has no CR, LF or NUL (either would break the header block). */
int ob_header_key_ok(const char *key);
int ob_header_value_ok(const char *value, size_t len);

/* Appends `s` percent-encoded for a CloudEvents header value. */
void ob_ce_encode(ob_buf *out, const char *s, size_t len);

/* Turns "YYYY-MM-DD HH:MM:SS[.ffffff]" into RFC 3339 UTC text in out (room for
 * 33 bytes). Returns the length, or 0 when the input has another shape. */
size_t ob_rfc3339(const char *ts, size_t len, char *out);

/* Why a row's header `key` (with `value`) is refused, or NULL when it may
 * pass: Nats-* and ce-* in any case, and a CloudEvents Content-Type. */
const char *ob_header_reserved(const char *key, const char *value);

/* Makes the message of `row` on `subject` (with `reply`, or NULL): the
 * row's headers and the relay's, then the payload. The header block is
 * written into `block` with the payload after it, and the message is made
 * from it in one allocation, published as it is (no header table is built;
 * natsMsgHeader_Get() still reads it). `scratch` and `block` are reusable
 * buffers. Nats-Msg-Id is always set. With CloudEvents on,
 * ce-datacontenttype is application/json for a JSON payload; for a binary
 * one it is the row's Content-Type header, or absent. Returns 0 with *out
 * to be destroyed with natsMsg_Destroy(), or -1 with *out NULL and *kind
 * and err set (a malformed headers object, or a reserved header, is
 * OUTBOX_FAIL_BAD_HEADERS). */
int ob_message_create(natsMsg **out, const char *subject, const char *reply, const ob_row *row,
                      const ob_message_opts *o, ob_buf *scratch, ob_buf *block,
                      outbox_failure_kind *kind, char *err, size_t errlen);

/* For a publish that nats.c refused with NATS_MAX_PAYLOAD: writes into err
 * how large the payload and the header block are and which of them is the
 * larger, so "headers too big" is reported as such. Call it before
 * natsMsg_Destroy(msg); `max_payload` is natsConnection_GetMaxPayload().
 * Returns the length snprintf reports. */
int ob_message_too_big(natsMsg *msg, int64_t max_payload, char *err, size_t errlen);

#endif
