/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The validating JSON scan, case by case beside MariaDB 10.11's verdict: each
 * case was run through SELECT json_valid(...) and, for the cases with bytes
 * of 0x80 and above, through an INSERT into a utf8mb4 LONGTEXT column with
 * CHECK (json_valid(...)) (the column refuses invalid UTF-8 with error 1366
 * before json_valid sees it). The scan agrees with MariaDB except where
 * MariaDB accepts what RFC 8259 forbids; those cases are marked
 * "rfc" below, and the scan refuses them.
 */
#include "check.h"
#include "json_scan.h"

typedef struct jcase {
    const char *text;
    size_t len;
    int mariadb; /* MariaDB 10.11 accepts it */
    int scan;    /* the scan accepts it */
} jcase;

static const jcase cases[] = {
    {"{}", 2, 1, 1},
    {"[]", 2, 1, 1},
    {"1", 1, 1, 1},
    {"-0", 2, 1, 1},
    {"0.5", 3, 1, 1},
    {"1e5", 3, 1, 1},
    {"1E+5", 4, 1, 1},
    {"-1.5e-3", 7, 1, 1},
    {"\"x\"", 3, 1, 1},
    {"true", 4, 1, 1},
    {"false", 5, 1, 1},
    {"null", 4, 1, 1},
    {" {\"a\" : [1, 2, {\"b\": null}] } ", 30, 1, 1},
    {"\x09"
     "\x0a"
     "\x0d"
     "[]",
     5, 1, 1},
    {"{\"a\":1,\"a\":2}", 13, 1, 1},
    {"\"\\u00e9\\n\\t\\/\\\\\\\"\\b\\f\\r\"", 24, 1, 1},
    {"\"\\ud800\"", 8, 0, 0},
    {"\"\\uDC00\\uD800\"", 14, 0, 0},
    {"\"\xc3"
     "\xa9"
     "\"",
     4, 1, 1},
    {"\"\xe2"
     "\x82"
     "\xac"
     "\"",
     5, 1, 1},
    {"\"\xf0"
     "\x9f"
     "\x98"
     "\x80"
     "\"",
     6, 1, 1},
    {"\"\xef"
     "\xbf"
     "\xbf"
     "\"",
     5, 1, 1},
    {"\"\xf4"
     "\x8f"
     "\xbf"
     "\xbf"
     "\"",
     6, 1, 1},
    {"", 0, 0, 0},
    {" ", 1, 0, 0},
    {"{", 1, 0, 0},
    {"[", 1, 0, 0},
    {"}", 1, 0, 0},
    {"[1,]", 4, 0, 0},
    {"{\"a\":1,}", 8, 0, 0},
    {"[1 2]", 5, 0, 0},
    {"{\"a\" 1}", 7, 0, 0},
    {"{1:2}", 5, 0, 0},
    {"{'a':1}", 7, 0, 0},
    {"'a'", 3, 0, 0},
    {"01", 2, 0, 0},
    {"-", 1, 0, 0},
    {"1.", 2, 1, 0},
    {".5", 2, 0, 0},
    {"+1", 2, 0, 0},
    {"1e", 2, 0, 0},
    {"1e+", 3, 0, 0},
    {"0x10", 4, 0, 0},
    {"-01", 3, 0, 0},
    {"1.e5", 4, 1, 0},
    {"NaN", 3, 0, 0},
    {"Infinity", 8, 0, 0},
    {"-Infinity", 9, 0, 0},
    {"tru", 3, 0, 0},
    {"True", 4, 0, 0},
    {"nul", 3, 0, 0},
    {"nulll", 5, 0, 0},
    {"[] []", 5, 0, 0},
    {"1 2", 3, 0, 0},
    {"{}x", 3, 0, 0},
    {"\"a", 2, 0, 0},
    {"\"\\x\"", 4, 1, 0},
    {"\"\\u12\"", 6, 0, 0},
    {"\"\\u12G4\"", 8, 0, 0},
    {"\"\\'\"", 4, 1, 0},
    {"\"a\x09"
     "b\"",
     5, 0, 0},
    {"\"a\x0a"
     "b\"",
     5, 0, 0},
    {"\"\x01"
     "\"",
     3, 0, 0},
    {"\"\x7f"
     "\"",
     3, 1, 1},
    {"\"\x00"
     "\"",
     3, 0, 0},
    {"[1]\x00"
     "",
     4, 0, 0},
    {"\xef"
     "\xbb"
     "\xbf"
     "{}",
     5, 0, 0},
    {"\"\xc0"
     "\x80"
     "\"",
     4, 0, 0},
    {"\"\xc1"
     "\xbf"
     "\"",
     4, 0, 0},
    {"\"\xe0"
     "\x80"
     "\x80"
     "\"",
     5, 0, 0},
    {"\"\xed"
     "\xa0"
     "\x80"
     "\"",
     5, 1, 0},
    {"\"\xf4"
     "\x90"
     "\x80"
     "\x80"
     "\"",
     6, 0, 0},
    {"\"\xf5"
     "\x80"
     "\x80"
     "\x80"
     "\"",
     6, 0, 0},
    {"\"\xff"
     "\"",
     3, 0, 0},
    {"\"\x80"
     "\"",
     3, 0, 0},
    {"\"\xc3"
     "\"",
     3, 0, 0},
    {"\"\xe2"
     "\x82"
     "\"",
     4, 0, 0},
    {"/* c */ {}", 10, 0, 0},
    {"{\"a\":1}//", 9, 0, 0},
    {"[1,,2]", 6, 0, 0},
    {"[,1]", 4, 0, 0},
    {"{,}", 3, 0, 0},
    {"{\"a\"}", 5, 0, 0},
    {"{\"a\":}", 6, 0, 0},
    {"[-]", 3, 1, 0},
    {"1e999", 5, 1, 1},
    {"-0.0e-0", 7, 1, 1},
    {"123456789012345678901234567890", 30, 1, 1},
    {"\x0b"
     "1",
     2, 0, 0},
    {"\x0c"
     "1",
     2, 0, 0},
    {"[1\x0b"
     "]",
     4, 0, 0},
    /* \u escapes of surrogates: MariaDB wants them paired, high then low. */
    {"\"\\ud800\\udc00\"", 14, 1, 1},
    {"\"\\uD83D\\uDE00\"", 14, 1, 1},
    {"\"\\udc00\"", 8, 0, 0},
    {"\"\\ud800x\"", 9, 0, 0},
    {"\"\\ud800\\u0041\"", 14, 0, 0},
};

