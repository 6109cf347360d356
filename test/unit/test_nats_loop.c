/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nats.c's socket on the loop (nats/nats_loop.c) without a server: the
 * test plays nats.c. It stands in for the five nats.c functions the module
 * calls (their definitions here take the place of the library's), takes
 * the four event-loop callbacks it registers, and calls them as nats.c
 * would, on the loop thread and, for an attach made by a connect on the
 * thread pool, on another thread. The socket is one end of a socketpair;
 * the test writes to, or closes, the other.
 */
#include <fcntl.h>
#include <nats/nats.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#include "check.h"
#include "loop_until.h"
#include "nats_loop.h"

/* --- nats.c, as the test plays it ---------------------------------------- */

static struct {
    void *loop;
    natsEvLoop_Attach attach;
    natsEvLoop_ReadAddRemove read;
    natsEvLoop_WriteAddRemove write;
    natsEvLoop_Detach detach;
} ev;

/* A connection: its socket, what the module made of it (user), and what
 * the module asked of it. */
typedef struct fake_conn {
    int sock, peer;
    void *user;
    int reads, writes, eof;
    int partial; /* writes that leave bytes behind */
    int closed;
} fake_conn;

natsStatus natsOptions_SetEventLoop(natsOptions *opts, void *loop, natsEvLoop_Attach attachCb,
                                    natsEvLoop_ReadAddRemove readCb,
                                    natsEvLoop_WriteAddRemove writeCb, natsEvLoop_Detach detachCb) {
    (void)opts;
    ev.loop = loop;
    ev.attach = attachCb;
    ev.read = readCb;
    ev.write = writeCb;
    ev.detach = detachCb;
    return NATS_OK;
}

/* Reads what is there; an end of file closes the connection, as nats.c
 * does, but leaves the detach for later (it may come from another path). */
void natsConnection_ProcessReadEvent(natsConnection *nc) {
    fake_conn *c = (fake_conn *)(void *)nc;
    char buf[256];
    c->reads++;
    ssize_t n = recv(c->sock, buf, sizeof(buf), MSG_DONTWAIT);
    if (n == 0) {
        c->eof++;
        c->closed = 1;
    }
}

/* Writes all (and says it needs no more) unless a partial write is due. */
void natsConnection_ProcessWriteEvent(natsConnection *nc) {
    fake_conn *c = (fake_conn *)(void *)nc;
    c->writes++;
    if (c->partial > 0) {
        c->partial--;
        return;
    }
    ev.write(c->user, false);
}

bool natsConnection_IsClosed(natsConnection *nc) {
    return ((fake_conn *)(void *)nc)->closed;
}

/* --- the test ------------------------------------------------------------ */

static uv_loop_t loop;
static int on_reads;

static void on_read(void *data) {
    (void)data;
    on_reads++;
}

#define RUN_UNTIL(cond) LOOP_UNTIL(&loop, cond)

static void turns(int n) {
    for (int i = 0; i < n; i++) {
        uv_run(&loop, UV_RUN_NOWAIT);
        uv_sleep(1);
    }
}

static int open_fds(void) {
    int n = 0;
    for (int fd = 0; fd < 1024; fd++)
        n += fcntl(fd, F_GETFD) != -1;
    return n;
}

static void conn_init(fake_conn *c) {
    memset(c, 0, sizeof(*c));
    int sv[2];
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    c->sock = sv[0];
    c->peer = sv[1];
}

static void conn_free(fake_conn *c) {
    close(c->sock);
    if (c->peer >= 0)
        close(c->peer);
}

static natsConnection *nc_of(fake_conn *c) {
    return (natsConnection *)(void *)c;
}

static void attach(fake_conn *c) {
    CHECK_EQ(ev.attach(&c->user, ev.loop, nc_of(c), c->sock), NATS_OK);
    CHECK(c->user != NULL);
}

static ob_nats_loop *make(void) {
    on_reads = 0;
    memset(&ev, 0, sizeof(ev));
    ob_nats_loop *nl = ob_nats_loop_new(&loop, on_read, NULL);
    CHECK(nl != NULL);
    CHECK_EQ(ob_nats_loop_options(nl, NULL), NATS_OK);
    CHECK(ev.loop == nl && ev.attach && ev.read && ev.write && ev.detach);
    return nl;
}

/* Every handle closes and the module frees itself: the loop closes. */
static void free_loop(ob_nats_loop *nl) {
    ob_nats_loop_free(nl);
    uv_run(&loop, UV_RUN_DEFAULT);
    CHECK_EQ(uv_loop_close(&loop), 0);
    CHECK_EQ(uv_loop_init(&loop), 0);
}

/* On the loop thread an attach is applied at once: the duplicate socket is
 * polled, and a read reaches nats.c and then the on_read hook. A detach
 * closes the poll and the duplicate. */
static void an_attach_on_the_loop_is_polled_at_once(void) {
    ob_nats_loop *nl = make();
    fake_conn c;
    conn_init(&c);
    int fds = open_fds();
    attach(&c);
    CHECK_EQ(open_fds(), fds + 1); /* the module's duplicate */
    CHECK_EQ(write(c.peer, "PING\r\n", 6), 6);
    RUN_UNTIL(c.reads == 1);
    CHECK_EQ(ob_nats_loop_reads(nl), 1);
    CHECK_EQ(on_reads, 1);
    CHECK_EQ(ev.detach(c.user), NATS_OK);
    RUN_UNTIL(open_fds() == fds);
    CHECK_EQ(write(c.peer, "PING\r\n", 6), 6);
    turns(10);
    CHECK_EQ(c.reads, 1); /* no longer polled */
    free_loop(nl);
    conn_free(&c);
}

/* A wish to write is met just before the loop next waits (the prepare
 * hook), not inside the call that made it; a socket that took only part
 * is polled for writability until nats.c has written the rest. */
static void writes_go_out_before_the_loop_waits(void) {
    ob_nats_loop *nl = make();
    fake_conn c;
    conn_init(&c);
    attach(&c);
    CHECK_EQ(ev.write(c.user, true), NATS_OK);
    CHECK_EQ(c.writes, 0);
    RUN_UNTIL(c.writes == 1);
    turns(10);
    CHECK_EQ(c.writes, 1); /* all written: not polled for writability */
    c.partial = 1;
    CHECK_EQ(ev.write(c.user, true), NATS_OK);
    RUN_UNTIL(c.writes == 3); /* the hook's, then the writable socket's */
    turns(10);
    CHECK_EQ(c.writes, 3);
    CHECK_EQ(c.reads, 0);
    /* A socket that takes nothing (the server reads nothing): the poll waits
     * for it to take more, and the loop does not spin on the write. */
    char junk[4096];
    memset(junk, 'j', sizeof(junk));
    while (send(c.sock, junk, sizeof(junk), MSG_DONTWAIT) > 0)
        ;
    c.writes = 0;
    c.partial = 1000;
    CHECK_EQ(ev.write(c.user, true), NATS_OK);
    RUN_UNTIL(c.writes == 1);
    turns(20);
    CHECK_EQ(c.writes, 1);
    c.partial = 0;
    while (recv(c.peer, junk, sizeof(junk), MSG_DONTWAIT) > 0)
        ;
    RUN_UNTIL(c.writes == 2);
    turns(10);
    CHECK_EQ(c.writes, 2);
    ev.detach(c.user);
    free_loop(nl);
    conn_free(&c);
}

static fake_conn *thread_conn;

static void attach_off_loop(void *arg) {
    (void)arg;
    attach(thread_conn);
}

/* An attach made on another thread (nats.c's connect on the thread pool)
 * is only recorded: the loop applies it at its next sync, not before. */
static void an_attach_off_the_loop_waits_for_the_sync(void) {
    ob_nats_loop *nl = make();
    fake_conn c;
    conn_init(&c);
    thread_conn = &c;
    uv_thread_t t;
    CHECK_EQ(uv_thread_create(&t, attach_off_loop, NULL), 0);
    CHECK_EQ(uv_thread_join(&t), 0);
    CHECK_EQ(write(c.peer, "INFO {}\r\n", 9), 9);
    turns(10);
    CHECK_EQ(c.reads, 0);
    ob_nats_loop_sync(nl);
    RUN_UNTIL(c.reads == 1);
    ev.detach(c.user);
    free_loop(nl);
    conn_free(&c);
}

/* The server closes the socket: nats.c reads the end of file and closes
 * the connection; the poll stops there, so the end of file cannot spin
 * the loop while the detach has not come yet. */
static void an_end_of_file_stops_the_poll(void) {
    ob_nats_loop *nl = make();
    fake_conn c;
    conn_init(&c);
    attach(&c);
    close(c.peer);
    c.peer = -1;
    RUN_UNTIL(c.eof == 1);
    turns(20);
    CHECK_EQ(c.reads, 1);
    ev.detach(c.user);
    free_loop(nl);
    conn_free(&c);
}

/* A reattach (nats.c reconnected on a new socket): the old socket's poll
 * goes, the new one is polled. And a shutdown by the link (a cut on the
 * loop) ends the shared socket both ways: the server's side reads the end. */
static void a_reattach_replaces_the_socket_and_a_shutdown_ends_it(void) {
    ob_nats_loop *nl = make();
    fake_conn c;
    conn_init(&c);
    attach(&c);
    int fds = open_fds();
    int old_sock = c.sock, old_peer = c.peer;
    void *old = c.user;
    int sv[2];
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    c.sock = sv[0]; /* the same connection, a new socket */
    c.peer = sv[1];
    CHECK_EQ(ev.attach(&c.user, ev.loop, nc_of(&c), c.sock), NATS_OK);
    CHECK(c.user != NULL && c.user != old);
    RUN_UNTIL(open_fds() == fds + 2);     /* the pair, and one duplicate closed, one made */
    CHECK_EQ(write(old_peer, "x", 1), 1); /* the old socket: nobody polls it */
    CHECK_EQ(write(c.peer, "y", 1), 1);
    RUN_UNTIL(c.reads == 1);
    turns(10);
    CHECK_EQ(c.reads, 1);
    ob_nats_loop_shutdown(nl, nc_of(&c));
    char buf[4];
    RUN_UNTIL(recv(c.peer, buf, sizeof(buf), MSG_DONTWAIT) == 0); /* the end, not "nothing yet" */
    ev.detach(c.user);
    free_loop(nl);
    conn_free(&c);
    close(old_sock);
    close(old_peer);
}

int main(void) {
    uv_loop_init(&loop);
    an_attach_on_the_loop_is_polled_at_once();
    writes_go_out_before_the_loop_waits();
    an_attach_off_the_loop_waits_for_the_sync();
    an_end_of_file_stops_the_poll();
    a_reattach_replaces_the_socket_and_a_shutdown_ends_it();
    CHECK_EQ(uv_loop_close(&loop), 0);
    printf("test_nats_loop: ok\n");
    return 0;
}
