/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The library's logging: a level threshold and a callback, both taken from
 * the options. Nothing is formatted when the line would be dropped. A line
 * about one row also carries the row's fields (outbox_log_fields_current).
 */
#ifndef OB_LOG_H
#define OB_LOG_H

#include <stddef.h>

#include "outbox/common.h"

typedef struct ob_log {
    outbox_log_fn fn;
    void *data;
    outbox_log_level level;
} ob_log;

void ob_logf(const ob_log *l, outbox_log_level level, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* What a line about one row knows of it; copied into outbox_log_fields
 * (NUL-terminated, bounded) for the callback. */
typedef struct ob_log_row {
    const unsigned char *id;    /* 16 bytes */
    const char *aggregate_type; /* NULL when unknown; not NUL-terminated */
    size_t aggregate_type_len;
    const char *aggregate_id; /* NULL when unknown; not NUL-terminated */
    size_t aggregate_id_len;
    int attempt; /* from 1; 0 unknown */
} ob_log_row;

/* ob_logf for a line about one row: outbox_log_fields_current() gives the
 * callback the row's fields while it runs. */
void ob_logf_row(const ob_log *l, outbox_log_level level, const ob_log_row *row, const char *fmt,
                 ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* Formats a message into a caller's error buffer (which may be NULL) and
 * returns `status`, for the "return ob_errf(...)" pattern. */
int ob_errf(char *buf, size_t len, int status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

#define OB_ERROR(l, ...) ob_logf((l), OUTBOX_LOG_ERROR, __VA_ARGS__)
#define OB_WARN(l, ...) ob_logf((l), OUTBOX_LOG_WARN, __VA_ARGS__)
#define OB_INFO(l, ...) ob_logf((l), OUTBOX_LOG_INFO, __VA_ARGS__)
#define OB_DEBUG(l, ...) ob_logf((l), OUTBOX_LOG_DEBUG, __VA_ARGS__)
#define OB_ROW_WARN(l, row, ...) ob_logf_row((l), OUTBOX_LOG_WARN, (row), __VA_ARGS__)

#endif
