/* SPDX-License-Identifier: Apache-2.0 */
/* W3C Trace Context checks: traceparent and tracestate, good and bad, and
 * how a row's headers carry them into a message or make it refused. */
#include <nats/nats.h>

#include "check.h"
#include "message.h"
#include "trace_context.h"

#define TP "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

static const char *tp(const char *v) {
    return ob_traceparent_invalid(v, strlen(v));
}

static const char *ts(const char *v) {
    return ob_tracestate_invalid(v, strlen(v));
}

static void traceparent_good_and_bad(void) {
    CHECK(tp(TP) == NULL);
    CHECK(tp("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00") == NULL);
    /* A later version may append fields after a '-'; version 00 may not. */
    CHECK(tp("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what-comes") == NULL);
    CHECK(tp("cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-09") == NULL);
    static const struct {
        const char *v, *why;
    } bad[] = {
        {"", "shorter than"},
        {"00-4bf92f3577b34da6-00f067aa0ba902b7-01", "shorter than"}, /* a 16-digit trace-id */
        {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01 ", "exactly 55"},
        {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x", "exactly 55"},
        {"01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x", "follow a '-'"},
        {"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "version ff"},
        {"0g-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "version is not"},
        {"0A-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "version is not"},
        {"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", "trace-id is not"},
        {"00-4bf92f3577b34da6a3ce929d0e0e473z-00f067aa0ba902b7-01", "trace-id is not"},
        {"00-00000000000000000000000000000000-00f067aa0ba902b7-01", "trace-id is all zeros"},
        {"00-4bf92f3577b34da6a3ce929d0e0e4736-00F067AA0BA902B7-01", "parent-id is not"},
        {"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", "parent-id is all zeros"},
        {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0X", "flags are not"},
        {"00_4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7_01", "not 00-<32 hex"},
        {"004bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x", "not 00-<32 hex"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        CHECK_CONTAINS(tp(bad[i].v), bad[i].why);
}

static void tracestate_good_and_bad(void) {
    const char *good[] = {
        "",
        "congo=t61rcWkgMzE",
        "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE",
        "rojo=00f067aa0ba902b7 ,\tcongo=t61rcWkgMzE",
        "tenant1@vendor=v, 9tenant@sys-x*/=x y",
        "k=\"quoted\\\\value\"",
        "a-b_c*d/e=x",
        ",,, ,",
    };
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
        if (ts(good[i]) != NULL)
            CHECK_FAIL_("tracestate \"%s\" refused: %s", good[i], ts(good[i]));
    static const struct {
        const char *v, *why;
    } bad[] = {
        {"congo", "not key=value"},
        {"a=1,=x", "key is not"},
        {"Congo=x", "key is not"},
        {"1congo=x", "key is not"},
        {"con go=x", "key is not"},
        {"@vendor=x", "key is not"},
        {"tenant@=x", "key is not"},
        {"tenant@1vendor=x", "key is not"},
        {"tenant@vendorvendorvendor=x", "key is not"}, /* a system-id of 18 */
        {"_tenant@vendor=x", "key is not"},
        {"congo=", "value is not"},
        {"congo=a=b", "value is not"},
        {"congo=\x01", "value is not"},
        {"congo=caf\xc3\xa9", "value is not"},
        {"congo=x\ty", "value is not"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        CHECK_CONTAINS(ts(bad[i].v), bad[i].why);

    /* 32 members pass, 33 do not; 512 characters pass, 513 do not. */
    char list[1024] = "";
    for (int i = 0; i < 33; i++)
        snprintf(list + strlen(list), sizeof(list) - strlen(list), "%sk%d=v", i ? "," : "", i);
    CHECK_CONTAINS(ts(list), "more than 32");
    *strrchr(list, ',') = '\0';
    CHECK(ts(list) == NULL);
    char longv[600];
    memset(longv, 'v', sizeof(longv));
    memcpy(longv, "a=", 2);
    longv[256 + 2] = '\0';
    CHECK(ts(longv) == NULL); /* a value of 256 */
    longv[256 + 2] = 'v';
    longv[257 + 2] = '\0';
    CHECK_CONTAINS(ts(longv), "value is not");
    char many[600];
    memset(many, 'v', sizeof(many));
    memcpy(many, "a=", 2); /* a=<254 v>,b=<253 v>: 512 characters */
    memcpy(many + 256, ",b=", 3);
    many[512] = '\0';
    CHECK(ts(many) == NULL);
    strcat(many, "v");
    CHECK_CONTAINS(ts(many), "longer than 512");
}

static ob_row row_with(const char *headers) {
    static const unsigned char id[16] = {0x01, 0x9a, 0x6f, 0x1e, 0x7c, 0x2b, 0x7d, 0x3e,
                                         0x8f, 0x00, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab};
    ob_row r;
    memset(&r, 0, sizeof(r));
    r.id = id;
    r.aggregate_type = "order";
    r.aggregate_type_len = 5;
    r.aggregate_id = "1";
    r.aggregate_id_len = 1;
    r.event_type = "created";
    r.event_type_len = 7;
    r.payload = "{}";
    r.payload_len = 2;
    r.headers = headers;
    r.headers_len = strlen(headers);
    return r;
}

static int build(natsMsg **m, const char *headers, outbox_failure_kind *kind, char *err,
                 size_t errlen) {
    static ob_buf scratch, block;
    ob_message_opts o = {"src", 0};
    ob_row r = row_with(headers);
    return ob_message_create(m, "s", NULL, &r, &o, &scratch, &block, kind, err, errlen);
}

static void messages_carry_or_refuse(void) {
    natsMsg *m = NULL;
    outbox_failure_kind kind;
    char err[256];
    const char *v = NULL;
    CHECK_EQ(build(&m,
                   "{\"traceparent\":\"" TP "\",\"tracestate\":\"rojo=00f067aa0ba902b7, "
                   "congo=t61rcWkgMzE\"}",
                   &kind, err, sizeof(err)),
             0);
    CHECK_EQ(natsMsgHeader_Get(m, "traceparent", &v), NATS_OK);
    CHECK_STR(v, TP);
    CHECK_EQ(natsMsgHeader_Get(m, "tracestate", &v), NATS_OK);
    CHECK_STR(v, "rojo=00f067aa0ba902b7, congo=t61rcWkgMzE");
    natsMsg_Destroy(m);
    static const struct {
        const char *headers, *why;
    } bad[] = {
        {"{\"traceparent\":\"00-4bf92f3577b34da6-00f067aa0ba902b7-01\"}",
         "'traceparent' is refused: not a W3C traceparent: shorter than"},
        {"{\"Traceparent\":\"00-00000000000000000000000000000000-00f067aa0ba902b7-01\"}",
         "'Traceparent' is refused: not a W3C traceparent: the trace-id is all zeros"},
        {"{\"traceparent\":\"" TP "\",\"tracestate\":\"Bad=1\"}",
         "'tracestate' is refused: not a W3C tracestate: a list-member's key"},
        {"{\"tracestate\":\"a=1\"}", "'tracestate' is refused: a tracestate without a traceparent"},
        {"{\"traceparent\":\"" TP "\",\"TRACEPARENT\":\"" TP "\"}",
         "'TRACEPARENT' is refused: a second traceparent"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        CHECK_EQ(build(&m, bad[i].headers, &kind, err, sizeof(err)), -1);
        CHECK(m == NULL);
        CHECK_EQ(kind, OUTBOX_FAIL_BAD_HEADERS);
        CHECK_CONTAINS(err, bad[i].why);
    }
}

int main(void) {
    CHECK_EQ(nats_Open(-1), NATS_OK);
    traceparent_good_and_bad();
    tracestate_good_and_bad();
    messages_carry_or_refuse();
    nats_Close();
    puts("test_trace_context: ok");
    return 0;
}
