/* SPDX-License-Identifier: Apache-2.0 */
#include "puback.h"

#include <stdio.h>
#include <string.h>

/* Finds `"key"` followed by optional spaces and ':' in data[0..len); returns
 * a pointer just after the ':' or NULL. */
static const char *find_key(const char *data, size_t len, const char *key) {
    size_t kl = strlen(key);
    const char *end = data + len;
    for (const char *p = data; p + kl + 2 <= end; p++) {
        if (p[0] != '"' || memcmp(p + 1, key, kl) != 0 || p[kl + 1] != '"')
            continue;
        const char *q = p + kl + 2;
        while (q < end && (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r'))
            q++;
        if (q < end && *q == ':') {
            q++;
            while (q < end && (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r'))
                q++;
            return q;
        }
    }
    return NULL;
}

static int read_int(const char *p, const char *end, int64_t *out) {
    int neg = 0;
    if (p < end && *p == '-') {
        neg = 1;
        p++;
    }
    if (p >= end || *p < '0' || *p > '9')
        return -1;
    int64_t v = 0;
    while (p < end && *p >= '0' && *p <= '9')
        v = v * 10 + (*p++ - '0');
    *out = neg ? -v : v;
    return 0;
}

int ob_puback_parse(const char *data, size_t len, ob_puback *out) {
    memset(out, 0, sizeof(*out));
    if (data == NULL || len == 0)
        return -1;
    const char *end = data + len;
    const char *e = find_key(data, len, "error");
    if (e != NULL) {
        int64_t v;
        const char *c = find_key(e, (size_t)(end - e), "code");
        if (c && read_int(c, end, &v) == 0)
            out->code = (int)v;
        c = find_key(e, (size_t)(end - e), "err_code");
        if (c && read_int(c, end, &v) == 0)
            out->err_code = (int)v;
        c = find_key(e, (size_t)(end - e), "description");
        if (c && c < end && *c == '"') {
            const char *s = ++c;
            while (c < end && *c != '"') {
                if (*c == '\\' && c + 1 < end)
                    c++;
                c++;
            }
            out->desc = s;
            out->desc_len = (size_t)(c - s);
        }
        if (out->code == 0)
            out->code = -1;
        return 0;
    }
    const char *s = find_key(data, len, "seq");
    int64_t seq;
    if (s == NULL || read_int(s, end, &seq) != 0 || seq < 0)
        return -1;
    out->ok = 1;
    out->seq = (uint64_t)seq;
    const char *st = find_key(data, len, "stream");
    if (st && st < end && *st == '"') {
        const char *q = ++st;
        while (q < end && *q != '"')
            q++; /* a stream's name holds no quote nor backslash */
        if (q < end) {
            out->stream = st;
            out->stream_len = (size_t)(q - st);
        }
    }
    const char *d = find_key(data, len, "duplicate");
    if (d && (size_t)(end - d) >= 4 && memcmp(d, "true", 4) == 0)
        out->duplicate = 1;
    return 0;
}

/* JetStream's error codes (nats-server 2.9.10, server/errors.json) that can
 * answer a publish, and whose fault each is. Resource exhaustion and a
 * stream or cluster that cannot take messages now are the broker's: every
 * row would meet them alike. What a message carries (its size, its header
 * block, the Nats-Expected-* and rollup headers the relay never lets a row
 * set) is the row's. The other codes of errors.json answer stream and
 * consumer administration, never a publish: were one to come, it is treated
 * by its status (5xx suspect, else the row's). */
static const struct js_code {
    int err_code;
    ob_js_fault fault;
    const char *why;
} js_codes[] = {
    {10002, OB_JS_BROKER, "resource limits exceeded for the account"},
    {10008, OB_JS_BROKER, "JetStream system temporarily unavailable"},
    {10009, OB_JS_BROKER, "the cluster cannot handle the request (no leader)"},
    {10023, OB_JS_BROKER, "insufficient resources (the store is full)"},
    {10028, OB_JS_BROKER, "insufficient memory resources"},
    {10035, OB_JS_BROKER, "the account is not found"},
    {10039, OB_JS_BROKER, "JetStream is not enabled for the account"},
    {10047, OB_JS_BROKER, "insufficient storage resources"},
    {10054, OB_JS_ROW, "the message is larger than the stream's max_msg_size"},
    {10059, OB_JS_BROKER, "the stream is not found"}, /* the link asks: deleted? */
    {10060, OB_JS_ROW, "the expected stream does not match"},
    {10063, OB_JS_BROKER, "a replica's stream sequence does not match (catching up)"},
    {10070, OB_JS_ROW, "wrong last msg id"},
    {10071, OB_JS_ROW, "wrong last sequence"},
    {10076, OB_JS_BROKER, "JetStream is not enabled"},
    {10077, OB_JS_BROKER, "the stream's store failed"}, /* refined by the description */
    {10097, OB_JS_ROW, "the header block is larger than 64 KiB"},
    {10109, OB_JS_BROKER, "the stream is sealed"},
    {10111, OB_JS_ROW, "rollup not permitted"},
    {10118, OB_JS_BROKER, "the stream is offline"},
    {10120, OB_JS_BROKER, "no JetStream limits for the account"},
};

/* 10077 ("store failed") carries the store's own error as description. */
static const struct js_store_error {
    const char *desc;
    ob_js_fault fault;
    const char *why;
} js_store_errors[] = {
    {"maximum messages exceeded", OB_JS_FULL, "the stream is full (max_msgs)"},
    {"maximum bytes exceeded", OB_JS_FULL, "the stream is full (max_bytes)"},
    {"maximum messages per subject exceeded", OB_JS_SUBJECT,
     "the subject is full (max_msgs_per_subject)"},
    {"message to large", OB_JS_ROW, "the message is too large for the store"},
    {"store is closed", OB_JS_BROKER, "the stream's store is closed"},
};

static int ends_with(const char *s, size_t len, const char *tail) {
    size_t n = strlen(tail);
    return s && len >= n && memcmp(s + len - n, tail, n) == 0;
}

ob_js_fault ob_js_fault_of(int code, int err_code, const char *desc, size_t desc_len,
                           const char **why) {
    const char *w = NULL;
    ob_js_fault f = code >= 500 ? OB_JS_SUSPECT : OB_JS_ROW;
    if (err_code == 0 && code == 503) {
        /* A clustered stream too far behind answers 503 with no err_code. */
        f = OB_JS_BROKER;
        w = "JetStream is not able to store messages now (503)";
    }
    for (size_t i = 0; i < sizeof(js_codes) / sizeof(js_codes[0]); i++) {
        if (js_codes[i].err_code == err_code) {
            f = js_codes[i].fault;
            w = js_codes[i].why;
            break;
        }
    }
    if (err_code == 10077) {
        for (size_t i = 0; i < sizeof(js_store_errors) / sizeof(js_store_errors[0]); i++) {
            if (ends_with(desc, desc_len, js_store_errors[i].desc)) {
                f = js_store_errors[i].fault;
                w = js_store_errors[i].why;
                break;
            }
        }
    }
    if (why)
        *why = w;
    return f;
}

/* A message larger than the whole stream may hold is the row's fault: no
 * emptier stream would take it. Its size is at least the payload and about
 * the headers object (whose JSON text is no shorter than the header block
 * made of it). */
static int over_max_bytes(const ob_row *row, int64_t max) {
    return max > 0 && row->payload_len + row->headers_len > (uint64_t)max;
}

static void error_verdict(const ob_ack *a, const ob_row *row, int64_t max_bytes, ob_verdict *v) {
    const char *why = NULL;
    ob_js_fault f = ob_js_fault_of(a->code, a->err_code, a->text, a->text_len, &why);
    int too_big = f == OB_JS_FULL && over_max_bytes(row, max_bytes);
    size_t cap = sizeof(v->text);
    int n;
    if (f == OB_JS_BROKER || f == OB_JS_SUBJECT || (f == OB_JS_FULL && !too_big)) {
        /* The pause's reason, for the log and /readyz: short. */
        cap = 300;
        v->blame = f == OB_JS_SUBJECT ? OB_BLAME_SUBJECT : OB_BLAME_BROKER;
        n = snprintf(v->text, cap, "%s (%d/%d)", why ? why : "refused", a->code, a->err_code);
    } else {
        v->blame = f == OB_JS_SUSPECT ? OB_BLAME_SUSPECT : OB_BLAME_ROW;
        v->suspect = "JetStream answered with a server error";
        v->code = a->code;
        v->err_code = a->err_code;
        n = snprintf(v->text, cap, "JetStream error %d/%d: %.*s%s", a->code, a->err_code,
                     (int)(a->text_len > 900 ? 900 : a->text_len), a->text,
                     too_big ? " (the message is larger than the stream's max_bytes)" : "");
    }
    v->len = n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap - 1;
}

void ob_js_verdict(const ob_ack *a, const ob_row *row, int64_t max_bytes, ob_verdict *v) {
    static const char nr[] = "no responders: no stream is listening on the subject";
    v->kind = OUTBOX_FAIL_STREAM_ERROR;
    v->code = v->err_code = 0;
    v->suspect = NULL;
    switch (a->result) {
    case OB_ACKED_NO_RESPONDERS:
        v->blame = OB_BLAME_SUSPECT;
        v->kind = OUTBOX_FAIL_NO_RESPONDERS;
        v->code = 503;
        v->suspect = "no responders";
        memcpy(v->text, nr, sizeof(nr));
        v->len = sizeof(nr) - 1;
        return;
    case OB_ACKED_ERROR:
        error_verdict(a, row, max_bytes, v);
        return;
    case OB_ACKED_ELSEWHERE: {
        /* Another stream took the relay's subjects: the broker's side. */
        int n = snprintf(v->text, 300, "stored by stream %.*s, not the relay's stream",
                         (int)(a->text_len > 200 ? 200 : a->text_len), a->text ? a->text : "");
        v->blame = OB_BLAME_BROKER;
        v->len = n < 0 ? 0 : (size_t)n < 300 ? (size_t)n : 299;
        return;
    }
    default: { /* GARBLED: not a PubAck */
        int n = snprintf(v->text, sizeof(v->text), "unexpected reply from JetStream: %.*s",
                         (int)(a->text_len > 200 ? 200 : a->text_len), a->text ? a->text : "");
        v->blame = OB_BLAME_ROW;
        v->len = n < 0 ? 0 : (size_t)n;
        return;
    }
    }
}
