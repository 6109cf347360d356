#include "logout.h"

#include <errno.h>
#include <string.h>
#include <time.h>

int ob_logout_open(ob_logout *l, ob_log_format format, const char *path) {
    l->format = format;
    l->path = path;
    l->f = stderr;
    if (path == NULL)
        return 0;
    FILE *f = fopen(path, "a");
    if (f == NULL)
        return -1;
    setvbuf(f, NULL, _IOLBF, 0);
    l->f = f;
    return 0;
}

int ob_logout_reopen(ob_logout *l) {
    if (l->path == NULL)
        return 0;
    FILE *f = fopen(l->path, "a");
    if (f == NULL)
        return -1;
    setvbuf(f, NULL, _IOLBF, 0);
    if (l->f && l->f != stderr)
        fclose(l->f);
    l->f = f;
    return 0;
}

void ob_logout_close(ob_logout *l) {
    if (l->f && l->f != stderr)
        fclose(l->f);
    l->f = NULL;
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

void ob_logout_format(ob_log_format format, const char *ts, outbox_log_level level,
                      const char *table, const char *msg, char *out, size_t n) {
    const char *lv = outbox_log_level_name(level);
    size_t o;
    switch (format) {
    case OB_LOG_LOGFMT:
        if (table)
            o = (size_t)snprintf(out, n, "ts=%s level=%s table=%s msg=", ts, lv, table);
        else
            o = (size_t)snprintf(out, n, "ts=%s level=%s msg=", ts, lv);
        if (o < n)
            put_quoted(out, o, n, msg, 0);
        return;
    case OB_LOG_JSON:
        if (table)
            o = (size_t)snprintf(
                out, n, "{\"ts\":\"%s\",\"level\":\"%s\",\"table\":\"%s\",\"msg\":", ts, lv, table);
        else
            o = (size_t)snprintf(out, n, "{\"ts\":\"%s\",\"level\":\"%s\",\"msg\":", ts, lv);
        if (o < n)
            o = put_quoted(out, o, n, msg, 1);
        if (o + 2 <= n) {
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

void ob_logout_write(ob_logout *l, outbox_log_level level, const char *table, const char *msg) {
    struct timespec now;
    struct tm tm;
    char ts[64], clean[1200], line[2600];
    clock_gettime(CLOCK_REALTIME, &now);
    gmtime_r(&now.tv_sec, &tm);
    snprintf(ts, sizeof(ts), "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", tm.tm_year + 1900,
             tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
             (long)(now.tv_nsec / 1000000) % 1000);
    ob_cli_redact(msg, clean, sizeof(clean));
    ob_logout_format(l->format, ts, level, table, clean, line, sizeof(line));
    FILE *f = l->f ? l->f : stderr;
    fputs(line, f);
    fputc('\n', f);
}
