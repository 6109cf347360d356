/*
 * The link's client: nats.c behind the link_ops seam. It builds the
 * options (servers, timeouts, pings, TLS and credentials), connects on
 * libuv's thread pool so that the loop never waits on the network, sends
 * JetStream API requests as plain publishes, and closes and frees the
 * connection. What nats.c's threads report comes to the loop through the
 * mailbox (link_mailbox.c).
 *
 * Two modes, one code path but for the lines marked evloop:
 * - evloop (the default): the socket is
 *   polled on this loop (nats_loop.c), writes go out from the loop, and
 *   the inbox and the doorbell are synchronous subscriptions drained on the
 *   loop right after each read, so no message crosses a thread. nats.c's
 *   reconnect, ping timer and flusher are off, so that nothing but the
 *   loop touches the socket: a connection that fails is closed and the
 *   link builds a new one (its own backoff), and a liveness probe on the
 *   loop stands in for pings. The connect itself still runs on the thread
 *   pool (nats.c attaches there; nats_loop.c defers the poll to the loop).
 * - threaded (OUTBOX_NATS_EVENT_LOOP=0 in the environment, kept to measure
 *   the two side by side): nats.c reads and writes on its own reader and
 *   flusher threads, reconnects on its own, and delivers the inbox's
 *   messages on its delivery thread, which leaves them in the mailbox.
 */
#include "link_int.h"

#include <stdlib.h>
#include <string.h>

#include "nats_loop.h"

/* evloop: with no read during a tick of PROBE_MS a probe is sent; with
 * PROBES_MAX probes unanswered the connection is declared lost (4-6 s).
 * A tick that heard the server while the link sent nothing makes the link
 * idle: the probe then ticks every PROBE_IDLE_MS (a silent connection is
 * declared lost within 34 s), until something is sent again. */
#define PROBE_MS 2000
#define PROBE_IDLE_MS 30000
#define PROBES_MAX 2

static natsOptions *make_options(ob_link *l, link_conn *c) {
    natsOptions *o = NULL;
    char *servers[OB_NATS_MAX_SERVERS] = {0};
    natsStatus s = natsOptions_Create(&o);
    int n = l->url.n;
    for (int i = 0; s == NATS_OK && i < n; i++) {
        servers[i] = ob_nats_server_url(&l->url.srv[i], l->url.srv[i].host);
        if (servers[i] == NULL)
            s = NATS_NO_MEMORY;
    }
    if (s == NATS_OK)
        s = natsOptions_SetServers(o, (const char **)servers, n);
    if (s == NATS_OK)
        s = natsOptions_SetNoRandomize(o, true);
    if (s == NATS_OK)
        s = natsOptions_SetName(o, "outbox-uvrelay");
    if (s == NATS_OK)
        s = natsOptions_SetTimeout(o, 2000);
    if (s == NATS_OK)
        s = natsOptions_SetAllowReconnect(o, true);
    if (s == NATS_OK)
        s = natsOptions_SetMaxReconnect(o, -1);
    if (s == NATS_OK)
        s = natsOptions_SetReconnectWait(o, 250);
    if (s == NATS_OK)
        s = natsOptions_SetReconnectJitter(o, 100, 1000);
    /* A frozen server is noticed after about two missed pings. */
    if (s == NATS_OK)
        s = natsOptions_SetPingInterval(o, 2000);
    if (s == NATS_OK)
        s = natsOptions_SetMaxPingsOut(o, 2);
    if (s == NATS_OK)
        s = natsOptions_SetIOBufSize(o, 1024 * 1024);
    if (s == NATS_OK)
        s = natsOptions_SetWriteDeadline(o, 2000);
    if (s == NATS_OK)
        s = natsOptions_SetMaxPendingMsgs(
            o, (int)(l->cfg.max_in_flight * 4 > 65536 ? l->cfg.max_in_flight * 4 : 65536));
    if (s == NATS_OK)
        s = ob_link_mailbox_options(o, c);
    if (s == NATS_OK && l->evloop)
        s = ob_nats_loop_options(l->nl, o);
    if (s == NATS_OK && l->evloop)
        s = natsOptions_SetAllowReconnect(o, false);
    if (s == NATS_OK && l->evloop)
        s = natsOptions_SetPingInterval(o, 0); /* no timer thread on the socket */
    if (s == NATS_OK && l->evloop)
        s = natsOptions_SetSendAsap(o, true); /* no flusher thread */
    char sec_err[512];
    if (s == NATS_OK && ob_nats_security_apply(o, &l->sec, sec_err, sizeof(sec_err)) != 0) {
        OB_WARN(l->log, "nats: %s; retrying", sec_err);
        s = NATS_INVALID_ARG;
    }
    for (int i = 0; i < n; i++)
        free(servers[i]);
    if (s != NATS_OK) {
        natsOptions_Destroy(o);
        return NULL;
    }
    return o;
}

