/* SPDX-License-Identifier: Apache-2.0 */
/* What a connection read and what it is (db.h): its results, its error,
 * its session. Reading needs no step of the state machine (db.c), so it
 * sits apart from it. */
#include "db_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char **ob_db_next_row(ob_db *db, int i, unsigned long **lengths) {
    MYSQL_RES *res = ob_db_result(db, i);
    MYSQL_ROW row = res ? mysql_fetch_row(res) : NULL;
    if (row && lengths)
        *lengths = mysql_fetch_lengths(res);
    return row;
}

int ob_db_col_binary(const ob_db *db, int i, unsigned col) {
    MYSQL_RES *res = ob_db_result(db, i);
    if (res == NULL || col >= mysql_num_fields(res))
        return 0;
    return mysql_fetch_fields(res)[col].charsetnr == 63;
}

const char *ob_db_tls_cipher(const ob_db *db) {
    return db->m ? mysql_get_ssl_cipher(db->m) : NULL;
}

int ob_db_fd(const ob_db *db) {
    return db->m && db->state >= DB_IDLE && db->state <= DB_PINGING ? (int)mysql_get_socket(db->m)
                                                                    : -1;
}

uint64_t ob_db_connect_block_us(const ob_db *db) {
    return db->connect_block_us;
}

MYSQL_RES *ob_db_result(const ob_db *db, int i) {
    return i >= 0 && i < db->nres ? db->res[i] : NULL;
}

MYSQL *ob_db_mysql(const ob_db *db) {
    return db->state == DB_IDLE || db->state == DB_QUERYING || db->state == DB_STORING ||
                   db->state == DB_NEXT || db->state == DB_PINGING
               ? db->m
               : NULL;
}

uint64_t ob_db_affected(const ob_db *db, int i) {
    return i >= 0 && i < db->nres ? db->affected[i] : 0;
}

unsigned ob_db_errno(const ob_db *db) {
    return db->err_no;
}

const char *ob_db_error(const ob_db *db) {
    return db->err;
}

int ob_db_lost(const ob_db *db) {
    return db->lost || db->state == DB_DOWN;
}

int ob_db_is_idle(const ob_db *db) {
    return db->state == DB_IDLE || (db->state == DB_PINGING && !db->queued);
}

unsigned long ob_db_thread_id(const ob_db *db) {
    return db->m && db->state >= DB_IDLE && db->state <= DB_PINGING ? mysql_thread_id(db->m) : 0;
}

/* A session idle for the server's wait_timeout is closed by the server
 * (MariaDB 11 says so with error 4031 first; 10.11 just closes it): said in
 * those words, rather than the socket's error. With the pings that happens
 * only when the loop stood still (a frozen process, a paused host). */
void ob_db_name_idle_close(ob_db *db, uint64_t until, char *why, size_t len) {
    uint64_t idle = until > db->idle_since ? until - db->idle_since : 0;
    if (db->wait_timeout_s && idle + 500 >= (uint64_t)db->wait_timeout_s * 1000)
        snprintf(why, len,
                 "the server closed the connection after it sat idle for %.1f s (its "
                 "wait_timeout is %u s)",
                 (double)idle / 1000.0, db->wait_timeout_s);
}

/* --- its settings, copied at ob_db_new ---------------------------------- */

static char *dup_or_null(const char *s, int *oom) {
    char *d = s ? strdup(s) : NULL;
    if (s && d == NULL)
        *oom = 1;
    return d;
}

void ob_db_free_config(ob_db *db) {
    ob_db_nodes_free(&db->nodes);
    free((char *)db->cfg.user);
    free((char *)db->cfg.password);
    free((char *)db->cfg.database);
    free((char *)db->cfg.socket);
    free((char *)db->cfg.init_command);
    free((char *)db->cfg.tls_ca);
    free((char *)db->cfg.tls_cert);
    free((char *)db->cfg.tls_key);
    free(db->name);
    db->name = NULL;
}

int ob_db_take_config(ob_db *db, const ob_db_config *cfg, const char *name) {
    int oom = 0;
    db->cfg = *cfg;
    db->cfg.host = NULL;
    db->cfg.nodes = NULL;
    if (ob_db_nodes_init(&db->nodes, cfg->nodes, cfg->n_nodes, cfg->host, cfg->port) != 0)
        oom = 1;
    db->cfg.group = NULL;
    db->cfg.user = dup_or_null(cfg->user, &oom);
    db->cfg.password = dup_or_null(cfg->password, &oom);
    db->cfg.database = dup_or_null(cfg->database, &oom);
    db->cfg.socket = dup_or_null(cfg->socket, &oom);
    db->cfg.init_command = dup_or_null(cfg->init_command, &oom);
    db->cfg.tls_ca = dup_or_null(cfg->tls_ca, &oom);
    db->cfg.tls_cert = dup_or_null(cfg->tls_cert, &oom);
    db->cfg.tls_key = dup_or_null(cfg->tls_key, &oom);
    db->name = dup_or_null(name ? name : "db", &oom);
    return oom ? -1 : 0;
}
