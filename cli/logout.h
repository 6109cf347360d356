/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Where the binary's log lines go, and in which format: text (the library's
 * stderr format), logfmt or JSON, on stderr or appended to a file that
 * SIGHUP reopens (for log rotation). Every line is scrubbed of
 * URL passwords before it is written, whatever the library put in it. A line
 * about one row carries the row's fields (outbox_log_fields_current) as
 * fields of logfmt and JSON. When the file cannot be written or reopened
 * (its directory is gone, the disk is full), lines go to stderr instead,
 * and stderr says so once; the next successful reopen goes back to the file.
 */
#ifndef OB_CLI_LOGOUT_H
#define OB_CLI_LOGOUT_H

#include <stdio.h>

#include "args.h"

typedef struct ob_logout {
    ob_log_format format;
    const char *path; /* NULL: stderr */
    FILE *f;          /* the file, or stderr (also while the file is failing) */
    int failing;      /* the file failed; lines go to stderr until a reopen works */
} ob_logout;

/* Opens the file when a path is given. Returns 0, or -1 with errno set. */
int ob_logout_open(ob_logout *l, ob_log_format format, const char *path);

/* Reopens the file (after a rotation). When the new one cannot be opened,
 * falls back to stderr (and says so there). Returns 0, or -1 with errno set. */
int ob_logout_reopen(ob_logout *l);

void ob_logout_close(ob_logout *l);

/* Writes one line. `table` (may be NULL) is added as a field, and so are
 * the row's fields when called from a library log callback for a row. */
void ob_logout_write(ob_logout *l, outbox_log_level level, const char *table, const char *msg);

/* The binary's own lines, printf-style, through the same format. */
void ob_logout_printf(ob_logout *l, outbox_log_level level, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* A failure of a command, on stderr: "outbox-uvrelay: message" (and with
 * `hint`, a pointer to --help) in the text format, else one error line in
 * the chosen format. `l` may be NULL (text). */
void ob_logout_fail(ob_logout *l, int hint, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Formats one line into `out` (size n) without the newline; for tests.
 * `f` (may be NULL) adds the fields of a row. */
void ob_logout_format(ob_log_format format, const char *ts, outbox_log_level level,
                      const char *table, const outbox_log_fields *f, const char *msg, char *out,
                      size_t n);

#endif
