/* SPDX-License-Identifier: Apache-2.0 */
/*
 * From nats.c's threads to the loop (link_client_threads.c; with the client on the loop, closes
 * only). Replies are read where they arrive (on nats.c's delivery thread, by link_reply.c) and
 * become small records; their messages are destroyed on the loop, together with the published
 * messages kept back (link_publish.c), so nats.c's collector thread is woken once per burst rather
 * than once per message. Records and connection events go into a mailbox under a mutex; one
 * uv_async_t wakes the loop, which swaps the mailbox's array for a spare one so the lock is held
 * only briefly and neither array is reallocated once both reached working size.
 */
#include "link_int.h"

#include <stdlib.h>
#include <string.h>

/* Called with mb.mu held. */
static void signal_loop(ob_link *l) {
    if (!l->mb.shut)
        uv_async_send(&l->async);
}

static void on_nats_msg(natsConnection *nc, natsSubscription *sub, natsMsg *msg, void *closure) {
    (void)nc;
    (void)sub;
    link_conn *c = closure;
    ob_link *l = c->l;
    inbox_reply r;
    if (ob_link_read_reply(c, msg, &r) != 0) {
        natsMsg_Destroy(msg);
        return;
    }
    r.msg = msg; /* destroyed on the loop with the others of its burst */
    uv_mutex_lock(&l->mb.mu);
    if (!l->mb.shut && l->mb.n == l->mb.cap) {
        size_t cap = l->mb.cap ? l->mb.cap * 2 : 1024;
        inbox_reply *q = realloc(l->mb.q, cap * sizeof(*q));
        if (q != NULL) {
            l->mb.q = q;
            l->mb.cap = cap;
        }
    }
    if (l->mb.shut || l->mb.n == l->mb.cap) {
        /* Closing, or out of memory: the ack is dropped and its publish
         * times out and is retried. */
        uv_mutex_unlock(&l->mb.mu);
        natsMsg_Destroy(r.msg);
        return;
    }
    l->mb.q[l->mb.n++] = r;
    signal_loop(l);
    uv_mutex_unlock(&l->mb.mu);
}

static void on_nats_disconnected(natsConnection *nc, void *closure) {
    (void)nc;
    link_conn *c = closure;
    uv_mutex_lock(&c->l->mb.mu);
    if (c->id == c->l->mb.current) {
        c->l->mb.disconnects++;
        signal_loop(c->l);
    }
    uv_mutex_unlock(&c->l->mb.mu);
}

static void on_nats_reconnected(natsConnection *nc, void *closure) {
    (void)nc;
    link_conn *c = closure;
    uv_mutex_lock(&c->l->mb.mu);
    if (c->id == c->l->mb.current) {
        c->l->mb.reconnects++;
        signal_loop(c->l);
    }
    uv_mutex_unlock(&c->l->mb.mu);
}

static void on_nats_closed(natsConnection *nc, void *closure) {
    (void)nc;
    link_conn *c = closure;
    uv_mutex_lock(&c->l->mb.mu);
    c->closed = 1;
    if (c->id == c->l->mb.current)
        c->l->mb.current_closed = 1;
    signal_loop(c->l);
    uv_mutex_unlock(&c->l->mb.mu);
}

static void on_sub_complete(void *closure) {
    link_conn *c = closure;
    uv_mutex_lock(&c->l->mb.mu);
    c->sub_done = 1;
    signal_loop(c->l);
    uv_mutex_unlock(&c->l->mb.mu);
}

static void on_wake_msg(natsConnection *nc, natsSubscription *sub, natsMsg *msg, void *closure) {
    (void)nc;
    (void)sub;
    link_conn *c = closure;
    natsMsg_Destroy(msg);
    uv_mutex_lock(&c->l->mb.mu);
    c->l->mb.wakes++;
    signal_loop(c->l);
    uv_mutex_unlock(&c->l->mb.mu);
}

