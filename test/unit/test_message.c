/* SPDX-License-Identifier: Apache-2.0 */
/* Row -> NATS message: subject rules, CloudEvents headers, row headers. */
#include <nats/nats.h>

#include "check.h"
#include "message.h"

static ob_row make_row(const char *at, const char *aid, const char *et, const char *headers) {
    static const unsigned char id[16] = {0x01, 0x9a, 0x6f, 0x1e, 0x7c, 0x2b, 0x7d, 0x3e,
                                         0x8f, 0x00, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab};
    ob_row r;
    memset(&r, 0, sizeof(r));
    r.id = id;
    r.aggregate_type = at;
    r.aggregate_type_len = strlen(at);
    r.aggregate_id = aid;
    r.aggregate_id_len = strlen(aid);
    r.event_type = et;
    r.event_type_len = strlen(et);
    r.payload = "{}";
    r.payload_len = 2;
    r.headers = headers;
    r.headers_len = headers ? strlen(headers) : 0;
    r.created_at = "2026-11-21 19:50:00.123456";
    r.created_at_len = strlen(r.created_at);
    return r;
}

static void subjects(void) {
    ob_buf b = OB_BUF_INIT;
    char err[256];
    ob_row r = make_row("order", "1", "created", NULL);
    CHECK_EQ(ob_message_subject(&b, "outbox", &r, err, sizeof(err)), 0);
    CHECK_STR(b.p, "outbox.order.created");
    ob_buf_reset(&b);
    r = make_row("order", "1", "line.added", NULL);
    CHECK_EQ(ob_message_subject(&b, "app.events", &r, err, sizeof(err)), 0);
    CHECK_STR(b.p, "app.events.order.line.added");
    const char *bad_types[] = {"",    "a b", "a..b", ".a",        "a.",           "*",
                               "a.>", "a*b", "c>d",  "tab\there", "bad\xff utf8", "\xc0\xaf"};
    for (size_t i = 0; i < sizeof(bad_types) / sizeof(bad_types[0]); i++) {
        ob_buf_reset(&b);
        r = make_row("order", "1", bad_types[i], NULL);
        CHECK_EQ(ob_message_subject(&b, "outbox", &r, err, sizeof(err)), -1);
        CHECK_CONTAINS(err, "event_type");
    }
    ob_buf_reset(&b);
    r = make_row("or der", "1", "created", NULL);
    CHECK_EQ(ob_message_subject(&b, "outbox", &r, err, sizeof(err)), -1);
    CHECK_CONTAINS(err, "aggregate_type");
    /* '*' or '>' anywhere in a token is refused, with the reason. */
    ob_buf_reset(&b);
    r = make_row("a*b", "1", "c", NULL);
    CHECK_EQ(ob_message_subject(&b, "outbox", &r, err, sizeof(err)), -1);
    CHECK_CONTAINS(err, "wildcards");
    r = make_row("order", "1", "cr\xe9\xe9", NULL);
    CHECK_EQ(ob_message_subject(&b, "outbox", &r, err, sizeof(err)), -1);
    CHECK_CONTAINS(err, "not valid UTF-8");
    CHECK_CONTAINS(err, "\\xE9"); /* quoted printably */
    /* Valid UTF-8 passes. */
    ob_buf_reset(&b);
    r = make_row("commande", "1",
                 "cr\xc3\xa9\xc3\xa9"
                 "e",
                 NULL);
    CHECK_EQ(ob_message_subject(&b, "outbox", &r, err, sizeof(err)), 0);
    ob_buf_free(&b);
}

static void encoding(void) {
    ob_buf b = OB_BUF_INIT;
    ob_ce_encode(&b, "a b\"c%d\xc3\xa9", 9);
    CHECK_STR(b.p, "a%20b%22c%25d%C3%A9");
    char out[40];
    CHECK_EQ(ob_rfc3339("2026-11-21 19:50:00.123456", 26, out), 27);
    CHECK_STR(out, "2026-11-21T19:50:00.123456Z");
    CHECK_EQ(ob_rfc3339("2026-11-21 19:50:00", 19, out), 20);
    CHECK_STR(out, "2026-11-21T19:50:00Z");
    CHECK_EQ(ob_rfc3339("yesterday", 9, out), 0);
    ob_buf_free(&b);
}

static const char *hdr(natsMsg *m, const char *k) {
    const char *v = NULL;
    return natsMsgHeader_Get(m, k, &v) == NATS_OK ? v : NULL;
}

