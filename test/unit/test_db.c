/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The connection module (src/db/db.c) against a scripted MariaDB server on
 * the test's own loop (fake_mariadb.c): Connector/C's real client, driven
 * non-blocking, over a real loopback socket. It proves db.h's rules: one
 * operation at a time; when a wait ends, the poll and the wait timer are
 * disarmed (no handle of the connection keeps the loop alive while it has
 * nothing to do); a silent server fails the operation within op_timeout_ms
 * as a lost connection, said once; a server that closes the connection
 * mid-query or while idle is a lost connection; a close while waiting
 * calls no operation's callback and frees everything.
 */
#include <arpa/inet.h>
#include <errmsg.h>
#include <string.h>
#include <uv.h>

#include "check.h"
#include "db.h"
#include "fake_mariadb.h"

static uv_loop_t loop;
static uv_timer_t tick; /* wakes each turn of the loop: a stall waits on nothing */
static fake_peer *peer;
static int late_warnings;

static void log_line(outbox_log_level level, const char *line, void *data) {
    (void)data;
    if (level <= OUTBOX_LOG_WARN && strstr(line, "exceeded 600 ms"))
        late_warnings++;
}
static const ob_log lg = {log_line, NULL, OUTBOX_LOG_DEBUG};

typedef struct done {
    int calls, ok;
} done;

static void on_done(ob_db *db, int ok, void *data) {
    (void)db;
    done *d = data;
    d->calls++;
    d->ok = ok;
}

static void on_tick(uv_timer_t *t) {
    (void)t;
}

/* Runs the loop until *flag is nonzero; fails past 10 s. */
static void run_until(const int *flag) {
    uint64_t until = uv_now(&loop) + 10000;
    uv_timer_start(&tick, on_tick, 5, 5);
    while (!*flag) {
        if (uv_now(&loop) > until)
            CHECK_FAIL_("nothing came within 10 s");
        uv_run(&loop, UV_RUN_ONCE);
    }
    uv_timer_stop(&tick);
}

static void count_busy(uv_handle_t *h, void *arg) {
    if (h == (uv_handle_t *)&tick || (peer && fake_peer_owns(peer, h)))
        return;
    if (uv_is_active(h) && uv_has_ref(h) && !uv_is_closing(h))
        (*(int *)arg)++;
}

/* The connection's handles that are armed and hold the loop: none while no
 * operation runs (the idle watch, when asked for, holds no loop). */
static int busy_handles(void) {
    int n = 0;
    uv_walk(&loop, count_busy, &n);
    return n;
}

static ob_db *make(uint32_t op_timeout_ms) {
    static ob_db_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.host = "127.0.0.1";
    cfg.port = (unsigned)fake_peer_port(peer);
    cfg.user = "relay";
    cfg.database = "db";
    cfg.op_timeout_ms = op_timeout_ms;
    ob_db *db = ob_db_new(&loop, &cfg, &lg, "test");
    CHECK(db != NULL);
    return db;
}

static void connect_ok(ob_db *db) {
    done d = {0, 0};
    CHECK_EQ(ob_db_connect(db, on_done, &d), 0);
    run_until(&d.calls);
    CHECK_EQ(d.calls, 1);
    if (!d.ok)
        CHECK_FAIL_("connect failed: %u %s", ob_db_errno(db), ob_db_error(db));
    CHECK(ob_db_is_idle(db));
    CHECK_EQ(ob_db_thread_id(db), 42);
    CHECK_EQ(busy_handles(), 0);
}

static int closed;
static void on_closed(void *data) {
    (void)data;
    closed++;
}

static void close_db(ob_db *db) {
    closed = 0;
    ob_db_close(db, on_closed, NULL);
    run_until(&closed);
    CHECK_EQ(closed, 1);
}

