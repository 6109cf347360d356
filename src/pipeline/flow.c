/* SPDX-License-Identifier: Apache-2.0 */
#include "flow.h"

#include <stddef.h>

static void q_push(ob_flow_queue *q, ob_flow_member *m) {
    m->next = NULL;
    m->prev = q->tail;
    if (q->tail)
        q->tail->next = m;
    else
        q->head = m;
    q->tail = m;
}

static void q_remove(ob_flow_queue *q, ob_flow_member *m) {
    if (m->prev)
        m->prev->next = m->next;
    else
        q->head = m->next;
    if (m->next)
        m->next->prev = m->prev;
    else
        q->tail = m->prev;
    m->prev = m->next = NULL;
}

static ob_flow_queue *queue_of(ob_flow *f, ob_flow_list l) {
    return l == OB_FLOW_WAITING ? &f->waiting : l == OB_FLOW_IDLE ? &f->idle : NULL;
}

static void put(ob_flow *f, ob_flow_member *m, ob_flow_list l) {
    ob_flow_leave(f, m);
    q_push(queue_of(f, l), m);
    m->list = l;
}

void ob_flow_init(ob_flow *f, uint32_t max_in_flight, uint32_t poll_min_ms, uint32_t poll_max_ms) {
    f->poll_max_ms = poll_max_ms ? poll_max_ms : 1;
    f->poll_min_ms = poll_min_ms && poll_min_ms < f->poll_max_ms ? poll_min_ms : f->poll_max_ms;
    f->poll_idle_ms = f->poll_max_ms > OB_FLOW_IDLE_POLL_MS ? f->poll_max_ms : OB_FLOW_IDLE_POLL_MS;
    f->poll_ms = f->poll_max_ms;
    f->hot_until = 0;
    f->warm_until = 0;
    f->wake_pending = 0;
    f->in_flight = 0;
    f->max_in_flight = max_in_flight ? max_in_flight : 1;
    f->waiting.head = f->waiting.tail = NULL;
    f->idle.head = f->idle.tail = NULL;
    f->scout = NULL;
    f->handing_out = 0;
}

int ob_flow_acquire(ob_flow *f, ob_flow_member *m) {
    if (f->in_flight < f->max_in_flight) {
        f->in_flight++;
        return 1;
    }
    if (m->list != OB_FLOW_WAITING)
        put(f, m, OB_FLOW_WAITING);
    return 0;
}

void ob_flow_release(ob_flow *f, uint32_t n) {
    f->in_flight = n > f->in_flight ? 0 : f->in_flight - n;
    if (f->handing_out)
        return; /* the loop below goes on with the room made here */
    f->handing_out = 1;
    while (f->waiting.head != NULL && f->in_flight < f->max_in_flight) {
        ob_flow_member *m = f->waiting.head;
        q_remove(&f->waiting, m);
        m->list = OB_FLOW_NONE;
        m->on_capacity(m);
    }
    f->handing_out = 0;
}

int ob_flow_idle(ob_flow *f, ob_flow_member *m) {
    if (m->list != OB_FLOW_IDLE)
        put(f, m, OB_FLOW_IDLE);
    if (f->scout == NULL)
        f->scout = m;
    return f->scout == m;
}

int ob_flow_leave(ob_flow *f, ob_flow_member *m) {
    ob_flow_queue *q = queue_of(f, m->list);
    if (q)
        q_remove(q, m);
    m->list = OB_FLOW_NONE;
    if (f->scout != m)
        return 0;
    f->scout = NULL;
    return 1;
}

void ob_flow_wake_all(ob_flow *f, ob_flow_member *except) {
    /* Detach the list first: a woken member may go idle again at once (an
     * answer already buffered), and must then not be woken twice. */
    ob_flow_member *m = f->idle.head;
    f->idle.head = f->idle.tail = NULL;
    for (ob_flow_member *p = m; p != NULL; p = p->next)
        p->list = OB_FLOW_NONE;
    if (f->scout != except)
        f->scout = NULL;
    while (m != NULL) {
        ob_flow_member *next = m->next;
        m->prev = m->next = NULL;
        if (m == except) {
            q_push(&f->idle, m);
            m->list = OB_FLOW_IDLE;
        } else {
            m->on_wake(m);
        }
        m = next;
    }
}

void ob_flow_ring(ob_flow *f) {
    ob_flow_member *m = f->idle.head;
    if (m == NULL) {
        f->wake_pending = 1;
        return;
    }
    ob_flow_leave(f, m);
    m->on_wake(m);
}

int ob_flow_hot(const ob_flow *f, uint64_t now) {
    return now < f->hot_until;
}

int ob_flow_take_wake(ob_flow *f) {
    int w = f->wake_pending;
    f->wake_pending = 0;
    return w;
}

#define HOT_MS 1000

void ob_flow_activity(ob_flow *f, uint64_t now) {
    f->hot_until = now + HOT_MS;
    f->warm_until = now + OB_FLOW_WARM_MS;
    f->poll_ms = f->poll_min_ms;
}

uint32_t ob_flow_poll_delay(ob_flow *f, uint64_t now) {
    if (now < f->hot_until)
        return f->poll_min_ms;
    if (f->warm_until == 0) /* the first idle poll: a start counts as rows */
        f->warm_until = now + OB_FLOW_WARM_MS;
    uint32_t cap = now < f->warm_until ? f->poll_max_ms : f->poll_idle_ms;
    uint32_t d = f->poll_ms < cap ? f->poll_ms : cap;
    f->poll_ms = d > cap / 2 ? cap : d * 2;
    return d;
}
