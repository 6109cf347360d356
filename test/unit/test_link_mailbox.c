/* SPDX-License-Identifier: Apache-2.0 */
/*
 * From nats.c's threads to the loop (nats/link_mailbox.c), with the real
 * state machine (link.c) and the threaded client's table
 * (link_client_threads.c), without a server: the test plays nats.c. Its
 * definitions of the nats.c functions the client calls take the place of
 * the library's, keeping the callbacks the client registers; the test
 * calls them from threads of its own, as nats.c's delivery and reconnect
 * threads would. Messages are nats.c's own (natsMsg_Create).
 *
 * What it shows: what a thread leaves reaches the owner on the loop
 * thread only, in order, a burst larger than the mailbox's first size
 * included; doorbells left meanwhile are one wake; the events of a
 * connection no longer in use are dropped; the current one's disconnect
 * and reconnect move the state machine; a close confirmed from a thread
 * ends the link.
 */
#include <uv.h>

#include "check.h"
#include "link_int.h"
#include "loop_until.h" /* after link.h: loop_link_config */

/* --- nats.c, as the test plays it ---------------------------------------- */

static struct {
    natsConnectionHandler disconnected, reconnected, closed;
    void *conn_closure;
    natsMsgHandler on_msg, on_wake;
    void *msg_closure, *wake_closure;
    natsOnCompleteCB sub_complete;
    void *complete_closure;
    int closes, destroyed;
    char conn, subs[2];
} nats;

natsStatus natsOptions_SetDisconnectedCB(natsOptions *opts, natsConnectionHandler cb,
                                         void *closure) {
    (void)opts;
    nats.disconnected = cb;
    nats.conn_closure = closure;
    return NATS_OK;
}

natsStatus natsOptions_SetReconnectedCB(natsOptions *opts, natsConnectionHandler cb,
                                        void *closure) {
    (void)opts;
    (void)closure;
    nats.reconnected = cb;
    return NATS_OK;
}

natsStatus natsOptions_SetClosedCB(natsOptions *opts, natsConnectionHandler cb, void *closure) {
    (void)opts;
    (void)closure;
    nats.closed = cb;
    return NATS_OK;
}

natsStatus natsConnection_Subscribe(natsSubscription **sub, natsConnection *nc, const char *subject,
                                    natsMsgHandler cb, void *closure) {
    (void)nc;
    int k = strstr(subject, "_INBOX") == subject ? 0 : 1;
    if (k == 0) {
        nats.on_msg = cb;
        nats.msg_closure = closure;
    } else {
        nats.on_wake = cb;
        nats.wake_closure = closure;
    }
    *sub = (natsSubscription *)(void *)&nats.subs[k];
    return NATS_OK;
}

natsStatus natsSubscription_SetPendingLimits(natsSubscription *sub, int msgLimit, int bytesLimit) {
    (void)sub;
    (void)msgLimit;
    (void)bytesLimit;
    return NATS_OK;
}

natsStatus natsSubscription_SetOnCompleteCB(natsSubscription *sub, natsOnCompleteCB cb,
                                            void *closure) {
    (void)sub;
    nats.sub_complete = cb;
    nats.complete_closure = closure;
    return NATS_OK;
}

natsStatus natsSubscription_Unsubscribe(natsSubscription *sub) {
    (void)sub;
    return NATS_OK;
}

void natsSubscription_Destroy(natsSubscription *sub) {
    (void)sub;
}

void natsConnection_Close(natsConnection *nc) {
    (void)nc;
    nats.closes++;
}

void natsConnection_Destroy(natsConnection *nc) {
    (void)nc;
    nats.destroyed++;
}

natsStatus natsConnection_GetLastError(natsConnection *nc, const char **lastError) {
    (void)nc;
    *lastError = "";
    return NATS_OK;
}

/* --- the client's table, its connect and requests played ----------------- */

static char last_reply[96];

