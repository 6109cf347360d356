/* Reading JetStream publish acks and error replies. */
#include "check.h"
#include "puback.h"

static void parse(const char *s, ob_puback *pa, int expect_rc) {
    CHECK_EQ(ob_puback_parse(s, strlen(s), pa), expect_rc);
}

int main(void) {
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