/* depth levels of arrays (or of objects with key "a") around 1. */
static size_t nest(char *buf, int depth, int objects) {
    size_t n = 0;
    for (int i = 0; i < depth; i++) {
        if (objects) {
            memcpy(buf + n, "{\"a\":", 5);
            n += 5;
        } else {
            buf[n++] = '[';
        }
    }
    buf[n++] = '1';
    for (int i = 0; i < depth; i++)
        buf[n++] = objects ? '}' : ']';
    return n;
}

static void expect(const char *s, size_t n, int ok) {
    ob_json_error e = {0, NULL};
    int rc = ob_json_scan(s, n, &e);
    if ((rc == 0) != ok)
        CHECK_FAIL_("ob_json_scan(\"%.*s\") = %d (%s at %zu), expected %s", (int)(n < 60 ? n : 60),
                    s, rc, e.why ? e.why : "-", e.offset, ok ? "valid" : "invalid");
    if (!ok)
        CHECK(e.why != NULL && e.offset <= n);
}

int main(void) {
    size_t differ = 0;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const jcase *c = &cases[i];
        CHECK_EQ(strlen(c->text) <= c->len, 1);
        expect(c->text, c->len, c->scan);
        if (c->mariadb != c->scan) {
            /* Only where MariaDB is the looser one. */
            CHECK(c->mariadb && !c->scan);
            differ++;
        }
    }
    CHECK_EQ(differ, 6);

    /* Nesting: MariaDB takes 31 levels and refuses 32, of either kind. */
    char buf[512];
    for (int objects = 0; objects < 2; objects++) {
        expect(buf, nest(buf, OB_JSON_MAX_DEPTH, objects), 1);
        expect(buf, nest(buf, OB_JSON_MAX_DEPTH + 1, objects), 0);
    }
    CHECK_EQ(OB_JSON_MAX_DEPTH, 31);
    /* Closing a container frees its level: two 30-level arrays side by side
     * inside a 31st. */
    size_t n = 0;
    buf[n++] = '[';
    n += nest(buf + n, 30, 0);
    buf[n++] = ',';
    n += nest(buf + n, 30, 1);
    buf[n++] = ']';
    expect(buf, n, 1);

    /* Where and why. */
    ob_json_error e;
    CHECK_EQ(ob_json_scan("{\"a\":tru}", 9, &e), -1);
    CHECK_EQ(e.offset, 5);
    CHECK_STR(e.why, "unexpected character");
    CHECK_EQ(ob_json_scan("[1,2", 4, &e), -1);
    CHECK_EQ(e.offset, 4);
    CHECK_STR(e.why, "unexpected end of text");
    CHECK_EQ(ob_json_scan("\"a\xc3(\"", 5, &e), -1);
    CHECK_EQ(e.offset, 2);
    CHECK_STR(e.why, "invalid UTF-8 in a string");
    CHECK_EQ(ob_json_scan("", 0, &e), -1);
    CHECK_STR(e.why, "empty text");
    CHECK_EQ(ob_json_scan("{} {}", 5, NULL), -1);

    /* The length is the caller's: bytes past it are not read. */
    expect("[1]]]]", 3, 1);
    expect("{\"a\":1}garbage", 7, 1);

    /* A large payload like the benchmark's, with multi-byte characters. */
    static char big[65536];
    size_t k = 0;
    memcpy(big, "{\"n\":\"0000000001\",\"pad\":\"", 25);
    k = 25;
    while (k < sizeof(big) - 8) {
        memcpy(big + k, "x\xe2\x82\xac\\n", 6);
        k += 6;
    }
    memcpy(big + k, "\"}", 2);
    k += 2;
    expect(big, k, 1);
    big[k - 3] = '\x01';
    expect(big, k, 0);

    puts("test_json_scan: ok");
    return 0;
}
