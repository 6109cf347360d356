/* SPDX-License-Identifier: Apache-2.0 */
/* What a connection read and what it is (db.h): its results, its error,
 * its session. Reading needs no step of the state machine (db.c), so it
 * sits apart from it. */
#include "db_int.h"

#include <stdio.h>

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
