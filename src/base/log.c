/* SPDX-License-Identifier: Apache-2.0 */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "outbox/id.h"

/* The fields of the row line being logged, for the callback's thread. */
static _Thread_local const outbox_log_fields *current;

const outbox_log_fields *outbox_log_fields_current(void) {
    return current;
}

void ob_logf_row(const ob_log *l, outbox_log_level level, const ob_log_row *row, const char *fmt,
                 ...) {
    if (l == NULL || l->fn == NULL || level > l->level)
        return;
    char line[1024], id[OUTBOX_ID_TEXT_LEN + 1], type[256], agg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    outbox_log_fields f = {NULL, NULL, NULL, row->attempt};
    if (row->id) {
        outbox_id oid;
        memcpy(oid.b, row->id, sizeof(oid.b));
        outbox_id_to_text(&oid, id);
        f.id = id;
    }
    if (row->aggregate_type) {
        snprintf(type, sizeof(type), "%.*s", (int)row->aggregate_type_len, row->aggregate_type);
        f.aggregate_type = type;
    }
    if (row->aggregate_id) {
        snprintf(agg, sizeof(agg), "%.*s", (int)row->aggregate_id_len, row->aggregate_id);
        f.aggregate_id = agg;
    }
    const outbox_log_fields *outer = current;
    current = &f;
    l->fn(level, line, l->data);
    current = outer;
}

void ob_logf(const ob_log *l, outbox_log_level level, const char *fmt, ...) {
    if (l == NULL || l->fn == NULL || level > l->level)
        return;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    l->fn(level, line, l->data);
}

int ob_errf(char *buf, size_t len, int status, const char *fmt, ...) {
    if (buf && len) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(buf, len, fmt, ap);
        va_end(ap);
    }
    return status;
}

const char *outbox_log_level_name(outbox_log_level level) {
    switch (level) {
    case OUTBOX_LOG_ERROR:
        return "error";
    case OUTBOX_LOG_WARN:
        return "warn";
    case OUTBOX_LOG_INFO:
        return "info";
    case OUTBOX_LOG_DEBUG:
        return "debug";
    }
    return "?";
}

void outbox_log_stderr(outbox_log_level level, const char *msg, void *data) {
    (void)data;
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    fprintf(stderr, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ %-5s %s\n", tm.tm_year + 1900,
            tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000,
            outbox_log_level_name(level), msg);
}