static void one_operation_at_a_time_and_disarmed_after_each(void) {
    ob_db *db = make(5000);
    connect_ok(db);
    int q0 = fake_peer_queries(peer); /* the connect's own (the session's wait_timeout) */
    CHECK_EQ(ob_db_connect(db, on_done, NULL), -1); /* connected already */
    for (int i = 0; i < 3; i++) {
        done d = {0, 0};
        const char *sql = "SELECT hello";
        CHECK_EQ(ob_db_query(db, sql, strlen(sql), on_done, &d), 0);
        /* The answer needs the loop: the statement is under way. */
        CHECK_EQ(d.calls, 0);
        CHECK_EQ(ob_db_query(db, sql, strlen(sql), on_done, NULL), -1);
        CHECK(!ob_db_is_idle(db));
        run_until(&d.calls);
        CHECK_EQ(d.calls, 1);
        CHECK_EQ(d.ok, 1);
        CHECK_EQ(busy_handles(), 0); /* the wait ended: poll and timers disarmed */
        char **row = ob_db_next_row(db, 0, NULL);
        CHECK(row != NULL);
        CHECK_STR(row[0], "hello");
        CHECK(ob_db_next_row(db, 0, NULL) == NULL);
    }
    done d = {0, 0};
    CHECK_EQ(ob_db_query(db, "DO 1", 4, on_done, &d), 0);
    run_until(&d.calls);
    CHECK_EQ(d.ok, 1);
    CHECK(ob_db_result(db, 0) == NULL); /* no result set */
    CHECK_EQ(busy_handles(), 0);
    CHECK_EQ(fake_peer_queries(peer) - q0, 4);
    /* A close while idle says goodbye (COM_QUIT). */
    int quits = fake_peer_quits(peer);
    close_db(db);
    for (int i = 0; i < 100 && fake_peer_quits(peer) == quits; i++)
        uv_run(&loop, UV_RUN_NOWAIT);
    CHECK_EQ(fake_peer_quits(peer), quits + 1);
}

/* A silent server: the query fails within op_timeout_ms as a lost
 * connection. The warning is said once for an outage, not at every
 * deadline missed (the connects that follow time out quietly), and again
 * for the next outage once an operation succeeded. */
static void a_silent_server_fails_the_query_as_lost(void) {
    late_warnings = 0;
    ob_db *db = make(600);
    for (int outage = 1; outage <= 2; outage++) {
        fake_peer_mode_set(peer, PEER_ANSWER);
        connect_ok(db);
        fake_peer_mode_set(peer, PEER_STALL);
        done d = {0, 0};
        CHECK_EQ(ob_db_query(db, "DO 2", 4, on_done, &d), 0);
        run_until(&d.calls);
        CHECK_EQ(d.calls, 1);
        CHECK_EQ(d.ok, 0);
        CHECK(ob_db_lost(db));
        CHECK(!ob_db_is_idle(db));
        CHECK_EQ(busy_handles(), 0);
        CHECK_EQ(late_warnings, outage);
        done c = {0, 0}; /* the server greets no one either */
        CHECK_EQ(ob_db_connect(db, on_done, &c), 0);
        run_until(&c.calls);
        CHECK_EQ(c.ok, 0);
        CHECK(ob_db_lost(db));
        CHECK_EQ(busy_handles(), 0);
        CHECK_EQ(late_warnings, outage);
    }
    fake_peer_mode_set(peer, PEER_ANSWER);
    close_db(db);
}

/* The server closes the connection mid-query, then while idle. */
static void a_closed_connection_is_lost(void) {
    ob_db *db = make(5000);
    connect_ok(db);
    fake_peer_mode_set(peer, PEER_CLOSE);
    done d = {0, 0};
    CHECK_EQ(ob_db_query(db, "DO 3", 4, on_done, &d), 0);
    run_until(&d.calls);
    CHECK_EQ(d.ok, 0);
    CHECK(ob_db_lost(db));
    CHECK(ob_db_errno_is_lost(ob_db_errno(db)));
    CHECK_EQ(busy_handles(), 0);
    fake_peer_mode_set(peer, PEER_ANSWER);
    /* Idle and watched: the loss is told at once, no statement needed. */
    connect_ok(db);
    done w = {0, 0};
    ob_db_watch(db, on_done, &w);
    CHECK_EQ(busy_handles(), 0); /* the watch holds no loop */
    fake_peer_drop(peer);
    run_until(&w.calls);
    CHECK_EQ(w.calls, 1);
    CHECK_EQ(w.ok, 0);
    CHECK(ob_db_lost(db));
    CHECK_EQ(ob_db_errno(db), CR_SERVER_LOST);
    CHECK_EQ(busy_handles(), 0);
    close_db(db);
}

