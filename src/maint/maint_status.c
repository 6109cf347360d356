/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The read-only jobs: SAMPLE (pending count and the age of the oldest
 * pending row, for the relay's stats) and STATUS (the operator's view: rows
 * per status, the lag, the partitions with their row estimates, and who
 * holds the maintenance lock). Each is one round trip after the cursor
 * probe; in cursor mode the pending rows and their age come from the
 * cursors, per bucket (maint_cursor.c).
 */
#include "maint_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cursor_fit.h"
#include "cluster.h"
#include "lease.h"
#include "lease_table.h"
#include "sql.h"

/* Both jobs send one multi-statement query and are done with its answer. */
enum { STEP_QUERY = 1 };

/* Appends the statement whose result is the age in microseconds of the
 * oldest pending row (no row when nothing is pending). ORDER BY id follows
 * the (status, id) index, so it reads one index entry. */
static void append_oldest(outbox_maint *m, ob_buf *b) {
    ob_buf_puts(b, "SELECT TIMESTAMPDIFF(MICROSECOND, created_at, NOW(6)) FROM ");
    ob_buf_puts(b, m->qtable);
    ob_buf_puts(b, " WHERE status = 0 ORDER BY id LIMIT 1");
}

static int64_t oldest_ms(MYSQL_RES *res, int64_t pending) {
    int64_t us = ob_maint_first_int(res, 0);
    return pending > 0 && us > 0 ? us / 1000 : 0;
}

/* The table's CREATE_TIME, which a RENAME TABLE or a new table changes; once it changed since the
 * last sample, the tables of the schema created or renamed in that same second (the other side of
 * a swap). The names are looked up only then: a schema may hold many. */
static void append_created(outbox_maint *m, ob_buf *b) {
    ob_buf_puts(b, "SELECT UNIX_TIMESTAMP(t.CREATE_TIME), ");
    if (m->created)
        ob_buf_printf(b,
                      "IF(UNIX_TIMESTAMP(t.CREATE_TIME) <> %lld, (SELECT GROUP_CONCAT(o.TABLE_NAME "
                      "ORDER BY o.TABLE_NAME SEPARATOR ', ') FROM information_schema.TABLES o "
                      "WHERE o.TABLE_SCHEMA = t.TABLE_SCHEMA AND o.TABLE_NAME <> t.TABLE_NAME AND "
                      "o.CREATE_TIME = t.CREATE_TIME AND o.TABLE_TYPE = 'BASE TABLE'), NULL)",
                      (long long)m->created);
    else
        ob_buf_puts(b, "NULL");
    ob_buf_puts(b, " FROM information_schema.TABLES t WHERE ");
    ob_buf_puts(b, m->is_where);
}

/* Says a table replaced since the last sample in `out`; 0 when it was not. */
static int take_created(outbox_maint *m, MYSQL_RES *res, char *out, size_t n) {
    MYSQL_ROW row = res ? mysql_fetch_row(res) : NULL;
    int64_t now = row && row[0] ? strtoll(row[0], NULL, 10) : 0;
    int64_t was = m->created;
    if (now)
        m->created = now;
    if (!was || !now || now == was)
        return 0;
    const char *with = row[1] && row[1][0] ? row[1] : NULL;
    snprintf(out, n,
             "table %s was re-created or renamed (its CREATE_TIME changed: a RENAME TABLE swap, "
             "or the table dropped and created again)%s%.200s: rows committed into the table it "
             "replaced are not delivered from there; if it was swapped, look for rows of status 0 "
             "in the old table and insert them into %s",
             m->name, with ? "; renamed or created in the same second: " : "", with ? with : "",
             m->name);
    return 1;
}

void ob_job_sample_begin(outbox_maint *m, ob_job *j) {
    ob_buf_reset(&m->sql);
    j->step = STEP_QUERY;
    if (j->cursored) {
        ob_maint_cursor_pending_sql(m, j, &m->sql);
    } else {
        ob_buf_puts(&m->sql, "SELECT COUNT(*) FROM ");
        ob_buf_puts(&m->sql, m->qtable);
        ob_buf_puts(&m->sql, " WHERE status = 0; ");
        append_oldest(m, &m->sql);
    }
    ob_buf_puts(&m->sql, "; " OB_MAINT_CLOCK_SQL);
    if (!j->cursored) {
        ob_buf_puts(&m->sql, "; ");
        append_created(m, &m->sql); /* result 3 */
    }
    ob_maint_send(m, j);
}

