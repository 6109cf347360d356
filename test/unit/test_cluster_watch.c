/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The cluster watch's state machine without a server: a fake connection
 * (fake_db.c) whose every statement the test answers by hand. Covers the
 * first answer and the periodic ones, a lost connection (a fresh answer
 * after the reconnect), 1047 from a node outside the primary component
 * (lost too), a refused probe (an answer that cannot tell), the info line
 * logged once per change, and the close.
 */
#include <mysqld_error.h>
#include <string.h>
#include <uv.h>

#include "check.h"
#include "cluster_watch.h"
#include "fake_db.h"

static uv_loop_t loop;
static int answers, fresh_answers, closed, infos;
static ob_cluster last;
static char last_info[512];

static void log_line(outbox_log_level level, const char *line, void *data) {
    (void)data;
    if (level == OUTBOX_LOG_INFO && strstr(line, "database: ")) {
        infos++;
        snprintf(last_info, sizeof(last_info), "%s", line);
    }
}
static ob_log lg = {log_line, NULL, OUTBOX_LOG_INFO};

static void on_seen(void *d, const ob_cluster *c, int fresh) {
    (void)d;
    answers++;
    fresh_answers += fresh;
    last = *c;
}
static void on_closed(void *d) {
    (void)d;
    closed++;
}

/* Runs the loop until the fake has `op` pending (a timer's work). */
static ob_db *next(fake_op op) {
    ob_db *db = fake_db_await(&loop, op);
    if (db == NULL)
        CHECK_FAIL_("nothing came");
    return db;
}

static void row(ob_db *db, const char *name, const char *value) {
    char *cols[8] = {(char *)name, (char *)value};
    unsigned long lens[8] = {strlen(name), strlen(value)};
    fake_db_add_row(db, 0, cols, lens);
}

static void galera_rows(ob_db *db, const char *size, const char *state) {
    row(db, "WSREP_ON", "ON");
    row(db, "WSREP_PROVIDER_NAME", "Galera");
    row(db, "WSREP_CLUSTER_SIZE", size);
    row(db, "WSREP_CLUSTER_STATUS", "Primary");
    row(db, "WSREP_LOCAL_STATE_COMMENT", state);
    row(db, "WSREP_INCOMING_ADDRESSES", "10.0.0.1:3306,10.0.0.2:3306,10.0.0.3:3306");
}

