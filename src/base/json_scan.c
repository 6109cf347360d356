/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A validating JSON scan (RFC 8259) that builds nothing. One pass, no
 * allocation: the only state is the kind of each open container, kept in a
 * fixed array as deep as the nesting limit.
 */
#include "json_scan.h"

#include <stdint.h>
#include <string.h>

typedef const unsigned char *pos;

/* What a byte inside a string asks for: most bytes are plain and are skipped
 * by one table look-up each. */
enum { S_PLAIN, S_QUOTE, S_ESCAPE, S_CONTROL, S_UTF8 };

/* S_CONTROL below 0x20, S_QUOTE at '"', S_ESCAPE at '\\', S_UTF8 from 0x80. */
/* clang-format off */
static const unsigned char string_class[256] = {
    3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
    3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
    0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
    4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
    4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
    4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
    4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
    4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
    4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
    4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
};
/* clang-format on */

static int is_ws(unsigned char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static int is_digit(unsigned char c) {
    return c >= '0' && c <= '9';
}

/* 1 when none of the 8 bytes at p needs a look: no control character, quote,
 * backslash or byte from 0x80. Borrows between the bytes can only give a
 * false "no", which the byte loop then settles. */
static int plain8(pos p) {
    const uint64_t lo = 0x0101010101010101u, hi = 0x8080808080808080u;
    uint64_t v;
    memcpy(&v, p, 8);
    uint64_t t = (v - lo * 0x20) | ((v ^ (lo * '"')) - lo) | ((v ^ (lo * '\\')) - lo) | v;
    return (t & hi) == 0;
}

/* The code unit of a \\uXXXX escape at p, or -1. */
static long hex4(pos p, pos end) {
    long v = 0;
    if (end - p < 6 || p[0] != '\\' || p[1] != 'u')
        return -1;
    for (int k = 2; k < 6; k++) {
        unsigned char c = p[k];
        int d = is_digit(c)              ? c - '0'
                : (c >= 'a' && c <= 'f') ? c - 'a' + 10
                : (c >= 'A' && c <= 'F') ? c - 'A' + 10
                                         : -1;
        if (d < 0)
            return -1;
        v = v * 16 + d;
    }
    return v;
}

/* One UTF-8 sequence starting at p (its lead byte >= 0x80), by RFC 3629's
 * table: no overlong forms, no surrogates, nothing past U+10FFFF. Returns the
 * byte after it, or NULL. */
static pos utf8_seq(pos p, pos end) {
    unsigned char c = p[0], lo = 0x80, hi = 0xbf;
    size_t len;
    if (c >= 0xc2 && c <= 0xdf) {
        len = 2;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        if (c == 0xe0)
            lo = 0xa0;
        else if (c == 0xed)
            hi = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        if (c == 0xf0)
            lo = 0x90;
        else if (c == 0xf4)
            hi = 0x8f;
    } else {
        return NULL;
    }
    if ((size_t)(end - p) < len || p[1] < lo || p[1] > hi)
        return NULL;
    for (size_t k = 2; k < len; k++)
        if ((p[k] & 0xc0) != 0x80)
            return NULL;
    return p + len;
}

/* The rest of a string after its opening quote. Returns the byte after the
 * closing quote; on an error returns where it is and sets *why. */
static pos scan_string(pos p, pos end, const char **why) {
    for (;;) {
        while (end - p >= 8 && plain8(p))
            p += 8;
        while (p < end && string_class[*p] == S_PLAIN)
            p++;
        if (p == end) {
            *why = "unterminated string";
            return p;
        }
        switch (string_class[*p]) {
        case S_QUOTE:
            return p + 1;
        case S_CONTROL:
            *why = "control character in a string";
            return p;
        case S_UTF8: {
            pos q = utf8_seq(p, end);
            if (q == NULL) {
                *why = "invalid UTF-8 in a string";
                return p;
            }
            p = q;
            break;
        }
        default: /* S_ESCAPE */
            if (end - p < 2) {
                *why = "unterminated string";
                return end;
            }
            switch (p[1]) {
            case '"':
            case '\\':
            case '/':
            case 'b':
            case 'f':
            case 'n':
            case 'r':
            case 't':
                p += 2;
                break;
            case 'u': {
                long u = hex4(p, end);
                if (u < 0) {
                    *why = "invalid \\u escape";
                    return p;
                }
                if (u >= 0xdc00 && u <= 0xdfff) {
                    *why = "\\u escape of a lone low surrogate";
                    return p;
                }
                p += 6;
                if (u >= 0xd800 && u <= 0xdbff) {
                    long lo = hex4(p, end);
                    if (lo < 0xdc00 || lo > 0xdfff) {
                        *why = "\\u escape of a high surrogate without its low half";
                        return p - 6;
                    }
                    p += 6;
                }
                break;
            }
            default:
                *why = "invalid escape";
                return p;
            }
        }
    }
}

/* -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static pos scan_number(pos p, pos end, const char **why) {
    pos start = p;
    if (p < end && *p == '-')
        p++;
    if (p < end && *p == '0') {
        p++;
    } else if (p < end && is_digit(*p)) {
        while (p < end && is_digit(*p))
            p++;
    } else {
        *why = "invalid number";
        return start;
    }
    if (p < end && *p == '.') {
        p++;
        if (p == end || !is_digit(*p)) {
            *why = "invalid number: a digit must follow '.'";
            return p;
        }
        while (p < end && is_digit(*p))
            p++;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < end && (*p == '+' || *p == '-'))
            p++;
        if (p == end || !is_digit(*p)) {
            *why = "invalid number: a digit must follow the exponent";
            return p;
        }
        while (p < end && is_digit(*p))
            p++;
    }
    return p;
}

static pos scan_word(pos p, pos end, const char *word, const char **why) {
    size_t n = strlen(word);
    if ((size_t)(end - p) < n || memcmp(p, word, n) != 0) {
        *why = "unexpected character";
        return p;
    }
    return p + n;
}

static int fail(ob_json_error *err, const char *s, pos at, const char *why) {
    if (err != NULL) {
        err->offset = (size_t)(at - (pos)s);
        err->why = why;
    }
    return -1;
}

/* A value that is not a container, at p < end. */
static pos scan_scalar(pos p, pos end, const char **why) {
    switch (*p) {
    case '"':
        return scan_string(p + 1, end, why);
    case 't':
        return scan_word(p, end, "true", why);
    case 'f':
        return scan_word(p, end, "false", why);
    case 'n':
        return scan_word(p, end, "null", why);
    default:
        if (*p == '-' || is_digit(*p))
            return scan_number(p, end, why);
        *why = "unexpected character";
        return p;
    }
}

/* An object member's `"key" :`, blanks first; returns where its value may
 * start, or where it went wrong with *why set. */
static pos scan_key(pos p, pos end, const char **why) {
    while (p < end && is_ws(*p))
        p++;
    if (p == end || *p != '"') {
        *why = "expected a string key";
        return p;
    }
    p = scan_string(p + 1, end, why);
    if (*why != NULL)
        return p;
    while (p < end && is_ws(*p))
        p++;
    if (p == end || *p != ':') {
        *why = "expected ':'";
        return p;
    }
    return p + 1;
}

int ob_json_scan(const char *s, size_t n, ob_json_error *err) {
    pos p = (pos)s, end = p + n;
    unsigned char open[OB_JSON_MAX_DEPTH]; /* '{' or '[' per open container */
    int depth = 0;
    const char *why = NULL;

    for (;;) {
        /* A value is expected here. */
        while (p < end && is_ws(*p))
            p++;
        if (p == end)
            return fail(err, s, p, n == 0 ? "empty text" : "unexpected end of text");
        switch (*p) {
        case '{':
        case '[':
            if (depth == OB_JSON_MAX_DEPTH)
                return fail(err, s, p, "nested too deeply");
            open[depth++] = *p++;
            while (p < end && is_ws(*p))
                p++;
            if (p < end && *p == (open[depth - 1] == '{' ? '}' : ']')) {
                p++;
                depth--;
                break; /* an empty container is a complete value */
            }
            if (open[depth - 1] == '[')
                continue; /* the first element */
            goto member;
        default:
            p = scan_scalar(p, end, &why);
        }
        if (why != NULL)
            return fail(err, s, p, why);

        /* A value is complete: close containers, or go on to the next value. */
        for (;;) {
            while (p < end && is_ws(*p))
                p++;
            if (depth == 0)
                return p == end ? 0 : fail(err, s, p, "text after the value");
            if (p == end)
                return fail(err, s, p, "unexpected end of text");
            if (*p == (open[depth - 1] == '{' ? '}' : ']')) {
                p++;
                depth--;
                continue;
            }
            if (*p != ',')
                return fail(err, s, p,
                            open[depth - 1] == '{' ? "expected ',' or '}'" : "expected ',' or ']'");
            p++;
            break;
        }
        if (open[depth - 1] == '[')
            continue;
    member:
        p = scan_key(p, end, &why);
        if (why != NULL)
            return fail(err, s, p, why);
    }
}
