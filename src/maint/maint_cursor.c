/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The operator's jobs in cursor mode: the probe that tells whether the
 * table has rows in the cursor table, and the SQL that the jobs share once
 * it has (see maint_int.h).
 *
 * In cursor mode a row's status alone does not say whether it is pending:
 * a row with status 0 at or below its bucket's cursor was delivered (the
 * cursor relay never writes a row it delivered), one above it is pending,
 * and status 2 marks a row at or below the cursor that still waits for its
 * retry. A bucket without a cursor row is read as in the other modes.
 *
 * The probe's cursors are a snapshot. Cursors only move forward, which
 * makes an old value err on the safe side, but an ordered relay that takes
 * a bucket deletes its cursor row after turning its status 2 rows into 0
 * (cursor_switch.c): a statement that decides from a cursor whether a row
 * is done therefore reads the cursor again under a shared lock
 * (ob_maint_cursor_hold_sql), or checks that the probed rows are still
 * there in the same snapshot (the partition check).
 */
#include "maint_int.h"

#include <mysqld_error.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buckets.h"
#include "cursor_fit.h"
#include "schema.h"

int ob_maint_needs_cursors(outbox_maint_kind kind) {
    switch (kind) {
    case OUTBOX_MAINT_SAMPLE:
    case OUTBOX_MAINT_STATUS:
    case OUTBOX_MAINT_PARTITIONS:
    case OUTBOX_MAINT_CLEANUP:
    case OUTBOX_MAINT_DEAD_REPLAY:
    case OUTBOX_MAINT_CURSOR_RESET:
        return 1;
    case OUTBOX_MAINT_DEAD_LIST:
    case OUTBOX_MAINT_DEAD_PURGE:
        return 0;
    }
    return 0;
}

void ob_maint_cursor_name(outbox_maint *m, ob_buf *b) {
    /* The name passed ob_sql_check_table: no quote can be in it. */
    ob_buf_printf(b, "'%s'", m->o.table);
}

void ob_maint_cursor_probe_sql(outbox_maint *m) {
    ob_buf_reset(&m->sql);
    ob_buf_printf(&m->sql, "SELECT bucket, seq FROM %s WHERE table_name = ", m->ctable);
    ob_maint_cursor_name(m, &m->sql);
    ob_buf_printf(&m->sql, "; SELECT AUTO_INCREMENT FROM information_schema.TABLES WHERE %s; ",
                  m->is_where);
    ob_cursor_fit_names t = {m->o.table, m->qtable, m->ctable, 1};
    ob_cursor_stamp_check_sql(&m->sql, &t);
}

/* Jobs that take a row at or below its cursor for delivered, and act on it
 * for good, do not run while the cursors and the table disagree. */
static int trusts_cursors(outbox_maint_kind kind) {
    return kind == OUTBOX_MAINT_CLEANUP || kind == OUTBOX_MAINT_PARTITIONS;
}

/* The cursor table refused (1142): the table's layout tells whether it can
 * have one. The ordered schemas and `schema --migrate` make the cursor table
 * with the seq and bucket columns; a plain table has none, and needs no
 * grant on it. */
static void layout_sql(outbox_maint *m) {
    ob_buf_reset(&m->sql);
    ob_buf_printf(&m->sql,
                  "SELECT COUNT(*) FROM information_schema.COLUMNS WHERE %s AND COLUMN_NAME IN "
                  "('seq', 'bucket')",
                  m->is_where);
}

/* The layout's answer: on the ordered layout the job cannot tell delivered
 * rows from pending ones without the cursors, and says which grant is
 * missing. (The relay's sample of the pending gauge goes on without them,
 * as before: it never asks.) */
static int layout_result(outbox_maint *m, ob_job *j, int ok) {
    if (!ok) {
        ob_maint_db_failed(m, j, "reading the table's columns");
        return -1;
    }
    if (ob_maint_first_int(ob_db_result(m->db, 0), 0) < 2)
        return 0;
    const char *dot = strchr(m->o.table, '.');
    ob_maint_done(m, j, OUTBOX_EDB,
                  "cannot read the cursor table %.*s." OB_CURSOR_TABLE " (%s): %s has the "
                  "ordered layout, and only the cursor table tells which of its rows cursor "
                  "mode delivered; grant it with `GRANT SELECT ON %.*s." OB_CURSOR_TABLE
                  " TO '%s'@'<host>'`; nothing was changed",
                  dot ? (int)(dot - m->o.table) : -1, dot ? m->o.table : m->url.database,
                  m->refused, m->name, dot ? (int)(dot - m->o.table) : -1,
                  dot ? m->o.table : m->url.database, m->url.user);
    return -1;
}