/* The message of row r, with CloudEvents from ce_source (or none). */
static int build(natsMsg **m, const ob_row *r, const char *ce_source, outbox_failure_kind *kind,
                 char *err, size_t errlen) {
    static ob_buf scratch, block;
    ob_message_opts o = {ce_source, 0};
    return ob_message_create(m, "s", NULL, r, &o, &scratch, &block, kind, err, errlen);
}

static void headers(void) {
    ob_buf scratch = OB_BUF_INIT;
    char err[256];
    outbox_failure_kind kind;
    natsMsg *m = NULL;
    ob_row r = make_row("order", "o 1", "created", "{\"trace\":\"t-1\"}");
    CHECK_EQ(build(&m, &r, "src", &kind, err, sizeof(err)), 0);
    CHECK_STR(hdr(m, "Nats-Msg-Id"), "019a6f1e-7c2b-7d3e-8f00-0123456789ab");
    CHECK_STR(hdr(m, "ce-id"), "019a6f1e-7c2b-7d3e-8f00-0123456789ab");
    CHECK_STR(hdr(m, "ce-specversion"), "1.0");
    CHECK_STR(hdr(m, "ce-type"), "created");
    CHECK_STR(hdr(m, "ce-source"), "src");
    CHECK_STR(hdr(m, "ce-subject"), "o%201");
    CHECK_STR(hdr(m, "ce-time"), "2026-11-21T19:50:00.123456Z");
    CHECK_STR(hdr(m, "ce-datacontenttype"), "application/json");
    /* The binary content mode's Content-Type beside it, for SDKs that read it. */
    CHECK_STR(hdr(m, "Content-Type"), "application/json");
    CHECK_STR(hdr(m, "trace"), "t-1");
    /* The payload follows the header block unchanged. */
    CHECK_EQ((size_t)natsMsg_GetDataLength(m), r.payload_len);
    CHECK(memcmp(natsMsg_GetData(m), r.payload, r.payload_len) == 0);
    natsMsg_Destroy(m);
    /* A CR or LF in a value (the operator's ce-source) cannot break the block. */
    CHECK_EQ(build(&m, &r, "a\r\nb", &kind, err, sizeof(err)), 0);
    CHECK_STR(hdr(m, "ce-source"), "a  b");
    CHECK_STR(hdr(m, "trace"), "t-1");
    natsMsg_Destroy(m);

    /* A member that is not a string is refused, not dropped. */
    const char *bad[] = {"[1,2]",        "{\"a b\":\"x\"}",           "{\"k\":\"line\\nbreak\"}",
                         "{oops",        "{\"trace\":\"t\",\"n\":5}", "{\"Nats-Msg-Id\":1}",
                         "{\"k\":null}", "{\"k\":{\"a\":\"b\"}}",     "{\"k\":true}"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        r = make_row("order", "1", "created", bad[i]);
        CHECK_EQ(build(&m, &r, "src", &kind, err, sizeof(err)), -1);
        CHECK_EQ(kind, OUTBOX_FAIL_BAD_HEADERS);
        CHECK_CONTAINS(err, "headers");
        natsMsg_Destroy(m);
    }
    /* An empty aggregate_id gives no ce-subject. */
    r = make_row("order", "", "created", NULL);
    CHECK_EQ(build(&m, &r, "src", &kind, err, sizeof(err)), 0);
    CHECK(hdr(m, "ce-subject") == NULL);
    natsMsg_Destroy(m);
    /* Without CloudEvents: only Nats-Msg-Id and the row's headers. */
    r = make_row("order", "1", "created", "{\"trace\":\"t-2\"}");
    CHECK_EQ(build(&m, &r, NULL, &kind, err, sizeof(err)), 0);
    CHECK_STR(hdr(m, "Nats-Msg-Id"), "019a6f1e-7c2b-7d3e-8f00-0123456789ab");
    CHECK_STR(hdr(m, "trace"), "t-2");
    CHECK(hdr(m, "ce-id") == NULL);
    CHECK(hdr(m, "ce-specversion") == NULL);
    CHECK(hdr(m, "Content-Type") == NULL);
    natsMsg_Destroy(m);
    ob_buf_free(&scratch);
}

