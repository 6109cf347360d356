/* SPDX-License-Identifier: Apache-2.0 */
#include "message.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "json_scan.h"
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

/* A Content-Type member's value: inside the row's headers text or inside
 * the parsed object, not NUL-terminated. */
typedef struct ob_ctype {
    const char *p;
    size_t len;
} ob_ctype;

/* Checks one member and appends it as a header; `key` and `v` are
 * NUL-terminated. Returns 0, or -1 with the reason. */
static int member_header(ob_buf *block, const char *key, const char *v, size_t vl,
                         ob_trace_seen *trace, ob_ctype *ct, char *err, size_t errlen) {
    if (!ob_header_key_ok(key) || !ob_header_value_ok(v, vl)) {
        snprintf(err, errlen,
                 "headers member '%.64s' cannot be a message header (keys are printable "
                 "ASCII without ':' or space; values have no CR, LF or NUL)",
                 key);
        return -1;
    }
    const char *why = ob_header_reserved(key, v);
    if (why != NULL) {
        snprintf(err, errlen, "headers member '%.64s' is refused: %s", key, why);
        return -1;
    }
    char twhy[160];
    why = ob_trace_member(trace, key, v, vl, twhy, sizeof(twhy));
    if (why != NULL) {
        snprintf(err, errlen, "headers member '%.64s' is refused: %s", key, why);
        return -1;
    }
    if (strcasecmp(key, "content-type") == 0) {
        ct->p = v;
        ct->len = vl;
    }
    put_header(block, key, v, vl);
    return 0;
}

/* A string of the headers text at s[*i] (its opening quote) that holds no
 * escape: its bytes, *i moved past its closing quote. -1 when it has an
 * escape. The text was validated whole (ob_json_scan). */
static int plain_string(const char *s, size_t n, size_t *i, const char **p, size_t *len) {
    size_t at = *i + 1, end = at;
    while (end < n && s[end] != '"' && s[end] != '\\')
        end++;
    if (end >= n || s[end] != '"')
        return -1;
    *p = s + at;
    *len = end - at;
    *i = end + 1;
    return 0;
}

static size_t skip_ws(const char *s, size_t n, size_t i) {
    while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
        i++;
    return i;
}

/* The members of the usual headers, read in place: a valid JSON object of
 * at most OB_PLAIN_MEMBERS string members, each key once, without escapes.
 * Returns how many, or -1 for any other text (jansson then reads it, and
 * says what is wrong with it). */
#define OB_PLAIN_MEMBERS 32
typedef struct plain_member {
    const char *k, *v;
    size_t kl, vl;
} plain_member;

static int plain_members(const char *s, size_t n, plain_member *m) {
    if (ob_json_scan(s, n, NULL) != 0)
        return -1;
    size_t i = skip_ws(s, n, 0);
    if (i >= n || s[i] != '{')
        return -1;
    i = skip_ws(s, n, i + 1);
    int count = 0;
    while (i < n && s[i] == '"') {
        if (count == OB_PLAIN_MEMBERS)
            return -1;
        plain_member *e = &m[count];
        if (plain_string(s, n, &i, &e->k, &e->kl) != 0)
            return -1;
        i = skip_ws(s, n, skip_ws(s, n, i) + 1); /* past the colon */
        if (i >= n || s[i] != '"' || plain_string(s, n, &i, &e->v, &e->vl) != 0)
            return -1;
        for (int j = 0; j < count; j++)
            if (m[j].kl == e->kl && memcmp(m[j].k, e->k, e->kl) == 0)
                return -1; /* jansson keeps the last value, at the first's place */
        count++;
        i = skip_ws(s, n, i);
        if (i < n && s[i] == ',')
            i = skip_ws(s, n, i + 1);
    }
    return count;
}

/* The usual headers (plain_members), checked and appended without a parse
 * tree: each member is copied NUL-terminated into `scratch` for its checks,
 * and a Content-Type's value is left pointing into the row's text. */