natsStatus ob_link_mailbox_options(natsOptions *o, link_conn *c) {
    natsStatus s = natsOptions_SetDisconnectedCB(o, on_nats_disconnected, c);
    if (s == NATS_OK)
        s = natsOptions_SetReconnectedCB(o, on_nats_reconnected, c);
    if (s == NATS_OK)
        s = natsOptions_SetClosedCB(o, on_nats_closed, c);
    return s;
}

natsStatus ob_link_mailbox_subscribe(ob_link *l, link_conn *c) {
    char subj[80];
    snprintf(subj, sizeof(subj), "%s.>", c->inbox);
    natsStatus s = natsConnection_Subscribe(&l->sub, l->nc, subj, on_nats_msg, c);
    if (s == NATS_OK)
        s = natsSubscription_SetPendingLimits(l->sub, -1, -1);
    if (s == NATS_OK)
        s = natsSubscription_SetOnCompleteCB(l->sub, on_sub_complete, c);
    if (s == NATS_OK && l->cfg.wake_subject)
        s = natsConnection_Subscribe(&l->wake_sub, l->nc, l->cfg.wake_subject, on_wake_msg, c);
    return s;
}

int ob_link_conn_done(ob_link *l, link_conn *c) {
    uv_mutex_lock(&l->mb.mu);
    int done = c->closed && (c->sub_done || l->sub == NULL);
    uv_mutex_unlock(&l->mb.mu);
    return done;
}

int ob_link_mailbox_init(ob_link *l) {
    return uv_mutex_init(&l->mb.mu);
}

void ob_link_mailbox_free(ob_link *l) {
    ob_link_spent_flush(l);
    for (size_t i = 0; i < l->mb.n; i++)
        natsMsg_Destroy(l->mb.q[i].msg);
    free(l->mb.q);
    free(l->spare);
    uv_mutex_destroy(&l->mb.mu);
}

void ob_link_mailbox_current(ob_link *l, link_conn *c) {
    uv_mutex_lock(&l->mb.mu);
    l->mb.current = c->id;
    l->mb.disconnects = l->mb.reconnects = 0;
    l->mb.current_closed = 0;
    uv_mutex_unlock(&l->mb.mu);
    l->seen_disconnects = l->seen_reconnects = 0;
}

void ob_link_mailbox_shut(ob_link *l) {
    uv_mutex_lock(&l->mb.mu);
    l->mb.shut = 1;
    uv_mutex_unlock(&l->mb.mu);
}

void ob_link_mailbox_on_async(uv_async_t *h) {
    ob_link *l = h->data;
    uv_mutex_lock(&l->mb.mu);
    inbox_reply *q = l->mb.q;
    size_t n = l->mb.n, qcap = l->mb.cap;
    l->mb.q = l->spare;
    l->mb.cap = l->spare_cap;
    l->mb.n = 0;
    l->spare = q;
    l->spare_cap = qcap;
    uint32_t disc = l->mb.disconnects, reco = l->mb.reconnects;
    int closed = l->mb.current_closed;
    uint32_t wakes = l->mb.wakes;
    uv_mutex_unlock(&l->mb.mu);

    for (size_t i = 0; i < n; i++) {
        natsMsg *m = q[i].msg;
        if (q[i].control) {
            link_reply r = {q[i].ack.slot, natsMsg_IsNoResponders(m), natsMsg_GetData(m),
                            (size_t)natsMsg_GetDataLength(m)};
            l->sink->control(l, &r);
        } else {
            l->sink->ack(l, &q[i].ack);
        }
        natsMsg_Destroy(m);
    }
    if (wakes != l->seen_wakes) {
        l->seen_wakes = wakes;
        l->sink->wake(l);
    }
    ob_link_spent_flush(l);
    int d = disc != l->seen_disconnects, r = reco != l->seen_reconnects;
    l->seen_disconnects = disc;
    l->seen_reconnects = reco;
    if (d || r || closed)
        l->sink->conn_event(l, d, r, closed);
}
