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
 *
 * Writing never stalls the loop (logsink.h): while the loop runs, a reader
 * that does not keep up costs log lines, which are counted
 * (dropped_total, outbox_relay_log_dropped_total on /metrics) and said in
 * one line once it caught up. Before the loop runs and after it ended, a
 * line waits for the reader, up to about a second.
 */
#ifndef OB_CLI_LOGOUT_H
#define OB_CLI_LOGOUT_H

#include <stdint.h>
#include <uv.h>

#include "args.h"
#include "logsink.h"

typedef struct ob_logout {
    ob_log_format format;
    const char *path;       /* NULL: stderr */
    int file_fd;            /* the file, or -1: stderr (also while the file is failing) */
    int failing;            /* the file failed; lines go to stderr until a reopen works */
    ob_logsink err;         /* stderr */
    ob_logsink file;        /* the file, while file_fd >= 0 */
    uv_loop_t *loop;        /* attached: writes wait on the loop, not in the call */
    uint64_t dropped_total; /* lines dropped (or lost) on either output */
} ob_logout;

/* Opens the file when a path is given (a FIFO only when it has a reader).
 * Returns 0, or -1 with errno set. */
int ob_logout_open(ob_logout *l, ob_log_format format, const char *path);

/* While attached, what the reader does not take at once waits in a bounded
 * buffer and is written as the loop finds the reader ready. Detach before
 * uv_loop_close (it closes the handles it made). */
int ob_logout_attach(ob_logout *l, uv_loop_t *loop);
void ob_logout_detach(ob_logout *l);

/* 1 while the lines go to stderr. */
int ob_logout_on_stderr(const ob_logout *l);

/* Text for stderr that is not a line (the progress line): written when it
 * fits, else left out, never counted. */
void ob_logout_raw(ob_logout *l, const char *text);

/* Reopens the file (after a rotation). When the new one cannot be opened,
 * falls back to stderr (and says so there). Returns 0, or -1 with errno set. */
int ob_logout_reopen(ob_logout *l);

/* Writes what waits (waiting up to about two seconds for the reader), then
 * closes the file. */
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
/* A usage error: fmt with its one %s argument said as ob_logout_fail does,
 * with the hint; returns 2, the exit status of bad usage. */
int ob_logout_usage(ob_logout *l, const char *fmt, const char *arg);
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
