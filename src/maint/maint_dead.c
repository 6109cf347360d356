/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The dead-letter jobs. Each touches only rows with status = -1, optionally
 * only the row with a given id, and reports how many rows it changed.
 *
 *   DEAD_LIST    the count of dead rows and the oldest `limit` of them
 *   DEAD_REPLAY  status = 0 with attempt_count = 0 and no retry delay, so the
 *                relay delivers the rows again; last_error is kept as the
 *                record of why they died, until the next attempt replaces it
 *   DEAD_PURGE   deletes dead rows created more than older_than_ms ago
 *
 * Replay and purge work in batches of OB_MAINT_BATCH rows, each its own
 * autocommit statement, so a large dead-letter backlog never becomes one
 * long transaction. They take no named lock: they touch only dead rows,
 * which neither the relay nor the other jobs hold for long. In cursor mode
 * each replay batch holds the table's cursor rows with a shared lock for
 * its one statement, so that the cursor it compares with stays put.
 */
#include "maint_int.h"

#include "sql.h"

#include <stdlib.h>
#include <string.h>

enum dead_step {
    DS_LIST = 1, /* waiting for the dead count and the listed rows */
    DS_CLOCK,    /* purge: waiting for the server's clock */
    DS_REPLAY,   /* waiting for a batch UPDATE making dead rows pending */
    DS_PURGE,    /* waiting for a batch DELETE of dead rows */
    DS_EXPLAIN,  /* an id changed nothing: waiting for that row's status */
};

/* Appends " WHERE status = -1 [AND id = X'..']". */
static void where_dead(ob_buf *b, const ob_job *j) {
    ob_buf_puts(b, " WHERE status = -1");
    if (j->req.id) {
        ob_buf_puts(b, " AND id = ");
        ob_sql_add_id(b, j->req.id->b, 1);
    }
}

/* Appends "<table>[<set>] WHERE status = -1 [AND id = X'..']". */
static void from_dead(outbox_maint *m, ob_buf *b, const ob_job *j, const char *set) {
    ob_buf_puts(b, m->qtable);
    if (set)
        ob_buf_puts(b, set);
    where_dead(b, j);
}

/* Cursor mode: a row of a bucket with a cursor row becomes status 2, which
 * the owner's retry lane delivers, wherever the cursor is: a row above the
 * cursor made 0 could be passed by a cursor relay that had read it while
 * it was dead. A row of a bucket without a cursor row (an ordered relay's)
 * becomes 0. Each batch reads the cursors in its own transaction under a
 * shared lock, so a conversion to ordered mode (which turns 2 into 0 and
 * deletes the cursor row) comes wholly before or after it. */
static void replay_in_cursor_mode(outbox_maint *m, ob_job *j) {
    ob_buf *b = &j->batch;
    ob_maint_cursor_hold_sql(m, b);
    ob_buf_puts(b, "UPDATE ");
    ob_buf_puts(b, m->qtable);
    ob_buf_puts(b, " SET status = IF(");
    ob_maint_cursor_of_row(m, b);
    ob_buf_puts(b,
                " IS NULL, 0, 2), attempt_count = 0, next_attempt_at = NULL, processed_at = NULL");
    where_dead(b, j);
    j->batch_tail = "; COMMIT";
    j->batch_res = 2;
    j->in_trx = 1;
}

void ob_job_dead_begin(outbox_maint *m, ob_job *j) {
    ob_buf *b = &m->sql;
    ob_buf_reset(b);
    switch (j->req.kind) {
    case OUTBOX_MAINT_DEAD_LIST:
        ob_buf_puts(b, "SELECT COUNT(*) FROM ");
        from_dead(m, b, j, NULL);
        ob_buf_puts(b, "; SELECT id, aggregate_type, aggregate_id, event_type, attempt_count, "
                       "last_error, created_at FROM ");
        from_dead(m, b, j, NULL);
        ob_buf_printf(b, " ORDER BY id LIMIT %u", j->req.limit);
        j->step = DS_LIST;
        ob_maint_send(m, j);
        return;
    case OUTBOX_MAINT_DEAD_REPLAY:
        ob_buf_reset(&j->batch);
        if (j->cursored) {
            replay_in_cursor_mode(m, j);
        } else {
            ob_buf_puts(&j->batch, "UPDATE ");
            from_dead(
                m, &j->batch, j,
                " SET status = 0, attempt_count = 0, next_attempt_at = NULL, processed_at = NULL");
        }
        ob_buf_puts(&j->batch, " ORDER BY id");
        j->batch_left = UINT64_MAX;
        j->step = DS_REPLAY;
        ob_maint_send_batch(m, j);
        return;
    case OUTBOX_MAINT_DEAD_PURGE:
        ob_buf_puts(b, "SELECT UNIX_TIMESTAMP(NOW(6))");
        j->step = DS_CLOCK;
        ob_maint_send(m, j);
        return;
    default:
        ob_maint_done(m, j, OUTBOX_EINVAL, "not a dead-letter job");
        return;
    }
}

