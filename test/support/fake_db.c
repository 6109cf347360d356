/* SPDX-License-Identifier: Apache-2.0 */
#include "fake_db.h"

#include <stdlib.h>
#include <string.h>

#define MAX_RESULTS 8
#define MAX_ROWS 256
#define NCOLS 16 /* the widest row a test adds */

struct ob_db {
    fake_op op;
    char *sql;
    ob_db_cb cb;
    void *data;
    ob_db_cb watch_cb;
    void *watch_data;
    int up;
    unsigned err;
    char msg[256];
    int lost;
    char *cells[MAX_RESULTS][MAX_ROWS][NCOLS];
    unsigned long lens[MAX_RESULTS][MAX_ROWS][NCOLS];
    int nrows[MAX_RESULTS];
    int cursor[MAX_RESULTS];
    uint64_t affected[MAX_RESULTS];
    int nres;
    int ncols[MAX_RESULTS][MAX_ROWS];
    int absent[MAX_RESULTS]; /* a statement without a result set (a DO) */
    char name[32];           /* as the module's user named it */
    ob_db *next_open;        /* the open connections, the newest first */
};

static ob_db *last;
static ob_db *open_list;
static int closed_count;

static void clear_rows(ob_db *db) {
    for (int i = 0; i < MAX_RESULTS; i++) {
        for (int r = 0; r < db->nrows[i]; r++)
            for (int c = 0; c < db->ncols[i][r]; c++)
                free(db->cells[i][r][c]);
        db->nrows[i] = db->cursor[i] = 0;
        db->absent[i] = 0;
        db->affected[i] = 0;
    }
}

ob_db *fake_db_last(void) {
    return last;
}

fake_op fake_db_pending(const ob_db *db) {
    return db->op;
}

const char *fake_db_sql(const ob_db *db) {
    return db->sql ? db->sql : "";
}

int fake_db_closed_count(void) {
    return closed_count;
}

void fake_db_add_row_n(ob_db *db, int i, int ncols, char *const *cols, const unsigned long *lens) {
    if (i < 0 || i >= MAX_RESULTS || db->nrows[i] >= MAX_ROWS || ncols < 0 || ncols > NCOLS)
        abort(); /* a test adds more than the fake holds */
    int r = db->nrows[i]++;
    db->ncols[i][r] = ncols;
    for (int c = 0; c < NCOLS; c++) {
        db->cells[i][r][c] = NULL;
        db->lens[i][r][c] = 0;
        if (c >= ncols)
            continue;
        if (cols[c]) {
            db->cells[i][r][c] = malloc(lens[c] + 1);
            memcpy(db->cells[i][r][c], cols[c], lens[c]);
            db->cells[i][r][c][lens[c]] = '\0';
        }
        db->lens[i][r][c] = lens[c];
    }
    if (i + 1 > db->nres)
        db->nres = i + 1;
}

void fake_db_add_row(ob_db *db, int i, char *const *cols, const unsigned long *lens) {
    fake_db_add_row_n(db, i, 8, cols, lens);
}

void fake_db_no_result(ob_db *db, int i) {
    if (i >= 0 && i < MAX_RESULTS)
        db->absent[i] = 1;
}

void fake_db_complete(ob_db *db, int ok, unsigned err, const char *msg, int lost) {
    ob_db_cb cb = db->cb;
    db->op = FAKE_NONE;
    db->err = ok ? 0 : err;
    snprintf(db->msg, sizeof(db->msg), "%s", ok ? "" : msg);
    db->lost = !ok && lost;
    if (db->lost)
        db->up = 0;
    else if (ok)
        db->up = 1;
    cb(db, ok, db->data);
}

static int fail_news, fail_queries;

void fake_db_fail_next_new(void) {
    fail_news++;
}

void fake_db_fail_next_query(void) {
    fail_queries++;
}

ob_db *ob_db_new(uv_loop_t *loop, const ob_db_config *cfg, const ob_log *log, const char *name) {
    (void)loop;
    (void)cfg;
    (void)log;
    if (fail_news > 0) {
        fail_news--;
        return NULL;
    }
    last = calloc(1, sizeof(*last));
    if (last) {
        snprintf(last->name, sizeof(last->name), "%s", name ? name : "");
        last->next_open = open_list;
        open_list = last;
    }
    return last;
}

int ob_db_connect(ob_db *db, ob_db_cb cb, void *data) {
    if (db->up || db->op != FAKE_NONE)
        return -1;
    db->op = FAKE_CONNECT;
    db->cb = cb;
    db->data = data;
    return 0;
}

