/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One MariaDB connection's state machine (the rules it keeps are at the top
 * of db.h). Every change of state goes through set_state(); db_run() hands
 * each wake-up of the poll handle or the wait timer to the step of the
 * current state, which calls into the library once.
 *   DOWN --connect--> RESOLVING --address--> CONNECTING --ok--> QUERYING (@@wait_timeout)
 *   DOWN --connect, unix socket------------> CONNECTING
 *   RESOLVING / CONNECTING --no address, no CA, refused, timed out--> DOWN
 *
 *   IDLE --query--> QUERYING --ok--> STORING --last result--> IDLE
 *                                     |   ^
 *                        more results v   | ok
 *                                     NEXT --none left--> IDLE
 *
 *   a statement error (connection kept): QUERYING / STORING / NEXT --> IDLE
 *   the connection lost in any step, or ob_db_reset()              --> DOWN
 *   IDLE, watched (ob_db_watch) --the server closed it, keepalive gave up--> DOWN
 *   IDLE --half the session's wait_timeout idle--> PINGING --ok--> IDLE
 *        (a query asked for meanwhile waits for the ping: PINGING --ok--> QUERYING)
 *   close: IDLE --> QUITTING (COM_QUIT) --> DOWN --> CLOSED;
 *          RESOLVING --> CLOSED; any other state --> DOWN --> CLOSED.
 *          The object is freed once its handles are closed.
 */
#include "db_int.h"

#include "db_int.h"
#include "db_nodes.h"
#include "db_socket.h"

#include <errmsg.h>
#include <errno.h>
#include <mysqld_error.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static const char *const state_names[] = {
    [DB_DOWN] = "down",     [DB_RESOLVING] = "resolving", [DB_CONNECTING] = "connecting",
    [DB_IDLE] = "idle",     [DB_QUERYING] = "querying",   [DB_STORING] = "storing",
    [DB_NEXT] = "next",     [DB_PINGING] = "pinging",     [DB_QUITTING] = "quitting",
    [DB_CLOSED] = "closed",
};

static void db_run(ob_db *db, int ev);
static void connect_failed(ob_db *db);

static void set_state(ob_db *db, db_state s) {
    if (db->state != s)
        OB_DEBUG(db->log, "%s: %s -> %s", db->name, state_names[db->state], state_names[s]);
    db->state = s;
}

ob_db *ob_db_new(uv_loop_t *loop, const ob_db_config *cfg, const ob_log *log, const char *name) {
    ob_db *db = calloc(1, sizeof(*db));
    if (db == NULL)
        return NULL;
    db->loop = loop;
    db->log = log;
    if (ob_db_take_config(db, cfg, name) != 0) {
        ob_db_free_config(db);
        free(db);
        return NULL;
    }
    ob_db_nodes_join(&db->nodes, cfg->group);
    uv_timer_init(loop, &db->wait_timer);
    uv_timer_init(loop, &db->op_timer);
    uv_timer_init(loop, &db->keep_timer);
    uv_unref((uv_handle_t *)&db->keep_timer); /* an idle connection keeps no loop alive */
    db->wait_timer.data = db;
    db->op_timer.data = db;
    db->keep_timer.data = db;
    db->open_handles = 3;
    set_state(db, DB_DOWN);
    return db;
}

static void free_results(ob_db *db) {
    for (int i = 0; i < db->nres; i++)
        mysql_free_result(db->res[i]); /* NULL is a no-op */
    db->nres = 0;
}

static void set_error(ob_db *db, unsigned no, const char *msg) {
    db->err_no = no;
    snprintf(db->err, sizeof(db->err), "%s", msg ? msg : "unknown error");
    if (ob_db_errno_is_lost(no))
        db->lost = 1;
}

static void set_mysql_error(ob_db *db) {
    set_error(db, mysql_errno(db->m), mysql_error(db->m));
}

/* --- poll handles -------------------------------------------------------- */

