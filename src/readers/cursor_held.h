/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Cursor mode's held aggregates: those with a row waiting in status 2 (a
 * failed row waiting for its retry, or a later row held behind it). A later
 * row of a held aggregate is not published: it is written status 2 before
 * the cursor passes it, and the retry lane delivers it in turn.
 *
 * A set of (aggregate_type, aggregate_id) pairs, open-addressed. Entries are
 * allocated when an aggregate becomes held, which only a failure does; a
 * lookup allocates nothing. Pure bookkeeping, loop thread only.
 */
#ifndef OB_CURSOR_HELD_H
#define OB_CURSOR_HELD_H

#include <stddef.h>
#include <stdint.h>

typedef struct ob_held_entry {
    char *key; /* type 0x1F id, NUL-terminated; NULL: empty; OB_HELD_GONE: deleted */
    size_t len;
    uint32_t hash;
} ob_held_entry;

typedef struct ob_held {
    ob_held_entry *e;
    size_t cap;  /* a power of two, or 0 */
    size_t n;    /* live entries */
    size_t used; /* live and deleted entries */
} ob_held;

/* Adds the aggregate. Returns 0, or -1 out of memory. */
int ob_held_add(ob_held *h, const char *type, size_t type_len, const char *id, size_t id_len);
int ob_held_has(const ob_held *h, const char *type, size_t type_len, const char *id, size_t id_len);
/* Removes the aggregate (a no-op when absent). */
void ob_held_del(ob_held *h, const char *type, size_t type_len, const char *id, size_t id_len);
void ob_held_clear(ob_held *h);
void ob_held_free(ob_held *h);

/* Iteration: the i-th slot's key (type 0x1F id) and length, or NULL when the
 * slot is empty; i < h->cap. */
const char *ob_held_key(const ob_held *h, size_t i, size_t *len);

#endif
