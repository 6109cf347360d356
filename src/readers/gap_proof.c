/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The members' gap proof: bookkeeping, connections, re-asking (see
 * gap_proof.h).
 */
#include "gap_proof.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gap_member_link.h"

/* One member's connection. A slot outlives its link's close: answers of a
 * link being closed are ignored (live 0), and the slot is freed with it. */
typedef struct slot {
    ob_gap_proof *p;
    ob_member_link *link;
    int index;
    int live;
    char host[64];
} slot;

struct ob_gap_proof {
    uv_loop_t *loop;
    const ob_db_config *db;
    const ob_log *log;
    ob_members ms;
    slot *s[OB_MEMBERS_MAX];
    char list[256]; /* the list the links were made for */
    uv_timer_t timer;
    uint64_t round_at; /* loop time the latest round began */
    int open;          /* links not closed yet, and the timer */
    int closing;       /* ob_gap_proof_close was called */
    void (*closed)(void *data);
    void *closed_data;
    char why[448]; /* ob_gap_proof_why's text */
};

static void check_closed(ob_gap_proof *p) {
    if (!p->closing || p->open > 0)
        return;
    void (*closed)(void *) = p->closed;
    void *data = p->closed_data;
    free(p);
    if (closed)
        closed(data);
}

static void on_sent(void *data, int index) {
    slot *s = data;
    if (s->live)
        ob_members_asked(&s->p->ms, index);
}

static void on_answer(void *data, int index, double now_s, double oldest_s, int synced) {
    slot *s = data;
    if (s->live)
        ob_members_answer(&s->p->ms, index, now_s, oldest_s, synced);
}

static void on_down(void *data, int index, unsigned err, const char *msg) {
    slot *s = data;
    if (!s->live)
        return;
    (void)err; /* the link says a lasting error once (its connection policy) */
    (void)msg;
    ob_members_down(&s->p->ms, index);
}

static void on_link_closed(void *data) {
    slot *s = data;
    ob_gap_proof *p = s->p;
    free(s);
    p->open--;
    check_closed(p);
}

static void drop_links(ob_gap_proof *p) {
    for (int i = 0; i < OB_MEMBERS_MAX; i++) {
        slot *s = p->s[i];
        if (s == NULL)
            continue;
        p->s[i] = NULL;
        s->live = 0;
        if (i < p->ms.n)
            ob_members_down(&p->ms, i);
        ob_member_link_close(s->link);
    }
}

/* A member's host and port from its host:port entry. */
static int split_addr(const char *addr, char *host, size_t n, unsigned *port) {
    const char *colon = strrchr(addr, ':');
    if (colon == NULL || (size_t)(colon - addr) >= n || colon == addr)
        return -1;
    memcpy(host, addr, (size_t)(colon - addr));
    host[colon - addr] = '\0';
    char *end;
    unsigned long v = strtoul(colon + 1, &end, 10);
    if (*end != '\0' || v == 0 || v > 65535)
        return -1;
    *port = (unsigned)v;
    return 0;
}

static void make_link(ob_gap_proof *p, int i) {
    slot *s = calloc(1, sizeof(*s));
    unsigned port = 0;
    if (s == NULL)
        return; /* out of memory: the member stays down */
    s->p = p;
    s->index = i;
    if (split_addr(p->ms.m[i].addr, s->host, sizeof(s->host), &port) != 0) {
        free(s);
        return;
    }
    ob_db_config cfg = *p->db;
    cfg.host = s->host;
    cfg.port = port;
    cfg.nodes = NULL;
    cfg.n_nodes = 0;
    cfg.group = NULL;
    cfg.socket = NULL;
    /* A frozen member (its kernel keeps the connection open) is down within
     * this, rather than after the relay's 60 s: its gaps wait, and the relay
     * says so in the metric and on /readyz. */
    cfg.op_timeout_ms = OB_MEMBER_DEADLINE_MS;
    ob_member_link_callbacks cbs = {on_sent, on_answer, on_down, on_link_closed, s};
    s->link = ob_member_link_new(p->loop, &cfg, p->log, i, &cbs);
    if (s->link == NULL) {
        free(s);
        return;
    }
    s->live = 1;
    p->s[i] = s;
    p->open++;
    ob_member_link_start(s->link);
}

