/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The public non-blocking connection: a thin owner of an ob_db (db.c) with
 * the library's life cycle convention. Its own states are the life cycle's;
 * what the connection is doing is db.c's state.
 *
 *   CREATED --start--> RUNNING --stop--> STOPPING --db.c closed--> STOPPED
 *      |                                                              |
 *      +------------------------ destroy: freed ---------------------+
 *
 * Every change goes through set_state(). The handle has no logger (the
 * public API gives it none), so unlike the relay's machines the change is
 * not logged; the embedder sees each step through its callbacks.
 */
#include "outbox/conn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "log.h"
#include "url.h"

typedef enum conn_state {
    C_CREATED,  /* URL parsed; nothing on the loop yet */
    C_RUNNING,  /* the connection is on the loop: connecting, idle or querying */
    C_STOPPING, /* waiting for db.c to close its handles */
    C_STOPPED   /* every handle closed; only destroy is left */
} conn_state;

static const char *const state_names[] = {
    [C_CREATED] = "created",
    [C_RUNNING] = "running",
    [C_STOPPING] = "stopping",
    [C_STOPPED] = "stopped",
};

struct outbox_conn {
    uv_loop_t *loop;
    conn_state state;
    ob_db_url url;
    ob_db *db;
    outbox_conn_cb cb;
    void *cb_data;
    outbox_conn_stop_cb stop_cb;
    void *stop_data;
    char errmsg[512];
};

static void set_state(outbox_conn *c, conn_state s) {
    c->state = s;
}

int outbox_conn_create(outbox_conn **out, uv_loop_t *loop, const char *db_url, char *errbuf,
                       size_t errlen) {
    char err[400];
    *out = NULL;
    if (loop == NULL)
        return ob_errf(errbuf, errlen, OUTBOX_EINVAL, "a loop is required");
    outbox_conn *c = calloc(1, sizeof(*c));
    if (c == NULL)
        return ob_errf(errbuf, errlen, OUTBOX_ENOMEM, "out of memory");
    if (ob_db_url_parse(db_url, &c->url, err, sizeof(err)) != 0) {
        free(c);
        return ob_errf(errbuf, errlen, OUTBOX_EINVAL, "%s", err);
    }
    c->loop = loop;
    *out = c;
    return OUTBOX_OK;
}

static void on_done(ob_db *db, int ok, void *data) {
    outbox_conn *c = data;
    outbox_conn_cb cb = c->cb;
    c->cb = NULL;
    if (!ok)
        snprintf(c->errmsg, sizeof(c->errmsg), "%u %s", ob_db_errno(db), ob_db_error(db));
    if (cb)
        cb(c, ok ? OUTBOX_OK : OUTBOX_EDB, c->cb_data);
}

int outbox_conn_start(outbox_conn *c, outbox_conn_cb cb, void *data) {
    if (c->state != C_CREATED) {
        snprintf(c->errmsg, sizeof(c->errmsg), "already started (the connection is %s)",
                 state_names[c->state]);
        return OUTBOX_ESTATE;
    }
    ob_db_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    ob_db_url_to_config(&c->url, &cfg);
    cfg.connect_timeout_s = 10;
    cfg.read_timeout_s = 120;
    cfg.op_timeout_ms = 60000;
    cfg.init_command = "SET SESSION time_zone = '+00:00'";
    c->db = ob_db_new(c->loop, &cfg, NULL, "conn");
    if (c->db == NULL) {
        snprintf(c->errmsg, sizeof(c->errmsg), "out of memory");
        return OUTBOX_ENOMEM;
    }
    set_state(c, C_RUNNING);
    c->cb = cb;
    c->cb_data = data;
    if (ob_db_connect(c->db, on_done, c) != 0) {
        /* Only uv_getaddrinfo can refuse here; the caller stops the handle. */
        c->cb = NULL;
        snprintf(c->errmsg, sizeof(c->errmsg), "cannot start resolving the database host");
        return OUTBOX_ESTATE;
    }
    return OUTBOX_OK;
}

int outbox_conn_query(outbox_conn *c, const char *sql, size_t len, outbox_conn_cb cb, void *data) {
    if (c->state != C_RUNNING || c->cb != NULL || !ob_db_is_idle(c->db)) {
        snprintf(c->errmsg, sizeof(c->errmsg), "not connected, or an operation is under way");
        return OUTBOX_ESTATE;
    }
    c->cb = cb;
    c->cb_data = data;
    if (ob_db_query(c->db, sql, len, on_done, c) != 0) {
        c->cb = NULL;
        return OUTBOX_ESTATE;
    }
    return OUTBOX_OK;
}

MYSQL *outbox_conn_mysql(const outbox_conn *c) {
    return c->state == C_RUNNING && c->db ? ob_db_mysql(c->db) : NULL;
}

const char *outbox_conn_errmsg(const outbox_conn *c) {
    return c->errmsg;
}

static void on_closed(void *data) {
    outbox_conn *c = data;
    c->db = NULL;
    set_state(c, C_STOPPED);
    if (c->stop_cb)
        c->stop_cb(c, c->stop_data);
}

int outbox_conn_stop(outbox_conn *c, outbox_conn_stop_cb cb, void *data) {
    if (c->state != C_RUNNING) {
        snprintf(c->errmsg, sizeof(c->errmsg), "not running (the connection is %s)",
                 state_names[c->state]);
        return OUTBOX_ESTATE;
    }
    set_state(c, C_STOPPING);
    c->cb = NULL;
    c->stop_cb = cb;
    c->stop_data = data;
    ob_db_close(c->db, on_closed, c);
    return OUTBOX_OK;
}

int outbox_conn_destroy(outbox_conn *c) {
    if (c == NULL)
        return OUTBOX_OK;
    if (c->state == C_RUNNING || c->state == C_STOPPING) {
        snprintf(c->errmsg, sizeof(c->errmsg), "still on the loop (the connection is %s)",
                 state_names[c->state]);
        return OUTBOX_ESTATE;
    }
    ob_db_url_free(&c->url);
    free(c);
    return OUTBOX_OK;
}
