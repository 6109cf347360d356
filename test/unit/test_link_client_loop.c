/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The link's client on the loop (nats/link_client_loop.c) with the real
 * state machine (link.c) and socket poll (nats_loop.c), without a server:
 * the test plays nats.c 3.4.1. Its definitions of the nats.c functions the
 * client calls take the place of the library's; messages are nats.c's own
 * (natsMsg_Create). A read on the socketpair makes "nats.c" parse what the
 * test queued on the wire: each message goes through the connection's
 * filter (natsConn_setFilterWithClosure, as nats.c's reader does), then to
 * its subscription, where NextMsg hands it out, but a "no responders"
 * answer it destroys and reports as NATS_NO_RESPONDERS, as 3.4.1 does.
 *
 * What it shows: a "no responders" answer to a publish reaches its batch
 * as that publish's answer (the filter took it before NextMsg could drop
 * it), one to a JetStream request reaches the state machine, and one that
 * is not ours costs only a check of the stream, with the answers queued
 * behind it still delivered; doorbells in one read are one wake.
 */
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#include "check.h"
#include "link_int.h"
#include "loop_until.h" /* after link.h: loop_link_config */
#include "nats_loop.h"

/* --- nats.c, as the test plays it ---------------------------------------- */

#define QMAX 32

typedef void (*msg_filter)(natsConnection *nc, natsMsg **msg, void *closure);

static struct {
    natsEvLoop_Attach attach;
    natsEvLoop_Detach detach;
    void *loop;
    void *user; /* the attachment */
    msg_filter filter;
    void *filter_closure;
    int sock, peer;
    int subscribed; /* 0: inbox, 1: doorbell */
    /* On the wire (not read yet), with the subscription each goes to. */
    natsMsg *wire[QMAX];
    int wire_sub[QMAX];
    int nwire;
    /* Queued on each subscription. */
    natsMsg *q[2][QMAX];
    int nq[2];
    int destroyed; /* connections destroyed */
    char conn;     /* the connection's identity */
    char subs[2];  /* the subscriptions' */
} nats;

natsStatus natsOptions_SetEventLoop(natsOptions *opts, void *loop, natsEvLoop_Attach attachCb,
                                    natsEvLoop_ReadAddRemove readCb,
                                    natsEvLoop_WriteAddRemove writeCb, natsEvLoop_Detach detachCb) {
    (void)opts;
    (void)readCb;
    (void)writeCb;
    nats.loop = loop;
    nats.attach = attachCb;
    nats.detach = detachCb;
    return NATS_OK;
}

void natsConn_setFilterWithClosure(natsConnection *nc, msg_filter f, void *closure);
void natsConn_setFilterWithClosure(natsConnection *nc, msg_filter f, void *closure) {
    (void)nc;
    nats.filter = f;
    nats.filter_closure = closure;
}

natsStatus natsConnection_SubscribeSync(natsSubscription **sub, natsConnection *nc,
                                        const char *subject) {
    (void)nc;
    int k = strstr(subject, "_INBOX") == subject ? 0 : 1;
    nats.subscribed |= 1 << k;
    *sub = (natsSubscription *)(void *)&nats.subs[k];
    return NATS_OK;
}

natsStatus natsSubscription_SetPendingLimits(natsSubscription *sub, int msgLimit, int bytesLimit) {
    (void)sub;
    (void)msgLimit;
    (void)bytesLimit;
    return NATS_OK;
}

natsStatus natsSubscription_NextMsg(natsMsg **next, natsSubscription *sub, int64_t timeout) {
    (void)timeout;
    int k = (char *)(void *)sub == &nats.subs[0] ? 0 : 1;
    if (nats.nq[k] == 0)
        return NATS_TIMEOUT;
    natsMsg *m = nats.q[k][0];
    nats.nq[k]--;
    memmove(&nats.q[k][0], &nats.q[k][1], (size_t)nats.nq[k] * sizeof(natsMsg *));
    if (natsMsg_IsNoResponders(m)) {
        natsMsg_Destroy(m); /* 3.4.1: the answer is lost, only the status is left */
        return NATS_NO_RESPONDERS;
    }
    *next = m;
    return NATS_OK;
}

void natsSubscription_Destroy(natsSubscription *sub) {
    (void)sub;
}

natsStatus natsSubscription_Unsubscribe(natsSubscription *sub) {
    (void)sub;
    return NATS_OK;
}

/* A read: what is on the wire is parsed, each message through the filter. */
void natsConnection_ProcessReadEvent(natsConnection *nc) {
    char buf[64];
    while (recv(nats.sock, buf, sizeof(buf), MSG_DONTWAIT) > 0)
        ;
    for (int i = 0; i < nats.nwire; i++) {
        natsMsg *m = nats.wire[i];
        if (nats.filter)
            nats.filter(nc, &m, nats.filter_closure);
        if (m != NULL) {
            int k = nats.wire_sub[i];
            nats.q[k][nats.nq[k]++] = m;
        }
    }
    nats.nwire = 0;
}