/* On a thread of libuv's pool: nats.c resolves, connects and shakes hands
 * with each listed server in turn, which can wait on the network. */
static void connect_work(uv_work_t *req) {
    connect_job *j = req->data;
    j->nc = NULL;
    j->status = natsConnection_Connect(&j->nc, j->opts);
    j->error[0] = '\0';
    if (j->status != NATS_OK) {
        const char *t = nats_GetLastError(NULL);
        if (t && *t == '(' && strstr(t, "): ")) /* drop nats.c's "(file.c:line): " */
            t = strstr(t, "): ") + 3;
        snprintf(j->error, sizeof(j->error), "%s", t && *t ? t : natsStatus_GetText(j->status));
    }
    /* nats.c keeps per-thread error state; this pool thread is not one of
     * its own, so release it here. */
    nats_ReleaseThreadMemory();
}

/* Failures that another try cannot heal while nothing changes. */
static int failed_for_good(natsStatus s) {
    return s == NATS_CONNECTION_AUTH_FAILED || s == NATS_NOT_PERMITTED ||
           s == NATS_SECURE_CONNECTION_WANTED || s == NATS_SECURE_CONNECTION_REQUIRED ||
           s == NATS_SSL_ERROR;
}

static void connect_done(uv_work_t *req, int status) {
    connect_job *j = req->data;
    ob_link *l = (ob_link *)((char *)j - offsetof(ob_link, job));
    l->connecting = 0;
    natsOptions_Destroy(j->opts);
    j->opts = NULL;
    if (status == UV_ECANCELED)
        j->status = NATS_ERR;
    char error[sizeof(j->error) + 64];
    if (l->evloop)
        ob_nats_loop_sync(l->nl); /* the attach on the pool thread */
    if (j->status == NATS_OK) {
        l->nc = j->nc;
        j->nc = NULL;
        l->probes_out = 0;
        l->lost = 0;
        l->sink->connect_done(l, LC_OK, "");
        return;
    }
    snprintf(error, sizeof(error), "%s (%s)", j->error, natsStatus_GetText(j->status));
    l->sink->connect_done(l, failed_for_good(j->status) ? LC_FAILED_FOR_GOOD : LC_FAILED,
                          failed_for_good(j->status) ? error : j->error);
}

