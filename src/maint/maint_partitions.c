/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The PARTITIONS job: one round of the partition maintainer.
 *
 *   1. GET_LOCK(name, 0) and the server's clock, and the table's rows of
 *      information_schema.PARTITIONS, in one round trip. Another holder of
 *      the lock: skip the round. A table not shaped as expected: refuse.
 *   2. Split the MAXVALUE tail with one REORGANIZE PARTITION when periods of
 *      the lookahead are missing.
 *   3. For the partitions past the retention: does each still hold pending
 *      rows? (TABLE_ROWS is an estimate, so this is a real query per
 *      partition, served by the (status, id) index.) In cursor mode a row
 *      is pending when it is above its bucket's cursor or has status 2 (or
 *      status 0 in a bucket without a cursor row), see
 *      undone_in_cursor_mode.
 *   4. One DROP PARTITION for the expired partitions without pending rows;
 *      the others are kept, and said so in the log.
 *   5. RELEASE_LOCK (done by the handle when the job finishes).
 *
 * DDL is rare (at most one statement of each kind per round, and none when
 * the table is already as it should be) and short: REORGANIZE only touches
 * the tail, which holds no rows while the lookahead is kept. Both statements
 * wait for open transactions on the table; the session's lock_wait_timeout
 * bounds that wait.
 *
 * Partitions are named for the server's clock (UTC), which is also the clock
 * of ids made by outbox_uuid_v7() inside MariaDB.
 */
#include "maint_int.h"

#include <stdlib.h>
#include <string.h>

#include "buckets.h"
#include "schema.h"

enum part_step {
    PS_READ = 1, /* waiting for the lock, the clock and information_schema.PARTITIONS */
    PS_SPLIT,    /* waiting for REORGANIZE PARTITION of the tail */
    PS_CHECK,    /* waiting for the pending-row check of the expired partitions */
    PS_DROP,     /* waiting for DROP PARTITION of the expired ones without pending rows */
};

static int monthly(const outbox_maint *m) {
    return m->o.partition_period == OUTBOX_PARTITION_MONTH;
}

void ob_job_partitions_begin(outbox_maint *m, ob_job *j) {
    ob_buf *b = &m->sql;
    ob_buf_reset(b);
    ob_maint_lock_sql(m, b);
    ob_buf_puts(b, "; SELECT PARTITION_NAME, PARTITION_METHOD, PARTITION_EXPRESSION, "
                   "PARTITION_DESCRIPTION, TABLE_ROWS FROM information_schema.PARTITIONS WHERE ");
    ob_buf_puts(b, m->is_where);
    ob_buf_puts(b, " ORDER BY PARTITION_ORDINAL_POSITION");
    j->step = PS_READ;
    ob_maint_send(m, j);
}

/* Reads the partition rows into j->parts; returns -1 (job finished) on a
 * refusal. */
static int read_partitions(outbox_maint *m, ob_job *j, MYSQL_RES *res) {
    size_t n = res ? (size_t)mysql_num_rows(res) : 0;
    if (n == 0) {
        ob_maint_done(m, j, OUTBOX_ENOTFOUND, "table %s does not exist", m->name);
        return -1;
    }
    j->parts = calloc(n, sizeof(*j->parts));
    j->expired = calloc(n, sizeof(*j->expired));
    if (j->parts == NULL || j->expired == NULL) {
        ob_maint_done(m, j, OUTBOX_ENOMEM, "out of memory");
        return -1;
    }
    MYSQL_ROW row;
    const char *method = NULL, *expression = NULL;
    int bad_bound = 0;
    size_t k = 0;
    while (k < n && (row = mysql_fetch_row(res)) != NULL) {
        if (row[0] == NULL)
            break; /* not partitioned: one row of NULLs */
        ob_part *p = &j->parts[k++];
        snprintf(p->name, sizeof(p->name), "%s", row[0]);
        method = row[1];
        expression = row[2];
        if (ob_part_parse_bound(row[3], &p->bound_ms, &p->is_max) != 0)
            bad_bound = 1;
        p->rows = row[4] ? strtoll(row[4], NULL, 10) : -1;
    }
    j->nparts = k;
    char err[600];
    if (ob_part_check(m->name, k ? method : NULL, expression, j->parts, k, monthly(m), err,
                      sizeof(err)) != 0) {
        ob_maint_done(m, j, OUTBOX_ESCHEMA, "%s", err);
        return -1;
    }
    if (bad_bound) {
        ob_maint_done(m, j, OUTBOX_ESCHEMA,
                      "table %s has partition bounds that are not 16-byte UUIDv7 time prefixes",
                      m->name);
        return -1;
    }
    return 0;
}