void natsConnection_ProcessWriteEvent(natsConnection *nc) {
    (void)nc;
}

bool natsConnection_IsClosed(natsConnection *nc) {
    (void)nc;
    return false;
}

natsStatus natsConnection_Publish(natsConnection *nc, const char *subj, const void *data,
                                  int dataLen) {
    (void)nc;
    (void)subj;
    (void)data;
    (void)dataLen;
    return NATS_OK;
}

natsStatus natsConnection_GetLastError(natsConnection *nc, const char **lastError) {
    (void)nc;
    *lastError = "";
    return NATS_OK;
}

void natsConnection_Close(natsConnection *nc) {
    (void)nc;
}

/* Destroying the connection detaches it from the loop, as nats.c does. */
void natsConnection_Destroy(natsConnection *nc) {
    (void)nc;
    nats.destroyed++;
    if (nats.user) {
        nats.detach(nats.user);
        nats.user = NULL;
    }
}

/* --- the client's table, its connect and requests played ----------------- */

static int requests;
static char last_reply[96];

/* What the connect on the thread pool leaves: a connection with its inbox,
 * attached to the loop while it connected. */
static int t_connect(ob_link *l) {
    link_conn *c = calloc(1, sizeof(*c));
    CHECK(c != NULL);
    c->l = l;
    c->id = ++l->next_conn_id;
    c->inbox_len = (size_t)snprintf(c->inbox, sizeof(c->inbox), "_INBOX.t1");
    c->next = l->conns;
    l->conns = c;
    l->conn = c;
    ob_link_mailbox_current(l, c);
    /* The client's own options: only the event loop's callbacks matter
     * here (the others refuse NULL options). */
    (void)ob_link_loop_ops.tune(l, NULL);
    CHECK(nats.attach != NULL);
    l->nc = (natsConnection *)(void *)&nats.conn;
    int sv[2];
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    nats.sock = sv[0];
    nats.peer = sv[1];
    CHECK_EQ(nats.attach(&nats.user, nats.loop, l->nc, nats.sock), NATS_OK);
    return 0;
}

static int t_request(ob_link *l, const char *subj, const char *reply, const char *body, size_t len,
                     const char **why) {
    (void)l;
    (void)subj;
    (void)body;
    (void)len;
    (void)why;
    requests++;
    snprintf(last_reply, sizeof(last_reply), "%s", reply);
    return 0;
}

/* nats.c confirms the close at once. */
static void t_close(ob_link *l) {
    uv_mutex_lock(&l->mb.mu);
    l->conn->closed = 1;
    l->conn->sub_done = 1;
    uv_mutex_unlock(&l->mb.mu);
}

static link_ops ops;

/* --- the owner ----------------------------------------------------------- */

static struct {
    int acks, wakes, readies, ready, closed;
    ob_ack last;
    int no_responders;
} ow;

static void o_ack(void *d, const ob_ack *a) {
    (void)d;
    ow.acks++;
    ow.last = *a;
    ow.last.text = NULL;
    ow.no_responders += a->result == OB_ACKED_NO_RESPONDERS;
}
static void o_ready(void *d, int ready) {
    (void)d;
    ow.readies++;
    ow.ready = ready;
}
static void o_wake(void *d) {
    (void)d;
    ow.wakes++;
}
static void o_fatal(void *d, const char *why) {
    (void)d;
    CHECK_FAIL_("fatal: %s", why);
}
static void o_closed(void *d) {
    (void)d;
    ow.closed++;
}

/* --- the test ------------------------------------------------------------ */

static uv_loop_t loop;
static ob_log quiet = {NULL, NULL, OUTBOX_LOG_ERROR};

#define RUN_UNTIL(cond) LOOP_UNTIL(&loop, cond)

/* Queues a message on the wire for subscription k (0 inbox, 1 doorbell). */
static void on_wire(int k, const char *subj, const char *data, int no_responders) {
    natsMsg *m = NULL;
    CHECK_EQ(natsMsg_Create(&m, subj, NULL, data, data ? (int)strlen(data) : 0), NATS_OK);
    if (no_responders) {
        CHECK_EQ(natsMsgHeader_Set(m, "Status", "503"), NATS_OK);
        CHECK(natsMsg_IsNoResponders(m));
    }
    nats.wire_sub[nats.nwire] = k;
    nats.wire[nats.nwire++] = m;
}

/* The server sends what is on the wire: one read on the loop. */
static void read_wire(ob_link *l) {
    uint64_t reads = ob_nats_loop_reads(l->nl);
    CHECK_EQ(write(nats.peer, "+", 1), 1);
    RUN_UNTIL(ob_nats_loop_reads(l->nl) > reads);
}

#define INFO_OK "{\"config\":{\"subjects\":[\"outbox.>\"],\"duplicate_window\":120000000000}}"