/* The database's clock, read by the sample's last statement, with the host's
 * readings around it (relay_maint.c measures the skew from them). */
static void read_clock(outbox_maint *m, ob_job *j) {
    j->res.clock_answered_s = ob_maint_wall_s();
    j->res.clock_sent_s = j->sent_wall_s;
    MYSQL_RES *res = ob_db_result(m->db, 2);
    MYSQL_ROW row = res ? mysql_fetch_row(res) : NULL;
    j->res.db_clock_s = row && row[0] ? strtod(row[0], NULL) : 0;
}

void ob_job_sample_step(outbox_maint *m, ob_job *j, int ok) {
    if (!ok) {
        ob_maint_db_failed(m, j, "counting pending rows");
        return;
    }
    if (j->cursored)
        ob_maint_cursor_pending_result(j, ob_db_result(m->db, 0));
    else
        j->res.pending = ob_maint_first_int(ob_db_result(m->db, 0), -1);
    j->res.oldest_pending_ms = oldest_ms(ob_db_result(m->db, 1), j->res.pending);
    read_clock(m, j);
    char replaced[sizeof(j->msg)];
    if (!j->cursored && take_created(m, ob_db_result(m->db, 3), replaced, sizeof(replaced)))
        ob_maint_done(m, j, OUTBOX_OK, "%s", replaced);
    else
        ob_maint_done(m, j, OUTBOX_OK, NULL);
}

void ob_job_status_begin(outbox_maint *m, ob_job *j) {
    ob_buf *b = &m->sql;
    ob_buf_reset(b);
    ob_buf_puts(b, "SELECT status, COUNT(*) FROM ");
    ob_buf_puts(b, m->qtable);
    ob_buf_puts(b, " GROUP BY status; ");
    append_oldest(m, b);
    ob_buf_puts(b, "; SELECT PARTITION_NAME, PARTITION_DESCRIPTION, TABLE_ROWS FROM "
                   "information_schema.PARTITIONS WHERE ");
    ob_buf_puts(b, m->is_where);
    ob_buf_puts(b, " AND PARTITION_NAME IS NOT NULL ORDER BY PARTITION_ORDINAL_POSITION; ");
    ob_buf_printf(b, "SELECT IS_USED_LOCK(%s)", m->lock_sql);
    /* Who owns which bucket in the ordered modes, and who leads. */
    char base[32];
    ob_lease_base(base, m->url.database, m->o.table);
    ob_buf_printf(b, "; SELECT seq, IS_USED_LOCK(CONCAT('%s:b', seq)) FROM " OB_SQL_SEQ_0_TO, base,
                  OB_BUCKETS - 1);
    ob_buf_printf(b, "; SELECT IS_USED_LOCK('%s:leader')", base);
    if (j->cursored) {
        ob_buf_puts(b, "; ");
        ob_maint_cursor_pending_sql(m, j, b);
    }
    /* Then what the server is (a Galera node's locks are its own only), and
     * the lease table's holders, which are the leases there. */
    ob_buf_puts(b, "; ");
    ob_buf_puts(b, ob_cluster_sql);
    ob_buf_puts(b, "; ");
    ob_lease_tbl_holders_sql(b, m->o.table, base);
    j->step = STEP_QUERY;
    ob_maint_send(m, j);
}

/* The lease table's live holders (ob_lease_tbl_holders_sql). */
static void read_table_owners(MYSQL_RES *owners, outbox_maint_result *r) {
    MYSQL_ROW row;
    memset(r->bucket_holder, 0, sizeof(r->bucket_holder));
    r->leader_holder = 0;
    r->holders_are_relays = 1;
    while (owners && (row = mysql_fetch_row(owners)) != NULL) {
        if (row[0] == NULL || row[1] == NULL || row[2] == NULL)
            continue;
        unsigned long k = strtoul(row[1], NULL, 10), h = strtoul(row[2], NULL, 10);
        if (row[0][0] == 'b' && k < OB_BUCKETS)
            r->bucket_holder[k] = h;
        else if (row[0][0] == 'l' && k == 0)
            r->leader_holder = h;
    }
}

