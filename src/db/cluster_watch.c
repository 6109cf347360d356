/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The cluster watch's state machine (see cluster_watch.h).
 *
 *   NEW ----start--> CONNECTING
 *   CONNECTING ---ok--> PROBING (the probe, at once)
 *    |          fail--> CONNECT_WAIT --timer--> CONNECTING
 *   PROBING ------ok--> RESTING (the owner is told)
 *    |          lost--> CONNECT_WAIT
 *    |   other error--> RESTING (the owner is told: not known)
 *   RESTING ---timer--> PROBING
 *   any state --close--> CLOSING
 *
 * Every change goes through set_state(); one dispatch() over the events.
 */
#include "cluster_watch.h"

#include <stdlib.h>
#include <string.h>

#include "db_life.h"

typedef enum watch_state {
    WS_NEW,          /* created, not started */
    WS_CONNECTING,   /* waiting for the connection */
    WS_CONNECT_WAIT, /* waiting before connecting again */
    WS_PROBING,      /* waiting for the probe's answer */
    WS_RESTING,      /* waiting for the next probe */
    WS_CLOSING       /* waiting for the timer and the connection to close */
} watch_state;

static const char *const state_names[] = {
    [WS_NEW] = "new",         [WS_CONNECTING] = "connecting", [WS_CONNECT_WAIT] = "connect-wait",
    [WS_PROBING] = "probing", [WS_RESTING] = "resting",       [WS_CLOSING] = "closing",
};

typedef enum watch_event { WE_START, WE_DB_OK, WE_DB_FAILED, WE_TIMER } watch_event;

struct ob_cluster_watch {
    uv_loop_t *loop;
    const ob_log *log;
    ob_db_config dbcfg;
    uint32_t interval_ms;
    ob_cluster_watch_callbacks cbs;
    watch_state state;
    ob_db *db;
    uv_timer_t timer;
    ob_db_life life;   /* not in the gauge of connections up: it reads no rows */
    int fresh;         /* the next answer is the connection's first */
    ob_cluster last;   /* the last answer */
    ob_cluster logged; /* the last one logged at info level */
};

static void dispatch(ob_cluster_watch *w, watch_event ev);

static void set_state(ob_cluster_watch *w, watch_state s) {
    if (w->state != s)
        OB_DEBUG(w->log, "cluster watch: %s -> %s", state_names[w->state], state_names[s]);
    w->state = s;
}

static void on_db(ob_db *db, int ok, void *data) {
    (void)db;
    dispatch(data, ok ? WE_DB_OK : WE_DB_FAILED);
}

static void on_timer(uv_timer_t *t) {
    dispatch(t->data, WE_TIMER);
}

/* The connection is gone or was never made: connect again after the
 * backoff. */
static void connect_later(ob_cluster_watch *w) {
    ob_db_life_down(&w->life);
    ob_db_reset(w->db);
    set_state(w, WS_CONNECT_WAIT);
    uv_timer_start(&w->timer, on_timer, ob_db_life_backoff(&w->life), 0);
}

static void connect_db(ob_cluster_watch *w) {
    set_state(w, WS_CONNECTING);
    w->fresh = 1;
    if (ob_db_connect(w->db, on_db, w) != 0)
        connect_later(w);
}

static void probe(ob_cluster_watch *w) {
    set_state(w, WS_PROBING);
    if (ob_db_query(w->db, ob_cluster_sql, strlen(ob_cluster_sql), on_db, w) != 0)
        connect_later(w);
}

/* Tells the owner, after logging what changed. */
static void tell(ob_cluster_watch *w, const ob_cluster *c) {
    int fresh = w->fresh;
    w->fresh = 0;
    w->last = *c;
    if (c->known && ob_cluster_differs(c, &w->logged)) {
        char d[400];
        ob_cluster_describe(c, d, sizeof(d));
        OB_INFO(w->log, "database: %s", d);
        w->logged = *c;
    }
    w->cbs.seen(w->cbs.data, c, fresh);
}

static void on_answer(ob_cluster_watch *w) {
    ob_cluster c;
    char **row, why[160];
    ob_cluster_init(&c);
    while ((row = ob_db_next_row(w->db, 0, NULL)) != NULL)
        ob_cluster_set(&c, row[0], row[1]);
    c.known = 1; /* no row at all: a server built without wsrep */
    if (w->dbcfg.n_nodes > 1 && ob_cluster_unfit(&c, why, sizeof(why))) {
        /* Another node may serve: the watch moves on (the relay's other
         * connections meet error 1047 on this node and move by themselves). */
        OB_DEBUG(w->log, "cluster watch: %s", why);
        ob_db_leave_node(w->db, why);
        set_state(w, WS_CONNECT_WAIT);
        uv_timer_start(&w->timer, on_timer, ob_db_life_backoff(&w->life), 0);
        tell(w, &c);
        return;
    }
    ob_db_node_answered(w->db);
    ob_db_life_worked(&w->life);
    set_state(w, WS_RESTING);
    uv_timer_start(&w->timer, on_timer, w->interval_ms, 0);
    tell(w, &c);
}