int ob_maint_cursor_probe_result(outbox_maint *m, ob_job *j, int ok) {
    if (j->probing == 2) {
        j->probing = 0;
        return layout_result(m, j, ok);
    }
    j->probing = 0;
    j->cursored = 0;
    memset(j->cursor, 0, sizeof(j->cursor));
    j->res.cursor_mismatch = 0;
    j->res.next_seq = j->res.cursor_top = -1;
    if (!ok) {
        /* No cursor table, or none this user may read (a user granted the
         * outbox table alone cannot even be granted a table that does not
         * exist): no cursors, as in the other modes, unless the table's
         * layout says it may have some. */
        unsigned no = ob_db_errno(m->db);
        if (no == ER_NO_SUCH_TABLE ||
            (no == ER_TABLEACCESS_DENIED_ERROR && j->req.kind == OUTBOX_MAINT_SAMPLE))
            return 0;
        if (no == ER_TABLEACCESS_DENIED_ERROR) {
            snprintf(m->refused, sizeof(m->refused), "%u %s", no, ob_db_error(m->db));
            layout_sql(m);
            j->probing = 2;
            return ob_maint_send(m, j) == 0 ? 1 : -1;
        }
        ob_maint_db_failed(m, j, "reading the cursors");
        return -1;
    }
    MYSQL_RES *res = ob_db_result(m->db, 0);
    MYSQL_ROW row;
    while (res && (row = mysql_fetch_row(res)) != NULL) {
        int k = row[0] ? atoi(row[0]) : -1;
        if (k < 0 || k >= OB_BUCKETS || row[1] == NULL)
            continue;
        j->cursored |= 1ULL << k;
        j->cursor[k] = strtoll(row[1], NULL, 10);
        if (j->cursor[k] > j->res.cursor_top)
            j->res.cursor_top = j->cursor[k];
    }
    j->res.next_seq = ob_maint_first_int(ob_db_result(m->db, 1), -1);
    j->res.cursor_mismatch =
        j->cursored && j->res.next_seq >= 0 && j->res.cursor_top >= j->res.next_seq;
    char why[700];
    int stamped, replaced = 0;
    if (!j->res.cursor_mismatch && j->cursored) {
        res = ob_db_result(m->db, 2);
        replaced = ob_cursor_stamp_result(res ? mysql_fetch_row(res) : NULL, m->o.table, &stamped,
                                          why, sizeof(why));
        j->res.cursor_mismatch = replaced;
    }
    if (j->res.cursor_mismatch &&
        (j->req.kind == OUTBOX_MAINT_STATUS || j->req.kind == OUTBOX_MAINT_SAMPLE)) {
        /* Counted as without cursors: every row with status 0 is pending,
         * which it is for the relays once cursor-reset has run. */
        j->cursored = 0;
    }
    if (j->res.cursor_mismatch && trusts_cursors(j->req.kind)) {
        if (!replaced)
            ob_cursor_mismatch_why(why, sizeof(why), m->o.table, (uint64_t)j->res.cursor_top,
                                   (uint64_t)j->res.next_seq);
        ob_maint_done(m, j, OUTBOX_ESCHEMA, "%s; nothing was deleted", why);
        return -1;
    }
    return 0;
}

/* CURSOR_RESET: the table's cursors go back to 0, when they disagree with
 * the table (or always, with `all`). A cursor relay reads the table again
 * from its start; see docs/modes.md for what that re-sends. */
void ob_job_cursor_reset_begin(outbox_maint *m, ob_job *j) {
    if (!j->cursored || !(j->res.cursor_mismatch || j->req.all)) {
        OB_INFO(&m->log, "cursor-reset: the cursors of %s %s: nothing was reset", m->name,
                j->cursored ? "agree with its AUTO_INCREMENT counter" : "do not exist");
        ob_maint_done(m, j, OUTBOX_OK, NULL);
        return;
    }
    ob_buf_reset(&m->sql);
    /* The witness goes too: the next cursor move names one of the table as
     * it is now (cursor_fit.h). */
    ob_buf_printf(&m->sql, "UPDATE %s SET seq = 0, witness = NULL WHERE table_name = ", m->ctable);
    ob_maint_cursor_name(m, &m->sql);
    j->step = 1;
    ob_maint_send(m, j);
}