/* One handle (or the pending getaddrinfo request) finished closing. The
 * object is freed with the last one, once ob_db_close() has begun. */
static void handle_gone(ob_db *db) {
    if (--db->open_handles > 0 || db->state != DB_CLOSED)
        return;
    ob_db_close_cb cb = db->close_cb;
    void *data = db->close_data;
    free(db);
    if (cb)
        cb(data);
}

static void poll_closed(uv_handle_t *h) {
    ob_db *db = h->data;
    free(h);
    handle_gone(db);
}

/* Closes the poll handle now. uv_close removes the fd from epoll at once, so
 * afterwards the library may close the socket and reuse its number. */
static void poll_release(ob_db *db) {
    if (db->poll == NULL)
        return;
    db->open_handles++;
    db->poll->h.data = db;
    uv_close((uv_handle_t *)&db->poll->h, poll_closed);
    db->poll = NULL;
}

static void disarm(ob_db *db) {
    if (db->poll)
        uv_poll_stop(&db->poll->h);
    uv_timer_stop(&db->wait_timer);
}

static void on_poll(uv_poll_t *h, int status, int events) {
    ob_db *db = h->data;
    int ev = 0;
    if (status < 0)
        ev = MYSQL_WAIT_READ | MYSQL_WAIT_WRITE; /* let the library see the error */
    if (events & UV_READABLE)
        ev |= MYSQL_WAIT_READ;
    if (events & UV_WRITABLE)
        ev |= MYSQL_WAIT_WRITE;
    if (events & UV_PRIORITIZED)
        ev |= MYSQL_WAIT_EXCEPT;
    disarm(db);
    db_run(db, ev);
}

static void on_wait_timer(uv_timer_t *t) {
    ob_db *db = t->data;
    disarm(db);
    db_run(db, MYSQL_WAIT_TIMEOUT);
}

/* Makes the operation in progress fail soon by shutting the socket down; its
 * callback then runs with a lost connection. */
static void abort_op(ob_db *db) {
    if (db->m == NULL)
        return;
    switch (db->state) {
    case DB_CONNECTING:
    case DB_QUERYING:
    case DB_STORING:
    case DB_NEXT:
    case DB_PINGING:
    case DB_QUITTING: {
        int fd = (int)mysql_get_socket(db->m);
        if (fd >= 0)
            shutdown(fd, SHUT_RDWR);
        break;
    }
    default:
        break;
    }
}

static void on_op_timer(uv_timer_t *t) {
    ob_db *db = t->data;
    char busy[400];
    int said = db->state == DB_CONNECTING || db->state == DB_QUITTING
                   ? 0
                   : ob_db_nodes_busy(&db->nodes, uv_now(db->loop), db->cfg.op_timeout_ms, busy,
                                      sizeof(busy));
    if (said) { /* the node answers its probe: not dead */
        ob_logf(db->log, said > 1 ? OUTBOX_LOG_WARN : OUTBOX_LOG_DEBUG, "%s: %s", db->name, busy);
        abort_op(db);
        return;
    }
    /* A silent server misses every deadline: said once, repeats at debug. */
    ob_logf(db->log, db->late_said ? OUTBOX_LOG_DEBUG : OUTBOX_LOG_WARN,
            "%s: database operation exceeded %u ms; dropping the connection", db->name,
            (unsigned)db->cfg.op_timeout_ms);
    db->late_said = 1;
    ob_db_nodes_silent(&db->nodes, db->cfg.op_timeout_ms,
                       db->state != DB_CONNECTING && db->state != DB_QUITTING);
    abort_op(db);
}

/* Waits for what the library asked for. Returns 0, or -1 when the wait could
 * not be set up (then the connection is treated as lost). */
