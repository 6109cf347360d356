/* SPDX-License-Identifier: Apache-2.0 */
/* Cursor mode's held aggregates (see cursor_held.h). */
#include "cursor_held.h"

#include <stdlib.h>
#include <string.h>

static char gone;
#define OB_HELD_GONE (&gone)

static uint32_t hash_of(const char *type, size_t tl, const char *id, size_t il) {
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < tl; i++)
        h = (h ^ (unsigned char)type[i]) * 16777619u;
    h = (h ^ 0x1f) * 16777619u;
    for (size_t i = 0; i < il; i++)
        h = (h ^ (unsigned char)id[i]) * 16777619u;
    return h;
}

static int same(const ob_held_entry *e, uint32_t hash, const char *type, size_t tl, const char *id,
                size_t il) {
    return e->key != NULL && e->key != OB_HELD_GONE && e->hash == hash && e->len == tl + 1 + il &&
           memcmp(e->key, type, tl) == 0 && e->key[tl] == 0x1f &&
           memcmp(e->key + tl + 1, id, il) == 0;
}

/* The slot holding the aggregate, or NULL. */
static ob_held_entry *find(const ob_held *h, uint32_t hash, const char *type, size_t tl,
                           const char *id, size_t il) {
    if (h->cap == 0)
        return NULL;
    for (size_t i = hash & (h->cap - 1), k = 0; k < h->cap; i = (i + 1) & (h->cap - 1), k++) {
        ob_held_entry *e = &h->e[i];
        if (e->key == NULL)
            return NULL;
        if (same(e, hash, type, tl, id, il))
            return e;
    }
    return NULL;
}

static void put(ob_held *h, ob_held_entry ent) {
    for (size_t i = ent.hash & (h->cap - 1);; i = (i + 1) & (h->cap - 1)) {
        if (h->e[i].key == NULL || h->e[i].key == OB_HELD_GONE) {
            if (h->e[i].key == NULL)
                h->used++;
            h->e[i] = ent;
            h->n++;
            return;
        }
    }
}

static int grow(ob_held *h) {
    size_t cap = h->cap ? h->cap * 2 : 64;
    while (h->n * 2 >= cap)
        cap *= 2;
    ob_held_entry *old = h->e;
    size_t oldcap = h->cap;
    h->e = calloc(cap, sizeof(*h->e));
    if (h->e == NULL) {
        h->e = old;
        return -1;
    }
    h->cap = cap;
    h->n = h->used = 0;
    for (size_t i = 0; i < oldcap; i++)
        if (old[i].key != NULL && old[i].key != OB_HELD_GONE)
            put(h, old[i]);
    free(old);
    return 0;
}

int ob_held_add(ob_held *h, const char *type, size_t tl, const char *id, size_t il) {
    uint32_t hash = hash_of(type, tl, id, il);
    if (find(h, hash, type, tl, id, il))
        return 0;
    if ((h->used + 1) * 2 > h->cap && grow(h) != 0)
        return -1;
    char *key = malloc(tl + il + 2);
    if (key == NULL)
        return -1;
    memcpy(key, type, tl);
    key[tl] = 0x1f;
    memcpy(key + tl + 1, id, il);
    key[tl + 1 + il] = '\0';
    put(h, (ob_held_entry){key, tl + 1 + il, hash});
    return 0;
}

int ob_held_has(const ob_held *h, const char *type, size_t tl, const char *id, size_t il) {
    return h->n > 0 && find(h, hash_of(type, tl, id, il), type, tl, id, il) != NULL;
}

void ob_held_del(ob_held *h, const char *type, size_t tl, const char *id, size_t il) {
    ob_held_entry *e = find(h, hash_of(type, tl, id, il), type, tl, id, il);
    if (e == NULL)
        return;
    free(e->key);
    e->key = OB_HELD_GONE;
    h->n--;
}

void ob_held_clear(ob_held *h) {
    for (size_t i = 0; i < h->cap; i++) {
        if (h->e[i].key != OB_HELD_GONE)
            free(h->e[i].key);
        h->e[i].key = NULL;
    }
    h->n = h->used = 0;
}

void ob_held_free(ob_held *h) {
    ob_held_clear(h);
    free(h->e);
    memset(h, 0, sizeof(*h));
}

const char *ob_held_key(const ob_held *h, size_t i, size_t *len) {
    const ob_held_entry *e = &h->e[i];
    if (e->key == NULL || e->key == OB_HELD_GONE)
        return NULL;
    *len = e->len;
    return e->key;
}
