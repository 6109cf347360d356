/* SPDX-License-Identifier: Apache-2.0 */
/* Option values: durations, sizes, booleans, names, numbers, secrets read
 * from files, stored into their fields. */
#include "args_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ob_cli_duration_ms(const char *s, uint64_t *out) {
    if (s == NULL || *s < '0' || *s > '9')
        return -1;
    errno = 0;
    char *end;
    double v = strtod(s, &end);
    if (errno || end == s || v < 0)
        return -1;
    double mult;
    if (*end == '\0' || strcmp(end, "ms") == 0)
        mult = 1;
    else if (strcmp(end, "s") == 0)
        mult = 1000;
    else if (strcmp(end, "m") == 0)
        mult = 60000;
    else if (strcmp(end, "h") == 0)
        mult = 3600000;
    else if (strcmp(end, "d") == 0)
        mult = 86400000;
    else
        return -1;
    double ms = v * mult;
    if (ms > 1e15)
        return -1;
    *out = (uint64_t)(ms + 0.5);
    return 0;
}

static int parse_u64(const char *s, uint64_t *out) {
    if (s == NULL || *s < '0' || *s > '9')
        return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end != '\0')
        return -1;
    *out = v;
    return 0;
}

/* A byte size: digits with an optional K, M or G suffix (powers of 1024; "KiB",
 * "k", "KB" all mean the same). */
static int parse_bytes(const char *s, uint64_t *out) {
    if (s == NULL || *s < '0' || *s > '9')
        return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno)
        return -1;
    unsigned shift = 0;
    switch (*end) {
    case 'k':
    case 'K':
        shift = 10;
        break;
    case 'm':
    case 'M':
        shift = 20;
        break;
    case 'g':
    case 'G':
        shift = 30;
        break;
    case '\0':
        break;
    default:
        return -1;
    }
    if (shift) {
        end++;
        if (strcmp(end, "iB") != 0 && strcmp(end, "B") != 0 && strcmp(end, "") != 0)
            return -1;
        if (v > (UINT64_MAX >> shift))
            return -1;
        v <<= shift;
    } else if (*end != '\0') {
        return -1;
    }
    *out = v;
    return 0;
}

int ob_parse_bool(const char *s, int *out) {
    if (strcmp(s, "1") == 0 || strcmp(s, "true") == 0 || strcmp(s, "yes") == 0 ||
        strcmp(s, "on") == 0)
        *out = 1;
    else if (strcmp(s, "0") == 0 || strcmp(s, "false") == 0 || strcmp(s, "no") == 0 ||
             strcmp(s, "off") == 0 || *s == '\0')
        *out = 0;
    else
        return -1;
    return 0;
}

/* A copy of `s` that lives as long as `c`, or NULL when out of memory. */
const char *ob_cli_keep(ob_cli *c, const char *s) {
    if (c->nowned == c->owned_cap) {
        int cap = c->owned_cap ? c->owned_cap * 2 : 32;
        char **n = realloc(c->owned, (size_t)cap * sizeof(*n));
        if (n == NULL)
            return NULL;
        c->owned = n;
        c->owned_cap = cap;
    }
    char *d = strdup(s);
    if (d == NULL)
        return NULL;
    c->owned[c->nowned++] = d;
    return d;
}

/* Reads the secret in the first line of the file `path` (a trailing CR LF
 * or LF is not part of it). Messages name the file, never its content. */
static int store_file(ob_cli *c, void *field, const char *path, const char *src, char *err,
                      size_t errlen) {
    if (path == NULL || *path == '\0') {
        snprintf(err, errlen, "%s needs a file name", src);
        return -1;
    }
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        snprintf(err, errlen, "%s: cannot read '%s': %s", src, path, strerror(errno));
        c->unreadable = 1;
        return -1;
    }
    char buf[4096];
    size_t n = fread(buf, 1, sizeof(buf), f);
    int bad = ferror(f) || (n == sizeof(buf) && fgetc(f) != EOF);
    fclose(f);
    size_t len = 0;
    while (len < n && buf[len] != '\n' && buf[len] != '\0')
        len++;
    if (len > 0 && buf[len - 1] == '\r')
        len--;
    if (bad || len == 0 || (len < n && buf[len] == '\0')) {
        explicit_bzero(buf, sizeof(buf));
        snprintf(err, errlen, "%s: '%s' must hold the secret on its first line (under 4 KiB)", src,
                 path);
        return -1;
    }
    buf[len] = '\0';
    const char *kept = ob_cli_keep(c, buf);
    explicit_bzero(buf, sizeof(buf));
    if (kept == NULL) {
        snprintf(err, errlen, "%s: out of memory", src);
        return -1;
    }
    *(const char **)field = kept;
    const char *kept_path = ob_cli_keep(c, path);
    if (kept_path &&
        c->nsecret_files < (int)(sizeof(c->secret_files) / sizeof(c->secret_files[0]))) {
        c->secret_files[c->nsecret_files].secret = kept;
        c->secret_files[c->nsecret_files++].path = kept_path;
    }
    return 0;
}

