/* SPDX-License-Identifier: Apache-2.0 */
#include "trace_context.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#define TRACEPARENT_V00_LEN 55
#define TRACESTATE_MAX_CHARS 512
#define TRACESTATE_MAX_MEMBERS 32

ob_trace_header ob_trace_header_of(const char *key) {
    if (strcasecmp(key, "traceparent") == 0)
        return OB_TRACE_PARENT;
    if (strcasecmp(key, "tracestate") == 0)
        return OB_TRACE_STATE;
    return OB_TRACE_NONE;
}

static int lchex(char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

/* `n` lowercase hex digits at `v`: 1; 2 when they are all zeros; 0 else. */
static int hex_field(const char *v, size_t n) {
    int zeros = 1;
    for (size_t i = 0; i < n; i++) {
        if (!lchex(v[i]))
            return 0;
        zeros &= v[i] == '0';
    }
    return zeros ? 2 : 1;
}

const char *ob_traceparent_invalid(const char *v, size_t n) {
    if (n < TRACEPARENT_V00_LEN)
        return "shorter than the 55 characters of 00-<32 hex trace-id>-<16 hex parent-id>-<2 hex "
               "flags>";
    if (hex_field(v, 2) == 0)
        return "the version is not 2 lowercase hex digits";
    if (v[0] == 'f' && v[1] == 'f')
        return "version ff is invalid";
    if (v[2] != '-' || v[35] != '-' || v[52] != '-')
        return "not 00-<32 hex trace-id>-<16 hex parent-id>-<2 hex flags>";
    int t = hex_field(v + 3, 32), p = hex_field(v + 36, 16);
    if (t == 0)
        return "the trace-id is not 32 lowercase hex digits";
    if (t == 2)
        return "the trace-id is all zeros";
    if (p == 0)
        return "the parent-id is not 16 lowercase hex digits";
    if (p == 2)
        return "the parent-id is all zeros";
    if (hex_field(v + 53, 2) == 0)
        return "the flags are not 2 lowercase hex digits";
    if (v[0] == '0' && v[1] == '0' && n != TRACEPARENT_V00_LEN)
        return "version 00 has exactly 55 characters";
    if (n > TRACEPARENT_V00_LEN && v[TRACEPARENT_V00_LEN] != '-')
        return "a later version's extra fields follow a '-'";
    return NULL;
}

static int key_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '*' ||
           c == '/';
}

static int key_ok(const char *k, size_t n) {
    const char *at = memchr(k, '@', n);
    if (at == NULL) { /* simple-key: lcalpha 0*255(key chars) */
        if (n == 0 || n > 256 || !(k[0] >= 'a' && k[0] <= 'z'))
            return 0;
        for (size_t i = 1; i < n; i++)
            if (!key_char(k[i]))
                return 0;
        return 1;
    }
    size_t tn = (size_t)(at - k), sn = n - tn - 1;
    const char *sys = at + 1;
    /* tenant-id: (lcalpha / DIGIT) 0*240(key chars); system-id: lcalpha
     * 0*13(key chars) */
    if (tn == 0 || tn > 241 || sn == 0 || sn > 14 || !key_char(k[0]) || k[0] == '_' ||
        k[0] == '-' || k[0] == '*' || k[0] == '/' || !(sys[0] >= 'a' && sys[0] <= 'z'))
        return 0;
    for (size_t i = 1; i < tn; i++)
        if (!key_char(k[i]))
            return 0;
    for (size_t i = 1; i < sn; i++)
        if (!key_char(sys[i]))
            return 0;
    return 1;
}

static int value_ok(const char *v, size_t n) {
    if (n == 0 || n > 256 || v[n - 1] == ' ')
        return 0;
    for (size_t i = 0; i < n; i++)
        if (v[i] < 0x20 || v[i] > 0x7e || v[i] == ',' || v[i] == '=')
            return 0;
    return 1;
}

static int ows(char c) {
    return c == ' ' || c == '\t';
}

const char *ob_tracestate_invalid(const char *v, size_t n) {
    if (n > TRACESTATE_MAX_CHARS)
        return "longer than 512 characters";
    int members = 0;
    size_t i = 0;
    while (i <= n) {
        const char *comma = memchr(v + i, ',', n - i);
        size_t end = comma ? (size_t)(comma - v) : n;
        size_t a = i, b = end;
        while (a < b && ows(v[a]))
            a++;
        while (b > a && ows(v[b - 1]))
            b--;
        if (a < b) { /* empty members are allowed and not counted */
            if (++members > TRACESTATE_MAX_MEMBERS)
                return "more than 32 list-members";
            const char *eq = memchr(v + a, '=', b - a);
            if (eq == NULL)
                return "a list-member is not key=value";
            if (!key_ok(v + a, (size_t)(eq - (v + a))))
                return "a list-member's key is not lcalpha followed by a-z 0-9 _ - * / (or "
                       "tenant@system), at most 256 characters";
            if (!value_ok(eq + 1, (size_t)(v + b - (eq + 1))))
                return "a list-member's value is not 1-256 printable ASCII characters without ',' "
                       "or '=' (and no trailing space)";
        }
        i = end + 1;
    }
    return NULL;
}

const char *ob_trace_member(ob_trace_seen *s, const char *key, const char *v, size_t n, char *why,
                            size_t whylen) {
    ob_trace_header h = ob_trace_header_of(key);
    if (h == OB_TRACE_NONE)
        return NULL;
    int *seen = h == OB_TRACE_PARENT ? &s->parent : &s->state;
    const char *name = h == OB_TRACE_PARENT ? "traceparent" : "tracestate";
    if ((*seen)++) {
        snprintf(why, whylen, "a second %s (headers are matched in any letter case)", name);
        return why;
    }
    const char *bad =
        h == OB_TRACE_PARENT ? ob_traceparent_invalid(v, n) : ob_tracestate_invalid(v, n);
    if (bad == NULL)
        return NULL;
    snprintf(why, whylen, "not a W3C %s: %s", name, bad);
    return why;
}

const char *ob_trace_done(const ob_trace_seen *s) {
    if (s->state && !s->parent)
        return "a tracestate without a traceparent (W3C Trace Context pairs them; a consumer "
               "would ignore it)";
    return NULL;
}