/* Cursor mode: the rows that keep a partition, in ranges of the (bucket,
 * status, seq) index. A bucket with a cursor row: any row above the cursor,
 * and the rows with status 2 (at or below it, waiting for a retry); the
 * rows with status 0 at or below it were delivered. A bucket without one:
 * status 0 (and 2), as in the other modes. */
static void undone_in_cursor_mode(outbox_maint *m, const ob_job *j, ob_buf *b) {
    (void)m;
    for (int k = 0; k < OB_BUCKETS; k++) {
        if (k)
            ob_buf_puts(b, " OR ");
        if (j->cursored >> k & 1) {
            ob_buf_printf(b, "(bucket = %d AND (status = 2 OR (status IN (-1, 0, 1) AND seq > ", k);
            ob_buf_i64(b, j->cursor[k]);
            ob_buf_puts(b, ")))");
        } else {
            ob_buf_printf(b, "(bucket = %d AND status IN (0, 2))", k);
        }
    }
}

/* The probed cursor rows, counted in the same snapshot as the check: an
 * ordered relay that took a bucket since the probe deleted its cursor row
 * after turning its status 2 rows into pending ones, which the check above
 * would take for delivered. The round then keeps every expired partition. */
static void probed_still_there(outbox_maint *m, const ob_job *j, ob_buf *b) {
    ob_buf_printf(b, ", (SELECT COUNT(*) FROM %s WHERE table_name = ", m->ctable);
    ob_maint_cursor_name(m, b);
    ob_buf_puts(b, " AND bucket IN (");
    int first = 1;
    for (int k = 0; k < OB_BUCKETS; k++)
        if (j->cursored >> k & 1) {
            ob_buf_printf(b, "%s%d", first ? "" : ", ", k);
            first = 0;
        }
    ob_buf_puts(b, "))");
}

static int popcount64(uint64_t x) {
    int n = 0;
    for (; x; x &= x - 1)
        n++;
    return n;
}

/* Step 3, or the end of the round when nothing is past the retention. */
static void check_expired(outbox_maint *m, ob_job *j) {
    if (j->nexpired == 0) {
        ob_maint_done(m, j, OUTBOX_OK, NULL);
        return;
    }
    ob_buf *b = &m->sql;
    ob_buf_reset(b);
    for (size_t i = 0; i < j->nexpired; i++) {
        const char *name = j->parts[j->expired[i]].name;
        if (i)
            ob_buf_puts(b, " UNION ALL ");
        ob_buf_printf(b, "SELECT EXISTS(SELECT 1 FROM %s PARTITION (`%s`) WHERE ", m->qtable, name);
        if (j->cursored)
            undone_in_cursor_mode(m, j, b);
        else
            ob_buf_puts(b, "status = 0");
        ob_buf_printf(b, "), (SELECT COUNT(*) FROM %s PARTITION (`%s`) WHERE status = -1)",
                      m->qtable, name);
        if (j->cursored)
            probed_still_there(m, j, b);
    }
    j->step = PS_CHECK;
    ob_maint_send(m, j);
}

