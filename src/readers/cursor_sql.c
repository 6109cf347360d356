/* SPDX-License-Identifier: Apache-2.0 */
/* SQL text of cursor mode (see cursor_sql.h). */
#include "cursor_sql.h"

#include <string.h>

#include "buckets.h"

static const char trx_oldest[] =
    "(SELECT UNIX_TIMESTAMP(MIN(trx_started)) FROM information_schema.INNODB_TRX WHERE "
    "trx_mysql_thread_id <> CONNECTION_ID())";

void ob_cursor_sql_buckets(ob_buf *b, uint64_t mask) {
    int first = 1;
    ob_buf_putc(b, '(');
    for (int k = 0; k < OB_BUCKETS; k++) {
        if (!(mask >> k & 1))
            continue;
        if (!first)
            ob_buf_putc(b, ',');
        ob_buf_i64(b, k);
        first = 0;
    }
    if (first)
        ob_buf_puts(b, "NULL");
    ob_buf_putc(b, ')');
}

void ob_cursor_sql_probe(ob_buf *b, const char *ctable) {
    ob_buf_puts(b, "SELECT COUNT(*) FROM information_schema.INNODB_TRX; SELECT seq FROM ");
    ob_buf_puts(b, ctable);
    ob_buf_puts(b, " LIMIT 0");
}

void ob_cursor_sql_check(ob_buf *b) {
    ob_buf_puts(b, "SELECT UNIX_TIMESTAMP(NOW(6)), ");
    ob_buf_puts(b, trx_oldest);
}

void ob_cursor_sql_mark(ob_buf *b, const char *qtable) {
    ob_buf_puts(b, "SELECT UNIX_TIMESTAMP(NOW(6)), (SELECT IFNULL(MAX(seq), 0) FROM ");
    ob_buf_puts(b, qtable);
    ob_buf_puts(b, ")");
}

void ob_cursor_sql_init(ob_buf *b, const char *qtable, const char *ctable, const char *table,
                        uint64_t mask, uint64_t max, int hint) {
    ob_buf_puts(b, "UPDATE ");
    ob_buf_puts(b, qtable);
    ob_buf_puts(b, " SET status = 2 WHERE bucket IN ");
    ob_cursor_sql_buckets(b, mask);
    ob_buf_printf(b, " AND status = 0 AND seq <= %llu AND next_attempt_at > NOW(6); ",
                  (unsigned long long)max);
    ob_buf_puts(b, "INSERT IGNORE INTO ");
    ob_buf_puts(b, ctable);
    ob_buf_printf(b,
                  " (table_name, bucket, seq) SELECT '%s', s_.seq, IFNULL((SELECT MIN(o.seq) - 1 "
                  "FROM ",
                  table);
    ob_buf_puts(b, qtable);
    if (hint)
        ob_buf_puts(b, " o FORCE INDEX (" OB_CURSOR_BUCKET_INDEX ")");
    else
        ob_buf_puts(b, " o");
    ob_buf_printf(b,
                  " WHERE o.bucket = s_.seq AND o.status = 0 AND o.seq <= %llu), %llu) "
                  "FROM " OB_SQL_SEQ_0_TO " WHERE s_.seq IN ",
                  (unsigned long long)max, (unsigned long long)max, OB_BUCKETS - 1);
    ob_cursor_sql_buckets(b, mask);
}

void ob_cursor_sql_load(ob_buf *b, const char *qtable, const char *ctable, const char *table,
                        uint64_t mask, const char *lock) {
    if (lock)
        ob_buf_printf(b, "DO GET_LOCK(%s, 0); ", lock);
    ob_buf_puts(b, "SELECT bucket, seq FROM ");
    ob_buf_puts(b, ctable);
    ob_buf_printf(b, " WHERE table_name = '%s' AND bucket IN ", table);
    ob_cursor_sql_buckets(b, mask);
    ob_buf_puts(b, "; SELECT DISTINCT aggregate_type, aggregate_id FROM ");
    ob_buf_puts(b, qtable);
    ob_buf_puts(b, " WHERE status = 2 AND bucket IN ");
    ob_cursor_sql_buckets(b, mask);
}

