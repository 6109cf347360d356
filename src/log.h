/*
 * The library's logging: a level threshold and a callback, both taken from
 * the options. Nothing is formatted when the line would be dropped.
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

#endif
