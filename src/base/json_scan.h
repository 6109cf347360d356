/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A validating JSON scan that builds nothing: it says whether a byte range is
 * one JSON text (RFC 8259, any value at the top, strings in valid UTF-8) and,
 * when it is not, where and why. The producer checks every payload with it
 * before the INSERT, so a payload the database's CHECK (json_valid(...))
 * would refuse is refused first, with a message, and the transaction stays
 * usable.
 *
 * It agrees with MariaDB 10.11's json_valid() (and the utf8mb4 column it
 * guards) on every case test/unit/test_json_scan.c lists, nesting included:
 * MariaDB accepts 31 levels of arrays and objects and refuses 32. Where
 * MariaDB is looser than RFC 8259 the scan keeps to the RFC and refuses, as
 * the jansson parse it replaces did: "1.", "1.e5", "[-]", unknown escapes such
 * as "\x", and surrogates written in UTF-8. The test marks those cases.
 */
#ifndef OB_JSON_SCAN_H
#define OB_JSON_SCAN_H

#include <stddef.h>

/* The deepest nesting of arrays and objects accepted (MariaDB's own limit). */
#define OB_JSON_MAX_DEPTH 31

typedef struct ob_json_error {
    size_t offset;   /* byte offset of the first byte that does not fit */
    const char *why; /* a static text, e.g. "unexpected character" */
} ob_json_error;

/* 0 when s[0..n) is exactly one JSON value surrounded by optional white
 * space; -1 otherwise, with err (when not NULL) filled in. s need not be
 * NUL-terminated; a NUL byte anywhere makes the text invalid. Pure: no
 * allocation, no global state, safe from any thread. */
int ob_json_scan(const char *s, size_t n, ob_json_error *err);

#endif