int main(void) {
    uv_loop_init(&loop);
    ob_db_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.host = "db";
    ob_cluster_watch_callbacks cbs = {on_seen, on_closed, NULL};
    ob_cluster_watch *w = ob_cluster_watch_new(&loop, &cfg, &lg, 20, &cbs);
    CHECK(w != NULL);
    CHECK(!ob_cluster_watch_last(w)->known);
    ob_cluster_watch_start(w);

    /* At start: connect, probe, told (fresh), logged. */
    ob_db *db = next(FAKE_CONNECT);
    fake_db_complete(db, 1, 0, NULL, 0);
    db = next(FAKE_QUERY);
    CHECK_STR(fake_db_sql(db), ob_cluster_sql);
    galera_rows(db, "3", "Synced");
    fake_db_complete(db, 1, 0, NULL, 0);
    CHECK_EQ(answers, 1);
    CHECK_EQ(fresh_answers, 1);
    CHECK(ob_cluster_is_galera(&last));
    CHECK_EQ(last.size, 3);
    CHECK_EQ(infos, 1);
    CHECK(strstr(last_info, "database: Galera cluster of 3 nodes (Primary), this node Synced") !=
          NULL);

    /* The interval: the same answer is told, not fresh, not logged again. */
    db = next(FAKE_QUERY);
    galera_rows(db, "3", "Synced");
    fake_db_complete(db, 1, 0, NULL, 0);
    CHECK_EQ(answers, 2);
    CHECK_EQ(fresh_answers, 1);
    CHECK_EQ(infos, 1);

    /* A node left: logged. */
    db = next(FAKE_QUERY);
    galera_rows(db, "2", "Synced");
    fake_db_complete(db, 1, 0, NULL, 0);
    CHECK_EQ(infos, 2);
    CHECK(strstr(last_info, "Galera cluster of 2 nodes") != NULL);

    /* The connection lost: reconnected, and the next answer is fresh. */
    db = next(FAKE_QUERY);
    fake_db_complete(db, 0, 2013, "Lost connection to server during query", 1);
    db = next(FAKE_CONNECT);
    fake_db_complete(db, 1, 0, NULL, 0);
    db = next(FAKE_QUERY);
    galera_rows(db, "2", "Synced");
    fake_db_complete(db, 1, 0, NULL, 0);
    CHECK_EQ(fresh_answers, 2);
    CHECK_EQ(infos, 2);

    /* 1047 (outside the primary component) is a lost session too. */
    db = next(FAKE_QUERY);
    fake_db_complete(db, 0, ER_UNKNOWN_COM_ERROR,
                     "WSREP has not yet prepared node for application use", 0);
    db = next(FAKE_CONNECT);
    fake_db_complete(db, 1, 0, NULL, 0);

    /* A server built without wsrep answers with no row: a single server. */
    db = next(FAKE_QUERY);
    fake_db_complete(db, 1, 0, NULL, 0);
    CHECK(last.known);
    CHECK(!ob_cluster_is_galera(&last));
    CHECK_EQ(fresh_answers, 3);
    CHECK_EQ(infos, 3);
    CHECK(strstr(last_info, "database: a single server (wsrep off)") != NULL);

    /* A refused probe: told as not known, the session kept. */
    int before = answers;
    db = next(FAKE_QUERY);
    fake_db_complete(db, 0, ER_TABLEACCESS_DENIED_ERROR, "SELECT command denied", 0);
    CHECK_EQ(answers, before + 1);
    CHECK(!last.known);
    db = next(FAKE_QUERY);
    CHECK_STR(fake_db_sql(db), ob_cluster_sql);

    ob_cluster_watch_close(w);
    while (uv_run(&loop, UV_RUN_ONCE))
        ;
    CHECK_EQ(closed, 1);
    CHECK_EQ(uv_loop_close(&loop), 0);

    /* Closed before it started: freed, told. */
    w = ob_cluster_watch_new(&loop, &cfg, &lg, 0, &cbs);
    ob_cluster_watch_close(w);
    CHECK_EQ(closed, 2);

    /* Given several nodes, a node not ready (wsrep_ready OFF) is left: the
     * watch tells what it saw, then connects again (to the next node). */
    uv_loop_init(&loop);
    ob_db_node nodes[2] = {{"h1", 1}, {"h2", 2}};
    cfg.nodes = nodes;
    cfg.n_nodes = 2;
    w = ob_cluster_watch_new(&loop, &cfg, &lg, 20, &cbs);
    ob_cluster_watch_start(w);
    db = next(FAKE_CONNECT);
    fake_db_complete(db, 1, 0, NULL, 0);
    db = next(FAKE_QUERY);
    galera_rows(db, "3", "Synced");
    row(db, "WSREP_READY", "OFF");
    fake_db_complete(db, 1, 0, NULL, 0);
    CHECK_EQ(last.ready, 0);
    CHECK_EQ(fake_db_nodes_left(), 1);
    db = next(FAKE_CONNECT);
    fake_db_complete(db, 1, 0, NULL, 0);
    db = next(FAKE_QUERY);
    galera_rows(db, "3", "Synced");
    row(db, "WSREP_READY", "ON");
    fake_db_complete(db, 1, 0, NULL, 0);
    CHECK_EQ(fake_db_nodes_left(), 1);
    db = next(FAKE_QUERY); /* resting, then probing again on the same node */
    ob_cluster_watch_close(w);
    while (uv_run(&loop, UV_RUN_ONCE))
        ;
    CHECK_EQ(closed, 3);
    CHECK_EQ(uv_loop_close(&loop), 0);
    return 0;
}