/* A close while a query waits on a silent server: the query's callback
 * never runs, and every handle is freed. */
static void a_close_while_waiting(void) {
    ob_db *db = make(0);
    connect_ok(db);
    fake_peer_mode_set(peer, PEER_STALL);
    done d = {0, 0};
    int queries = fake_peer_queries(peer);
    CHECK_EQ(ob_db_query(db, "DO 4", 4, on_done, &d), 0);
    for (int i = 0; i < 1000 && fake_peer_queries(peer) == queries; i++)
        uv_run(&loop, UV_RUN_NOWAIT);
    CHECK_EQ(fake_peer_queries(peer), queries + 1);
    CHECK_INT(busy_handles(), >, 0); /* the wait for the answer */
    close_db(db);
    CHECK_EQ(d.calls, 0);
    CHECK_EQ(busy_handles(), 0);
    fake_peer_mode_set(peer, PEER_ANSWER);
}

/* A port nothing listens on: bound, read, closed. */
static unsigned closed_port(void) {
    uv_tcp_t t;
    struct sockaddr_in a;
    struct sockaddr_storage got;
    int len = sizeof(got);
    uv_tcp_init(&loop, &t);
    uv_ip4_addr("127.0.0.1", 0, &a);
    CHECK_EQ(uv_tcp_bind(&t, (const struct sockaddr *)&a, 0), 0);
    CHECK_EQ(uv_tcp_getsockname(&t, (struct sockaddr *)&got, &len), 0);
    uv_close((uv_handle_t *)&t, NULL);
    uv_run(&loop, UV_RUN_NOWAIT);
    return ntohs(((struct sockaddr_in *)&got)->sin_port);
}

/* Two nodes, the first refusing: the round's session is made on the second,
 * and the first node's refusal is not the session's (it was once taken for
 * a loss, and the owner reconnected forever). After the failback period the
 * session tries the first node again, is refused again, and is made on the
 * second once more, whole; the next try waits a period. */
static void a_node_refused_in_a_round_is_not_the_sessions_loss(void) {
    static ob_db_node two[2];
    static ob_db_config cfg;
    two[0] = (ob_db_node){"127.0.0.1", closed_port()};
    two[1] = (ob_db_node){"127.0.0.1", (unsigned)fake_peer_port(peer)};
    memset(&cfg, 0, sizeof(cfg));
    cfg.nodes = two;
    cfg.n_nodes = 2;
    cfg.user = "relay";
    cfg.database = "db";
    cfg.op_timeout_ms = 5000;
    cfg.failback_ms = 1000;
    ob_db *db = ob_db_new(&loop, &cfg, &lg, "test");
    CHECK(db != NULL);
    connect_ok(db);
    CHECK(!ob_db_lost(db));
    CHECK_EQ(ob_db_failback_due(db), 0);
    CHECK_EQ(ob_db_failback(db), 0);
    uv_sleep(1050);
    uv_update_time(&loop);
    CHECK_EQ(ob_db_failback_due(db), 1);
    CHECK_EQ(ob_db_failback(db), 1); /* the session dropped, the first node next */
    connect_ok(db);
    CHECK(!ob_db_lost(db));
    CHECK_EQ(ob_db_failback_due(db), 0); /* a period before the next try */
    done d = {0, 0};
    CHECK_EQ(ob_db_query(db, "DO 5", 4, on_done, &d), 0);
    run_until(&d.calls);
    CHECK_EQ(d.ok, 1);
    close_db(db);
}

int main(void) {
    uv_loop_init(&loop);
    uv_timer_init(&loop, &tick);
    peer = fake_peer_new(&loop);
    CHECK(peer != NULL);
    one_operation_at_a_time_and_disarmed_after_each();
    a_silent_server_fails_the_query_as_lost();
    a_closed_connection_is_lost();
    a_close_while_waiting();
    a_node_refused_in_a_round_is_not_the_sessions_loss();
    fake_peer_close(peer);
    peer = NULL;
    uv_close((uv_handle_t *)&tick, NULL);
    uv_run(&loop, UV_RUN_DEFAULT);
    CHECK_EQ(uv_loop_close(&loop), 0);
    puts("test_db: ok");
    return 0;
}
