/*
 * Where the binary's log lines go, and in which format: text (the library's
 * stderr format), logfmt or JSON, on stderr or appended to a file that
 * SIGHUP reopens (for log rotation). Every line is scrubbed of URL passwords
 * before it is written, whatever the library put in it.
 */
#ifndef OB_CLI_LOGOUT_H
#define OB_CLI_LOGOUT_H

#include <stdio.h>

#include "args.h"

typedef struct ob_logout {
    ob_log_format format;
    const char *path; /* NULL: stderr */
    FILE *f;
} ob_logout;

/* Opens the file when a path is given. Returns 0, or -1 with errno set. */
int ob_logout_open(ob_logout *l, ob_log_format format, const char *path);

/* Reopens the file (after a rotation). Keeps writing to the old one when the
 * new one cannot be opened. Returns 0, or -1 with errno set. */
int ob_logout_reopen(ob_logout *l);

void ob_logout_close(ob_logout *l);

/* Writes one line. `table` (may be NULL) is added as a field. */
void ob_logout_write(ob_logout *l, outbox_log_level level, const char *table, const char *msg);

/* Formats one line into `out` (size n) without the newline; for tests. */
void ob_logout_format(ob_log_format format, const char *ts, outbox_log_level level,
                      const char *table, const char *msg, char *out, size_t n);

#endif
