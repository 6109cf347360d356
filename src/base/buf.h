/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A growable byte buffer. Batch statements, subjects and reply inboxes are
 * built in buffers that are reused from one batch to the next, so the hot path
 * allocates only while a buffer is still growing to its working size.
 */
#ifndef OB_BUF_H
#define OB_BUF_H

#include <stddef.h>
#include <stdint.h>

typedef struct ob_buf {
    char *p;    /* NUL-terminated once anything was appended; NULL when empty */
    size_t len; /* bytes used, not counting the NUL */
    size_t cap; /* bytes allocated */
    int oom;    /* set once an allocation failed; appends then do nothing */
} ob_buf;

#define OB_BUF_INIT                                                                                \
    { NULL, 0, 0, 0 }

/* Makes room for `more` bytes plus a NUL. Returns 0, or -1 (and sets oom). */
int ob_buf_reserve(ob_buf *b, size_t more);
void ob_buf_reset(ob_buf *b); /* len = 0, keeps the memory */
void ob_buf_free(ob_buf *b);
void ob_buf_append(ob_buf *b, const void *data, size_t n);
void ob_buf_puts(ob_buf *b, const char *s);
void ob_buf_putc(ob_buf *b, char c);
void ob_buf_u64(ob_buf *b, uint64_t v);
void ob_buf_i64(ob_buf *b, int64_t v);
void ob_buf_printf(ob_buf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Appends `n` bytes as lowercase hex digits. */
void ob_buf_hex(ob_buf *b, const unsigned char *data, size_t n);

/* The value of a hex digit (either case), or -1. */
int ob_hexval(int c);

/* Writes v in decimal to out (room for 21 bytes), returns the length. */
size_t ob_u64_to_dec(uint64_t v, char *out);

#endif
