/* SPDX-License-Identifier: Apache-2.0 */
/* The gap tracker: see gaps.h for the proof it keeps. */
#include "gaps.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void ob_gaps_init(ob_gaps *t, uint64_t start) {
    ob_gap *g = t->g;
    int cap = t->cap, members = t->members;
    uint64_t round = t->round, done = t->members_done;
    memset(t, 0, sizeof(*t));
    t->g = g; /* the array is kept for reuse */
    t->cap = cap;
    t->top = start;
    t->members = members; /* the members' rounds go on */
    t->round = round;
    t->members_done = done;
}

void ob_gaps_free(ob_gaps *t) {
    free(t->g);
    memset(t, 0, sizeof(*t));
}

void ob_gaps_stamp(ob_gaps *t, double now_s) {
    for (int i = 0; i < t->n; i++)
        if (t->g[i].bound_s == 0) {
            t->g[i].bound_s = now_s;
            t->g[i].round = t->round;
        }
    if (t->mark && t->mark_bound_s == 0) {
        t->mark_bound_s = now_s;
        t->mark_round = t->round;
    }
    t->found_s = now_s;
    if (now_s > t->now_s)
        t->now_s = now_s;
}

int ob_gaps_proves(double bound_s, double tc, double oldest_s) {
    if (bound_s <= 0 || tc < bound_s + OB_GAPS_CACHE_MARGIN_S)
        return 0;
    /* trx_started has whole seconds: a holder that started at or before
     * the bound shows a start of at most FLOOR(bound). */
    return oldest_s < 0 || oldest_s > floor(bound_s);
}

void ob_gaps_members(ob_gaps *t, int on) {
    t->members = on;
}

void ob_gaps_round(ob_gaps *t, uint64_t round, uint64_t members_done) {
    t->round = round;
    t->members_done = members_done;
}

/* 1 when the members' part of a bound stamped in `round` is proven. */
static int members_ok(const ob_gaps *t, uint64_t round) {
    return !t->members || (round != 0 && round <= t->members_done);
}

int ob_gaps_check(ob_gaps *t, double tc, double oldest_s) {
    int marked = 0;
    if (tc > t->now_s)
        t->now_s = tc;
    if (t->mark && members_ok(t, t->mark_round) && ob_gaps_proves(t->mark_bound_s, tc, oldest_s)) {
        if (t->mark > t->proven)
            t->proven = t->mark;
        t->mark = 0;
        t->mark_bound_s = 0;
    }
    for (int i = 0; i < t->n; i++) {
        ob_gap *g = &t->g[i];
        if (g->verify || (g->hi > t->proven &&
                          (!members_ok(t, g->round) || !ob_gaps_proves(g->bound_s, tc, oldest_s))))
            continue;
        g->verify = 1;
        marked++;
    }
    return marked;
}

/* Makes room for one more gap at index i. Returns 0, or -1 out of memory. */
static int insert_at(ob_gaps *t, int i) {
    if (t->n == t->cap) {
        int cap = t->cap ? t->cap * 2 : 64;
        ob_gap *g = realloc(t->g, (size_t)cap * sizeof(*g));
        if (g == NULL) {
            t->oom = 1;
            return -1;
        }
        t->g = g;
        t->cap = cap;
    }
    memmove(&t->g[i + 1], &t->g[i], (size_t)(t->n - i) * sizeof(*t->g));
    t->n++;
    return 0;
}

static void remove_at(ob_gaps *t, int i) {
    memmove(&t->g[i], &t->g[i + 1], (size_t)(t->n - i - 1) * sizeof(*t->g));
    t->n--;
}

/* The first gap whose hi >= seq, or n. */
static int search(const ob_gaps *t, uint64_t seq) {
    int lo = 0, hi = t->n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (t->g[mid].hi < seq)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int ob_gaps_take(ob_gaps *t, uint64_t seq) {
    if (seq > t->top) {
        /* The seqs this read skipped: those at or below `proven` are
         * resolved by this miss (the read started after their proof). */
        uint64_t lo = t->top + 1 > t->proven + 1 ? t->top + 1 : t->proven + 1;
        if (seq > lo) {
            int i = t->n;
            if (insert_at(t, i) != 0)
                return 1;
            t->g[i] = (ob_gap){lo, seq - 1, t->found_s, 0, 0, 0};
        }
        t->top = seq;
        return 1;
    }
    int i = search(t, seq);
    if (i == t->n || t->g[i].lo > seq)
        return 0; /* read before */
    ob_gap *g = &t->g[i];
    if (g->lo == seq && g->hi == seq) {
        remove_at(t, i);
        t->closed++;
    } else if (g->lo == seq) {
        g->lo++;
    } else if (g->hi == seq) {
        g->hi--;
    } else {
        ob_gap rest = *g;
        rest.lo = seq + 1;
        g->hi = seq - 1;
        if (insert_at(t, i + 1) == 0)
            t->g[i + 1] = rest;
    }
    return 1;
}

void ob_gaps_read_end(ob_gaps *t, uint64_t covered) {
    int w = 0;
    for (int i = 0; i < t->n; i++) {
        ob_gap g = t->g[i];
        if (g.verify && g.lo <= covered) {
            if (g.hi <= covered) {
                t->closed++;
                continue; /* stayed empty after its holder ended */
            }
            g.lo = covered + 1;
        }
        t->g[w++] = g;
    }
    t->n = w;
}

void ob_gaps_mark(ob_gaps *t, uint64_t max_seq) {
    if (t->mark == 0 && max_seq > t->proven) {
        t->mark = max_seq;
        t->mark_bound_s = 0; /* the next statement's clock */
    }
}

int ob_gaps_wants_mark(const ob_gaps *t) {
    return t->mark == 0;
}

void ob_gaps_proven(ob_gaps *t, uint64_t seq) {
    if (seq > t->proven)
        t->proven = seq;
}

uint64_t ob_gaps_done(const ob_gaps *t) {
    return t->n ? t->g[0].lo - 1 : t->top;
}

double ob_gaps_age(const ob_gaps *t) {
    if (t->n == 0)
        return 0;
    double oldest = t->g[0].found_s;
    for (int i = 1; i < t->n; i++)
        if (t->g[i].found_s < oldest)
            oldest = t->g[i].found_s;
    return t->now_s > oldest ? t->now_s - oldest : 0;
}

int ob_gaps_unbound(const ob_gaps *t) {
    if (t->mark && t->mark_bound_s == 0)
        return 1;
    for (int i = 0; i < t->n; i++)
        if (t->g[i].bound_s == 0)
            return 1;
    return 0;
}

int ob_gaps_checkable(const ob_gaps *t) {
    if (t->n > 0 && t->mark && t->mark_bound_s != 0)
        return 1;
    for (int i = 0; i < t->n; i++)
        if (!t->g[i].verify && t->g[i].bound_s != 0)
            return 1;
    return 0;
}