int ob_db_query(ob_db *db, const char *sql, size_t len, ob_db_cb cb, void *data) {
    if (!db->up || db->op != FAKE_NONE)
        return -1;
    if (fail_queries > 0) {
        fail_queries--;
        return -1;
    }
    clear_rows(db);
    db->nres = 0;
    free(db->sql);
    db->sql = strndup(sql, len);
    db->op = FAKE_QUERY;
    db->cb = cb;
    db->data = data;
    return 0;
}

char **ob_db_next_row(ob_db *db, int i, unsigned long **lengths) {
    if (i < 0 || i >= MAX_RESULTS || db->cursor[i] >= db->nrows[i])
        return NULL;
    int r = db->cursor[i]++;
    if (lengths)
        *lengths = db->lens[i][r];
    return db->cells[i][r];
}

unsigned ob_db_errno(const ob_db *db) {
    return db->err;
}

const char *ob_db_error(const ob_db *db) {
    return db->msg;
}

int ob_db_lost(const ob_db *db) {
    return db->lost || !db->up;
}

unsigned long ob_db_thread_id(const ob_db *db) {
    return db->up ? 42 : 0;
}

void ob_db_reset(ob_db *db) {
    db->up = 0;
    db->op = FAKE_NONE;
}

static int nodes_left;

void ob_db_leave_node(ob_db *db, const char *why) {
    (void)why;
    ob_db_reset(db);
    db->lost = 1;
    nodes_left++;
}

void ob_db_node_answered(ob_db *db) {
    (void)db;
}

static int failback_due;

void fake_db_failback_due(int due) {
    failback_due = due;
}

int ob_db_failback_due(const ob_db *db) {
    return db->up && db->op == FAKE_NONE ? failback_due : 0;
}

int ob_db_failback(ob_db *db) {
    int due = ob_db_failback_due(db);
    if (due) {
        failback_due = 0;
        ob_db_reset(db);
    }
    return due;
}

int fake_db_nodes_left(void) {
    return nodes_left;
}

void ob_db_close(ob_db *db, ob_db_close_cb cb, void *data) {
    clear_rows(db);
    free(db->sql);
    if (last == db)
        last = NULL;
    for (ob_db **p = &open_list; *p; p = &(*p)->next_open)
        if (*p == db) {
            *p = db->next_open;
            break;
        }
    free(db);
    closed_count++;
    if (cb)
        cb(data);
}

int ob_db_col_binary(const ob_db *db, int i, unsigned col) {
    (void)db;
    (void)i;
    (void)col;
    return 0;
}

void ob_db_watch(ob_db *db, ob_db_cb cb, void *data) {
    db->watch_cb = cb;
    db->watch_data = data;
}

void fake_db_lose_idle(ob_db *db, const char *msg) {
    db->up = 0;
    db->lost = 1;
    db->err = 2013;
    snprintf(db->msg, sizeof(db->msg), "%s", msg);
    if (db->watch_cb)
        db->watch_cb(db, 0, db->watch_data);
}

int ob_db_is_idle(const ob_db *db) {
    return db->up && db->op == FAKE_NONE;
}

MYSQL_RES *ob_db_result(const ob_db *db, int i) {
    /* Never dereferenced by the code under test: only compared with NULL. */
    if (i < 0 || i >= MAX_RESULTS || db->absent[i])
        return NULL;
    return (MYSQL_RES *)(const void *)&db->nrows[i];
}

uint64_t ob_db_affected(const ob_db *db, int i) {
    return i >= 0 && i < MAX_RESULTS ? db->affected[i] : 0;
}

void fake_db_set_affected(ob_db *db, int i, uint64_t n) {
    if (i >= 0 && i < MAX_RESULTS)
        db->affected[i] = n;
}

ob_db *fake_db_await(uv_loop_t *loop, fake_op op) {
    for (int i = 0; i < 400; i++) {
        ob_db *db = fake_db_last();
        if (db && fake_db_pending(db) == op)
            return db;
        uv_run(loop, UV_RUN_ONCE);
    }
    return NULL;
}

ob_db *fake_db_named(const char *name) {
    for (ob_db *db = open_list; db; db = db->next_open)
        if (strcmp(db->name, name) == 0)
            return db;
    return NULL;
}

int fake_db_open_count(void) {
    int n = 0;
    for (ob_db *db = open_list; db; db = db->next_open)
        n++;
    return n;
}
