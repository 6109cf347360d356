/* SPDX-License-Identifier: Apache-2.0 */
#include "logout.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum {
    WAIT_MS = 1000,      /* without a loop: how long a line waits for the reader */
    CLOSE_WAIT_MS = 2000 /* at close: how long what waits may take */
};

static void say_dropped(ob_logsink *s, uint64_t n, void *data);

/* A file of our own: O_NONBLOCK so that a FIFO without a reader is refused
 * rather than waited for (it means nothing to a regular file). */
static int open_file(ob_logout *l) {
    int fd = open(l->path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NONBLOCK | O_NOCTTY, 0666);
    if (fd < 0)
        return -1;
    if (ob_logsink_init(&l->file, fd, 1, &l->dropped_total, say_dropped, l) != 0) {
        close(fd);
        errno = ENOMEM;
        return -1;
    }
    if (l->loop)
        ob_logsink_attach(&l->file, l->loop);
    return fd;
}

static void close_file(ob_logout *l, int wait_ms) {
    if (l->file_fd < 0)
        return;
    ob_logsink_detach(&l->file);
    ob_logsink_close(&l->file, wait_ms);
    close(l->file_fd);
    l->file_fd = -1;
}

int ob_logout_open(ob_logout *l, ob_log_format format, const char *path) {
    memset(l, 0, sizeof(*l));
    l->format = format;
    l->path = path;
    l->file_fd = -1;
    ob_logsink_init(&l->err, STDERR_FILENO, 0, &l->dropped_total, say_dropped, l);
    if (path == NULL)
        return 0;
    l->file_fd = open_file(l);
    return l->file_fd < 0 ? -1 : 0;
}

int ob_logout_attach(ob_logout *l, uv_loop_t *loop) {
    l->loop = loop;
    if (l->file_fd >= 0 && ob_logsink_attach(&l->file, loop) != 0)
        return -1;
    return ob_logsink_attach(&l->err, loop);
}

void ob_logout_detach(ob_logout *l) {
    ob_logsink_detach(&l->err);
    if (l->file_fd >= 0)
        ob_logsink_detach(&l->file);
    l->loop = NULL;
}

int ob_logout_on_stderr(const ob_logout *l) {
    return l->file_fd < 0;
}

/* The file failed (why: errno): lines go to stderr from now on, and stderr
 * says so once, until a reopen works. */
static void fall_back(ob_logout *l, const char *what, int why) {
    close_file(l, 0);
    if (l->failing)
        return;
    l->failing = 1;
    ob_logout_printf(l, OUTBOX_LOG_ERROR,
                     "log file %s: %s: %s; logging to stderr until a reopen (SIGHUP) "
                     "succeeds",
                     l->path, what, strerror(why));
}

int ob_logout_reopen(ob_logout *l) {
    if (l->path == NULL)
        return 0;
    close_file(l, 0);
    int fd = open_file(l);
    if (fd < 0) {
        int why = errno;
        fall_back(l, "cannot reopen", why);
        errno = why;
        return -1;
    }
    l->file_fd = fd;
    if (l->failing)
        ob_logout_printf(l, OUTBOX_LOG_INFO, "log file %s reopened; logging there again", l->path);
    l->failing = 0;
    return 0;
}

void ob_logout_close(ob_logout *l) {
    ob_logout_detach(l);
    close_file(l, CLOSE_WAIT_MS);
    ob_logsink_close(&l->err, CLOSE_WAIT_MS);
}

/* Appends `s` quoted: logfmt and JSON share the escapes for ", \ and
 * control characters. */
static size_t put_quoted(char *out, size_t o, size_t n, const char *s, int json) {
    static const char hex[] = "0123456789abcdef";
    if (o + 1 < n)
        out[o++] = '"';
    for (; *s && o + 7 < n; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\') {
            out[o++] = '\\';
            out[o++] = (char)ch;
        } else if (ch == '\n') {
            out[o++] = '\\';
            out[o++] = 'n';
        } else if (ch == '\t') {
            out[o++] = '\\';
            out[o++] = 't';
        } else if (ch < 0x20 || ch == 0x7f) {
            if (json) {
                memcpy(out + o, "\\u00", 4);
                o += 4;
            } else {
                memcpy(out + o, "\\x", 2);
                o += 2;
            }
            out[o++] = hex[ch >> 4];
            out[o++] = hex[ch & 15];
        } else {
            out[o++] = (char)ch;
        }
    }
    if (o + 1 < n)
        out[o++] = '"';
    out[o] = '\0';
    return o;
}

/* Appends text; returns the new length, never past n - 1. */
static size_t put(char *out, size_t o, size_t n, const char *s) {
    while (*s && o + 1 < n)
        out[o++] = *s++;
    out[o] = '\0';
    return o;
}

/* Appends ` key=value` (logfmt) or `,"key":value` (JSON), the value quoted
 * unless it is the number `num` (when s is NULL). */
static size_t put_field(char *out, size_t o, size_t n, int json, const char *key, const char *s,
                        int num) {
    o = put(out, o, n, json ? ",\"" : " ");
    o = put(out, o, n, key);
    o = put(out, o, n, json ? "\":" : "=");
    if (s)
        return put_quoted(out, o, n, s, json);
    char d[16];
    snprintf(d, sizeof(d), "%d", num);
    return put(out, o, n, d);
}

