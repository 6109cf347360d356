/* SPDX-License-Identifier: Apache-2.0 */
#include "message.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "outbox/id.h"
#include "subject.h"
#include "trace_context.h"

int ob_message_subject(ob_buf *out, const char *prefix, const ob_row *row, char *err,
                       size_t errlen) {
    if (ob_subject_check(row->aggregate_type, row->aggregate_type_len, "aggregate_type", err,
                         errlen) != 0 ||
        ob_subject_check(row->event_type, row->event_type_len, "event_type", err, errlen) != 0)
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

static int prefix_ci(const char *s, const char *prefix) {
    return strncasecmp(s, prefix, strlen(prefix)) == 0;
}

const char *ob_header_reserved(const char *key, const char *value) {
    if (prefix_ci(key, "nats-"))
        return "Nats-* headers belong to the relay and steer JetStream (Nats-Msg-Id, "
               "Nats-Rollup, Nats-Expected-*, Nats-TTL)";
    if (prefix_ci(key, "ce-"))
        return "ce-* headers are the relay's CloudEvents attributes";
    if (strcasecmp(key, "content-type") == 0 && value != NULL &&
        prefix_ci(value, "application/cloudevents"))
        return "a CloudEvents content type would make consumers read the data as a structured "
               "event";
    return NULL;
}

/* nats.c's constructor of a message whose header block is already encoded,
 * as a received message's is: not in nats.h, but exported with this
 * signature by every 3.x library (read in 3.0 to 3.10). Such a message is
 * one allocation, and nats.c publishes its block as it is, where
 * natsMsgHeader_Set() would build a hash table per message (an allocation per
 * header and value, and their frees). */
natsStatus natsMsg_create(natsMsg **newMsg, const char *subject, int subjLen, const char *reply,
                          int replyLen, const char *buf, int bufLen, int hdrLen);

/* Appends "key: value\r\n". A CR or LF in a value becomes a space, as nats.c
 * does when it encodes headers (the values here are checked or encoded
 * already; the operator's ce-source is not). */
static void put_header(ob_buf *b, const char *key, const char *v, size_t vl) {
    ob_buf_puts(b, key);
    ob_buf_append(b, ": ", 2);
    size_t at = b->len;
    ob_buf_append(b, v, vl);
    for (size_t i = at; !b->oom && i < b->len; i++)
        if (b->p[i] == '\r' || b->p[i] == '\n')
            b->p[i] = ' ';
    ob_buf_append(b, "\r\n", 2);
}

/* Appends the row's headers; `content_type` is left pointing at the value
 * of a Content-Type member (inside `*root`, which the caller frees). */
static int row_headers(ob_buf *block, const ob_row *row, json_t **root_out,
                       const char **content_type, outbox_failure_kind *kind, char *err,
                       size_t errlen) {
    json_error_t jerr;
    json_t *root = json_loadb(row->headers, row->headers_len, 0, &jerr);
    *root_out = NULL;
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
    ob_trace_seen trace = {0, 0};
    json_object_foreach(root, key, val) {
        if (!json_is_string(val)) {
            /* Dropping it unseen would lose what the producer meant. */
            *kind = OUTBOX_FAIL_BAD_HEADERS;
            snprintf(err, errlen,
                     "headers member '%.64s' is refused: a header value must be a JSON string",
                     key);
            rc = -1;
            break;
        }
        const char *v = json_string_value(val);
        size_t vl = json_string_length(val);
        if (!ob_header_key_ok(key) || !ob_header_value_ok(v, vl)) {
            *kind = OUTBOX_FAIL_BAD_HEADERS;
            snprintf(err, errlen,
                     "headers member '%.64s' cannot be a message header (keys are printable "
                     "ASCII without ':' or space; values have no CR, LF or NUL)",
                     key);
            rc = -1;
            break;
        }
        const char *why = ob_header_reserved(key, v);
        if (why != NULL) {
            *kind = OUTBOX_FAIL_BAD_HEADERS;
            snprintf(err, errlen, "headers member '%.64s' is refused: %s", key, why);
            rc = -1;
            break;
        }
        char twhy[160];
        why = ob_trace_member(&trace, key, v, vl, twhy, sizeof(twhy));
        if (why != NULL) {
            *kind = OUTBOX_FAIL_BAD_HEADERS;
            snprintf(err, errlen, "headers member '%.64s' is refused: %s", key, why);
            rc = -1;
            break;
        }
        if (strcasecmp(key, "content-type") == 0)
            *content_type = v;
        put_header(block, key, v, vl);
    }
    const char *unpaired = rc == 0 ? ob_trace_done(&trace) : NULL;
    if (unpaired != NULL) {
        *kind = OUTBOX_FAIL_BAD_HEADERS;
        snprintf(err, errlen, "headers member 'tracestate' is refused: %s", unpaired);
        rc = -1;
    }
    if (rc != 0)
        json_decref(root);
    else
        *root_out = root;
    return rc;
}

static void put_str(ob_buf *b, const char *key, const char *v) {
    put_header(b, key, v, strlen(v));
}

/* Appends the CloudEvents binary-mode headers. */
static void ce_headers(ob_buf *block, const ob_row *row, const char *idtext,
                       const ob_message_opts *o, const char *content_type, ob_buf *scratch) {
    /* One scratch buffer holds the encoded ce-type, ce-subject and
     * ce-datacontenttype as consecutive NUL-terminated strings, so no per-row
     * allocation is ours. */
    ob_buf_reset(scratch);
    if (o->ce_type_with_aggregate) {
        ob_ce_encode(scratch, row->aggregate_type, row->aggregate_type_len);
        ob_buf_putc(scratch, '.');
    }
    ob_ce_encode(scratch, row->event_type, row->event_type_len);
    size_t subj_off = scratch->len + 1;
    ob_buf_putc(scratch, '\0');
    ob_ce_encode(scratch, row->aggregate_id, row->aggregate_id_len);
    size_t ct_off = scratch->len + 1;
    ob_buf_putc(scratch, '\0');
    const char *ct = row->payload_binary ? content_type : "application/json";
    if (ct != NULL)
        ob_ce_encode(scratch, ct, strlen(ct));
    if (scratch->oom) {
        block->oom = 1;
        return;
    }
    char when[40];
    size_t wl = row->created_at ? ob_rfc3339(row->created_at, row->created_at_len, when) : 0;

    put_str(block, "ce-specversion", "1.0");
    put_str(block, "ce-id", idtext);
    put_str(block, "ce-type", scratch->p);
    put_str(block, "ce-source", o->ce_source);
    if (row->aggregate_id_len > 0)
        put_str(block, "ce-subject", scratch->p + subj_off);
    if (wl > 0)
        put_str(block, "ce-time", when);
    if (ct != NULL && *ct != '\0')
        put_str(block, "ce-datacontenttype", scratch->p + ct_off);
    /* Content-Type too, as the binary content mode allows (never
     * application/cloudevents*, which would mean structured mode): SDKs
     * such as Go's read it rather than ce-datacontenttype. A row's own
     * Content-Type is already set. */
    if (content_type == NULL && ct != NULL && *ct != '\0')
        put_str(block, "Content-Type", ct);
}

int ob_message_create(natsMsg **out, const char *subject, const char *reply, const ob_row *row,
                      const ob_message_opts *o, ob_buf *scratch, ob_buf *block,
                      outbox_failure_kind *kind, char *err, size_t errlen) {
    *out = NULL;
    ob_buf_reset(block);
    ob_buf_puts(block, "NATS/1.0\r\n");
    json_t *root = NULL;
    const char *content_type = NULL;
    if (row->headers != NULL &&
        row_headers(block, row, &root, &content_type, kind, err, errlen) != 0)
        return -1;
    char idtext[OUTBOX_ID_TEXT_LEN + 1];
    outbox_id id;
    memcpy(id.b, row->id, 16);
    outbox_id_to_text(&id, idtext);
    put_str(block, "Nats-Msg-Id", idtext);
    if (o->ce_source != NULL)
        ce_headers(block, row, idtext, o, content_type, scratch);
    json_decref(root);
    ob_buf_append(block, "\r\n", 2);
    size_t hdr_len = block->len;
    ob_buf_append(block, row->payload, row->payload_len);
    natsStatus s = NATS_NO_MEMORY;
    if (!block->oom && block->len <= INT32_MAX)
        s = natsMsg_create(out, subject, (int)strlen(subject), reply,
                           reply ? (int)strlen(reply) : 0, block->p, (int)block->len, (int)hdr_len);
    if (s != NATS_OK) {
        *out = NULL;
        *kind = OUTBOX_FAIL_PUBLISH_ERROR;
        snprintf(err, errlen, "could not make the message: %s", natsStatus_GetText(s));
        return -1;
    }
    return 0;
}

int ob_message_too_big(natsMsg *msg, int64_t max_payload, char *err, size_t errlen) {
    const char **keys = NULL;
    int nkeys = 0;
    size_t hdr = 0;
    /* The header block as nats.c writes it: "NATS/1.0\r\n", "key: value\r\n"
     * per value, and a closing "\r\n". */
    if (natsMsgHeader_Keys(msg, &keys, &nkeys) == NATS_OK) {
        hdr = 12;
        for (int i = 0; i < nkeys; i++) {
            const char **vals = NULL;
            int nv = 0;
            if (natsMsgHeader_Values(msg, keys[i], &vals, &nv) != NATS_OK)
                continue;
            for (int k = 0; k < nv; k++)
                hdr += strlen(keys[i]) + 2 + strlen(vals[k]) + 2;
            free((void *)vals);
        }
        free((void *)keys);
    }
    size_t data = (size_t)natsMsg_GetDataLength(msg);
    const char *culprit = hdr > data ? "its headers" : "its payload";
    return snprintf(err, errlen,
                    "message of %zu payload bytes and %zu header bytes (%d headers) exceeds the "
                    "server's max_payload of %lld bytes; %s are the larger part",
                    data, hdr, nkeys, (long long)max_payload, culprit);
}
