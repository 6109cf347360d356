/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The CLEANUP job: one round of the cleanup maintainer, for tables that are
 * not partitioned.
 *
 *   1. GET_LOCK(name, 0) and the server's clock; another holder: skip.
 *   2. DELETE processed rows older than the retention, in batches of
 *      OB_MAINT_BATCH rows (each its own short autocommit statement), until
 *      none is left or the round's limit is reached.
 *   3. The same for dead rows when configured, within the same limit.
 *   4. RELEASE_LOCK (done by the handle when the job finishes).
 *
 * A row's age is its processed_at, the time it reached its final state (the
 * relay sets it for dead rows too); rows that died before it did so fall
 * back to created_at.
 *
 * In cursor mode (the table has rows in the cursor table) step 2 deletes
 * the delivered rows instead: those at or below their bucket's cursor with
 * status 0 or 1, and those with status 1 in a bucket without a cursor row.
 * Nothing above a cursor is deleted. Each batch reads the cursors in its
 * own short transaction under a shared lock (see maint_cursor.c).
 *
 * The processed rows' statement also
 * bounds the id (the UUIDv7 creation time, never later than processing), so
 * it walks the (status, id) index from its oldest entry and stops at the
 * cutoff instead of reading every processed row; dead rows are few.
 */
#include "cursor_fit.h"
#include "maint_int.h"

#include "schema.h"
#include "sql.h"

#include <stdio.h>

enum cleanup_step {
    CS_LOCK = 1,  /* waiting for GET_LOCK and the server's clock */
    CS_PROCESSED, /* waiting for a batch DELETE of old processed rows */
    CS_DEAD,      /* waiting for a batch DELETE of old dead rows */
};

static void append_cut(ob_buf *b, double cut_s) {
    ob_buf_printf(b, "FROM_UNIXTIME(%.6f)", cut_s > 0 ? cut_s : 0);
}

void ob_maint_delete_dead_sql(outbox_maint *m, ob_buf *b, double cut_s, const outbox_id *id) {
    ob_buf_reset(b);
    ob_buf_puts(b, "DELETE FROM ");
    ob_buf_puts(b, m->qtable);
    ob_buf_puts(b, " WHERE status = -1 AND created_at < ");
    append_cut(b, cut_s);
    if (id) {
        ob_buf_puts(b, " AND id = ");
        ob_sql_add_id(b, id->b, 1);
    }
    ob_buf_puts(b, " ORDER BY id");
}

void ob_job_cleanup_begin(outbox_maint *m, ob_job *j) {
    ob_buf_reset(&m->sql);
    ob_maint_lock_sql(m, &m->sql);
    j->step = CS_LOCK;
    ob_maint_send(m, j);
}

static double cut_s(const outbox_maint *m, const ob_job *j) {
    return j->server_s - (double)m->o.cleanup_retention_ms / 1000.0;
}

static void finish(outbox_maint *m, ob_job *j) {
    if (j->res.changed)
        OB_INFO(&m->log,
                "cleanup: deleted %llu processed and %llu dead row(s) older than %llu s from %s%s",
                (unsigned long long)(j->res.changed - j->res.changed_dead),
                (unsigned long long)j->res.changed_dead,
                (unsigned long long)(m->o.cleanup_retention_ms / 1000), m->name,
                j->batch_left == 0 ? " (the round's limit was reached)" : "");
    ob_maint_done(m, j, OUTBOX_OK, NULL);
}

/* Cursor mode: a row of a bucket with a cursor row is done when it is at
 * or below the cursor; a row of a bucket without one when its status is 1.
 * The batch reads the cursors under ob_maint_cursor_hold_sql's lock. */
static void delivered_in_cursor_mode(outbox_maint *m, ob_buf *b) {
    ob_buf_puts(b, " AND (seq <= ");
    ob_maint_cursor_of_row(m, b);
    ob_buf_puts(b, " OR (status = 1 AND ");
    ob_maint_cursor_of_row(m, b);
    ob_buf_puts(b, " IS NULL))");
    /* The stamp's witness stays: the relays tell by it that the table is
     * the one their cursors were written for (cursor_fit.h). */
    ob_buf_puts(b, " AND seq NOT IN (");
    ob_cursor_witness_seq_sql(b, m->ctable, m->o.table);
    ob_buf_puts(b, ")");
}

static void start_dead(outbox_maint *m, ob_job *j) {
    if (!m->o.cleanup_include_dead || j->batch_left == 0) {
        finish(m, j);
        return;
    }
    j->batch_tail = NULL;
    j->batch_res = 0;
    ob_maint_delete_dead_sql(m, &j->batch, cut_s(m, j), NULL);
    j->step = CS_DEAD;
    if (ob_maint_send_batch(m, j) == 0)
        finish(m, j);
}

void ob_job_cleanup_step(outbox_maint *m, ob_job *j, int ok) {
    if (!ok) {
        ob_maint_db_failed(
            m, j, j->step == CS_LOCK ? "taking the maintenance lock" : "deleting old rows");
        return;
    }
    uint64_t dead = 0;
    double cut;
    switch ((enum cleanup_step)j->step) {
    case CS_LOCK:
        if (ob_maint_lock_result(m, j, ob_db_result(m->db, 0)) != 0)
            return;
        if (!j->locked) {
            ob_maint_done(m, j, OUTBOX_EBUSY,
                          "another instance holds the maintenance lock '%s': this round is "
                          "skipped",
                          m->lock_name);
            return;
        }
        cut = cut_s(m, j);
        ob_buf_reset(&j->batch);
        if (j->cursored)
            ob_maint_cursor_hold_sql(m, &j->batch);
        ob_buf_puts(&j->batch, "DELETE FROM ");
        ob_buf_puts(&j->batch, m->qtable);
        ob_buf_puts(&j->batch, j->cursored ? " WHERE status IN (0, 1)" : " WHERE status = 1");
        ob_buf_puts(&j->batch, " AND id < ");
        ob_period_bound(&j->batch, cut > 0 ? (uint64_t)(cut * 1000.0) : 0);
        ob_buf_puts(&j->batch, " AND IFNULL(processed_at, created_at) < ");
        append_cut(&j->batch, cut);
        if (j->cursored)
            delivered_in_cursor_mode(m, &j->batch);
        ob_buf_puts(&j->batch, " ORDER BY id");
        j->batch_left = m->o.cleanup_limit;
        if (j->cursored) {
            j->batch_tail = "; COMMIT";
            j->batch_res = 2;
            j->in_trx = 1;
        }
        j->step = CS_PROCESSED;
        if (ob_maint_send_batch(m, j) == 0)
            finish(m, j);
        return;
    case CS_PROCESSED:
        if (ob_maint_batch_full(m, j, &j->res.changed) && ob_maint_send_batch(m, j) != 0)
            return;
        start_dead(m, j);
        return;
    case CS_DEAD: {
        int full = ob_maint_batch_full(m, j, &dead);
        j->res.changed += dead;
        j->res.changed_dead += dead;
        if (!full || ob_maint_send_batch(m, j) == 0)
            finish(m, j);
        return;
    }
    }
}