/* The row's fields, as logfmt or JSON fields. */
static size_t put_row(char *out, size_t o, size_t n, int json, const outbox_log_fields *f) {
    if (f == NULL)
        return o;
    if (f->id)
        o = put_field(out, o, n, json, "id", f->id, 0);
    if (f->aggregate_type)
        o = put_field(out, o, n, json, "aggregate_type", f->aggregate_type, 0);
    if (f->aggregate_id)
        o = put_field(out, o, n, json, "aggregate_id", f->aggregate_id, 0);
    if (f->attempt > 0)
        o = put_field(out, o, n, json, "attempt", NULL, f->attempt);
    return o;
}

void ob_logout_format(ob_log_format format, const char *ts, outbox_log_level level,
                      const char *table, const outbox_log_fields *f, const char *msg, char *out,
                      size_t n) {
    const char *lv = outbox_log_level_name(level);
    int json = format == OB_LOG_JSON;
    size_t o;
    switch (format) {
    case OB_LOG_LOGFMT:
    case OB_LOG_JSON:
        o = put(out, 0, n, json ? "{\"ts\":\"" : "ts=");
        o = put(out, o, n, ts);
        o = put(out, o, n, json ? "\",\"level\":\"" : " level=");
        o = put(out, o, n, lv);
        o = put(out, o, n, json ? "\"" : "");
        if (table)
            o = put_field(out, o, n, json, "table", table, 0);
        o = put_row(out, o, n, json, f);
        o = put_field(out, o, n, json, "msg", msg, 0);
        if (json && o + 2 <= n) {
            out[o++] = '}';
            out[o] = '\0';
        }
        return;
    case OB_LOG_TEXT:
        break;
    }
    if (table)
        snprintf(out, n, "%s %-5s [%s] %s", ts, lv, table, msg);
    else
        snprintf(out, n, "%s %-5s %s", ts, lv, msg);
}

/* Formats one line with the time now, newline included; returns its length. */
static size_t format_now(const ob_logout *l, outbox_log_level level, const char *table,
                         const outbox_log_fields *f, const char *msg, char *line, size_t n) {
    struct timespec now;
    struct tm tm;
    char ts[64];
    clock_gettime(CLOCK_REALTIME, &now);
    gmtime_r(&now.tv_sec, &tm);
    snprintf(ts, sizeof(ts), "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", tm.tm_year + 1900,
             tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
             (long)(now.tv_nsec / 1000000) % 1000);
    ob_logout_format(l->format, ts, level, table, f, msg, line, n - 1);
    size_t len = strlen(line);
    line[len++] = '\n';
    line[len] = '\0';
    return len;
}

/* The reader of `s` caught up after `n` lines were dropped: one line says so,
 * on the same output. */
static void say_dropped(ob_logsink *s, uint64_t n, void *data) {
    char msg[200], line[400];
    snprintf(msg, sizeof(msg),
             "log output: %llu line(s) dropped, the log's reader did not keep up "
             "(outbox_relay_log_dropped_total)",
             (unsigned long long)n);
    size_t len = format_now(data, OUTBOX_LOG_WARN, NULL, NULL, msg, line, sizeof(line));
    ob_logsink_put(s, line, len, 1, WAIT_MS);
}

/* To the file, or to stderr; a file that fails hands its line to stderr. */
static void emit(ob_logout *l, const char *p, size_t n) {
    if (l->file_fd >= 0) {
        if (ob_logsink_put(&l->file, p, n, 1, WAIT_MS) >= 0)
            return;
        /* The line is not lost: it goes to stderr after the notice. */
        fall_back(l, "cannot write", l->file.failed);
    }
    ob_logsink_put(&l->err, p, n, 1, WAIT_MS);
}

void ob_logout_raw(ob_logout *l, const char *text) {
    ob_logsink_put(&l->err, text, strlen(text), 0, 0);
}

void ob_logout_write(ob_logout *l, outbox_log_level level, const char *table, const char *msg) {
    char clean[1200], line[3200];
    ob_cli_redact(msg, clean, sizeof(clean));
    size_t n = format_now(l, level, table, outbox_log_fields_current(), clean, line, sizeof(line));
    emit(l, line, n);
}

void ob_logout_printf(ob_logout *l, outbox_log_level level, const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    ob_logout_write(l, level, NULL, msg);
}

void ob_logout_fail(ob_logout *l, int hint, const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (l == NULL || l->format == OB_LOG_TEXT) {
        char text[1200];
        int n = snprintf(text, sizeof(text), "outbox-uvrelay: %s\n%s", msg,
                         hint ? "Try 'outbox-uvrelay --help'.\n" : "");
        if (l == NULL)
            fputs(text, stderr);
        else
            ob_logsink_put(&l->err, text, n < (int)sizeof(text) ? (size_t)n : sizeof(text) - 1, 1,
                           WAIT_MS);
        return;
    }
    if (hint)
        strncat(msg, " (see 'outbox-uvrelay --help')", sizeof(msg) - strlen(msg) - 1);
    ob_logout_write(l, OUTBOX_LOG_ERROR, NULL, msg);
}

int ob_logout_usage(ob_logout *l, const char *fmt, const char *arg) {
    char msg[768];
    snprintf(msg, sizeof(msg), fmt, arg);
    ob_logout_fail(l, 1, "%s", msg);
    return 2;
}
