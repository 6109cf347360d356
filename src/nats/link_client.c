/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the two NATS clients of the link share (link_client_loop.c: nats.c's
 * socket on the relay's loop; link_client_threads.c: nats.c on its own
 * threads): the options (servers, timeouts, pings, TLS and credentials,
 * and the client's own through link_ops.tune), the connect on libuv's
 * thread pool so that the loop never waits on the network, JetStream API
 * requests as plain publishes, and the close and the freeing of a
 * connection. Each client's ops table points at these where it has
 * nothing of its own to do.
 */
#include "link_int.h"

#include <stdlib.h>
#include <string.h>

#include "nats_loop.h"

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
    if (s == NATS_OK && l->ops->tune)
        s = l->ops->tune(l, o);
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
    if (l->nl)
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

int ob_link_client_connect(ob_link *l) {
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

int ob_link_client_request(ob_link *l, const char *subj, const char *reply, const char *body,
                           size_t len, const char **why) {
    natsStatus s = natsConnection_PublishRequest(l->nc, subj, reply, body, (int)len);
    l->sends++;
    if (l->probe_slow && l->ops->busy)
        l->ops->busy(l);
    *why = natsStatus_GetText(s);
    return s == NATS_OK ? 0 : -1;
}

const char *ob_link_client_last_error(ob_link *l) {
    const char *why = NULL;
    if (l->lost)
        return "no answer from the server within 6 s: frozen or cut off";
    if (l->nc)
        natsConnection_GetLastError(l->nc, &why);
    return why ? why : "";
}

int ob_link_client_close_done(ob_link *l, int leak) {
    if (l->connecting)
        return 0; /* connect_done comes first; a pool job cannot be stopped */
    return leak || l->nc == NULL || ob_link_conn_done(l, l->conn);
}

void ob_link_client_drop(ob_link *l) {
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

void ob_link_client_handle_closed(uv_handle_t *h) {
    ob_link *l = h->data;
    l->sink->handle_closed(l);
}

void ob_link_client_free(ob_link *l) {
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

void ob_link_client_stop(ob_link *l, int leak) {
    ob_link_mailbox_shut(l);
    if (leak) {
        l->nc = NULL;
        l->sub = NULL;
        l->wake_sub = NULL;
        if (l->nl)
            ob_nats_loop_quiet(l->nl); /* its polls stay, with what nats.c may touch */
    } else {
        ob_link_client_drop(l);
        if (l->nl)
            ob_nats_loop_free(l->nl); /* once the destroyed connection's poll closed */
        l->nl = NULL;
    }
    uv_close((uv_handle_t *)&l->async, ob_link_client_handle_closed);
}

int ob_link_client_unsubscribe(ob_link *l) {
    if (l->nc == NULL)
        return -1;
    if (l->wake_sub)
        natsSubscription_Unsubscribe(l->wake_sub);
    if (l->sub)
        natsSubscription_Unsubscribe(l->sub);
    return 0;
}