static int arm(ob_db *db, int wait) {
    if (wait & (MYSQL_WAIT_READ | MYSQL_WAIT_WRITE | MYSQL_WAIT_EXCEPT)) {
        int fd = (int)mysql_get_socket(db->m);
        if (db->poll && db->poll->fd != fd)
            poll_release(db);
        if (db->poll == NULL) {
            db_poll *p = calloc(1, sizeof(*p));
            if (p == NULL)
                return -1;
            if (uv_poll_init_socket(db->loop, &p->h, fd) != 0) {
                free(p);
                return -1;
            }
            p->fd = fd;
            p->h.data = db;
            db->poll = p;
        }
        int events = 0;
        if (wait & MYSQL_WAIT_READ)
            events |= UV_READABLE;
        if (wait & MYSQL_WAIT_WRITE)
            events |= UV_WRITABLE;
        if (wait & MYSQL_WAIT_EXCEPT)
            events |= UV_PRIORITIZED;
        uv_ref((uv_handle_t *)&db->poll->h); /* unreferenced while idle */
        if (uv_poll_start(&db->poll->h, events, on_poll) != 0)
            return -1;
    }
    if (wait & MYSQL_WAIT_TIMEOUT)
        uv_timer_start(&db->wait_timer, on_wait_timer, mysql_get_timeout_value_ms(db->m), 0);
    return 0;
}

/* --- completion ---------------------------------------------------------- */

static void watch_idle(ob_db *db);
static void on_keep_timer(uv_timer_t *t);

/* The connection went idle: it is pinged after half the session's
 * wait_timeout, so that the server does not end a live relay's session
 * (an operator's wait_timeout still ends a frozen relay's, and its locks). */
static void keep_idle(ob_db *db) {
    db->idle_since = uv_now(db->loop);
    if (db->wait_timeout_s)
        uv_timer_start(&db->keep_timer, on_keep_timer, (uint64_t)db->wait_timeout_s * 500, 0);
}

/* The connect's last step read the session's wait_timeout. Failing to read
 * it, short of a loss, leaves the pings off but the connection up. */
static int read_wait_timeout(ob_db *db, int ok) {
    db->reading_timeout = 0;
    MYSQL_RES *res = ok ? ob_db_result(db, 0) : NULL;
    MYSQL_ROW row = res ? mysql_fetch_row(res) : NULL;
    db->wait_timeout_s = row && row[0] ? (unsigned)strtoul(row[0], NULL, 10) : 0;
    free_results(db);
    if (db->lost || db->state != DB_IDLE)
        return 0;
    db->err_no = 0;
    db->err[0] = '\0';
    return 1;
}

static void finish(ob_db *db, int ok) {
    if (db->reading_timeout)
        ok = read_wait_timeout(db, ok);
    uv_timer_stop(&db->op_timer);
    if (ok)
        db->late_said = 0;
    if (db->state == DB_IDLE) {
        watch_idle(db);
        keep_idle(db);
    }
    ob_db_cb cb = db->cb;
    db->cb = NULL;
    if (cb)
        cb(db, ok, db->cb_data);
}

/* Forgets the MYSQL handle after a failure (keep: not the stored results,
 * which need no handle). The socket is shut first: close cannot wait. */
static void forget_handle(ob_db *db, int keep) {
    disarm(db);
    poll_release(db);
    uv_timer_stop(&db->keep_timer);
    db->queued = db->reading_timeout = 0;
    db->wait_timeout_s = 0;
    if (!keep)
        free_results(db);
    if (db->m) {
        int fd = (int)mysql_get_socket(db->m);
        if (fd >= 0)
            shutdown(fd, SHUT_RDWR);
        mysql_close(db->m);
        db->m = NULL;
    }
    db->nodes.fd = -1;
    set_state(db, DB_DOWN);
}

static void op_failed(ob_db *db) {
    set_mysql_error(db);
    if (db->lost)
        ob_db_name_idle_close(db, db->op_started, db->err, sizeof(db->err));
    if (db->lost) {
        OB_DEBUG(db->log, "%s: connection lost: %s", db->name, db->err);
        forget_handle(db, 0);
    } else {
        free_results(db);
        set_state(db, DB_IDLE);
    }
    finish(db, 0);
}