static int c_connect(ob_link *l) {
    link_conn *c = calloc(1, sizeof(*c));
    natsInbox *inbox = NULL;
    if (c == NULL || natsInbox_Create(&inbox) != NATS_OK) {
        free(c);
        return -1;
    }
    c->l = l;
    c->id = ++l->next_conn_id;
    snprintf(c->inbox, sizeof(c->inbox), "%s", (const char *)inbox);
    c->inbox_len = strlen(c->inbox);
    natsInbox_Destroy(inbox);
    c->next = l->conns;
    l->conns = c;
    l->conn = c;
    l->reply_prefix = 0;
    l->job.opts = make_options(l, c);
    if (l->job.opts == NULL)
        return -1;
    ob_link_mailbox_current(l, c);
    l->job.req.data = &l->job;
    l->connecting = 1;
    if (uv_queue_work(l->loop, &l->job.req, connect_work, connect_done) != 0) {
        l->connecting = 0;
        natsOptions_Destroy(l->job.opts);
        l->job.opts = NULL;
        return -1;
    }
    return 0;
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

/* evloop, on the loop: keeps a "no responders" answer to one of our
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
    r.ack.msg = NULL;
    l->nr[l->nnr++] = r;
    natsMsg_Destroy(*msg);
    *msg = NULL;
}

/* evloop: the inbox and the doorbell are read here, on the loop. */
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

static int c_subscribe(ob_link *l) {
    natsStatus s = l->evloop ? subscribe_sync(l, l->conn) : ob_link_mailbox_subscribe(l, l->conn);
    return s == NATS_OK ? 0 : -1;
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

/* evloop, after each read: what the read queued on the subscriptions goes
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

/* evloop: closes the connection on the loop without waiting.
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

/* evloop: nats.c's pings would need its timer thread on the socket, so the
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

static int c_request(ob_link *l, const char *subj, const char *reply, const char *body, size_t len,
                     const char **why) {
    natsStatus s = natsConnection_PublishRequest(l->nc, subj, reply, body, (int)len);
    l->sends++;
    if (l->probe_slow)
        probe_busy(l);
    *why = natsStatus_GetText(s);
    return s == NATS_OK ? 0 : -1;
}

static const char *c_last_error(ob_link *l) {
    const char *why = NULL;
    if (l->lost)
        return "no answer from the server within 6 s: frozen or cut off";
    if (l->nc)
        natsConnection_GetLastError(l->nc, &why);
    return why ? why : "";
}

static void c_close(ob_link *l) {
    if (l->nc == NULL)
        return;
    if (l->wake_sub)
        natsSubscription_Unsubscribe(l->wake_sub);
    if (l->sub)
        natsSubscription_Unsubscribe(l->sub);
    if (l->evloop)
        cut(l);
    else
        natsConnection_Close(l->nc);
}

static int c_close_done(ob_link *l, int leak) {
    if (l->connecting)
        return 0; /* connect_done comes first; a pool job cannot be stopped */
    return leak || l->nc == NULL || ob_link_conn_done(l, l->conn);
}

static void c_drop(ob_link *l) {
    ob_link_spent_flush(l); /* messages read from the subscriptions go first */
    if (l->wake_sub) {
        natsSubscription_Destroy(l->wake_sub);
        l->wake_sub = NULL;
    }
    if (l->sub) {
        natsSubscription_Destroy(l->sub);
        l->sub = NULL;
    }
    if (l->nc) {
        natsConnection_Destroy(l->nc);
        l->nc = NULL;
    }
}

static int c_start(ob_link *l) {
    if (l->evloop && (l->nl = ob_nats_loop_new(l->loop, drain, l)) == NULL)
        return -1;
    if (uv_async_init(l->loop, &l->async, ob_link_mailbox_on_async) != 0)
        return -1;
    l->async.data = l;
    if (!l->evloop)
        return 1;
    uv_timer_init(l->loop, &l->probe);
    l->probe.data = l;
    uv_timer_start(&l->probe, on_probe, PROBE_MS, PROBE_MS);
    return 2;
}

static void handle_closed(uv_handle_t *h) {
    ob_link *l = h->data;
    l->sink->handle_closed(l);
}

static void c_stop(ob_link *l, int leak) {
    ob_link_mailbox_shut(l);
    if (leak) {
        l->nc = NULL;
        l->sub = NULL;
        l->wake_sub = NULL;
        if (l->nl)
            ob_nats_loop_quiet(l->nl); /* its polls stay, with what nats.c may touch */
    } else {
        c_drop(l);
        if (l->nl)
            ob_nats_loop_free(l->nl); /* once the destroyed connection's poll closed */
        l->nl = NULL;
    }
    uv_close((uv_handle_t *)&l->async, handle_closed);
    if (l->evloop)
        uv_close((uv_handle_t *)&l->probe, handle_closed);
}

static int c_rebuilds(ob_link *l) {
    return l->evloop;
}

static void c_free(ob_link *l) {
    ob_link_mailbox_free(l);
    free(l->nr);
    ob_buf_free(&l->subject);
    ob_buf_free(&l->scratch);
    ob_buf_free(&l->block);
    while (l->conns) {
        link_conn *c = l->conns;
        l->conns = c->next;
        free(c);
    }
}

const link_ops ob_link_nats_ops = {
    .init = ob_link_mailbox_init,
    .start = c_start,
    .connect = c_connect,
    .subscribe = c_subscribe,
    .request = c_request,
    .last_error = c_last_error,
    .close = c_close,
    .close_done = c_close_done,
    .drop = c_drop,
    .stop = c_stop,
    .rebuilds = c_rebuilds,
    .free = c_free,
    .busy = probe_busy,
};