/* At most this many ranges in a read's WHERE: more are merged into ranges
 * that cover them (the rows read twice are skipped). */
#define MAX_RANGES 128

/* Gaps that repeat with one period and one width, as a counter stepping by
 * auto_increment_increment leaves them ([2,3], [5,6], [8,9] ...), make one
 * run: one clause names them exactly, so the read does not take the rows
 * between them again. A lone gap is a run of one (period 0). */
typedef struct gap_run {
    uint64_t lo, hi, period, width;
} gap_run;

/* The run that starts at gap i; returns the index of the gap after it. */
static int run_at(const ob_gaps *g, int i, gap_run *r) {
    const ob_gap *a = &g->g[i];
    *r = (gap_run){a->lo, a->hi, 0, a->hi - a->lo + 1};
    int j = i + 1;
    if (j < g->n && g->g[j].hi - g->g[j].lo + 1 == r->width)
        r->period = g->g[j].lo - a->lo;
    while (r->period && j < g->n && g->g[j].lo - g->g[j - 1].lo == r->period &&
           g->g[j].hi - g->g[j].lo + 1 == r->width)
        r->hi = g->g[j++].hi;
    if (j == i + 1)
        r->period = 0;
    return j;
}

static void put_run(ob_buf *b, const gap_run *r) {
    if (r->lo == r->hi) {
        ob_buf_printf(b, " OR seq = %llu", (unsigned long long)r->lo);
        return;
    }
    if (r->period == 0) {
        ob_buf_printf(b, " OR seq BETWEEN %llu AND %llu", (unsigned long long)r->lo,
                      (unsigned long long)r->hi);
        return;
    }
    /* seq + c is a multiple of the period at each gap's lo */
    ob_buf_printf(b, " OR (seq BETWEEN %llu AND %llu AND MOD(seq + %llu, %llu) < %llu)",
                  (unsigned long long)r->lo, (unsigned long long)r->hi,
                  (unsigned long long)((r->period - r->lo % r->period) % r->period),
                  (unsigned long long)r->period, (unsigned long long)r->width);
}

static void gap_ranges(ob_buf *b, const ob_gaps *g) {
    gap_run r;
    int runs = 0;
    for (int i = 0; i < g->n; runs++)
        i = run_at(g, i, &r);
    if (runs <= MAX_RANGES) {
        for (int i = 0; i < g->n;) {
            i = run_at(g, i, &r);
            put_run(b, &r);
        }
        return;
    }
    int per = (runs + MAX_RANGES - 1) / MAX_RANGES;
    for (int i = 0; i < g->n;) {
        gap_run m;
        i = run_at(g, i, &m);
        for (int k = 1; k < per && i < g->n; k++) {
            i = run_at(g, i, &r);
            m.hi = r.hi;
        }
        m.period = 0;
        put_run(b, &m);
    }
}

void ob_cursor_sql_read(ob_buf *b, const char *qtable, const ob_gaps *gaps, uint64_t mask,
                        int limit, int check, int gaps_only) {
    ob_buf_puts(b, "SELECT UNIX_TIMESTAMP(NOW(6)), ");
    ob_buf_puts(b, check ? trx_oldest : "NULL");
    if (ob_gaps_wants_mark(gaps)) {
        ob_buf_puts(b, ", (SELECT MAX(seq) FROM ");
        ob_buf_puts(b, qtable);
        ob_buf_puts(b, ")");
    } else {
        ob_buf_puts(b, ", NULL");
    }
    ob_buf_puts(b, "; SELECT id, aggregate_type, aggregate_id, event_type, ");
    if (mask == OB_ALL_BUCKETS) {
        ob_buf_puts(b, "payload, headers");
    } else {
        ob_buf_puts(b, "IF(bucket IN ");
        ob_cursor_sql_buckets(b, mask);
        ob_buf_puts(b, ", payload, NULL), IF(bucket IN ");
        ob_cursor_sql_buckets(b, mask);
        ob_buf_puts(b, ", headers, NULL)");
    }
    ob_buf_puts(b, ", attempt_count, created_at, NULL, seq, bucket, status FROM ");
    ob_buf_puts(b, qtable);
    if (gaps_only)
        ob_buf_puts(b, " WHERE FALSE");
    else
        ob_buf_printf(b, " WHERE seq > %llu", (unsigned long long)gaps->top);
    gap_ranges(b, gaps);
    ob_buf_puts(b, " ORDER BY seq LIMIT ");
    ob_buf_i64(b, limit);
}