/* --- the idle watch ------------------------------------------------------ */

/* Nothing is due from the server while no statement runs: the socket turns
 * readable only when the server closed the connection or spoke before
 * closing it, and reports an error when the network reset it or keepalive
 * gave up. No call into the library is made here, so no read-ahead is
 * lost; the poll is stopped before the next statement starts. */
static void on_idle_poll(uv_poll_t *h, int status, int events) {
    (void)events;
    ob_db *db = h->data;
    char why[160];
    if (db->state != DB_IDLE) {
        uv_poll_stop(h);
        return;
    }
    int fd = (int)mysql_get_socket(db->m);
    if (status < 0)
        snprintf(why, sizeof(why), "the connection failed while it was idle: %s",
                 uv_strerror(status));
    else if (!ob_db_socket_closed(fd, why, sizeof(why)))
        return;
    ob_db_name_idle_close(db, uv_now(db->loop), why, sizeof(why));
    set_error(db, CR_SERVER_LOST, why);
    db->lost = 1;
    OB_DEBUG(db->log, "%s: connection lost: %s", db->name, why);
    forget_handle(db, 1); /* a worker may still publish the last result's rows */
    if (db->watch_cb)
        db->watch_cb(db, 0, db->watch_data);
}

static void watch_idle(ob_db *db) {
    if (db->watch_cb == NULL || db->m == NULL)
        return;
    int fd = (int)mysql_get_socket(db->m);
    if (fd < 0)
        return;
    if (db->poll && db->poll->fd != fd)
        poll_release(db);
    if (db->poll == NULL) {
        db_poll *p = calloc(1, sizeof(*p));
        if (p == NULL || uv_poll_init_socket(db->loop, &p->h, fd) != 0) {
            free(p);
            return; /* unwatched: the next statement finds the loss */
        }
        p->fd = fd;
        p->h.data = db;
        db->poll = p;
    }
    /* A connection with nothing to do keeps no loop alive. */
    uv_unref((uv_handle_t *)&db->poll->h);
    uv_poll_start(&db->poll->h, UV_READABLE | UV_DISCONNECT, on_idle_poll);
}

void ob_db_watch(ob_db *db, ob_db_cb cb, void *data) {
    db->watch_cb = cb;
    db->watch_data = data;
    if (db->state == DB_IDLE)
        watch_idle(db);
}

/* --- TLS ----------------------------------------------------------------- */

/* The host handed to the library: the address resolved on the loop, except
 * when TLS must check a host name, which the library checks against what it
 * was given. */
static const char *connect_host(const ob_db *db) {
    if (db->cfg.socket)
        return "localhost";
    const char *host = ob_db_nodes_host(&db->nodes);
    if (db->cfg.tls && !db->cfg.tls_no_verify_host && !ob_db_is_address(host))
        return host;
    return db->addr;
}

static void set_connect_error(ob_db *db) {
    char buf[480];
    unsigned no = mysql_errno(db->m);
    set_error(db, no,
              ob_db_connect_error_text(no, mysql_error(db->m), db->cfg.tls, buf, sizeof(buf)));
}

/* --- the state machine --------------------------------------------------- */

/* Each step calls into the library for one state. It returns the wait mask
 * the library asked for (> 0), STEP_NEXT when the state changed and the
 * next step must start at once (the library reads ahead), or STEP_DONE when
 * the operation ended and its callback ran. */
enum { STEP_DONE = -1, STEP_NEXT = 0 };