static link_conn *new_conn(ob_link *l) {
    link_conn *c = calloc(1, sizeof(*c));
    CHECK(c != NULL);
    c->l = l;
    c->id = ++l->next_conn_id;
    c->inbox_len = (size_t)snprintf(c->inbox, sizeof(c->inbox), "_INBOX.m%u", c->id);
    c->next = l->conns;
    l->conns = c;
    return c;
}

/* What the connect on the thread pool leaves: a connection whose events
 * feed the mailbox. */
static int t_connect(ob_link *l) {
    link_conn *c = new_conn(l);
    l->conn = c;
    ob_link_mailbox_current(l, c);
    CHECK_EQ(ob_link_mailbox_options(NULL, c), NATS_OK);
    l->nc = (natsConnection *)(void *)&nats.conn;
    return 0;
}

static int t_request(ob_link *l, const char *subj, const char *reply, const char *body, size_t len,
                     const char **why) {
    (void)l;
    (void)subj;
    (void)body;
    (void)len;
    (void)why;
    snprintf(last_reply, sizeof(last_reply), "%s", reply);
    return 0;
}

static link_ops ops;

/* --- the owner ----------------------------------------------------------- */

static uv_thread_t loop_thread;

static struct {
    int acks, wakes, readies, ready, closed, off_loop;
    uint32_t next_slot; /* the slot the next ack must carry: in order */
    int out_of_order;
} ow;

static void on_loop_thread(void) {
    uv_thread_t self = uv_thread_self();
    if (!uv_thread_equal(&self, &loop_thread))
        ow.off_loop++;
}