static ob_link *make_ready(void) {
    memset(&ow, 0, sizeof(ow));
    ops = ob_link_loop_ops;
    ops.connect = t_connect;
    ops.request = t_request;
    ops.close = t_close;
    ob_link_config cfg;
    loop_link_config(&cfg, &quiet);
    ob_link_callbacks cbs = {o_ack, o_ready, o_wake, o_fatal, NULL};
    char err[256];
    ob_link *l = ob_link_new_ops(&loop, &cfg, &cbs, &ops, err, sizeof(err));
    CHECK(l != NULL);
    CHECK_EQ(ob_link_start(l), 0);
    CHECK(l->nc != NULL);
    l->sink->connect_done(l, LC_OK, "");
    CHECK_EQ(nats.subscribed, 3); /* the inbox and the doorbell */
    CHECK(nats.filter != NULL);
    CHECK_EQ(l->state, L_STREAM);
    on_wire(0, last_reply, INFO_OK, 0);
    read_wire(l);
    CHECK_EQ(l->state, L_READY);
    RUN_UNTIL(ow.ready == 1);
    return l;
}

static void close_link(ob_link *l) {
    ob_link_close(l, o_closed, NULL);
    l->sink->conn_event(l, 0, 0, 1); /* nats.c reports the close */
    RUN_UNTIL(ow.closed == 1);
    CHECK_EQ(nats.destroyed, 1);
    close(nats.peer);
    close(nats.sock);
    uv_run(&loop, UV_RUN_NOWAIT);
    CHECK_EQ(uv_loop_close(&loop), 0);
    CHECK_EQ(uv_loop_init(&loop), 0);
    memset(&nats, 0, sizeof(nats));
}

/* A publish that found no stream: its "no responders" answer names the
 * publish, and reaches the owner as that publish's answer; the link stays
 * ready (the row's fault is for the reader and the broker's verdict). */
static void no_responders_to_a_publish_reach_its_batch(void) {
    ob_link *l = make_ready();
    on_wire(0, "_INBOX.t1.3.7.11", NULL, 1);
    on_wire(0, "_INBOX.t1.3.7.12", "{\"stream\":\"S\",\"seq\":5}", 0);
    read_wire(l);
    CHECK_EQ(ow.acks, 2);
    CHECK_EQ(ow.no_responders, 1);
    CHECK_EQ(ow.last.result, OB_ACKED_STORED);
    CHECK_EQ(ow.last.slot, 12);
    CHECK_EQ(ow.last.seq, 5);
    CHECK_EQ(l->state, L_READY);
    close_link(l);
}

/* The first answer's record, kept apart from the later ones. */
static void no_responders_names_worker_gen_and_slot(void) {
    ob_link *l = make_ready();
    on_wire(0, "_INBOX.t1.3.7.11", NULL, 1);
    read_wire(l);
    CHECK_EQ(ow.acks, 1);
    CHECK_EQ(ow.last.result, OB_ACKED_NO_RESPONDERS);
    CHECK_EQ(ow.last.worker, 3);
    CHECK_EQ(ow.last.gen, 7);
    CHECK_EQ(ow.last.slot, 11);
    close_link(l);
}

/* JetStream does not answer the stream request: the state machine is
 * told (no responders), and waits before it asks again. */
static void no_responders_to_a_request_reach_the_state_machine(void) {
    ob_link *l = make_ready();
    ob_link_suspect(l, "no responders"); /* asks about the stream */
    CHECK_EQ(l->state, L_CHECKING);
    on_wire(0, last_reply, NULL, 1);
    read_wire(l);
    CHECK_EQ(l->state, L_STREAM_WAIT);
    CHECK_EQ(ow.acks, 0);
    close_link(l);
}

/* A "no responders" answer not to us (a stranger's subject on the inbox
 * wildcard) is left to NextMsg, which drops it: the link checks the stream
 * once, and the answers queued behind it are still delivered in the same
 * read. Doorbells in one read are one wake. */
static void a_stray_no_responders_is_a_check_and_the_rest_flows(void) {
    ob_link *l = make_ready();
    on_wire(0, "_INBOX.t1.x", NULL, 1);
    on_wire(0, "_INBOX.t1.0.1.2", "{\"stream\":\"S\",\"seq\":9}", 0);
    on_wire(1, "outbox_wake.t", "", 0);
    on_wire(1, "outbox_wake.t", "", 0);
    on_wire(1, "outbox_wake.t", "", 0);
    read_wire(l);
    CHECK_EQ(ow.acks, 1);
    CHECK_EQ(ow.last.seq, 9);
    CHECK_EQ(l->state, L_CHECKING);
    CHECK_EQ(ow.wakes, 1);
    close_link(l);
}

int main(void) {
    /* nats.c's library, as the relay opens it (its messages are destroyed
     * through its collector). */
    CHECK_EQ(nats_Open(-1), NATS_OK);
    uv_loop_init(&loop);
    no_responders_to_a_publish_reach_its_batch();
    no_responders_names_worker_gen_and_slot();
    no_responders_to_a_request_reach_the_state_machine();
    a_stray_no_responders_is_a_check_and_the_rest_flows();
    CHECK_EQ(uv_loop_close(&loop), 0);
    nats_Close();
    printf("test_link_client_loop: ok\n");
    return 0;
}