static int step_connecting(ob_db *db, int ev) {
    /* The library may close and reopen sockets while connecting (one per
     * address), so the poll handle is closed before every call: uv_close
     * takes the fd out of epoll while the fd is still ours. */
    poll_release(db);
    /* With TLS, one of these calls holds the handshake's blocking wait:
     * measure the longest. */
    uint64_t t0 = uv_hrtime();
    int wait = ev ? mysql_real_connect_cont(&db->ret_conn, db->m, ev)
                  : mysql_real_connect_start(
                        &db->ret_conn, db->m, connect_host(db), db->cfg.user, db->cfg.password,
                        db->cfg.database, db->cfg.socket ? 0 : ob_db_nodes_port(&db->nodes),
                        db->cfg.socket, CLIENT_MULTI_STATEMENTS | CLIENT_MULTI_RESULTS);
    uint64_t us = (uv_hrtime() - t0) / 1000;
    if (us > db->connect_block_us)
        db->connect_block_us = us;
    if (wait)
        return wait;
    if (db->ret_conn == NULL) {
        set_connect_error(db);
        db->lost = 1;
        forget_handle(db, 0);
        connect_failed(db);
        return STEP_DONE;
    }
    if (db->cfg.tls && ob_db_socket_nonblocking((int)mysql_get_socket(db->m)) != 0) {
        set_error(db, CR_SERVER_LOST, "cannot make the database socket non-blocking");
        forget_handle(db, 0);
        finish(db, 0);
        return STEP_DONE;
    }
    if (!db->cfg.socket && ob_db_socket_keepalive((int)mysql_get_socket(db->m)) != 0)
        OB_WARN(db->log, "%s: cannot turn TCP keepalive on (%s): a dead server may go unnoticed",
                db->name, strerror(errno));
    set_state(db, DB_IDLE);
    /* A node tried before in this round may have failed: its error is not
     * this session's. */
    db->lost = 0;
    db->err_no = 0;
    db->err[0] = '\0';
    char moved[640];
    db->nodes.fd = (int)mysql_get_socket(db->m);
    if (ob_db_nodes_up(&db->nodes, uv_now(db->loop), moved, sizeof(moved)))
        OB_INFO(db->log, "%s: %s", db->name, moved);
    OB_DEBUG(db->log, "%s: connected (session %lu%s%s, longest connect call %llu us)", db->name,
             mysql_thread_id(db->m), db->cfg.tls ? ", TLS " : "",
             db->cfg.tls ? ob_db_tls_cipher(db) : "", (unsigned long long)db->connect_block_us);
    /* The session's wait_timeout, for the pings (keep_idle), is read before
     * the owner hears of the connection. */
    free_results(db); /* those a lost session kept for its owner */
    db->reading_timeout = 1;
    db->sql = "SELECT @@SESSION.wait_timeout";
    db->sql_len = strlen(db->sql);
    set_state(db, DB_QUERYING);
    return STEP_NEXT;
}

static int step_querying(ob_db *db, int ev) {
    int wait =
        ev ? mysql_real_query_cont(&db->ret_int, db->m, ev)
           : mysql_real_query_start(&db->ret_int, db->m, db->sql, (unsigned long)db->sql_len);
    if (wait)
        return wait;
    if (db->ret_int != 0) {
        op_failed(db);
        return STEP_DONE;
    }
    set_state(db, DB_STORING);
    return STEP_NEXT;
}

static int step_storing(ob_db *db, int ev) {
    int wait = ev ? mysql_store_result_cont(&db->ret_res, db->m, ev)
                  : mysql_store_result_start(&db->ret_res, db->m);
    if (wait)
        return wait;
    if (db->ret_res == NULL && mysql_field_count(db->m) != 0) {
        op_failed(db);
        return STEP_DONE;
    }
    if (db->nres < OB_DB_MAX_RESULTS) {
        db->res[db->nres] = db->ret_res;
        db->affected[db->nres] = db->ret_res ? 0 : (uint64_t)mysql_affected_rows(db->m);
        db->nres++;
    } else if (db->ret_res) {
        mysql_free_result(db->ret_res);
    }
    if (!mysql_more_results(db->m)) {
        set_state(db, DB_IDLE);
        finish(db, 1);
        return STEP_DONE;
    }
    set_state(db, DB_NEXT);
    return STEP_NEXT;
}

