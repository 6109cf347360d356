/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Text rules shared by the relay, the producer and option checks: UTF-8, and
 * what may stand in a NATS subject that the relay publishes to.
 *
 * A subject part (a prefix, an aggregate_type, an event_type) is one or more
 * '.'-separated tokens. No token may be empty, and no token may hold '*' or
 * '>' anywhere (NATS would read a lone one as a wildcard, and a subscriber's
 * filter cannot tell "a*b" from a pattern), whitespace, control characters or
 * DEL. The text must be valid UTF-8.
 */
#ifndef OB_SUBJECT_H
#define OB_SUBJECT_H

#include <stddef.h>

/* The length of the UTF-8 sequence that starts s[0..n), 0 when it is not
 * valid (overlong, a surrogate, past U+10FFFF, cut short). The one UTF-8
 * decoder of the library, but for json_scan.c's hot loop. */
size_t ob_utf8_seq(const unsigned char *s, size_t n);

/* Counts the characters of s[0..n) as UTF-8; -1 when it is not valid UTF-8
 * (overlong forms, surrogates and code points past U+10FFFF included). */
long ob_utf8_chars(const char *s, size_t n);

/* Checks that s[0..n) is a valid subject part. Returns 0, or -1 with a
 * message in err that starts with `what` (such as "event_type") and quotes
 * at most 64 bytes of the text, made safe to print. */
int ob_subject_check(const char *s, size_t n, const char *what, char *err, size_t errlen);

/* 1 when some subject matches both patterns a and b (NUL-terminated, NATS
 * wildcards: `*` one token, `>` one or more tokens at the end), as a
 * stream's subject and "<prefix>.*.>" for every subject the relay publishes
 * to. */
int ob_subject_patterns_meet(const char *a, const char *b);

/* 0 when s can name a JetStream stream (1 to 200 printable ASCII bytes, no
 * space and none of . * > / \), else -1. */
int ob_stream_name_check(const char *s);

#endif