/* No row header may impersonate the relay or steer JetStream, in any case. */
static void reserved_headers_are_refused(void) {
    ob_buf scratch = OB_BUF_INIT;
    char err[256];
    outbox_failure_kind kind;
    natsMsg *m = NULL;
    const char *forged[] = {
        "{\"Nats-Msg-Id\":\"x\"}",   "{\"nats-msg-id\":\"x\"}",
        "{\"NATS-MSG-ID\":\"x\"}",   "{\"CE-ID\":\"x\"}",
        "{\"Ce-Source\":\"x\"}",     "{\"ce-datacontenttype\":\"x\"}",
        "{\"Nats-Rollup\":\"all\"}", "{\"Nats-Expected-Last-Sequence\":\"1\"}",
        "{\"Nats-TTL\":\"1s\"}",     "{\"content-type\":\"application/cloudevents+json\"}",
    };
    for (int ce = 0; ce < 2; ce++) {
        for (size_t i = 0; i < sizeof(forged) / sizeof(forged[0]); i++) {
            ob_row r = make_row("order", "1", "created", forged[i]);
            CHECK_EQ(build(&m, &r, ce ? "src" : NULL, &kind, err, sizeof(err)), -1);
            CHECK_EQ(kind, OUTBOX_FAIL_BAD_HEADERS);
            CHECK_CONTAINS(err, "is refused");
            natsMsg_Destroy(m);
        }
    }
    CHECK(ob_header_reserved("traceparent", "00-1") == NULL);
    CHECK(ob_header_reserved("Content-Type", "text/plain") == NULL);
    CHECK(ob_header_reserved("cex", "1") == NULL);
    CHECK(ob_header_reserved("natsy", "1") == NULL);
    ob_buf_free(&scratch);
}

static void cloudevents_content_type_and_type(void) {
    ob_buf scratch = OB_BUF_INIT;
    char err[256];
    outbox_failure_kind kind;
    natsMsg *m = NULL;
    /* A binary payload: the row's Content-Type, percent-encoded, or none. */
    ob_row r =
        make_row("order", "1", "created", "{\"Content-Type\":\"text/plain; charset=utf-8\"}");
    r.payload_binary = 1;
    CHECK_EQ(build(&m, &r, "src", &kind, err, sizeof(err)), 0);
    CHECK_STR(hdr(m, "ce-datacontenttype"), "text/plain;%20charset=utf-8");
    CHECK_STR(hdr(m, "Content-Type"), "text/plain; charset=utf-8");
    natsMsg_Destroy(m);
    /* A JSON payload whose row sets its own Content-Type keeps it. */
    r = make_row("order", "1", "created", "{\"Content-Type\":\"application/vnd.x+json\"}");
    CHECK_EQ(build(&m, &r, "src", &kind, err, sizeof(err)), 0);
    CHECK_STR(hdr(m, "Content-Type"), "application/vnd.x+json");
    CHECK_STR(hdr(m, "ce-datacontenttype"), "application/json");
    natsMsg_Destroy(m);
    r = make_row("order", "1", "created", NULL);
    r.payload_binary = 1;
    CHECK_EQ(build(&m, &r, "src", &kind, err, sizeof(err)), 0);
    CHECK(hdr(m, "ce-datacontenttype") == NULL);
    CHECK(hdr(m, "Content-Type") == NULL);
    natsMsg_Destroy(m);
    /* ce-type qualified by the aggregate type, when asked for. */
    r = make_row("order", "1", "created", NULL);
    ob_message_opts o = {"src", 1};
    ob_buf block = OB_BUF_INIT;
    CHECK_EQ(ob_message_create(&m, "s", NULL, &r, &o, &scratch, &block, &kind, err, sizeof(err)),
             0);
    CHECK_STR(hdr(m, "ce-type"), "order.created");
    natsMsg_Destroy(m);
    ob_buf_free(&block);
    ob_buf_free(&scratch);
}

/* "Too big" names the part that made it so. */
static void too_big_names_the_headers(void) {
    natsMsg *m = NULL;
    char err[256];
    CHECK_EQ(natsMsg_Create(&m, "s", NULL, "{}", 2), NATS_OK);
    static char big[5000];
    memset(big, 'v', sizeof(big) - 1);
    CHECK_EQ(natsMsgHeader_Set(m, "k", big), NATS_OK);
    ob_message_too_big(m, 4096, err, sizeof(err));
    CHECK_CONTAINS(err, "2 payload bytes and 5016 header bytes (1 headers)");
    CHECK_CONTAINS(err, "max_payload of 4096");
    CHECK_CONTAINS(err, "its headers are the larger part");
    natsMsg_Destroy(m);
    /* The same of a message made from a header block (read back by nats.c). */
    static char hj[5100];
    snprintf(hj, sizeof(hj), "{\"k\":\"%s\"}", big);
    ob_row r = make_row("order", "1", "created", hj);
    outbox_failure_kind kind;
    CHECK_EQ(build(&m, &r, NULL, &kind, err, sizeof(err)), 0);
    ob_message_too_big(m, 4096, err, sizeof(err));
    CHECK_CONTAINS(err, "5067 header bytes (2 headers)");
    CHECK_CONTAINS(err, "its headers are the larger part");
    natsMsg_Destroy(m);
}