static int step_next(ob_db *db, int ev) {
    int wait = ev ? mysql_next_result_cont(&db->ret_int, db->m, ev)
                  : mysql_next_result_start(&db->ret_int, db->m);
    if (wait)
        return wait;
    if (db->ret_int > 0) {
        op_failed(db);
        return STEP_DONE;
    }
    if (db->ret_int < 0) {
        set_state(db, DB_IDLE);
        finish(db, 1);
        return STEP_DONE;
    }
    set_state(db, DB_STORING);
    return STEP_NEXT;
}

static void start_query(ob_db *db);

/* A ping that fails means the connection is gone: a query waiting for it
 * fails with it, and otherwise the watch hears of it, as of a loss found
 * while idle. */
static int step_pinging(ob_db *db, int ev) {
    int wait =
        ev ? mysql_ping_cont(&db->ret_int, db->m, ev) : mysql_ping_start(&db->ret_int, db->m);
    if (wait)
        return wait;
    uv_timer_stop(&db->op_timer);
    int queued = db->queued;
    if (db->ret_int != 0) {
        set_mysql_error(db);
        ob_db_name_idle_close(db, uv_now(db->loop), db->err, sizeof(db->err));
        db->lost = 1;
        OB_DEBUG(db->log, "%s: connection lost: %s", db->name, db->err);
        forget_handle(db, !queued);
        ob_db_cb cb = queued ? db->cb : db->watch_cb;
        void *data = queued ? db->cb_data : db->watch_data;
        db->cb = NULL;
        if (cb)
            cb(db, 0, data);
        return STEP_DONE;
    }
    db->queued = 0;
    set_state(db, DB_IDLE);
    if (queued) {
        start_query(db);
    } else {
        watch_idle(db);
        keep_idle(db);
    }
    return STEP_DONE;
}

static int step_quitting(ob_db *db, int ev) {
    poll_release(db); /* mysql_close closes the socket */
    int wait = ev ? mysql_close_cont(db->m, ev) : mysql_close_start(db->m);
    if (wait)
        return wait;
    db->m = NULL;
    db->nodes.fd = -1;
    set_state(db, DB_DOWN);
    finish(db, 1);
    return STEP_DONE;
}

/* The state machine: one step after another until the library asks to
 * wait (then the poll handle or a timer brings the next event) or the
 * operation ends. */
static void db_run(ob_db *db, int ev) {
    for (;;) {
        int r;
        switch (db->state) {
        case DB_CONNECTING:
            r = step_connecting(db, ev);
            break;
        case DB_QUERYING:
            r = step_querying(db, ev);
            break;
        case DB_STORING:
            r = step_storing(db, ev);
            break;
        case DB_NEXT:
            r = step_next(db, ev);
            break;
        case DB_PINGING:
            r = step_pinging(db, ev);
            break;
        case DB_QUITTING:
            r = step_quitting(db, ev);
            break;
        case DB_DOWN:
        case DB_RESOLVING:
        case DB_IDLE:
        case DB_CLOSED:
        default:
            return; /* nothing is suspended in the library: a stray wake-up */
        }
        if (r == STEP_DONE)
            return;
        if (r == STEP_NEXT) {
            ev = 0;
            continue;
        }
        if (arm(db, r) != 0) {
            set_error(db, CR_SERVER_LOST, "could not watch the database socket");
            forget_handle(db, 0);
            finish(db, 0);
        }
        return;
    }
}

/* --- connect ------------------------------------------------------------- */

static void start_connect(ob_db *db) {
    if (db->cfg.tls && db->cfg.tls_no_verify_host && !db->cfg.tls_ca && !ob_db_system_ca_file()) {
        /* The library would not verify the chain at all: refuse instead. */
        set_error(db, CR_SSL_CONNECTION_ERROR,
                  "TLS: no CA to verify the server against (the system store has no CA file): "
                  "give --db-tls-ca");
        db->lost = 1;
        set_state(db, DB_DOWN);
        finish(db, 0);
        return;
    }
    if ((db->m = ob_db_mysql_new(&db->cfg)) == NULL) {
        set_error(db, CR_OUT_OF_MEMORY, "out of memory");
        db->lost = 1;
        set_state(db, DB_DOWN);
        finish(db, 0);
        return;
    }
    set_state(db, DB_CONNECTING);
    db->connect_block_us = 0;
    if (db->cfg.op_timeout_ms)
        uv_timer_start(&db->op_timer, on_op_timer, db->cfg.op_timeout_ms, 0);
    db_run(db, 0);
}