int ob_gap_proof_set(ob_gap_proof *p, const char *list, int size, const char *self) {
    if (p->closing)
        return -1;
    int same = strcmp(p->list, list) == 0;
    if (!same)
        drop_links(p);
    int rc = ob_members_set(&p->ms, list, size, self);
    if (same)
        return rc;
    snprintf(p->list, sizeof(p->list), "%s", list);
    if (rc != 0)
        return rc;
    for (int i = 0; i < p->ms.n; i++)
        make_link(p, i);
    return 0;
}

/* Every REASK_MS while a member has not proven the latest round: it is
 * asked again (its next answer may be past its bound's margin). */
static void on_timer(uv_timer_t *t) {
    ob_gap_proof *p = t->data;
    int waiting = 0;
    for (int i = 0; i < p->ms.n; i++) {
        if (p->ms.m[i].proven >= p->ms.round || p->s[i] == NULL)
            continue;
        waiting = 1;
        ob_member_link_ask(p->s[i]->link);
    }
    if (!waiting)
        uv_timer_stop(&p->timer);
}

uint64_t ob_gap_proof_round(ob_gap_proof *p, int needed) {
    uint64_t now = uv_now(p->loop);
    if (!needed && p->ms.round != 0 && now - p->round_at < OB_GAP_PROOF_IDLE_MS)
        return p->ms.round;
    p->round_at = now;
    uint64_t r = ob_members_begin(&p->ms);
    for (int i = 0; i < p->ms.n; i++)
        if (p->s[i])
            ob_member_link_ask(p->s[i]->link);
    if (p->ms.n > 0 && !uv_is_active((uv_handle_t *)&p->timer))
        uv_timer_start(&p->timer, on_timer, OB_GAP_PROOF_REASK_MS, OB_GAP_PROOF_REASK_MS);
    return r;
}

uint64_t ob_gap_proof_proven(const ob_gap_proof *p) {
    return ob_members_proven(&p->ms);
}

int ob_gap_proof_missing(const ob_gap_proof *p) {
    return ob_members_missing(&p->ms);
}

const char *ob_gap_proof_why(ob_gap_proof *p) {
    const ob_members *ms = &p->ms;
    int down = 0, first = -1;
    for (int i = 0; i < ms->n; i++)
        if (!ms->m[i].up && down++ == 0)
            first = i;
    if (first >= 0) {
        const char *why = p->s[first] ? ob_member_link_why(p->s[first]->link) : "";
        snprintf(p->why, sizeof(p->why),
                 "cursor: Galera member %s cannot serve the gap proof (%s)%s: its gaps wait "
                 "(outbox_relay_cursor_members_down)",
                 ms->m[first].addr, why[0] ? why : "no connection",
                 down > 1 ? ", nor can others" : "");
        return p->why;
    }
    if (ob_members_missing(ms) > 0) {
        snprintf(p->why, sizeof(p->why),
                 "cursor: the cluster has %d nodes, and its member list names %d: its gaps wait "
                 "(outbox_relay_cursor_members_down)",
                 ms->size, ms->n + 1);
        return p->why;
    }
    return NULL;
}

ob_gap_proof *ob_gap_proof_new(uv_loop_t *loop, const ob_db_config *db, const ob_log *log) {
    ob_gap_proof *p = calloc(1, sizeof(*p));
    if (p == NULL)
        return NULL;
    p->loop = loop;
    p->db = db;
    p->log = log;
    ob_members_init(&p->ms);
    uv_timer_init(loop, &p->timer);
    p->timer.data = p;
    p->open = 1; /* the timer */
    return p;
}

static void timer_closed(uv_handle_t *h) {
    ob_gap_proof *p = h->data;
    p->open--;
    check_closed(p);
}

void ob_gap_proof_close(ob_gap_proof *p, void (*closed)(void *data), void *data) {
    p->closing = 1;
    p->closed = closed;
    p->closed_data = data;
    drop_links(p);
    uv_close((uv_handle_t *)&p->timer, timer_closed);
}
