/* SPDX-License-Identifier: Apache-2.0 */
/* Subjects paused by their per-subject limit (paused.h). */
#include "paused.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SLOTS (OB_PAUSED_MAX * 2)
/* At most one line a second says pauses and resumes; the others are
 * counted into the next. */
#define SAY_EVERY_MS 1000
#define SWEEP_EVERY_MS 1000

void ob_paused_init(ob_paused *p, const char *prefix, const ob_log *log) {
    memset(p, 0, sizeof(*p));
    snprintf(p->prefix, sizeof(p->prefix), "%s", prefix ? prefix : "");
    p->log = log;
}

void ob_paused_free(ob_paused *p) {
    if (p->e)
        for (size_t i = 0; i < SLOTS; i++)
            free(p->e[i].key);
    free(p->e);
    p->e = NULL;
    p->n = 0;
}

static uint32_t fnv(uint32_t h, const char *s, size_t n) {
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 16777619u;
    return h;
}

static uint32_t row_hash(const ob_row *r) {
    uint32_t h = fnv(2166136261u, r->aggregate_type, r->aggregate_type_len);
    h = fnv(h, ".", 1);
    return fnv(h, r->event_type, r->event_type_len);
}

static int same(const ob_paused_subject *s, const ob_row *r, uint32_t h) {
    size_t tl = r->aggregate_type_len;
    return s->hash == h && s->len == tl + 1 + r->event_type_len &&
           memcmp(s->key, r->aggregate_type, tl) == 0 && s->key[tl] == '.' &&
           memcmp(s->key + tl + 1, r->event_type, r->event_type_len) == 0;
}

/* The slot of r's subject, or of the empty slot that ends its probe. */
static size_t find(const ob_paused *p, const ob_row *r, uint32_t h) {
    size_t i = h % SLOTS;
    while (p->e[i].key != NULL && !same(&p->e[i], r, h))
        i = (i + 1) % SLOTS;
    return i;
}

/* Empties slot i, shifting back the entries of its probe run that follow. */
static void remove_at(ob_paused *p, size_t i) {
    free(p->e[i].key);
    p->e[i].key = NULL;
    p->n--;
    for (size_t j = (i + 1) % SLOTS; p->e[j].key != NULL; j = (j + 1) % SLOTS) {
        size_t home = p->e[j].hash % SLOTS;
        /* Entry j may move to the hole when its home is not in (i, j]. */
        int between = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (between)
            continue;
        p->e[i] = p->e[j];
        p->e[j].key = NULL;
        i = j;
    }
}

static void name_of(const ob_paused *p, const char *key, size_t len, char *out, size_t n) {
    snprintf(out, n, "%s.%.*s", p->prefix, (int)(len > 200 ? 200 : len), key);
}

/* Says one change, at most one line a second (the others are counted). */
#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static void
say(ob_paused *p, uint64_t now, outbox_log_level level, const char *fmt, ...) {
    if (p->log == NULL)
        return;
    if (p->said_at != 0 && now - p->said_at < SAY_EVERY_MS) {
        p->unsaid++;
        return;
    }
    char line[700];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    if (p->unsaid)
        ob_logf(p->log, level, "%s (%zu subject(s) paused; %d more change(s) since the last line)",
                line, p->n, p->unsaid);
    else
        ob_logf(p->log, level, "%s (%zu subject(s) paused)", line, p->n);
    p->said_at = now == 0 ? 1 : now;
    p->unsaid = 0;
}

/* Forgets, at most once a second, the subjects neither refused nor met for
 * OB_PAUSE_FORGET_MS past their retry: no row of them is left to wait. */
static void sweep(ob_paused *p, uint64_t now) {
    if (p->n == 0 || now - p->swept_at < SWEEP_EVERY_MS)
        return;
    p->swept_at = now;
    for (size_t i = 0; i < SLOTS; i++) {
        ob_paused_subject *s = &p->e[i];
        while (s->key != NULL && now > s->retry_at && now - s->last_seen > OB_PAUSE_FORGET_MS) {
            char name[300];
            name_of(p, s->key, s->len, name, sizeof(name));
            remove_at(p, i); /* may shift another entry into slot i: look again */
            say(p, now, OUTBOX_LOG_INFO,
                "subject '%s': no row of it was refused or waited for %d s; no longer paused", name,
                OB_PAUSE_FORGET_MS / 1000);
        }
    }
}