static void on_resolved(uv_getaddrinfo_t *req, int status, struct addrinfo *res) {
    ob_db *db = req->data;
    db->resolving = 0;
    if (db->state == DB_CLOSED) {
        uv_freeaddrinfo(res);
        handle_gone(db);
        return;
    }
    if (status != 0 || res == NULL) {
        char msg[300];
        snprintf(msg, sizeof(msg), "cannot resolve database host '%s': %s",
                 ob_db_nodes_host(&db->nodes), uv_strerror(status));
        set_error(db, CR_UNKNOWN_HOST, msg);
        db->lost = 1;
        set_state(db, DB_DOWN);
        uv_freeaddrinfo(res);
        connect_failed(db);
        return;
    }
    if (res->ai_family == AF_INET6)
        uv_ip6_name((struct sockaddr_in6 *)res->ai_addr, db->addr, sizeof(db->addr));
    else
        uv_ip4_name((struct sockaddr_in *)res->ai_addr, db->addr, sizeof(db->addr));
    uv_freeaddrinfo(res);
    start_connect(db);
}

/* Connects to the current node: resolves its name first, on the loop. */
static int connect_node(ob_db *db) {
    if (db->cfg.socket) {
        start_connect(db);
        return 0;
    }
    struct addrinfo hints;
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    set_state(db, DB_RESOLVING);
    db->resolve_req.data = db;
    db->resolving = 1;
    int rc = uv_getaddrinfo(db->loop, &db->resolve_req, on_resolved, ob_db_nodes_host(&db->nodes),
                            NULL, &hints);
    if (rc != 0) {
        db->resolving = 0;
        set_state(db, DB_DOWN);
        return -1;
    }
    return 0;
}

/* A connect to the current node failed (the handle is down): the next node
 * of the round is tried at once, or the round fails. */
static void connect_failed(ob_db *db) {
    uv_timer_stop(&db->op_timer);
    if (!ob_db_errno_is_permanent(db->err_no) && ob_db_nodes_failed(&db->nodes, db->err)) {
        OB_DEBUG(db->log, "%s: %s; trying the next node", db->name, db->err);
        if (connect_node(db) == 0)
            return;
        set_error(db, CR_OUT_OF_MEMORY, "cannot resolve the database host (out of memory)");
        db->lost = 1;
    } else if (!ob_db_errno_is_permanent(db->err_no)) {
        ob_db_nodes_round_failed(&db->nodes, db->err, sizeof(db->err));
    }
    finish(db, 0);
}

int ob_db_connect(ob_db *db, ob_db_cb cb, void *data) {
    if (db->state != DB_DOWN || db->resolving)
        return -1;
    if (db->lost) /* the last session ended with its node lost */
        ob_db_nodes_lost(&db->nodes, db->err);
    ob_db_nodes_round(&db->nodes);
    db->cb = cb;
    db->cb_data = data;
    db->lost = 0;
    db->err_no = 0;
    db->err[0] = '\0';
    return connect_node(db);
}

int ob_db_failback_due(const ob_db *db) {
    return db->state == DB_IDLE &&
           ob_db_nodes_failback_due(&db->nodes, uv_now(db->loop), db->cfg.failback_ms);
}

int ob_db_failback(ob_db *db) {
    uint64_t now = uv_now(db->loop);
    int due = ob_db_failback_due(db);
    if (!due)
        return 0;
    OB_DEBUG(db->log, "%s: trying the first database node again", db->name);
    ob_db_reset(db);
    ob_db_nodes_failback(&db->nodes, now, db->cfg.failback_ms);
    return due;
}