static void o_ack(void *d, const ob_ack *a) {
    (void)d;
    on_loop_thread();
    ow.out_of_order += a->slot != ow.next_slot;
    ow.next_slot = a->slot + 1;
    ow.acks++;
}
static void o_ready(void *d, int ready) {
    (void)d;
    on_loop_thread();
    ow.readies++;
    ow.ready = ready;
}
static void o_wake(void *d) {
    (void)d;
    on_loop_thread();
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

/* --- nats.c's threads ---------------------------------------------------- */

/* What a thread does, given as a function run on a thread of its own. */
static void on_thread(void (*fn)(void *), void *arg) {
    uv_thread_t t;
    CHECK_EQ(uv_thread_create(&t, fn, arg), 0);
    CHECK_EQ(uv_thread_join(&t), 0);
}

static natsMsg *message(const char *subj, const char *data) {
    natsMsg *m = NULL;
    CHECK_EQ(natsMsg_Create(&m, subj, NULL, data, (int)strlen(data)), NATS_OK);
    return m;
}

static const char *reply_data;

static void deliver_reply(void *arg) {
    (void)arg;
    nats.on_msg(NULL, NULL, message(last_reply, reply_data), nats.msg_closure);
}

#define BURST 3000

/* A burst of acks for worker 0, generation 1, slots 0..BURST-1, and doorbells. */
static void deliver_burst(void *arg) {
    link_conn *c = nats.msg_closure;
    (void)arg;
    for (int i = 0; i < BURST; i++) {
        char subj[96];
        snprintf(subj, sizeof(subj), "%s.0.1.%d", c->inbox, i);
        nats.on_msg(NULL, NULL, message(subj, "{\"stream\":\"S\",\"seq\":1}"), nats.msg_closure);
        if (i % 1000 == 0)
            nats.on_wake(NULL, NULL, message("outbox_wake.t", ""), nats.wake_closure);
    }
}

static link_conn *stale;

static void stale_disconnect(void *arg) {
    (void)arg;
    nats.disconnected(NULL, stale);
}

static void disconnect(void *arg) {
    (void)arg;
    nats.disconnected(NULL, nats.conn_closure);
}

static void reconnect(void *arg) {
    (void)arg;
    nats.reconnected(NULL, nats.conn_closure);
}

static void confirm_close(void *arg) {
    (void)arg;
    nats.closed(NULL, nats.conn_closure);
    nats.sub_complete(nats.complete_closure);
}

/* --- the test ------------------------------------------------------------ */

static uv_loop_t loop;
static ob_log quiet = {NULL, NULL, OUTBOX_LOG_ERROR};

#define RUN_UNTIL(cond) LOOP_UNTIL(&loop, cond)

#define INFO_OK "{\"config\":{\"subjects\":[\"outbox.>\"],\"duplicate_window\":120000000000}}"

static void answer_stream(ob_link *l) {
    reply_data = INFO_OK;
    on_thread(deliver_reply, NULL);
    RUN_UNTIL(l->state == L_READY);
}

static ob_link *make_ready(void) {
    memset(&ow, 0, sizeof(ow));
    ops = ob_link_threads_ops;
    ops.connect = t_connect;
    ops.request = t_request;
    ob_link_config cfg;
    loop_link_config(&cfg, &quiet);
    ob_link_callbacks cbs = {o_ack, o_ready, o_wake, o_fatal, NULL};
    char err[256];
    ob_link *l = ob_link_new_ops(&loop, &cfg, &cbs, &ops, err, sizeof(err));
    CHECK(l != NULL);
    CHECK_EQ(ob_link_start(l), 0);
    l->sink->connect_done(l, LC_OK, "");
    CHECK(nats.on_msg != NULL && nats.on_wake != NULL && nats.sub_complete != NULL);
    CHECK_EQ(l->state, L_STREAM);
    answer_stream(l);
    RUN_UNTIL(ow.ready == 1);
    return l;
}

/* Answers left by a thread reach the owner on the loop thread, in order,
 * however many; the doorbells rung meanwhile are one wake per delivery. */
static void what_threads_leave_reaches_the_owner_on_the_loop(void) {
    ob_link *l = make_ready();
    on_thread(deliver_burst, NULL);
    CHECK_EQ(ow.acks, 0); /* nothing inside the thread's calls */
    RUN_UNTIL(ow.acks == BURST);
    CHECK_EQ(ow.out_of_order, 0);
    CHECK_EQ(ow.wakes, 1);
    CHECK_EQ(ow.off_loop, 0);
    ob_link_close(l, o_closed, NULL);
    on_thread(confirm_close, NULL);
    RUN_UNTIL(ow.closed == 1);
    CHECK_EQ(nats.closes, 1);
    CHECK_EQ(nats.destroyed, 1);
}

/* The events of a connection no longer in use change nothing; the
 * current one's disconnect pauses the link, its reconnect asks for the
 * stream again, and the answer makes it ready. */
static void only_the_current_connection_counts(void) {
    ob_link *l = make_ready();
    stale = new_conn(l); /* made, never the current one */
    on_thread(stale_disconnect, NULL);
    for (int i = 0; i < 20; i++)
        uv_run(&loop, UV_RUN_NOWAIT);
    CHECK_EQ(l->state, L_READY);
    CHECK_EQ(ow.ready, 1);
    on_thread(disconnect, NULL);
    RUN_UNTIL(l->state == L_DOWN);
    RUN_UNTIL(ow.ready == 0);
    on_thread(reconnect, NULL);
    RUN_UNTIL(l->state == L_STREAM);
    answer_stream(l);
    RUN_UNTIL(ow.ready == 1);
    CHECK_EQ(ow.off_loop, 0);
    ob_link_close(l, o_closed, NULL);
    on_thread(confirm_close, NULL);
    RUN_UNTIL(ow.closed == 1);
}

int main(void) {
    loop_thread = uv_thread_self();
    /* nats.c's library, as the relay opens it (its messages are destroyed
     * through its collector). */
    CHECK_EQ(nats_Open(-1), NATS_OK);
    uv_loop_init(&loop);
    what_threads_leave_reaches_the_owner_on_the_loop();
    memset(&nats, 0, sizeof(nats));
    only_the_current_connection_counts();
    uv_run(&loop, UV_RUN_NOWAIT);
    CHECK_EQ(uv_loop_close(&loop), 0);
    nats_Close();
    printf("test_link_mailbox: ok\n");
    return 0;
}