static void after_read(outbox_maint *m, ob_job *j) {
    if (ob_maint_lock_result(m, j, ob_db_result(m->db, 0)) != 0)
        return;
    if (!j->locked) {
        ob_maint_done(m, j, OUTBOX_EBUSY,
                      "another instance holds the maintenance lock '%s': this round is skipped",
                      m->lock_name);
        return;
    }
    if (read_partitions(m, j, ob_db_result(m->db, 1)) != 0)
        return;
    uint64_t now_ms = (uint64_t)(j->server_s * 1000.0);
    j->nexpired = ob_part_expired(j->parts, j->nparts, monthly(m), now_ms, m->o.partition_retention,
                                  j->expired);
    ob_buf_reset(&m->sql);
    uint32_t n = ob_part_split_sql(&m->sql, m->qtable, j->parts, j->nparts, monthly(m), now_ms,
                                   m->o.partition_lookahead);
    if (n == 0) {
        check_expired(m, j);
        return;
    }
    j->res.created = n;
    OB_INFO(&m->log, "partitions: splitting %s of %s into %u new partition(s) and the tail",
            j->parts[j->nparts - 1].name, m->name, n);
    j->step = PS_SPLIT;
    ob_maint_send(m, j);
}

static void after_check(outbox_maint *m, ob_job *j) {
    MYSQL_RES *res = ob_db_result(m->db, 0);
    ob_buf *b = &m->sql;
    ob_buf_reset(b);
    ob_buf_puts(b, "ALTER TABLE ");
    ob_buf_puts(b, m->qtable);
    ob_buf_puts(b, " DROP PARTITION ");
    char names[512] = "";
    size_t used = 0;
    long long dead = 0;
    for (size_t i = 0; i < j->nexpired; i++) {
        MYSQL_ROW row = res ? mysql_fetch_row(res) : NULL;
        const char *name = j->parts[j->expired[i]].name;
        if (row == NULL || row[0] == NULL || strcmp(row[0], "0") != 0) {
            j->res.kept++;
            OB_INFO(&m->log,
                    "partitions: keeping expired partition %s of %s: it still holds pending "
                    "rows",
                    name, m->name);
            continue;
        }
        if (j->cursored && (row[2] == NULL || atoi(row[2]) != popcount64(j->cursored))) {
            j->res.kept++;
            OB_INFO(&m->log,
                    "partitions: keeping expired partition %s of %s: a bucket left cursor mode "
                    "during the check; the next round looks again",
                    name, m->name);
            continue;
        }
        dead += row[1] ? strtoll(row[1], NULL, 10) : 0;
        ob_buf_printf(b, "%s`%s`", j->res.dropped ? ", " : "", name);
        if (used < sizeof(names))
            used += (size_t)snprintf(names + used, sizeof(names) - used, "%s%s",
                                     j->res.dropped ? " " : "", name);
        j->res.dropped++;
    }
    if (j->res.dropped == 0) {
        ob_maint_done(m, j, OUTBOX_OK, NULL);
        return;
    }
    OB_INFO(&m->log,
            "partitions: dropping %u expired partition(s) of %s: %s (%lld dead row(s) go "
            "with them)",
            j->res.dropped, m->name, names, dead);
    j->step = PS_DROP;
    ob_maint_send(m, j);
}

void ob_job_partitions_step(outbox_maint *m, ob_job *j, int ok) {
    switch ((enum part_step)j->step) {
    case PS_READ:
        if (!ok)
            ob_maint_db_failed(m, j, "reading the partitions");
        else
            after_read(m, j);
        return;
    case PS_SPLIT:
        if (!ok) {
            j->res.created = 0;
            ob_maint_db_failed(m, j, "splitting the tail partition");
            return;
        }
        check_expired(m, j);
        return;
    case PS_CHECK:
        if (!ok)
            ob_maint_db_failed(m, j, "checking expired partitions for pending rows");
        else
            after_check(m, j);
        return;
    case PS_DROP:
        if (!ok) {
            j->res.dropped = 0;
            ob_maint_db_failed(m, j, "dropping expired partitions");
            return;
        }
        ob_maint_done(m, j, OUTBOX_OK, NULL);
        return;
    }
}
