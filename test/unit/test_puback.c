/* SPDX-License-Identifier: Apache-2.0 */
/* Reading JetStream publish acks and error replies. */
#include "check.h"
#include "puback.h"

static void parse(const char *s, ob_puback *pa, int expect_rc) {
    CHECK_EQ(ob_puback_parse(s, strlen(s), pa), expect_rc);
}

/* Whose fault each refusal is: the table in puback.c, case by case. */
static void classify(void) {
    static const struct {
        int code, err_code;
        const char *desc;
        ob_js_fault want;
    } cases[] = {
        {503, 10023, "insufficient resources", OB_JS_BROKER},
        {400, 10002, "resource limits exceeded for account", OB_JS_BROKER},
        {500, 10028, "insufficient memory resources available", OB_JS_BROKER},
        {500, 10047, "insufficient storage resources available", OB_JS_BROKER},
        {503, 10008, "JetStream system temporarily unavailable", OB_JS_BROKER},
        {500, 10009, "JetStream cluster can not handle request", OB_JS_BROKER},
        {503, 10063, "expected stream sequence does not match", OB_JS_BROKER},
        {503, 10076, "JetStream not enabled", OB_JS_BROKER},
        {503, 10039, "JetStream not enabled for account", OB_JS_BROKER},
        {400, 10109, "invalid operation on sealed stream", OB_JS_BROKER},
        {500, 10118, "stream is offline", OB_JS_BROKER},
        {400, 10120, "no JetStream default or applicable tiered limit present", OB_JS_BROKER},
        {503, 0, "JetStream stream 'A > S' has high message lag", OB_JS_BROKER},
        {503, 10077, "maximum messages exceeded", OB_JS_FULL},
        {503, 10077, "nats: maximum bytes exceeded", OB_JS_FULL},
        {503, 10077, "maximum messages per subject exceeded", OB_JS_SUBJECT},
        {503, 10077, "message to large", OB_JS_ROW},
        {503, 10077, "store is closed", OB_JS_BROKER},
        {503, 10077, "write error: no space left on device", OB_JS_BROKER},
        {400, 10054, "message size exceeds maximum allowed", OB_JS_ROW},
        {404, 10059, "stream not found", OB_JS_BROKER},
        {400, 10097, "header size exceeds maximum allowed of 64k", OB_JS_ROW},
        {400, 10060, "expected stream does not match", OB_JS_ROW},
        {400, 10070, "wrong last msg ID: x", OB_JS_ROW},
        {400, 10071, "wrong last sequence: 3", OB_JS_ROW},
        {500, 10111, "rollup not permitted", OB_JS_ROW},
        {400, 99999, "something new", OB_JS_ROW},
        {500, 99999, "something new", OB_JS_SUSPECT},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *why = NULL;
        ob_js_fault f = ob_js_fault_of(cases[i].code, cases[i].err_code, cases[i].desc,
                                       strlen(cases[i].desc), &why);
        if (f != cases[i].want)
            CHECK_FAIL_("%d/%d \"%s\": fault %d, want %d", cases[i].code, cases[i].err_code,
                        cases[i].desc, (int)f, (int)cases[i].want);
        /* Every known code names its reason. */
        if (cases[i].err_code != 99999)
            CHECK(why != NULL && why[0] != '\0');
    }
}

/* The broker's verdict on failed answers (broker.h), JetStream's way:
 * whose fault, how the row fails, and what the broker is asked. */