void ob_job_cursor_reset_step(outbox_maint *m, ob_job *j, int ok) {
    if (!ok) {
        ob_maint_db_failed(m, j, "resetting the cursors");
        return;
    }
    j->res.changed = ob_db_affected(m->db, 0);
    OB_INFO(&m->log,
            "cursor-reset: %llu cursor(s) of %s set to 0 (they were at most %lld, the table's "
            "AUTO_INCREMENT counter %lld): cursor relays read the table again from its start",
            (unsigned long long)j->res.changed, m->name, (long long)j->res.cursor_top,
            (long long)j->res.next_seq);
    ob_maint_done(m, j, OUTBOX_OK, NULL);
}

void ob_maint_cursor_of_row(outbox_maint *m, ob_buf *b) {
    ob_buf_printf(b, "(SELECT c.seq FROM %s c WHERE c.table_name = ", m->ctable);
    ob_maint_cursor_name(m, b);
    ob_buf_printf(b, " AND c.bucket = %s.bucket)", m->qtable);
}

void ob_maint_cursor_hold_sql(outbox_maint *m, ob_buf *b) {
    ob_buf_printf(b, "START TRANSACTION; SELECT COUNT(*) FROM %s WHERE table_name = ", m->ctable);
    ob_maint_cursor_name(m, b);
    ob_buf_puts(b, " LOCK IN SHARE MODE; ");
}

/* "bucket = k AND status = 0 [AND seq > cursor]": the bucket's pending
 * rows with status 0, a range of the (bucket, status, seq) index. */
static void pending_zero(const ob_job *j, ob_buf *b, int k) {
    ob_buf_printf(b, "bucket = %d AND status = 0", k);
    if (j->cursored >> k & 1) {
        ob_buf_puts(b, " AND seq > ");
        ob_buf_i64(b, j->cursor[k]);
    }
}

void ob_maint_cursor_pending_sql(outbox_maint *m, const ob_job *j, ob_buf *b) {
    ob_buf_puts(b, "SELECT k, SUM(n0), SUM(n2) FROM (");
    for (int k = 0; k < OB_BUCKETS; k++) {
        ob_buf_printf(b, "%sSELECT %d AS k, COUNT(*) AS n0, 0 AS n2 FROM %s WHERE ",
                      k ? " UNION ALL " : "", k, m->qtable);
        pending_zero(j, b, k);
    }
    ob_buf_printf(b,
                  " UNION ALL SELECT bucket, 0, COUNT(*) FROM %s WHERE status = 2 GROUP BY "
                  "bucket) x GROUP BY k HAVING SUM(n0) + SUM(n2) > 0; ",
                  m->qtable);
    /* The oldest pending row: each bucket's first, one index entry each. */
    ob_buf_puts(b, "SELECT TIMESTAMPDIFF(MICROSECOND, MIN(t), NOW(6)) FROM (");
    for (int k = 0; k < OB_BUCKETS; k++) {
        ob_buf_printf(b, "%sSELECT (SELECT created_at FROM %s WHERE ", k ? " UNION ALL " : "",
                      m->qtable);
        pending_zero(j, b, k);
        ob_buf_puts(b, " ORDER BY seq LIMIT 1) AS t");
    }
    ob_buf_printf(b,
                  " UNION ALL SELECT (SELECT created_at FROM %s WHERE status = 2 ORDER BY seq "
                  "LIMIT 1)) x",
                  m->qtable);
}

int64_t ob_maint_cursor_pending_result(ob_job *j, MYSQL_RES *res) {
    outbox_maint_result *r = &j->res;
    int64_t zero = 0, all = 0;
    r->cursor_mode = 1;
    for (int k = 0; k < OB_BUCKETS; k++) {
        r->bucket_cursor[k] = j->cursored >> k & 1 ? j->cursor[k] : -1;
        r->bucket_pending[k] = 0;
    }
    MYSQL_ROW row;
    while (res && (row = mysql_fetch_row(res)) != NULL) {
        int k = row[0] ? atoi(row[0]) : -1;
        if (k < 0 || k >= OB_BUCKETS)
            continue;
        int64_t n0 = row[1] ? strtoll(row[1], NULL, 10) : 0;
        int64_t n2 = row[2] ? strtoll(row[2], NULL, 10) : 0;
        r->bucket_pending[k] = n0 + n2;
        zero += n0;
        all += n0 + n2;
    }
    r->pending = all;
    return zero;
}