void ob_cursor_sql_lane(ob_buf *b, const char *qtable, uint64_t mask, uint64_t after, int limit,
                        uint64_t horizon_ms, int whole) {
    ob_buf_puts(b, "SELECT id, aggregate_type, aggregate_id, event_type, payload, headers, "
                   "attempt_count, created_at, IFNULL(next_attempt_at > NOW(6), 0), seq, "
                   "bucket, ");
    ob_buf_printf(b, "IFNULL(next_attempt_at > TIMESTAMPADD(MICROSECOND, %llu, NOW(6)), 0), ",
                  (unsigned long long)horizon_ms * 1000u);
    if (whole) {
        /* Uncorrelated: evaluated once for the statement, not per row. */
        ob_buf_puts(b, "EXISTS(SELECT 1 FROM ");
        ob_buf_puts(b, qtable);
        ob_buf_puts(b, " WHERE status = 2 AND bucket IN ");
        ob_cursor_sql_buckets(b, mask);
        ob_buf_printf(b,
                      " AND NOT IFNULL(next_attempt_at > TIMESTAMPADD(MICROSECOND, %llu, NOW(6)), "
                      "0)) FROM ",
                      (unsigned long long)horizon_ms * 1000u);
    } else {
        ob_buf_puts(b, "NULL FROM ");
    }
    ob_buf_puts(b, qtable);
    ob_buf_puts(b, " WHERE status = 2 AND bucket IN ");
    ob_cursor_sql_buckets(b, mask);
    if (after)
        ob_buf_printf(b, " AND seq > %llu", (unsigned long long)after);
    ob_buf_puts(b, " ORDER BY seq LIMIT ");
    ob_buf_i64(b, limit);
}

void ob_cursor_sql_advance(ob_buf *b, const char *ctable, const char *table, uint64_t mask,
                           uint64_t seq) {
    ob_buf_puts(b, "UPDATE ");
    ob_buf_puts(b, ctable);
    ob_buf_printf(b, " SET seq = %llu WHERE table_name = '%s' AND bucket IN ",
                  (unsigned long long)seq, table);
    ob_cursor_sql_buckets(b, mask);
    ob_buf_printf(b, " AND seq < %llu", (unsigned long long)seq);
}

void ob_cursor_sql_fail_head(ob_buf *b, const char *qtable, const char *error, size_t error_len,
                             int dead, int max_attempts, const ob_backoff *bo) {
    static const char tail[] = " WHERE id IN (";
    ob_sql_fail_head(b, qtable, error, error_len, dead, max_attempts, bo);
    if (dead || b->oom || b->len < sizeof(tail) - 1 ||
        memcmp(b->p + b->len - (sizeof(tail) - 1), tail, sizeof(tail) - 1) != 0)
        return;
    /* SET assignments run left to right: the status the ordered head
     * computed (-1 dead, 0 retry) is turned into cursor mode's 2. */
    b->len -= sizeof(tail) - 1;
    b->p[b->len] = '\0';
    ob_buf_puts(b, ", status = IF(status = -1, -1, 2)");
    ob_buf_puts(b, tail);
}

void ob_cursor_sql_hold_head(ob_buf *b, const char *qtable) {
    ob_buf_puts(b, "UPDATE ");
    ob_buf_puts(b, qtable);
    ob_buf_puts(b, " SET status = 2 WHERE id IN (");
}