/* A word from a fixed list into an enum field of type T (its index). */
#define STORE_NAME(T, names, what)                                                                 \
    do {                                                                                           \
        for (size_t i_ = 0; i_ < sizeof(names) / sizeof(names[0]); i_++)                           \
            if (val && strcmp(val, names[i_]) == 0) {                                              \
                *(T *)field = (T)i_;                                                               \
                return 0;                                                                          \
            }                                                                                      \
        snprintf(err, errlen, "%s: '%s' must be " what, src, val ? val : "");                      \
        return -1;                                                                                 \
    } while (0)

/* The numeric types: whole numbers, durations, decimals. */
static int store_number(const opt *o, void *field, const char *val, const char *src, char *err,
                        size_t errlen) {
    uint64_t u;
    switch (o->type) {
    case T_INT:
    case T_U32: {
        uint64_t lo, hi;
        ob_opt_range(o, &lo, &hi);
        if (parse_u64(val, &u) != 0) {
            snprintf(err, errlen, "%s: '%s' is not a %swhole number", src, val ? val : "",
                     o->type == T_INT ? "positive " : "");
            return -1;
        }
        if (u < lo || u > hi) {
            snprintf(err, errlen, "%s: '%s' is out of range (%llu to %llu)", src, val,
                     (unsigned long long)lo, (unsigned long long)hi);
            return -1;
        }
        if (o->type == T_INT)
            *(int *)field = (int)u;
        else
            *(uint32_t *)field = (uint32_t)u;
        return 0;
    }
    case T_MS32:
    case T_MS64:
        if (ob_cli_duration_ms(val, &u) != 0 || (o->type == T_MS32 && u > UINT32_MAX)) {
            snprintf(err, errlen, "%s: '%s' is not a duration (like 250ms, 5s, 2m, 1h, 7d)", src,
                     val ? val : "");
            return -1;
        }
        if (o->type == T_MS32)
            *(uint32_t *)field = (uint32_t)u;
        else
            *(uint64_t *)field = u;
        return 0;
    case T_BYTES:
        if (parse_bytes(val, &u) != 0) {
            snprintf(err, errlen, "%s: '%s' is not a size (like 1048576, 512KiB, 32MiB, 1GiB)", src,
                     val ? val : "");
            return -1;
        }
        *(uint64_t *)field = u;
        return 0;
    default: {
        char *end = NULL;
        double d = val ? strtod(val, &end) : 0;
        if (val == NULL || end == val || *end != '\0') {
            snprintf(err, errlen, "%s: '%s' is not a number", src, val ? val : "");
            return -1;
        }
        *(double *)field = d;
        return 0;
    }
    }
}

static int store_flag(const opt *o, void *field, const char *val, const char *src, char *err,
                      size_t errlen) {
    int on = 1;
    if (val != NULL && ob_parse_bool(val, &on) != 0) {
        snprintf(err, errlen, "%s: '%s' is not a boolean (1/0, true/false)", src, val);
        return -1;
    }
    if (o->type != T_PROGRESS && o->off == R(processing))
        *(outbox_processing_mode *)field = on ? OUTBOX_DELETE_PROCESSED : OUTBOX_KEEP_PROCESSED;
    else /* value 0 marks a --no-... flag, which clears the field */
        *(int *)field = on ? o->value : !o->value;
    return 0;
}

/* Stores `val` (from `src`, "--name" or "NAME=") into `field`, the field of
 * `o` in the ob_cli or in a table's relay options. */
int ob_opt_store(ob_cli *c, const opt *o, void *field, const char *val, const char *src, char *err,
                 size_t errlen) {
    static const char *const backoffs[] = {"exponential", "fixed"};
    static const char *const levels[] = {"error", "warn", "info", "debug"};
    static const char *const formats[] = {"text", "logfmt", "json"};
    static const char *const clients[] = {"auto", "loop", "threads"};
    switch (o->type) {
    case T_STR: {
        if (val == NULL || *val == '\0') {
            snprintf(err, errlen, "%s needs a value", src);
            return -1;
        }
        const char *copy = ob_cli_keep(c, val);
        if (copy == NULL) {
            snprintf(err, errlen, "%s: out of memory", src);
            return -1;
        }
        *(const char **)field = copy;
        return 0;
    }
    case T_INT:
    case T_U32:
    case T_MS32:
    case T_MS64:
    case T_BYTES:
    case T_DOUBLE:
        return store_number(o, field, val, src, err, errlen);
    case T_FLAG:
    case T_PROGRESS:
        return store_flag(o, field, val, src, err, errlen);
    case T_FILE:
        return store_file(c, field, val, src, err, errlen);
    case T_BACKOFF:
        STORE_NAME(outbox_backoff_kind, backoffs, "'fixed' or 'exponential'");
    case T_LEVEL:
        STORE_NAME(outbox_log_level, levels, "error, warn, info or debug");
    case T_LOGFMT:
        STORE_NAME(ob_log_format, formats, "text, logfmt or json");
    case T_NATSCLI:
        STORE_NAME(outbox_nats_client, clients, "auto, loop or threads");
    }
    return -1;
}