uint64_t ob_paused_wait(ob_paused *p, const ob_row *r, uint64_t now) {
    if (p == NULL || p->n == 0)
        return 0;
    sweep(p, now);
    if (p->n == 0)
        return 0;
    uint32_t h = row_hash(r);
    ob_paused_subject *s = &p->e[find(p, r, h)];
    if (s->key == NULL || now >= s->retry_at)
        return 0;
    s->rows++;
    s->last_seen = now;
    return s->retry_at - now;
}

ob_pause_result ob_paused_refused(ob_paused *p, const ob_row *r, uint64_t now, uint64_t *delay_ms) {
    *delay_ms = OB_PAUSE_MAX_MS;
    if (p == NULL)
        return OB_PAUSE_UNTRACKED;
    if (p->e == NULL && (p->e = calloc(SLOTS, sizeof(*p->e))) == NULL)
        return OB_PAUSE_UNTRACKED;
    sweep(p, now);
    uint32_t h = row_hash(r);
    ob_paused_subject *s = &p->e[find(p, r, h)];
    if (s->key != NULL) {
        if (now >= s->retry_at) { /* its retry was refused: wait longer */
            s->backoff_ms =
                s->backoff_ms * 2 > OB_PAUSE_MAX_MS ? OB_PAUSE_MAX_MS : s->backoff_ms * 2;
            s->retry_at = now + s->backoff_ms;
        }
        s->rows++;
        s->last_seen = now;
        *delay_ms = s->retry_at - now;
        return OB_PAUSE_AGAIN;
    }
    size_t len = r->aggregate_type_len + 1 + r->event_type_len;
    char *key = p->n < OB_PAUSED_MAX ? malloc(len + 1) : NULL;
    if (key == NULL) {
        if (p->untracked++ == 0 && p->log)
            OB_WARN(p->log,
                    "more than %d subjects are full (max_msgs_per_subject): the rows of the "
                    "others wait %d s at a time, without attempts, untracked",
                    OB_PAUSED_MAX, OB_PAUSE_MAX_MS / 1000);
        return OB_PAUSE_UNTRACKED;
    }
    memcpy(key, r->aggregate_type, r->aggregate_type_len);
    key[r->aggregate_type_len] = '.';
    memcpy(key + r->aggregate_type_len + 1, r->event_type, r->event_type_len);
    key[len] = '\0';
    ob_paused_subject ns = {key, len, h, OB_PAUSE_FIRST_MS, now, now + OB_PAUSE_FIRST_MS, now, 1};
    *s = ns;
    p->n++;
    *delay_ms = OB_PAUSE_FIRST_MS;
    char name[300];
    name_of(p, key, len, name, sizeof(name));
    say(p, now, OUTBOX_LOG_WARN,
        "subject '%s' is full (the stream's max_msgs_per_subject with discard new per subject): "
        "its rows wait without attempts and are tried again every %d-%d s; the other subjects "
        "flow",
        name, OB_PAUSE_FIRST_MS / 1000, OB_PAUSE_MAX_MS / 1000);
    return OB_PAUSE_NEW;
}

int ob_paused_stored(ob_paused *p, const ob_row *r, uint64_t sent_at, uint64_t now) {
    if (p == NULL || p->n == 0)
        return 0;
    uint32_t h = row_hash(r);
    size_t i = find(p, r, h);
    ob_paused_subject *s = &p->e[i];
    if (s->key == NULL || sent_at < s->since)
        return 0; /* not paused, or it left before the pause began */
    char name[300];
    name_of(p, s->key, s->len, name, sizeof(name));
    double secs = (double)(now - s->since) / 1000.0;
    unsigned long long rows = s->rows;
    remove_at(p, i);
    say(p, now, OUTBOX_LOG_INFO,
        "subject '%s' takes messages again after %.1f s paused; %llu time(s) a row waited", name,
        secs, rows);
    return 1;
}

size_t ob_paused_count(const ob_paused *p) {
    return p ? p->n : 0;
}

const char *ob_paused_why(const ob_paused *p, char *buf, size_t n) {
    if (p == NULL || p->n == 0)
        return NULL;
    /* The one paused last is named. */
    const ob_paused_subject *last = NULL;
    for (size_t i = 0; i < SLOTS; i++)
        if (p->e[i].key != NULL && (last == NULL || p->e[i].since > last->since))
            last = &p->e[i];
    char name[300];
    name_of(p, last->key, last->len, name, sizeof(name));
    snprintf(buf, n,
             "%zu subject(s) paused, full per subject (max_msgs_per_subject), such as '%s'; the "
             "others flow",
             p->n, name);
    return buf;
}
