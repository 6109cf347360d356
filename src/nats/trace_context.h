/* SPDX-License-Identifier: Apache-2.0 */
/*
 * W3C Trace Context (Level 1) values, carried from a row to its message
 * unchanged: the relay checks them and never makes one up.
 *
 *   traceparent  <version>-<trace-id>-<parent-id>-<flags>: 2, 32, 16 and 2
 *                lowercase hex digits; version ff is invalid, and a trace-id
 *                or parent-id of zeros only; version 00 is exactly 55
 *                characters, a later version may go on after a '-'
 *   tracestate   at most 32 list-members key=value, separated by ',' with
 *                optional spaces or tabs around it (empty members allowed),
 *                at most 512 characters; a key is lcalpha followed by up to
 *                255 of a-z 0-9 _ - * and slash, or tenant@system (tenant: up
 *                to 241 of those, starting with a letter or digit; system:
 *                lcalpha and up to 13 more); a value is 1 to 256 printable
 *                ASCII characters without ',' or '=', not ending in a space
 *
 * The header names are matched in any letter case, as HTTP does; a row or
 * an entry carries at most one of each, and a tracestate only beside a
 * traceparent (a consumer ignores a tracestate it cannot pair).
 */
#ifndef OB_TRACE_CONTEXT_H
#define OB_TRACE_CONTEXT_H

#include <stddef.h>

typedef enum ob_trace_header {
    OB_TRACE_NONE = 0,
    OB_TRACE_PARENT, /* traceparent */
    OB_TRACE_STATE,  /* tracestate */
} ob_trace_header;

/* Which trace header `key` names, in any letter case. */
ob_trace_header ob_trace_header_of(const char *key);

/* NULL when `v` (`n` bytes) is a valid traceparent, else why it is not (a
 * static string). */
const char *ob_traceparent_invalid(const char *v, size_t n);

/* NULL when `v` (`n` bytes) is a valid tracestate, else why it is not. */
const char *ob_tracestate_invalid(const char *v, size_t n);

/* Tracks the trace members of one headers object, in order: call it for
 * each member (with its value), then ob_trace_done(). Either returns NULL
 * while all is well, else the reason, written into `why`. */
typedef struct ob_trace_seen {
    int parent, state;
} ob_trace_seen;
const char *ob_trace_member(ob_trace_seen *s, const char *key, const char *v, size_t n, char *why,
                            size_t whylen);
const char *ob_trace_done(const ob_trace_seen *s);

#endif
