/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The link's client with nats.c's socket on the relay's loop (the default,
 * but over TLS; outbox_relay_options.nats_client). The socket is polled on
 * this loop (nats_loop.c), writes go out from the loop, and the inbox and
 * the doorbell are synchronous subscriptions drained on the loop right
 * after each read, so no message crosses a thread. nats.c's reconnect, ping
 * timer and flusher are off, so that nothing but the loop touches the
 * socket: a connection that fails is closed and the link builds a new one
 * (its own backoff), and a liveness probe on the loop stands in for pings.
 * The connect itself still runs on the thread pool (link_client.c; nats.c
 * attaches there, nats_loop.c defers the poll to the loop).
 */
#include "link_int.h"

#include <stdlib.h>
#include <string.h>

#include "nats_loop.h"

/* With no read during a tick of PROBE_MS a probe is sent; with
 * PROBES_MAX probes unanswered the connection is declared lost (4-6 s).
 * A tick that heard the server while the link sent nothing makes the link
 * idle: the probe then ticks every PROBE_IDLE_MS (a silent connection is
 * declared lost within 34 s), until something is sent again. */
#define PROBE_MS 2000
#define PROBE_IDLE_MS 30000
#define PROBES_MAX 2

/* No reconnect, ping timer or flusher of nats.c's: the loop does all. */
static natsStatus tune(ob_link *l, natsOptions *o) {
    natsStatus s = ob_nats_loop_options(l->nl, o);
    if (s == NATS_OK)
        s = natsOptions_SetAllowReconnect(o, false);
    if (s == NATS_OK)
        s = natsOptions_SetPingInterval(o, 0); /* no timer thread on the socket */
    if (s == NATS_OK)
        s = natsOptions_SetSendAsap(o, true); /* no flusher thread */
    return s;
}

/* nats.c 3.4.1's natsSubscription_NextMsg destroys a "no responders"
 * answer and returns NATS_NO_RESPONDERS instead of it, so whose answer it
 * was (its subject names the publish) would be lost. nats.c passes each
 * message of a connection to the connection's filter, on the thread that
 * reads (here the loop), before it queues it; the filter is set with
 * natsConn_setFilterWithClosure, which nats.h does not declare but every
 * 3.x library exports with this signature (read in 3.4.1, 3.5, 3.8, 3.9
 * and the newest; nats.c's own tests use it). Taken only from a 3.x
 * library; without it such an answer is counted without its publish. */
typedef void (*link_msg_filter)(natsConnection *nc, natsMsg **msg, void *closure);
void natsConn_setFilterWithClosure(natsConnection *nc, link_msg_filter f, void *closure);

/* On the loop: keeps a "no responders" answer to one of our
 * requests for drain(), and takes it out of nats.c's queue. */
static void nr_filter(natsConnection *nc, natsMsg **msg, void *closure) {
    (void)nc;
    link_conn *c = closure;
    ob_link *l = c->l;
    inbox_reply r;
    if (!natsMsg_IsNoResponders(*msg) || ob_link_read_reply(c, *msg, &r) != 0)
        return;
    if (l->nnr == l->nr_cap) {
        size_t cap = l->nr_cap ? l->nr_cap * 2 : 64;
        inbox_reply *nr = realloc(l->nr, cap * sizeof(*nr));
        if (nr == NULL)
            return; /* NextMsg counts it, as without the filter */
        l->nr = nr;
        l->nr_cap = cap;
    }
    r.msg = NULL;
    l->nr[l->nnr++] = r;
    natsMsg_Destroy(*msg);
    *msg = NULL;
}

/* The inbox and the doorbell are read here, on the loop. */
static natsStatus subscribe_sync(ob_link *l, link_conn *c) {
    char subj[80];
    snprintf(subj, sizeof(subj), "%s.>", c->inbox);
    natsStatus s = natsConnection_SubscribeSync(&l->sub, l->nc, subj);
    if (s == NATS_OK)
        s = natsSubscription_SetPendingLimits(l->sub, -1, -1);
    if (s == NATS_OK && l->cfg.wake_subject)
        s = natsConnection_SubscribeSync(&l->wake_sub, l->nc, l->cfg.wake_subject);
    if (s == NATS_OK && l->wake_sub)
        s = natsSubscription_SetPendingLimits(l->wake_sub, -1, -1);
    if (s == NATS_OK && nats_GetVersionNumber() >> 16 == 3)
        natsConn_setFilterWithClosure(l->nc, nr_filter, c);
    uv_mutex_lock(&l->mb.mu);
    c->sub_done = 1; /* no delivery thread to wait for */
    uv_mutex_unlock(&l->mb.mu);
    return s;
}

static int subscribe(ob_link *l) {
    return subscribe_sync(l, l->conn) == NATS_OK ? 0 : -1;
}

/* The answer to one request, to the state machine (control) or the owner. */
static void answer(ob_link *l, const inbox_reply *r, natsMsg *m) {
    if (r->control) {
        link_reply c = {r->ack.slot, m == NULL || natsMsg_IsNoResponders(m),
                        m ? natsMsg_GetData(m) : NULL, m ? (size_t)natsMsg_GetDataLength(m) : 0};
        l->sink->control(l, &c);
    } else {
        l->sink->ack(l, &r->ack);
    }
}

/* After each read: what the read queued on the subscriptions goes
 * to the state machine and the owner. The messages are kept back with the
 * published ones and destroyed in long runs (see ob_link.spent). */