static void on_failed(ob_cluster_watch *w) {
    unsigned err = ob_db_errno(w->db);
    if (w->state == WS_CONNECTING || ob_db_lost(w->db) || ob_db_errno_is_lost(err)) {
        OB_DEBUG(w->log, "cluster watch: %u %s", err, ob_db_error(w->db));
        connect_later(w);
        return;
    }
    /* The statement itself was refused: what the server is stays unknown. */
    if (ob_db_life_say(&w->life, err))
        OB_WARN(w->log, "database: cannot tell whether it is a cluster node: %u %s", err,
                ob_db_error(w->db));
    set_state(w, WS_RESTING);
    uv_timer_start(&w->timer, on_timer, w->interval_ms, 0);
    ob_cluster c;
    ob_cluster_init(&c);
    tell(w, &c);
}

static void dispatch(ob_cluster_watch *w, watch_event ev) {
    switch (ev) {
    case WE_START:
        if (w->state == WS_NEW)
            connect_db(w);
        return;
    case WE_DB_OK:
        if (w->state == WS_CONNECTING) {
            ob_db_life_up(&w->life);
            probe(w);
        } else if (w->state == WS_PROBING) {
            on_answer(w);
        }
        return;
    case WE_DB_FAILED:
        if (w->state == WS_CONNECTING || w->state == WS_PROBING)
            on_failed(w);
        return;
    case WE_TIMER:
        if (w->state == WS_CONNECT_WAIT)
            connect_db(w);
        else if (w->state == WS_RESTING)
            probe(w);
        return;
    }
}

ob_cluster_watch *ob_cluster_watch_new(uv_loop_t *loop, const ob_db_config *db, const ob_log *log,
                                       uint32_t interval_ms,
                                       const ob_cluster_watch_callbacks *cbs) {
    ob_cluster_watch *w = calloc(1, sizeof(*w));
    if (w == NULL)
        return NULL;
    w->loop = loop;
    w->log = log;
    w->dbcfg = *db;
    /* With several nodes the probe is also what finds a frozen node (one
     * whose kernel still keeps connections alive): it must answer soon. */
    if (db->n_nodes > 1 && (db->op_timeout_ms == 0 || db->op_timeout_ms > OB_CLUSTER_PROBE_MS))
        w->dbcfg.op_timeout_ms = OB_CLUSTER_PROBE_MS;
    w->interval_ms = interval_ms ? interval_ms : 10000;
    if (db->n_nodes > 1 && w->interval_ms > OB_CLUSTER_PROBE_MS)
        w->interval_ms = OB_CLUSTER_PROBE_MS;
    w->cbs = *cbs;
    ob_cluster_init(&w->last);
    ob_cluster_init(&w->logged);
    ob_db_life_init(&w->life, NULL, NULL);
    return w;
}

void ob_cluster_watch_free(ob_cluster_watch *w) {
    free(w);
}

void ob_cluster_watch_start(ob_cluster_watch *w) {
    w->db = ob_db_new(w->loop, &w->dbcfg, w->log, "cluster");
    uv_timer_init(w->loop, &w->timer);
    w->timer.data = w;
    if (w->db == NULL) { /* out of memory: the watch stays silent */
        set_state(w, WS_RESTING);
        return;
    }
    dispatch(w, WE_START);
}

const ob_cluster *ob_cluster_watch_last(const ob_cluster_watch *w) {
    return &w->last;
}

/* Frees the watch and tells the owner, the last thing it does. */
static void watch_closed(void *data) {
    ob_cluster_watch *w = data;
    ob_cluster_watch_callbacks cbs = w->cbs;
    free(w);
    if (cbs.closed)
        cbs.closed(cbs.data);
}

void ob_cluster_watch_close(ob_cluster_watch *w) {
    if (w->state == WS_NEW) {
        watch_closed(w);
        return;
    }
    set_state(w, WS_CLOSING);
    ob_db_life_close(&w->life, &w->timer, w->db, watch_closed, w);
    w->db = NULL;
}
