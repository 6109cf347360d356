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
        {503, 10077, "maximum messages per subject exceeded", OB_JS_ROW},
        {503, 10077, "message to large", OB_JS_ROW},
        {503, 10077, "store is closed", OB_JS_BROKER},
        {503, 10077, "write error: no space left on device", OB_JS_BROKER},
        {400, 10054, "message size exceeds maximum allowed", OB_JS_ROW},
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

int main(void) {
    classify();
    ob_puback pa;
    parse("{\"stream\":\"OUTBOX\",\"seq\":42}", &pa, 0);
    CHECK(pa.ok);
    CHECK(!pa.duplicate);
    CHECK_EQ(pa.seq, 42);

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
    puts("test_puback: ok");
    return 0;
}