static void verdicts(void) {
    ob_row row;
    memset(&row, 0, sizeof(row));
    row.payload_len = 50;
    ob_verdict v;
    ob_ack nr = {.result = OB_ACKED_NO_RESPONDERS};
    ob_js_verdict(&nr, &row, 0, &v);
    CHECK_EQ(v.blame, OB_BLAME_SUSPECT);
    CHECK_EQ(v.kind, OUTBOX_FAIL_NO_RESPONDERS);
    CHECK_EQ(v.code, 503);
    CHECK_STR(v.suspect, "no responders");
    CHECK(strstr(v.text, "no stream is listening") != NULL);
    CHECK_EQ(v.len, strlen(v.text));
    static const char full[] = "maximum bytes exceeded";
    ob_ack a = {.result = OB_ACKED_ERROR,
                .code = 503,
                .err_code = 10077,
                .text = full,
                .text_len = sizeof(full) - 1};
    ob_js_verdict(&a, &row, 1000, &v); /* a full stream: the broker's */
    CHECK_EQ(v.blame, OB_BLAME_BROKER);
    CHECK_STR(v.text, "the stream is full (max_bytes) (503/10077)");
    ob_js_verdict(&a, &row, 10, &v); /* larger than the whole stream: the row's */
    CHECK_EQ(v.blame, OB_BLAME_ROW);
    CHECK_EQ(v.kind, OUTBOX_FAIL_STREAM_ERROR);
    CHECK_EQ(v.err_code, 10077);
    CHECK(strstr(v.text, "larger than the stream's max_bytes") != NULL);
    static const char odd[] = "out of order";
    ob_ack s = {.result = OB_ACKED_ERROR, .code = 500, .err_code = 1, .text = odd, .text_len = 12};
    ob_js_verdict(&s, &row, 0, &v); /* a server error not in the table */
    CHECK_EQ(v.blame, OB_BLAME_SUSPECT);
    CHECK_STR(v.text, "JetStream error 500/1: out of order");
    ob_ack g = {.result = OB_ACKED_GARBLED, .text = "hello", .text_len = 5};
    ob_js_verdict(&g, &row, 0, &v);
    CHECK_EQ(v.blame, OB_BLAME_ROW);
    CHECK_STR(v.text, "unexpected reply from JetStream: hello");
    ob_ack other = {.result = OB_ACKED_ELSEWHERE, .text = "OTHER", .text_len = 5};
    ob_js_verdict(&other, &row, 0, &v);
    CHECK_EQ(v.blame, OB_BLAME_BROKER);
    CHECK_STR(v.text, "stored by stream OTHER, not the relay's stream");
}

int main(void) {
    classify();
    ob_puback pa;
    parse("{\"stream\":\"OUTBOX\",\"seq\":42}", &pa, 0);
    CHECK(pa.ok);
    CHECK(!pa.duplicate);
    CHECK_EQ(pa.seq, 42);
    CHECK_EQ(pa.stream_len, 6);
    CHECK_EQ(memcmp(pa.stream, "OUTBOX", 6), 0);

    parse("{\"stream\":\"OUTBOX\", \"seq\": 7, \"duplicate\": true}", &pa, 0);
    CHECK(pa.ok);
    CHECK(pa.duplicate);
    CHECK_EQ(pa.seq, 7);

    parse("{\"error\":{\"code\":400,\"err_code\":10054,\"description\":\"message size exceeds "
          "maximum allowed\"}}",
          &pa, 0);
    CHECK(!pa.ok);
    CHECK_EQ(pa.code, 400);
    CHECK_EQ(pa.err_code, 10054);
    CHECK_EQ(pa.desc_len, strlen("message size exceeds maximum allowed"));
    CHECK_EQ(strncmp(pa.desc, "message size exceeds maximum allowed", pa.desc_len), 0);

    parse("{\"error\":{\"code\":503,\"description\":\"a \\\"quoted\\\" word\"}}", &pa, 0);
    CHECK_EQ(pa.code, 503);
    CHECK_EQ(pa.desc_len, strlen("a \\\"quoted\\\" word"));

    parse("{\"stream\":\"X\",\"seq\":\"oops\"}", &pa, -1);
    parse("garbage", &pa, -1);
    CHECK_EQ(ob_puback_parse(NULL, 0, &pa), -1);
    verdicts();
    puts("test_puback: ok");
    return 0;
}