static int plain_headers(ob_buf *block, const plain_member *m, int count, ob_buf *scratch,
                         ob_ctype *ct, char *err, size_t errlen) {
    ob_trace_seen trace = {0, 0};
    for (int i = 0; i < count; i++) {
        ob_buf_reset(scratch);
        ob_buf_append(scratch, m[i].k, m[i].kl);
        ob_buf_putc(scratch, '\0');
        ob_buf_append(scratch, m[i].v, m[i].vl);
        if (scratch->oom) {
            block->oom = 1;
            return 0; /* the message cannot be made: said as out of memory */
        }
        ob_ctype seen = {NULL, 0};
        if (member_header(block, scratch->p, scratch->p + m[i].kl + 1, m[i].vl, &trace, &seen, err,
                          errlen) != 0)
            return -1;
        if (seen.p != NULL)
            *ct = (ob_ctype){m[i].v, m[i].vl};
    }
    const char *unpaired = ob_trace_done(&trace);
    if (unpaired != NULL) {
        snprintf(err, errlen, "headers member 'tracestate' is refused: %s", unpaired);
        return -1;
    }
    return 0;
}

/* Appends the row's headers; `ct` is left pointing at the value of a
 * Content-Type member (inside the row's text, or inside `*root`, which the
 * caller frees). The usual headers are read in place; any other text is
 * parsed by jansson, whose answer stands for every text read in place too
 * (test_message holds both to the same outcomes). */
static int row_headers(ob_buf *block, const ob_row *row, ob_buf *scratch, json_t **root_out,
                       ob_ctype *ct, outbox_failure_kind *kind, char *err, size_t errlen) {
    *root_out = NULL;
    plain_member m[OB_PLAIN_MEMBERS];
    int count = plain_members(row->headers, row->headers_len, m);
    if (count >= 0) {
        if (plain_headers(block, m, count, scratch, ct, err, errlen) == 0)
            return 0;
        *kind = OUTBOX_FAIL_BAD_HEADERS;
        return -1;
    }
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
    ob_trace_seen trace = {0, 0};
    json_object_foreach(root, key, val) {
        if (!json_is_string(val)) {
            /* Dropping it unseen would lose what the producer meant. */
            *kind = OUTBOX_FAIL_BAD_HEADERS;
            snprintf(err, errlen,
                     "headers member '%.64s' is refused: a header value must be a JSON string",
                     key);
            json_decref(root);
            return -1;
        }
        if (member_header(block, key, json_string_value(val), json_string_length(val), &trace, ct,
                          err, errlen) != 0) {
            *kind = OUTBOX_FAIL_BAD_HEADERS;
            json_decref(root);
            return -1;
        }
    }
    const char *unpaired = ob_trace_done(&trace);
    if (unpaired != NULL) {
        *kind = OUTBOX_FAIL_BAD_HEADERS;
        snprintf(err, errlen, "headers member 'tracestate' is refused: %s", unpaired);
        json_decref(root);
        return -1;
    }
    *root_out = root;
    return 0;
}

static void put_str(ob_buf *b, const char *key, const char *v) {
    put_header(b, key, v, strlen(v));
}

/* Appends the CloudEvents binary-mode headers. */
static void ce_headers(ob_buf *block, const ob_row *row, const char *idtext,
                       const ob_message_opts *o, ob_ctype content_type, ob_buf *scratch) {
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
    ob_ctype ct = row->payload_binary ? content_type : (ob_ctype){"application/json", 16};
    if (ct.p != NULL)
        ob_ce_encode(scratch, ct.p, ct.len);
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
    if (ct.len > 0)
        put_str(block, "ce-datacontenttype", scratch->p + ct_off);
    /* Content-Type too, as the binary content mode allows (never
     * application/cloudevents*, which would mean structured mode): SDKs
     * such as Go's read it rather than ce-datacontenttype. A row's own
     * Content-Type is already set. */
    if (content_type.p == NULL && ct.len > 0)
        put_header(block, "Content-Type", ct.p, ct.len);
}

int ob_message_create(natsMsg **out, const char *subject, const char *reply, const ob_row *row,
                      const ob_message_opts *o, ob_buf *scratch, ob_buf *block,
                      outbox_failure_kind *kind, char *err, size_t errlen) {
    *out = NULL;
    ob_buf_reset(block);
    ob_buf_puts(block, "NATS/1.0\r\n");
    json_t *root = NULL;
    ob_ctype content_type = {NULL, 0};
    if (row->headers != NULL &&
        row_headers(block, row, scratch, &root, &content_type, kind, err, errlen) != 0)
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
