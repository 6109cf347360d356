#include "message.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "outbox/id.h"

static int subject_part_ok(const char *s, size_t n, char *err, size_t errlen, const char *what) {
    if (n == 0) {
        snprintf(err, errlen, "%s is empty, which gives an empty subject token", what);
        return -1;
    }
    size_t tok = 0;
    const char *tok_start = s;
    for (size_t i = 0; i <= n; i++) {
        if (i == n || s[i] == '.') {
            if (tok == 0) {
                snprintf(err, errlen, "%s '%.*s' has an empty subject token", what,
                         (int)(n > 128 ? 128 : n), s);
                return -1;
            }
            if (tok == 1 && (tok_start[0] == '*' || tok_start[0] == '>')) {
                snprintf(err, errlen, "%s '%.*s' contains a wildcard token", what,
                         (int)(n > 128 ? 128 : n), s);
                return -1;
            }
            tok = 0;
            tok_start = s + i + 1;
            continue;
        }
        unsigned char c = (unsigned char)s[i];
        if (c <= ' ' || c == 0x7f) {
            snprintf(err, errlen, "%s '%.*s' contains whitespace or a control character", what,
                     (int)(n > 128 ? 128 : n), s);
            return -1;
        }
        tok++;
    }
    return 0;
}

int ob_message_subject(ob_buf *out, const char *prefix, const ob_row *row, char *err,
                       size_t errlen) {
    if (subject_part_ok(row->aggregate_type, row->aggregate_type_len, err, errlen,
                        "aggregate_type") != 0 ||
        subject_part_ok(row->event_type, row->event_type_len, err, errlen, "event_type") != 0)
        return -1;
    ob_buf_puts(out, prefix);
    ob_buf_putc(out, '.');
    ob_buf_append(out, row->aggregate_type, row->aggregate_type_len);
    ob_buf_putc(out, '.');
    ob_buf_append(out, row->event_type, row->event_type_len);
    return out->oom ? -1 : 0;
}

void ob_ce_encode(ob_buf *out, const char *s, size_t len) {
    static const char hex[] = "0123456789ABCDEF";
    if (ob_buf_reserve(out, len * 3) != 0)
        return;
    char *o = out->p + out->len;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c <= ' ' || c >= 0x7f || c == '"' || c == '%') {
            *o++ = '%';
            *o++ = hex[c >> 4];
            *o++ = hex[c & 15];
        } else {
            *o++ = (char)c;
        }
    }
    out->len = (size_t)(o - out->p);
    out->p[out->len] = '\0';
}

size_t ob_rfc3339(const char *ts, size_t len, char *out) {
    /* 2026-11-21 19:50:00 or 2026-11-21 19:50:00.123456 */
    if (len < 19 || len > 26 || ts[10] != ' ' || ts[4] != '-' || ts[13] != ':')
        return 0;
    memcpy(out, ts, len);
    out[10] = 'T';
    out[len] = 'Z';
    out[len + 1] = '\0';
    return len + 1;
}

int ob_header_key_ok(const char *k) {
    if (*k == '\0')
        return 0;
    for (const unsigned char *p = (const unsigned char *)k; *p; p++)
        if (*p <= ' ' || *p >= 0x7f || *p == ':')
            return 0;
    return 1;
}

int ob_header_value_ok(const char *v, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (v[i] == '\r' || v[i] == '\n' || v[i] == '\0')
            return 0;
    return 1;
}

static int row_headers(natsMsg *msg, const ob_row *row, outbox_failure_kind *kind, char *err,
                       size_t errlen) {
    json_error_t jerr;
    json_t *root = json_loadb(row->headers, row->headers_len, 0, &jerr);
    if (root == NULL || !json_is_object(root)) {
        *kind = OUTBOX_FAIL_BAD_HEADERS;
        if (root == NULL)
            snprintf(err, errlen, "headers is not valid JSON: %s", jerr.text);
        else
            snprintf(err, errlen, "headers must be a JSON object");
        json_decref(root);
        return -1;
    }
    const char *key;
    json_t *val;
    int rc = 0;
    json_object_foreach(root, key, val) {
        if (!json_is_string(val))
            continue;
        const char *v = json_string_value(val);
        if (!ob_header_key_ok(key) || !ob_header_value_ok(v, json_string_length(val))) {
            *kind = OUTBOX_FAIL_BAD_HEADERS;
            snprintf(err, errlen,
                     "headers member '%.64s' cannot be a message header (keys are printable "
                     "ASCII without ':' or space; values have no CR, LF or NUL)",
                     key);
            rc = -1;
            break;
        }
        if (natsMsgHeader_Set(msg, key, v) != NATS_OK) {
            *kind = OUTBOX_FAIL_PUBLISH_ERROR;
            snprintf(err, errlen, "could not set header '%.64s'", key);
            rc = -1;
            break;
        }
    }
    json_decref(root);
    return rc;
}

static int header_failed(natsStatus s, outbox_failure_kind *kind, char *err, size_t errlen) {
    *kind = OUTBOX_FAIL_PUBLISH_ERROR;
    snprintf(err, errlen, "could not set headers: %s", natsStatus_GetText(s));
    return -1;
}

/* The CloudEvents binary-mode headers. */
static natsStatus ce_headers(natsMsg *msg, const ob_row *row, const char *idtext,
                             const char *ce_source, ob_buf *scratch) {
    /* One scratch buffer holds the encoded ce-type and ce-subject as
     * consecutive NUL-terminated strings, so no per-row allocation is ours. */
    ob_buf_reset(scratch);
    ob_ce_encode(scratch, row->event_type, row->event_type_len);
    size_t subj_off = scratch->len + 1;
    ob_buf_putc(scratch, '\0');
    ob_ce_encode(scratch, row->aggregate_id, row->aggregate_id_len);
    if (scratch->oom)
        return NATS_NO_MEMORY;
    char when[40];
    size_t wl = row->created_at ? ob_rfc3339(row->created_at, row->created_at_len, when) : 0;

    natsStatus s = natsMsgHeader_Set(msg, "ce-specversion", "1.0");
    if (s == NATS_OK)
        s = natsMsgHeader_Set(msg, "ce-id", idtext);
    if (s == NATS_OK)
        s = natsMsgHeader_Set(msg, "ce-type", scratch->p);
    if (s == NATS_OK)
        s = natsMsgHeader_Set(msg, "ce-source", ce_source);
    if (s == NATS_OK && row->aggregate_id_len > 0)
        s = natsMsgHeader_Set(msg, "ce-subject", scratch->p + subj_off);
    if (s == NATS_OK && wl > 0)
        s = natsMsgHeader_Set(msg, "ce-time", when);
    return s;
}

int ob_message_headers(natsMsg *msg, const ob_row *row, const char *ce_source, ob_buf *scratch,
                       outbox_failure_kind *kind, char *err, size_t errlen) {
    if (row->headers != NULL && row_headers(msg, row, kind, err, errlen) != 0)
        return -1;
    char idtext[OUTBOX_ID_TEXT_LEN + 1];
    outbox_id id;
    memcpy(id.b, row->id, 16);
    outbox_id_to_text(&id, idtext);
    natsStatus s = natsMsgHeader_Set(msg, "Nats-Msg-Id", idtext);
    if (s == NATS_OK && ce_source != NULL)
        s = ce_headers(msg, row, idtext, ce_source, scratch);
    return s == NATS_OK ? 0 : header_failed(s, kind, err, errlen);
}