/* The outcome of a row's headers: the message's whole block (headers and
 * payload) when made, else the kind and the reason. */
typedef struct outcome {
    int rc;
    outbox_failure_kind kind;
    char text[8192];
} outcome;

static void outcome_of(const char *headers, size_t len, int binary, outcome *out) {
    static ob_buf scratch, block;
    ob_row r = make_row("order", "1", "created", NULL);
    r.headers = headers;
    r.headers_len = len;
    r.payload_binary = binary;
    ob_message_opts o = {"src", 0};
    natsMsg *m = NULL;
    char err[512];
    memset(out, 0, sizeof(*out));
    out->rc =
        ob_message_create(&m, "s", NULL, &r, &o, &scratch, &block, &out->kind, err, sizeof(err));
    if (out->rc == 0) {
        CHECK(block.len < sizeof(out->text));
        memcpy(out->text, block.p, block.len);
        natsMsg_Destroy(m);
    } else {
        snprintf(out->text, sizeof(out->text), "%s", err);
    }
}

/* The same text with the first character of a string value written as a
 * \u escape: the same JSON, read by jansson rather than in place. 0 when
 * it has no such character. */
static int escaped(const char *in, size_t len, char *out, size_t cap) {
    for (size_t i = 0; i + 2 < len; i++) {
        unsigned char c = (unsigned char)in[i + 2];
        if (in[i] != ':' || in[i + 1] != '"' || c < 0x20 || c >= 0x7f || c == '"' || c == '\\')
            continue;
        if (len + 6 >= cap)
            return 0;
        memcpy(out, in, i + 2);
        snprintf(out + i + 2, 7, "\\u%04x", c);
        memcpy(out + i + 8, in + i + 3, len - i - 3);
        out[len + 5] = '\0';
        return 1;
    }
    return 0;
}

/* Row headers are read in place when they are the usual object of plain
 * strings, and by jansson otherwise: both give the same message, or refuse
 * it with the same reason, for every text, hostile ones included. */
