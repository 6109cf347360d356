/* SPDX-License-Identifier: Apache-2.0 */
#include "buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ob_buf_reserve(ob_buf *b, size_t more) {
    if (b->oom)
        return -1;
    size_t need = b->len + more + 1;
    if (need <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < need)
        cap *= 2;
    char *p = realloc(b->p, cap);
    if (p == NULL) {
        b->oom = 1;
        return -1;
    }
    b->p = p;
    b->cap = cap;
    return 0;
}

void ob_buf_reset(ob_buf *b) {
    b->len = 0;
    b->oom = 0;
    if (b->p)
        b->p[0] = '\0';
}

void ob_buf_free(ob_buf *b) {
    free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
    b->oom = 0;
}

void ob_buf_append(ob_buf *b, const void *data, size_t n) {
    if (ob_buf_reserve(b, n) != 0)
        return;
    if (n)
        memcpy(b->p + b->len, data, n);
    b->len += n;
    b->p[b->len] = '\0';
}

void ob_buf_puts(ob_buf *b, const char *s) {
    ob_buf_append(b, s, strlen(s));
}

void ob_buf_putc(ob_buf *b, char c) {
    ob_buf_append(b, &c, 1);
}

size_t ob_u64_to_dec(uint64_t v, char *out) {
    char tmp[21];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (size_t i = 0; i < n; i++)
        out[i] = tmp[n - 1 - i];
    out[n] = '\0';
    return n;
}

void ob_buf_u64(ob_buf *b, uint64_t v) {
    char tmp[21];
    ob_buf_append(b, tmp, ob_u64_to_dec(v, tmp));
}

void ob_buf_i64(ob_buf *b, int64_t v) {
    if (v < 0) {
        ob_buf_putc(b, '-');
        ob_buf_u64(b, (uint64_t)0 - (uint64_t)v);
    } else {
        ob_buf_u64(b, (uint64_t)v);
    }
}

void ob_buf_printf(ob_buf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || ob_buf_reserve(b, (size_t)n) != 0)
        return;
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void ob_buf_hex(ob_buf *b, const unsigned char *data, size_t n) {
    static const char digits[] = "0123456789abcdef";
    if (ob_buf_reserve(b, 2 * n) != 0)
        return;
    char *o = b->p + b->len;
    for (size_t i = 0; i < n; i++) {
        o[2 * i] = digits[data[i] >> 4];
        o[2 * i + 1] = digits[data[i] & 15];
    }
    b->len += 2 * n;
    b->p[b->len] = '\0';
}

int ob_hexval(int c) {
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}