static void after_list(outbox_maint *m, ob_job *j) {
    j->res.dead = ob_maint_first_int(ob_db_result(m->db, 0), 0);
    MYSQL_RES *res = ob_db_result(m->db, 1);
    long n = ob_maint_alloc_rows(m, j, res, sizeof(outbox_dead_row));
    if (n < 0)
        return;
    outbox_dead_row *rows = j->rows;
    long k = 0;
    MYSQL_ROW row;
    while (k < n && (row = mysql_fetch_row(res)) != NULL) {
        unsigned long *len = mysql_fetch_lengths(res);
        outbox_dead_row *d = &rows[k++];
        if (row[0] && len[0] == sizeof(d->id.b))
            memcpy(d->id.b, row[0], sizeof(d->id.b));
        d->aggregate_type = row[1];
        d->aggregate_id = row[2];
        d->event_type = row[3];
        d->attempts = row[4] ? atoi(row[4]) : 0;
        d->last_error = row[5];
        d->created_at = row[6];
    }
    j->res.rows = rows;
    j->res.nrows = (size_t)k;
    ob_maint_done(m, j, OUTBOX_OK, NULL);
}

/* The batches are over. An id that changed nothing is explained. */
static void after_batches(outbox_maint *m, ob_job *j) {
    const char *verb = j->req.kind == OUTBOX_MAINT_DEAD_REPLAY ? "replayed" : "purged";
    if (j->res.changed)
        OB_INFO(&m->log, "dead: %s %llu dead row(s) of %s", verb,
                (unsigned long long)j->res.changed, m->name);
    if (j->req.id == NULL || j->res.changed) {
        ob_maint_done(m, j, OUTBOX_OK, NULL);
        return;
    }
    ob_buf_reset(&m->sql);
    ob_buf_puts(&m->sql, "SELECT status FROM ");
    ob_buf_puts(&m->sql, m->qtable);
    ob_buf_puts(&m->sql, " WHERE id = ");
    ob_sql_add_id(&m->sql, j->req.id->b, 1);
    j->step = DS_EXPLAIN;
    ob_maint_send(m, j);
}

static void explain(outbox_maint *m, ob_job *j) {
    char id[OUTBOX_ID_TEXT_LEN + 1];
    outbox_id_to_text(j->req.id, id);
    int64_t status = ob_maint_first_int(ob_db_result(m->db, 0), 99);
    if (status == 99)
        ob_maint_done(m, j, OUTBOX_ENOTFOUND, "no row of %s has id %s: nothing changed", m->name,
                      id);
    else if (status == -1)
        ob_maint_done(m, j, OUTBOX_ENOTFOUND,
                      "row %s is dead but not older than the given age: nothing changed", id);
    else
        ob_maint_done(m, j, OUTBOX_ENOTFOUND, "row %s is %s, not dead: nothing changed", id,
                      status == 0   ? "pending"
                      : status == 1 ? "processed"
                                    : "not dead");
}

void ob_job_dead_step(outbox_maint *m, ob_job *j, int ok) {
    if (!ok) {
        ob_maint_db_failed(m, j, outbox_maint_kind_name(j->req.kind));
        return;
    }
    switch ((enum dead_step)j->step) {
    case DS_LIST:
        after_list(m, j);
        return;
    case DS_CLOCK: {
        MYSQL_RES *res = ob_db_result(m->db, 0);
        MYSQL_ROW row = res ? mysql_fetch_row(res) : NULL;
        double now_s = row && row[0] ? strtod(row[0], NULL) : 0;
        ob_maint_delete_dead_sql(m, &j->batch, now_s - (double)j->req.older_than_ms / 1000.0,
                                 j->req.id);
        j->batch_left = UINT64_MAX;
        j->step = DS_PURGE;
        ob_maint_send_batch(m, j);
        return;
    }
    case DS_REPLAY:
    case DS_PURGE:
        if (ob_maint_batch_full(m, j, &j->res.changed) && ob_maint_send_batch(m, j) != 0)
            return;
        after_batches(m, j);
        return;
    case DS_EXPLAIN:
        explain(m, j);
        return;
    }
}
