/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A connection to another member for the gap proof (see gap_member_link.h).
 *
 *   NEW ----start--> CONNECTING
 *   CONNECTING ---ok--> IDLE (or SENDING at once, when asked meanwhile)
 *    |          fail--> CONNECT_WAIT --timer--> CONNECTING
 *   IDLE ---------ask--> SENDING
 *   SENDING ------ok--> IDLE (the owner is told the member's clock)
 *    |          fail--> CONNECT_WAIT (the owner is told the member is down)
 *   any state --close--> CLOSING
 *
 * Every change goes through set_state(); one dispatch() over the events.
 */
#include "gap_member_link.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "db_life.h"
#include "gap_members.h"

typedef enum member_state {
    MS_NEW,          /* created, not started */
    MS_CONNECTING,   /* waiting for the connection */
    MS_CONNECT_WAIT, /* waiting before connecting again */
    MS_IDLE,         /* connected, nothing asked */
    MS_SENDING,      /* waiting for the statement's answer */
    MS_CLOSING       /* waiting for the timer and the connection to close */
} member_state;

static const char *const state_names[] = {
    [MS_NEW] = "new",   [MS_CONNECTING] = "connecting", [MS_CONNECT_WAIT] = "connect-wait",
    [MS_IDLE] = "idle", [MS_SENDING] = "sending",       [MS_CLOSING] = "closing",
};

typedef enum member_event { ME_START, ME_DB_OK, ME_DB_FAILED, ME_TIMER, ME_ASK } member_event;

struct ob_member_link {
    uv_loop_t *loop;
    const ob_log *log;
    ob_db_config dbcfg;
    int index;
    ob_member_link_callbacks cbs;
    member_state state;
    ob_db *db;
    uv_timer_t timer;
    ob_db_life life;
    int wanted; /* asked while the connection was busy or down */
    ob_buf sql;
    char addr[80]; /* host:port, for the log and why */
    char why[320]; /* why it serves no proof now; "" when it answered Synced */
    int told;      /* a failure was said and it has not served since */
};

static void dispatch(ob_member_link *l, member_event ev);

static void set_state(ob_member_link *l, member_state s) {
    if (l->state != s)
        OB_DEBUG(l->log, "cursor: cluster member %s: %s -> %s", l->addr, state_names[l->state],
                 state_names[s]);
    l->state = s;
}

static void on_db(ob_db *db, int ok, void *data) {
    (void)db;
    dispatch(data, ok ? ME_DB_OK : ME_DB_FAILED);
}

static void on_timer(uv_timer_t *t) {
    dispatch(t->data, ME_TIMER);
}

static void connect_later(ob_member_link *l) {
    ob_db_life_down(&l->life);
    ob_db_reset(l->db);
    set_state(l, MS_CONNECT_WAIT);
    uv_timer_start(&l->timer, on_timer, ob_db_life_backoff(&l->life), 0);
}

static void connect_db(ob_member_link *l) {
    set_state(l, MS_CONNECTING);
    if (ob_db_connect(l->db, on_db, l) != 0)
        connect_later(l);
}

static void send_probe(ob_member_link *l) {
    l->wanted = 0;
    set_state(l, MS_SENDING);
    l->cbs.sent(l->cbs.data, l->index);
    if (ob_db_query(l->db, l->sql.p, l->sql.len, on_db, l) != 0) {
        snprintf(l->why, sizeof(l->why), "its statement could not be sent");
        l->cbs.down(l->cbs.data, l->index, 0, "");
        connect_later(l);
    }
}

/* A state that is not Synced, said once per state. */
static void unsynced(ob_member_link *l, const char *state) {
    char why[sizeof(l->why)];
    snprintf(why, sizeof(why), "not Synced (%.40s)", state ? state : "no state");
    if (strcmp(why, l->why) != 0)
        OB_WARN(l->log, "cursor: cluster member %s cannot serve the gap proof: %s", l->addr, why);
    memcpy(l->why, why, sizeof(why));
    l->told = 1;
}

/* Result 1 of "SET ...; SELECT now, oldest, state". A failure said in
 * the log is followed by one line when the member serves again. */
static void on_answer(ob_member_link *l) {
    char **row = ob_db_next_row(l->db, 1, NULL);
    ob_db_life_worked(&l->life);
    set_state(l, MS_IDLE);
    if (row == NULL || row[0] == NULL) {
        snprintf(l->why, sizeof(l->why), "no clock in its answer");
        l->cbs.down(l->cbs.data, l->index, 0, "no clock in the answer");
    } else {
        double now = strtod(row[0], NULL);
        double oldest = row[1] ? strtod(row[1], NULL) : -1;
        int synced = row[2] != NULL && strcmp(row[2], "Synced") == 0;
        if (synced && l->told)
            OB_INFO(l->log, "cursor: cluster member %s serves the gap proof again", l->addr);
        if (synced) {
            l->why[0] = '\0';
            l->told = 0;
        } else {
            unsynced(l, row[2]);
        }
        l->cbs.answer(l->cbs.data, l->index, now, oldest, synced);
    }
    if (l->wanted && l->state == MS_IDLE)
        send_probe(l);
}

static void on_failed(ob_member_link *l) {
    unsigned err = ob_db_errno(l->db);
    int was_sending = l->state == MS_SENDING;
    /* A refusal (credentials, grants) is the operator's to mend: said once,
     * retried with backoff like any other failure, never fatal to the relay. */
    snprintf(l->why, sizeof(l->why), "%u %s%s", err, ob_db_error(l->db), ob_db_error_hint(err));
    if (ob_db_life_say(&l->life, err)) {
        OB_WARN(l->log, "cursor: cluster member %s cannot serve the gap proof: %s", l->addr,
                l->why);
        l->told = 1;
    }
    if (was_sending)
        l->cbs.down(l->cbs.data, l->index, err, ob_db_error(l->db));
    l->wanted = 1; /* ask again once connected */
    connect_later(l);
}

static void dispatch(ob_member_link *l, member_event ev) {
    switch (ev) {
    case ME_START:
        if (l->state == MS_NEW)
            connect_db(l);
        return;
    case ME_DB_OK:
        if (l->state == MS_CONNECTING) {
            ob_db_life_up(&l->life);
            set_state(l, MS_IDLE);
            if (l->wanted)
                send_probe(l);
        } else if (l->state == MS_SENDING) {
            on_answer(l);
        }
        return;
    case ME_DB_FAILED:
        if (l->state == MS_CONNECTING || l->state == MS_SENDING)
            on_failed(l);
        return;
    case ME_TIMER:
        if (l->state == MS_CONNECT_WAIT)
            connect_db(l);
        return;
    case ME_ASK:
        l->wanted = 1;
        if (l->state == MS_IDLE)
            send_probe(l);
        return;
    }
}

ob_member_link *ob_member_link_new(uv_loop_t *loop, const ob_db_config *cfg, const ob_log *log,
                                   int index, const ob_member_link_callbacks *cbs) {
    ob_member_link *l = calloc(1, sizeof(*l));
    if (l == NULL)
        return NULL;
    l->loop = loop;
    l->log = log;
    l->dbcfg = *cfg;
    l->index = index;
    l->cbs = *cbs;
    snprintf(l->addr, sizeof(l->addr), "%s:%u", cfg->host ? cfg->host : "?", cfg->port);
    snprintf(l->why, sizeof(l->why), "not connected yet");
    ob_db_life_init(&l->life, NULL, NULL);
    ob_buf_puts(&l->sql, "SET SESSION wsrep_sync_wait = 1; ");
    ob_members_sql_probe(&l->sql);
    if (l->sql.oom) {
        ob_buf_free(&l->sql);
        free(l);
        return NULL;
    }
    return l;
}

void ob_member_link_free(ob_member_link *l) {
    ob_buf_free(&l->sql);
    free(l);
}

void ob_member_link_start(ob_member_link *l) {
    l->db = ob_db_new(l->loop, &l->dbcfg, l->log, "member");
    uv_timer_init(l->loop, &l->timer);
    l->timer.data = l;
    if (l->db == NULL) { /* out of memory: the member stays down */
        set_state(l, MS_CONNECT_WAIT);
        return;
    }
    dispatch(l, ME_START);
}

void ob_member_link_ask(ob_member_link *l) {
    dispatch(l, ME_ASK);
}

const char *ob_member_link_why(const ob_member_link *l) {
    return l->why;
}

static void link_closed(void *data) {
    ob_member_link *l = data;
    ob_member_link_callbacks cbs = l->cbs;
    ob_member_link_free(l);
    if (cbs.closed)
        cbs.closed(cbs.data);
}

void ob_member_link_close(ob_member_link *l) {
    if (l->state == MS_NEW) {
        link_closed(l);
        return;
    }
    set_state(l, MS_CLOSING);
    ob_db_life_close(&l->life, &l->timer, l->db, link_closed, l);
    l->db = NULL;
}