static void drain(void *data) {
    ob_link *l = data;
    natsMsg *m = NULL;
    int no_responders = 0;
    /* What the filter took during the read (on this thread). */
    for (size_t i = 0; i < l->nnr; i++)
        answer(l, &l->nr[i], NULL);
    l->nnr = 0;
    while (l->sub) {
        natsStatus st = natsSubscription_NextMsg(&m, l->sub, 0);
        /* A "no responders" the filter did not take (see nr_filter) comes
         * without its message: count it and go on (the queue behind it
         * must not wait for the next read). */
        if (st == NATS_NO_RESPONDERS || st == NATS_SLOW_CONSUMER) {
            no_responders += st == NATS_NO_RESPONDERS;
            continue;
        }
        if (st != NATS_OK)
            break;
        inbox_reply r;
        if (ob_link_read_reply(l->conn, m, &r) != 0) {
            ob_link_spend(l, m, 0); /* a probe's echo */
            continue;
        }
        answer(l, &r, m);
        ob_link_spend(l, m, (size_t)natsMsg_GetDataLength(m));
    }
    int wakes = 0;
    while (l->wake_sub && natsSubscription_NextMsg(&m, l->wake_sub, 0) == NATS_OK) {
        ob_link_spend(l, m, (size_t)natsMsg_GetDataLength(m));
        wakes++;
    }
    if (wakes)
        l->sink->wake(l);
    if (no_responders)
        l->sink->suspect(l, "no responders");
}

static void on_probe(uv_timer_t *t);

/* Closes the connection on the loop without waiting.
 * natsConnection_Close first flushes what is buffered and waits up to
 * 500 ms for a PONG that only this loop could read; shut down, the socket
 * ends at nats.c's next read instead, which closes the connection the way a
 * server's close does (no flush, the closed callback follows). */
static void cut(ob_link *l) {
    ob_nats_loop_shutdown(l->nl, l->nc);
    for (int i = 0; i < 16 && !natsConnection_IsClosed(l->nc); i++)
        natsConnection_ProcessReadEvent(l->nc); /* what was queued, then the end */
    if (!natsConnection_IsClosed(l->nc))
        natsConnection_Close(l->nc);
}

static void probe_every(ob_link *l, int slow) {
    l->probe_slow = slow;
    uint64_t ms = slow ? PROBE_IDLE_MS : PROBE_MS;
    uv_timer_start(&l->probe, on_probe, ms, ms);
}

/* Something is being sent: an idle probe ticks fast again (the link calls
 * it only while l->probe_slow). */
static void probe_busy(ob_link *l) {
    probe_every(l, 0);
}

/* nats.c's pings would need its timer thread on the socket, so the
 * loop checks liveness itself. Any read counts; with none since the last
 * tick a core message to our own inbox is sent, which the server echoes. */
static void on_probe(uv_timer_t *t) {
    ob_link *l = t->data;
    static const char probe_suffix[] = ".p";
    int sent = l->sends != l->probe_sends;
    l->probe_sends = l->sends;
    if (!sent)
        ob_link_spent_flush(l); /* a burst is over: free its tail */
    if (l->nc == NULL || l->connecting || natsConnection_IsClosed(l->nc)) {
        l->probes_out = 0;
        return;
    }
    uint64_t reads = ob_nats_loop_reads(l->nl);
    if (reads != l->probe_reads) {
        l->probe_reads = reads;
        l->probes_out = 0;
        if (!sent && !l->probe_slow && l->state == L_READY)
            probe_every(l, 1);
        return;
    }
    if (l->probes_out >= PROBES_MAX) {
        l->lost = 1;
        cut(l); /* on the loop: detach and close happen here */
        return;
    }
    char subj[80];
    snprintf(subj, sizeof(subj), "%s%s", l->conn->inbox, probe_suffix);
    natsConnection_Publish(l->nc, subj, "", 0);
    l->probes_out++;
    if (l->probe_slow)
        probe_every(l, 0); /* its echo is looked for within PROBE_MS */
}

static void close_conn(ob_link *l) {
    if (ob_link_client_unsubscribe(l) == 0)
        cut(l);
}

static int start(ob_link *l) {
    if ((l->nl = ob_nats_loop_new(l->loop, drain, l)) == NULL)
        return -1;
    if (uv_async_init(l->loop, &l->async, ob_link_mailbox_on_async) != 0)
        return -1;
    l->async.data = l;
    uv_timer_init(l->loop, &l->probe);
    l->probe.data = l;
    uv_timer_start(&l->probe, on_probe, PROBE_MS, PROBE_MS);
    return 2;
}

static void stop(ob_link *l, int leak) {
    ob_link_client_stop(l, leak);
    uv_close((uv_handle_t *)&l->probe, ob_link_client_handle_closed);
}

static int rebuilds(ob_link *l) {
    (void)l;
    return 1;
}

const link_ops ob_link_loop_ops = {
    .name = "on the relay's loop",
    .init = ob_link_mailbox_init,
    .start = start,
    .tune = tune,
    .connect = ob_link_client_connect,
    .subscribe = subscribe,
    .request = ob_link_client_request,
    .last_error = ob_link_client_last_error,
    .close = close_conn,
    .close_done = ob_link_client_close_done,
    .drop = ob_link_client_drop,
    .stop = stop,
    .rebuilds = rebuilds,
    .free = ob_link_client_free,
    .busy = probe_busy,
};