void ob_db_node_answered(ob_db *db) {
    ob_db_nodes_answered(&db->nodes, uv_now(db->loop));
}

void ob_db_leave_node(ob_db *db, const char *why) {
    ob_db_reset(db);
    set_error(db, CR_SERVER_LOST, why);
    db->lost = 1;
}

/* --- query --------------------------------------------------------------- */

static void start_query(ob_db *db) {
    free_results(db);
    db->err_no = 0;
    db->err[0] = '\0';
    disarm(db); /* the idle watch: the library reads the socket now */
    uv_timer_stop(&db->keep_timer);
    db->op_started = uv_now(db->loop);
    set_state(db, DB_QUERYING);
    if (db->cfg.op_timeout_ms)
        uv_timer_start(&db->op_timer, on_op_timer, db->cfg.op_timeout_ms, 0);
    db_run(db, 0);
}

int ob_db_query(ob_db *db, const char *sql, size_t len, ob_db_cb cb, void *data) {
    if (db->state != DB_IDLE && (db->state != DB_PINGING || db->queued))
        return -1;
    db->cb = cb;
    db->cb_data = data;
    db->sql = sql;
    db->sql_len = len;
    if (db->state == DB_PINGING)
        db->queued = 1; /* sent once the ping has its answer */
    else
        start_query(db);
    return 0;
}

/* Half the session's wait_timeout passed without a statement: ping. */
static void on_keep_timer(uv_timer_t *t) {
    ob_db *db = t->data;
    if (db->state != DB_IDLE)
        return;
    disarm(db);
    set_state(db, DB_PINGING);
    if (db->cfg.op_timeout_ms)
        uv_timer_start(&db->op_timer, on_op_timer, db->cfg.op_timeout_ms, 0);
    db_run(db, 0);
}

/* --- stopping ------------------------------------------------------------ */

void ob_db_reset(ob_db *db) {
    uv_timer_stop(&db->op_timer);
    db->cb = NULL;
    if (db->state == DB_RESOLVING) {
        uv_cancel((uv_req_t *)&db->resolve_req);
        /* on_resolved still runs (cancelled); it sees no callback to call. */
        set_state(db, DB_DOWN);
        return;
    }
    forget_handle(db, 0);
}

static void timer_closed(uv_handle_t *h) {
    handle_gone(h->data);
}

static void close_handles(ob_db *db) {
    free_results(db);
    set_state(db, DB_CLOSED);
    ob_db_nodes_leave(&db->nodes);
    ob_db_free_config(db);
    if (db->resolving) {
        db->open_handles++;
        uv_cancel((uv_req_t *)&db->resolve_req);
    }
    uv_close((uv_handle_t *)&db->wait_timer, timer_closed);
    uv_close((uv_handle_t *)&db->op_timer, timer_closed);
    uv_close((uv_handle_t *)&db->keep_timer, timer_closed);
}

static void quit_done(ob_db *db, int ok, void *data) {
    (void)ok;
    (void)data;
    close_handles(db);
}

void ob_db_close(ob_db *db, ob_db_close_cb cb, void *data) {
    db->close_cb = cb;
    db->close_data = data;
    uv_timer_stop(&db->op_timer);
    if (db->state == DB_IDLE) {
        /* A polite COM_QUIT, bounded by a short deadline. */
        free_results(db);
        db->cb = quit_done;
        db->cb_data = NULL;
        set_state(db, DB_QUITTING);
        uv_timer_start(&db->op_timer, on_op_timer, 500, 0);
        db_run(db, 0);
        return;
    }
    if (db->state == DB_RESOLVING) {
        /* close_handles() cancels the request and waits for its callback. */
        db->cb = NULL;
        close_handles(db);
        return;
    }
    db->cb = NULL;
    forget_handle(db, 0);
    close_handles(db);
}
