/*
 * From an outbox row to a NATS message: subject, headers and data.
 *
 *   subject  <prefix>.<aggregate_type>.<event_type>
 *   headers  every string member of the row's `headers` object, then
 *            Nats-Msg-Id, ce-specversion, ce-id, ce-type, ce-source,
 *            ce-subject, ce-time (the relay's own headers win over the row's)
 *   data     the payload bytes, unchanged
 *
 * CloudEvents values are percent-encoded as the binary content mode asks:
 * space, '"', '%' and bytes outside printable ASCII.
 */
#ifndef OB_MESSAGE_H
#define OB_MESSAGE_H

#include <stddef.h>
#include <nats/nats.h>

#include "buf.h"
#include "outbox/relay.h"

/* One fetched row, pointing into the MYSQL_RES that holds it. */
typedef struct ob_row {
    const unsigned char *id; /* 16 bytes */
    const char *aggregate_type;
    size_t aggregate_type_len;
    const char *aggregate_id;
    size_t aggregate_id_len;
    const char *event_type;
    size_t event_type_len;
    const char *payload;
    size_t payload_len;
    const char *headers; /* NULL when the column is NULL */
    size_t headers_len;
    const char *created_at; /* "YYYY-MM-DD HH:MM:SS.ffffff", UTC session */
    size_t created_at_len;
    int attempts; /* attempt_count before this attempt */
} ob_row;

/* Appends <prefix>.<aggregate_type>.<event_type> to `out` and checks that the
 * result is a valid publish subject: no empty token, no wildcard token, no
 * whitespace or control characters. Returns 0, or -1 with a reason in err. */
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

/* Adds the row's headers and the relay's headers to `msg`. `scratch` is a
 * reusable buffer. `ce_source` must already be percent-encoded; NULL leaves
 * the CloudEvents headers out (Nats-Msg-Id is always set). Returns 0,
 * or -1 with *kind and err set (a malformed headers object is
 * OUTBOX_FAIL_BAD_HEADERS). */
int ob_message_headers(natsMsg *msg, const ob_row *row, const char *ce_source, ob_buf *scratch,
                       outbox_failure_kind *kind, char *err, size_t errlen);

#endif