static void read_owners(MYSQL_RES *owners, outbox_maint_result *r) {
    MYSQL_ROW row;
    memset(r->bucket_holder, 0, sizeof(r->bucket_holder));
    while (owners && (row = mysql_fetch_row(owners)) != NULL) {
        int k = row[0] ? atoi(row[0]) : -1;
        if (k >= 0 && k < OB_BUCKETS && row[1])
            r->bucket_holder[k] = strtoul(row[1], NULL, 10);
    }
}

void ob_job_status_step(outbox_maint *m, ob_job *j, int ok) {
    if (!ok) {
        ob_maint_db_failed(m, j, "reading the table's status");
        return;
    }
    outbox_maint_result *r = &j->res;
    r->pending = r->processed = r->dead = 0;
    MYSQL_RES *counts = ob_db_result(m->db, 0);
    MYSQL_ROW row;
    while (counts && (row = mysql_fetch_row(counts)) != NULL) {
        if (row[0] == NULL || row[1] == NULL)
            continue;
        long long n = strtoll(row[1], NULL, 10);
        switch (atoi(row[0])) {
        case 0:
            r->pending = n;
            break;
        case 1:
            r->processed = n;
            break;
        case -1:
            r->dead = n;
            break;
        default:
            break;
        }
    }
    if (j->cursored) {
        /* Rows with status 0 at or below their cursor were delivered. */
        int64_t zero = r->pending;
        int64_t above = ob_maint_cursor_pending_result(j, ob_db_result(m->db, 6));
        r->processed += zero > above ? zero - above : 0;
        r->oldest_pending_ms = oldest_ms(ob_db_result(m->db, 7), r->pending);
    } else {
        r->oldest_pending_ms = oldest_ms(ob_db_result(m->db, 1), r->pending);
    }

    MYSQL_RES *parts = ob_db_result(m->db, 2);
    long n = ob_maint_alloc_rows(m, j, parts, sizeof(outbox_partition_info));
    if (n < 0)
        return;
    outbox_partition_info *info = j->rows;
    long k = 0;
    while (k < n && (row = mysql_fetch_row(parts)) != NULL) {
        int is_max;
        info[k].name = row[0];
        if (ob_part_parse_bound(row[1], &info[k].bound_ms, &is_max) != 0)
            info[k].bound_ms = 0;
        info[k].rows_estimate = row[2] ? strtoll(row[2], NULL, 10) : -1;
        k++;
    }
    r->partitions = info;
    r->npartitions = (size_t)k;
    r->lock_holder = (unsigned long)ob_maint_first_int(ob_db_result(m->db, 3), 0);
    read_owners(ob_db_result(m->db, 4), r);
    r->leader_holder = (unsigned long)ob_maint_first_int(ob_db_result(m->db, 5), 0);
    ob_cluster c;
    int at = j->cursored ? 8 : 6;
    ob_cluster_init(&c);
    ob_cluster_read(&c, ob_db_result(m->db, at));
    r->holders_are_relays = 0;
    if (ob_cluster_is_galera(&c)) /* where the lease runs on the table */
        read_table_owners(ob_db_result(m->db, at + 2), r);
    r->database = NULL;
    if (c.known) {
        ob_cluster_describe(&c, j->database, sizeof(j->database));
        r->database = j->database;
    }
    if (r->cursor_mismatch) {
        /* Told in the message: the counts take rows at or below the
         * cursors for delivered, which they may not be. */
        char why[600];
        ob_cursor_mismatch_why(why, sizeof(why), m->o.table, (uint64_t)r->cursor_top,
                               (uint64_t)r->next_seq);
        ob_maint_done(m, j, OUTBOX_OK, "%s", why);
        return;
    }
    ob_maint_done(m, j, OUTBOX_OK, NULL);
}
