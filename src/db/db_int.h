/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The connection object's fields, shared by the files of one connection:
 * db.c (the state machine), db_result.c (what it read, what it is). No
 * other module includes this: they see db.h.
 */
#ifndef OB_DB_INT_H
#define OB_DB_INT_H

#include "db.h"
#include "db_nodes.h"

#define OB_DB_MAX_RESULTS 16

typedef enum db_state {
    DB_DOWN,       /* no connection; connect may be called */
    DB_RESOLVING,  /* waiting for uv_getaddrinfo */
    DB_CONNECTING, /* waiting inside mysql_real_connect */
    DB_IDLE,       /* connected, nothing in progress */
    DB_QUERYING,   /* waiting inside mysql_real_query */
    DB_STORING,    /* waiting inside mysql_store_result */
    DB_NEXT,       /* waiting inside mysql_next_result */
    DB_PINGING,    /* waiting inside mysql_ping: idle long, kept from the server's wait_timeout */
    DB_QUITTING,   /* waiting inside mysql_close (COM_QUIT) */
    DB_CLOSED      /* handles closing; freed when they are */
} db_state;

/* A poll handle lives on the heap because it may still be closing after the
 * connection has moved on to a new socket. */
typedef struct db_poll {
    uv_poll_t h;
    int fd;
} db_poll;

struct ob_db {
    uv_loop_t *loop;
    db_state state;
    MYSQL *m;
    ob_db_config cfg; /* strings owned; host and nodes unused (see `nodes`) */
    ob_db_nodes nodes;
    char *name;
    const ob_log *log;

    uv_getaddrinfo_t resolve_req;
    int resolving;
    char addr[64];

    db_poll *poll;
    uv_timer_t wait_timer;   /* MYSQL_WAIT_TIMEOUT */
    uv_timer_t op_timer;     /* our own deadline */
    uv_timer_t keep_timer;   /* pings an idle session before the server's wait_timeout ends it */
    unsigned wait_timeout_s; /* the session's, read at connect; 0 unknown (no pings) */
    uint64_t idle_since;     /* loop time the connection last went idle */
    uint64_t op_started;     /* loop time the last query was sent */
    int reading_timeout;     /* the connect's last step reads @@wait_timeout */
    int queued;              /* a query waits for the ping in progress (sql, cb) */
    int late_said;           /* a missed deadline was said; again only after one was met */
    int open_handles;

    const char *sql;
    size_t sql_len;
    MYSQL *ret_conn;
    int ret_int;
    MYSQL_RES *ret_res;

    uint64_t connect_block_us; /* longest single connect call, last connect */

    int nres;
    MYSQL_RES *res[OB_DB_MAX_RESULTS];
    uint64_t affected[OB_DB_MAX_RESULTS];

    unsigned err_no;
    char err[512];
    int lost;

    ob_db_cb cb;
    void *cb_data;
    ob_db_cb watch_cb; /* told of a loss while idle (ob_db_watch) */
    void *watch_data;
    ob_db_close_cb close_cb;
    void *close_data;
};

/* Copies cfg and name into db (its strings its own); -1 out of memory,
 * with what was copied left for ob_db_free_config (db_result.c). */
int ob_db_take_config(ob_db *db, const ob_db_config *cfg, const char *name);
void ob_db_free_config(ob_db *db);

/* When the session sat idle for the server's wait_timeout before loop time
 * `until`, replaces why (len bytes) by words saying so (db_result.c). */
void ob_db_name_idle_close(ob_db *db, uint64_t until, char *why, size_t len);

#endif