static void both_readings_agree(void) {
    static char many[2048], deep[512];
    size_t at = 0;
    at += (size_t)snprintf(many + at, sizeof(many) - at, "{");
    for (int i = 0; i < 40; i++)
        at +=
            (size_t)snprintf(many + at, sizeof(many) - at, "%s\"k%d\":\"v%d\"", i ? "," : "", i, i);
    snprintf(many + at, sizeof(many) - at, "}");
    at = (size_t)snprintf(deep, sizeof(deep), "{\"k\":\"v\",\"d\":");
    for (int i = 0; i < 40; i++)
        deep[at++] = '[';
    for (int i = 0; i < 40; i++)
        deep[at++] = ']';
    snprintf(deep + at, sizeof(deep) - at, "}");
    const char *texts[] = {
        "{\"trace\":\"t-1\"}",
        "{}",
        " \t\r\n{ \"a\" : \"1\" ,\n \"b\":\"2\" } \n",
        "{\"b\":\"1\",\"a\":\"2\",\"c\":\"\"}",
        "{\"Content-Type\":\"text/plain; charset=utf-8\"}",
        "{\"content-type\":\"application/cloudevents+json\"}",
        "{\"CONTENT-TYPE\":\"Application/CloudEvents\"}",
        "{\"traceparent\":\"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01\","
        "\"tracestate\":\"k=v\"}",
        "{\"tracestate\":\"k=v\"}",
        "{\"traceparent\":\"00-zz\"}",
        "{\"a\":\"1\",\"a\":\"2\"}",
        "{\"a\":\"1\",\"b\":\"2\",\"a\":\"3\"}",
        "{\"\":\"x\"}",
        "{\"a:b\":\"x\"}",
        "{\"a b\":\"x\"}",
        "{\"a\x7f\":\"x\"}",
        "{\"\xc3\xa9\":\"x\"}",
        "{\"k\":\"caf\xc3\xa9\"}",
        "{\"k\":\"\xff\"}",
        "{\"k\":\"\xc0\xaf\"}",
        "{\"k\":\"\xed\xa0\x80\"}",
        "{\"k\":\"a\\u0000b\"}",
        "{\"k\":\"a\\nb\"}",
        "{\"k\":\"a\\rb\"}",
        "{\"k\":\"\\ud800\"}",
        "{\"k\":\"\\ud83d\\ude00\"}",
        "{\"k\\u0000\":\"v\"}",
        "{\"Nats-Msg-Id\":\"x\"}",
        "{\"nats-rollup\":\"all\"}",
        "{\"ce-id\":\"x\"}",
        "{\"k\":\"v\"}x",
        "{\"k\":\"v\"}{\"k\":\"v\"}",
        "{\"k\":\"v\",}",
        "{\"k\" \"v\"}",
        "{\"k\":\"v\"",
        "{\"k\":\"v",
        "{'k':'v'}",
        "{k:\"v\"}",
        "{\"k\":\"v\",\"n\":5}",
        "{\"k\":\"v\",\"n\":null}",
        "{\"k\":\"v\",\"o\":{\"a\":\"b\"}}",
        "[\"k\",\"v\"]",
        "\"k\"",
        "null",
        "",
        " ",
        many,
        deep,
    };
    for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
        size_t len = strlen(texts[i]);
        static outcome in_place, parsed;
        static char variant[4096];
        for (int binary = 0; binary < 2; binary++) {
            outcome_of(texts[i], len, binary, &in_place);
            if (!escaped(texts[i], len, variant, sizeof(variant)))
                continue;
            outcome_of(variant, strlen(variant), binary, &parsed);
            /* jansson quotes the text near a syntax error, which differs. */
            int quoted = strstr(in_place.text, "is not valid JSON") != NULL;
            if (in_place.rc != parsed.rc || (!quoted && strcmp(in_place.text, parsed.text) != 0) ||
                (in_place.rc != 0 && in_place.kind != parsed.kind))
                CHECK_FAIL_("headers %s: read in place %d \"%s\", parsed %d \"%s\"", texts[i],
                            in_place.rc, in_place.text, parsed.rc, parsed.text);
        }
    }
    /* Hostile texts are refused, as the row's fault (whichever reading). */
    const char *refused[] = {"{\"k\":\"\xff\"}",  "{\"k\":\"a\\u0000b\"}", "{\"k\":\"v\"}x",
                             "{\"a\x7f\":\"x\"}", "{\"\":\"x\"}",          deep,
                             "{\"k\":\"v\",}"};
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        static outcome o;
        outcome_of(refused[i], strlen(refused[i]), 0, &o);
        CHECK_EQ(o.rc, -1);
        CHECK_EQ(o.kind, OUTBOX_FAIL_BAD_HEADERS);
    }
    /* A member given twice: one header, the last value (as jansson keeps it). */
    static outcome o;
    outcome_of("{\"a\":\"1\",\"b\":\"2\",\"a\":\"3\"}", 25, 0, &o);
    CHECK_EQ(o.rc, 0);
    CHECK_CONTAINS(o.text, "NATS/1.0\r\na: 3\r\nb: 2\r\nNats-Msg-Id: ");
    /* Members read in place keep their order. */
    outcome_of("{\"b\":\"1\",\"a\":\"2\"}", 17, 0, &o);
    CHECK_CONTAINS(o.text, "NATS/1.0\r\nb: 1\r\na: 2\r\nNats-Msg-Id: ");
    /* A length that stops inside the text: only those bytes are read. */
    outcome_of("{\"a\":\"1\"}GARBAGE", 9, 0, &o);
    CHECK_EQ(o.rc, 0);
    CHECK_CONTAINS(o.text, "NATS/1.0\r\na: 1\r\nNats-Msg-Id: ");
    outcome_of("{\"a\":\"1\"}", 8, 0, &o);
    CHECK_EQ(o.rc, -1);
}

int main(void) {
    CHECK_EQ(nats_Open(-1), NATS_OK);
    subjects();
    encoding();
    headers();
    reserved_headers_are_refused();
    cloudevents_content_type_and_type();
    too_big_names_the_headers();
    both_readings_agree();
    nats_Close();
    puts("test_message: ok");
    return 0;
}
