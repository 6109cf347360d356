/* SPDX-License-Identifier: Apache-2.0 */
#include "subject.h"

#include <stdio.h>
#include <string.h>

size_t ob_utf8_seq(const unsigned char *s, size_t n) {
    unsigned c = s[0];
    size_t len = c < 0x80             ? 1
                 : (c & 0xe0) == 0xc0 ? 2
                 : (c & 0xf0) == 0xe0 ? 3
                 : (c & 0xf8) == 0xf0 ? 4
                                      : 0;
    if (len == 0 || len > n)
        return 0;
    unsigned cp = len == 1 ? c : len == 2 ? (c & 0x1f) : len == 3 ? (c & 0x0f) : (c & 0x07);
    for (size_t k = 1; k < len; k++) {
        if ((s[k] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (s[k] & 0x3f);
    }
    static const unsigned min[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return len;
}

long ob_utf8_chars(const char *s, size_t n) {
    const unsigned char *u = (const unsigned char *)s;
    long chars = 0;
    for (size_t i = 0; i < n; chars++) {
        size_t len = ob_utf8_seq(u + i, n - i);
        if (len == 0)
            return -1;
        i += len;
    }
    return chars;
}

/* Quotes up to 64 bytes of s with anything outside printable ASCII as \xHH. */
static void quote(const char *s, size_t n, char *out, size_t outlen) {
    size_t j = 0;
    for (size_t i = 0; i < n && i < 64 && j + 5 < outlen; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x7f && c != '\\')
            out[j++] = (char)c;
        else
            j += (size_t)snprintf(out + j, outlen - j, "\\x%02X", c);
    }
    if (n > 64 && j + 4 < outlen) {
        out[j++] = '.';
        out[j++] = '.';
        out[j++] = '.';
    }
    out[j] = '\0';
}

int ob_subject_check(const char *s, size_t n, const char *what, char *err, size_t errlen) {
    char q[64 * 4 + 8];
    const char *why = NULL;
    if (n == 0) {
        snprintf(err, errlen, "%s is empty, which gives an empty subject token", what);
        return -1;
    }
    size_t tok = 0;
    for (size_t i = 0; i <= n && why == NULL; i++) {
        if (i == n || s[i] == '.') {
            if (tok == 0)
                why = "has an empty subject token";
            tok = 0;
            continue;
        }
        unsigned char c = (unsigned char)s[i];
        if (c == '*' || c == '>')
            why = "holds '*' or '>', which NATS reads as wildcards";
        else if (c <= ' ' || c == 0x7f)
            why = "holds whitespace or a control character";
        tok++;
    }
    if (why == NULL && ob_utf8_chars(s, n) < 0)
        why = "is not valid UTF-8";
    if (why == NULL)
        return 0;
    quote(s, n, q, sizeof(q));
    snprintf(err, errlen, "%s '%s' %s", what, q, why);
    return -1;
}

/* The next token of a dotted subject or pattern at *p (advanced past it and
 * its dot); its length in *n. 0 when there is none left. */
static int next_token(const char **p, const char **tok, size_t *n) {
    if (*p == NULL)
        return 0;
    const char *dot = strchr(*p, '.');
    *tok = *p;
    *n = dot ? (size_t)(dot - *p) : strlen(*p);
    *p = dot ? dot + 1 : NULL;
    return 1;
}

static int token_is(const char *tok, size_t n, const char *what) {
    return n == strlen(what) && strncmp(tok, what, n) == 0;
}

int ob_subject_patterns_meet(const char *a, const char *b) {
    const char *ta, *tb;
    size_t na, nb;
    for (;;) {
        int ha = next_token(&a, &ta, &na), hb = next_token(&b, &tb, &nb);
        if (!ha || !hb)
            return ha == hb;
        if (token_is(ta, na, ">") || token_is(tb, nb, ">"))
            return 1;
        if (!token_is(ta, na, "*") && !token_is(tb, nb, "*") &&
            (na != nb || strncmp(ta, tb, na) != 0))
            return 0;
    }
}

int ob_stream_name_check(const char *s) {
    if (s == NULL || *s == '\0' || strlen(s) > 200)
        return -1;
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c <= ' ' || c >= 0x7f || c == '.' || c == '*' || c == '>' || c == '/' || c == '\\')
            return -1;
    }
    return 0;
}
