/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Status codes, the logging callback and version information shared by every
 * part of the library.
 */
#ifndef OUTBOX_COMMON_H
#define OUTBOX_COMMON_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* OUTBOX_VERSION_MAJOR, _MINOR, _PATCH and _STRING, made by the build from
 * the project's version. */
#include "outbox/version.h"

/* Marks the public API. The library is built with hidden visibility, so a
 * shared build exports these functions and nothing else. */
#if defined(__GNUC__) || defined(__clang__)
#define OUTBOX_EXPORT __attribute__((visibility("default")))
#else
#define OUTBOX_EXPORT
#endif

/* Every call that can fail returns one of these. Zero is success; errors are
 * negative. The detail goes where the call can put it: into the caller's
 * errbuf for the calls that take one (every create, outbox_http_start); into
 * the handle for calls on a running handle that has an errmsg function
 * (outbox_relay_errmsg, outbox_producer_errmsg, outbox_conn_errmsg); into the
 * result of a maintenance job (outbox_maint_result.message). The responder
 * (outbox_http) has no call that fails after start, hence no errmsg. */
typedef enum outbox_status {
    OUTBOX_OK = 0,
    OUTBOX_EINVAL = -1,    /* an argument or option is invalid */
    OUTBOX_ENOMEM = -2,    /* out of memory */
    OUTBOX_EDB = -3,       /* the database returned an error */
    OUTBOX_ENATS = -4,     /* the NATS client returned an error */
    OUTBOX_EJSON = -5,     /* a payload or headers value is not valid JSON */
    OUTBOX_ETOOLONG = -6,  /* a field is longer than its column allows */
    OUTBOX_ESTATE = -7,    /* the call is not allowed in the handle's current state */
    OUTBOX_ENOTFOUND = -8, /* a table, partition or row that was needed does not exist */
    OUTBOX_EBUSY = -9,     /* another instance holds the maintenance lock */
    OUTBOX_ESCHEMA = -10,  /* the table is not shaped the way the call expects */
    OUTBOX_EREFUSED = -11, /* a server refused the connection: TLS, certificate, credentials */
} outbox_status;

/* A static, human-readable description of a status code. Never NULL. */
OUTBOX_EXPORT const char *outbox_strerror(int status);

/* The library's version string, e.g. "0.2.0": OUTBOX_VERSION_STRING of the
 * build, which may differ from the header a program was compiled with. */
OUTBOX_EXPORT const char *outbox_version(void);

/* The commit the library was built from, as `git describe` printed it at
 * build time (a tag and the commits since, or a short hash, "-dirty" when
 * the tree had changes), or "unknown" when built outside a git checkout.
 * A static string. Since 0.2.0. */
OUTBOX_EXPORT const char *outbox_version_commit(void);

typedef enum outbox_log_level {
    OUTBOX_LOG_ERROR = 0,
    OUTBOX_LOG_WARN = 1,
    OUTBOX_LOG_INFO = 2,
    OUTBOX_LOG_DEBUG = 3,
} outbox_log_level;

/* The library never prints. Every log line goes to a callback of this type,
 * called on the loop thread. `msg` is a complete line without a trailing
 * newline and is only valid during the call. */
typedef void (*outbox_log_fn)(outbox_log_level level, const char *msg, void *data);

/* A ready-made callback that writes "LEVEL message" lines to stderr with an
 * ISO-8601 UTC timestamp. `data` is ignored. */
OUTBOX_EXPORT void outbox_log_stderr(outbox_log_level level, const char *msg, void *data);

/* The lower-case name of a level: "error", "warn", "info", "debug". */
OUTBOX_EXPORT const char *outbox_log_level_name(outbox_log_level level);

/* Secrets in connection URLs, for programs that show or log them.
 * outbox_url_redact writes `url` to `out` (size n, NUL-terminated, cut if
 * too small) with the password of every URL, and a NATS URL's lone token,
 * replaced by "***", found with the same rules the library parses URLs by
 * (a password may hold '/', '?', ',' or '@'). Returns the length of the
 * whole redacted text (as snprintf), or -1 when out of memory.
 * outbox_url_mask overwrites those secrets in place with '*', length for
 * length: for strings that must stay where they are, such as argv. */
OUTBOX_EXPORT int outbox_url_redact(const char *url, char *out, size_t n);
OUTBOX_EXPORT void outbox_url_mask(char *url);

/* The structured fields of a log line about one row, beside its text. */
typedef struct outbox_log_fields {
    const char *id;             /* the row's id, canonical UUID text; NULL when unknown */
    const char *aggregate_type; /* NULL when the line does not know it */
    const char *aggregate_id;   /* NULL when the line does not know it */
    int attempt;                /* the attempt the line is about, from 1; 0 unknown */
} outbox_log_fields;

/* Called from inside a log callback: the fields of the line being logged
 * when it is about one row, else NULL. Valid only during the callback. A
 * callback that ignores it gets the same text as before, so existing
 * callbacks keep working unchanged. */
OUTBOX_EXPORT const outbox_log_fields *outbox_log_fields_current(void);

#ifdef __cplusplus
}
#endif

#endif
