/* SPDX-License-Identifier: Apache-2.0 */
#include "sql.h"

#include <stdio.h>
#include <string.h>

#include "subject.h"

int ob_sql_check_table(const char *name, char *err, size_t errlen) {
    if (name == NULL || *name == '\0') {
        snprintf(err, errlen, "table name is empty");
        return -1;
    }
    int parts = 1;
    size_t partlen = 0;
    for (const char *p = name; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (c == '.') {
            if (partlen == 0 || ++parts > 2)
                goto bad;
            partlen = 0;
            continue;
        }
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_'))
            goto bad;
        if (++partlen > 64)
            goto bad;
    }
    if (partlen == 0)
        goto bad;
    return 0;
bad:
    snprintf(err, errlen,
             "table name '%.80s' is not allowed: use [A-Za-z0-9_] (at most 64), optionally "
             "prefixed by 'schema.'",
             name);
    return -1;
}

void ob_sql_quote_table(ob_buf *b, const char *name) {
    const char *dot = strchr(name, '.');
    ob_buf_putc(b, '`');
    if (dot) {
        ob_buf_append(b, name, (size_t)(dot - name));
        ob_buf_puts(b, "`.`");
        name = dot + 1;
    }
    ob_buf_puts(b, name);
    ob_buf_putc(b, '`');
}

void ob_sql_fetch(ob_buf *b, const char *qtable, int limit) {
    ob_buf_puts(b, "START TRANSACTION; SELECT id, aggregate_type, aggregate_id, event_type, "
                   "payload, headers, attempt_count, created_at FROM ");
    ob_buf_puts(b, qtable);
    ob_buf_puts(b, " WHERE status = 0 AND (next_attempt_at IS NULL OR next_attempt_at <= NOW(6))"
                   " ORDER BY id LIMIT ");
    ob_buf_i64(b, limit);
    ob_buf_puts(b, " FOR UPDATE SKIP LOCKED");
}

static void ordered_select(ob_buf *b, const char *qtable, int late) {
    ob_buf_puts(b, "SELECT o.id, o.aggregate_type, o.aggregate_id, o.event_type, o.payload, "
                   "o.headers, o.attempt_count, o.created_at, IFNULL(o.next_attempt_at > NOW(6), "
                   "0), o.seq, ");
    if (late) {
        /* A locking read: it sees what is committed when the row is read. A
         * plain one would read with the statement's view, opened at its
         * first row, perhaps before the scan waited and the late row came.
         * By the aggregate's index (maint/schema.c makes it, and names it
         * so): it reads and locks the aggregate's pending rows only, of a
         * bucket the fetch owns and behind its position, so locked by it
         * already but for a late row. Another plan, which statistics left
         * stale by a bulk load can pick, reads every pending row of the
         * bucket (or of the table) below the row, for every row. */
        ob_buf_puts(b, "(SELECT MAX(p.seq) FROM ");
        ob_buf_puts(b, qtable);
        ob_buf_puts(b, " p FORCE INDEX (idx_aggregate_wait) WHERE p.aggregate_type = "
                       "o.aggregate_type AND p.aggregate_id = o.aggregate_id AND p.status = 0 AND "
                       "p.seq < o.seq FOR UPDATE) FROM ");
    } else {
        ob_buf_puts(b, "NULL FROM ");
    }
    ob_buf_puts(b, qtable);
    ob_buf_puts(b, " o WHERE ");
}

/* Leaves out aggregates with a row waiting for its retry. */
static void ordered_guard(ob_buf *b, const char *qtable) {
    ob_buf_puts(b, "o.status = 0 AND (SELECT 1 FROM ");
    ob_buf_puts(b, qtable);
    ob_buf_puts(b, " h WHERE h.aggregate_type = o.aggregate_type AND h.aggregate_id = "
                   "o.aggregate_id AND h.status = 0 AND h.next_attempt_at > NOW(6) LIMIT 1) IS "
                   "NULL ORDER BY o.seq LIMIT ");
}

/* A first branch of the fetch's UNION that returns no row and takes the
 * named lock before any row is read. */
static void lock_branch(ob_buf *b, const char *lock) {
    if (lock == NULL)
        return;
    ob_buf_puts(
        b, "(SELECT NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL FROM DUAL "
           "WHERE "
           "GET_LOCK(");
    ob_buf_puts(b, lock);
    ob_buf_puts(b, ", 0) IS NULL) UNION ALL ");
}

void ob_sql_fetch_buckets(ob_buf *b, const char *qtable, uint64_t mask, int limit, const char *lock,
                          int late) {
    int n = 0;
    for (uint64_t m = mask; m; m &= m - 1)
        n++;
    ob_buf_puts(b, "START TRANSACTION; ");
    if (n == 0) {
        ob_buf_puts(b, "SELECT 1 FROM DUAL WHERE 0");
        return;
    }
    lock_branch(b, lock);
    int each = limit / n > 0 ? limit / n : 1;
    int first = 1;
    for (int k = 0; k < 64; k++) {
        if (!(mask >> k & 1))
            continue;
        ob_buf_puts(b, first ? "(" : " UNION ALL (");
        first = 0;
        ordered_select(b, qtable, late);
        ob_buf_printf(b, "o.bucket = %d AND ", k);
        ordered_guard(b, qtable);
        ob_buf_i64(b, each);
        ob_buf_puts(b, " FOR UPDATE)");
    }
}

void ob_sql_fetch_strict(ob_buf *b, const char *qtable, int limit, const char *lock, int late) {
    ob_buf_puts(b, "START TRANSACTION; ");
    lock_branch(b, lock);
    if (lock)
        ob_buf_putc(b, '(');
    ordered_select(b, qtable, late);
    ordered_guard(b, qtable);
    ob_buf_i64(b, limit);
    ob_buf_puts(b, lock ? " FOR UPDATE)" : " FOR UPDATE");
}

void ob_sql_probe(ob_buf *b, const char *qtable) {
    ob_buf_puts(b, "SELECT 1 FROM ");
    ob_buf_puts(b, qtable);
    ob_buf_puts(b, " WHERE status = 0 AND (next_attempt_at IS NULL OR next_attempt_at <= NOW(6))"
                   " LIMIT 1");
}

void ob_sql_add_id(ob_buf *b, const unsigned char id[16], int first) {
    if (ob_buf_reserve(b, 36) != 0)
        return;
    ob_buf_puts(b, first ? "X'" : ",X'");
    ob_buf_hex(b, id, 16);
    ob_buf_putc(b, '\'');
}

void ob_sql_end_ids(ob_buf *b) {
    ob_buf_puts(b, ");");
}

void ob_sql_processed_head(ob_buf *b, const char *qtable, outbox_processing_mode mode) {
    if (mode == OUTBOX_DELETE_PROCESSED) {
        ob_buf_puts(b, "DELETE FROM ");
        ob_buf_puts(b, qtable);
    } else {
        ob_buf_puts(b, "UPDATE ");
        ob_buf_puts(b, qtable);
        ob_buf_puts(b, " SET status = 1, processed_at = NOW(6), next_attempt_at = NULL");
    }
    ob_buf_puts(b, " WHERE id IN (");
}

void ob_sql_text_literal(ob_buf *b, const char *s, size_t len, size_t max_chars) {
    const unsigned char *u = (const unsigned char *)s;
    static const unsigned char qmark = '?';
    ob_buf_puts(b, "_utf8mb4 X'");
    size_t chars = 0;
    for (size_t i = 0; i < len && chars < max_chars; chars++) {
        size_t n = ob_utf8_seq(u + i, len - i);
        if (n == 0) {
            ob_buf_hex(b, &qmark, 1);
            i++;
        } else {
            ob_buf_hex(b, u + i, n);
            i += n;
        }
    }
    ob_buf_putc(b, '\'');
}

void ob_sql_fail_head(ob_buf *b, const char *qtable, const char *error, size_t error_len, int dead,
                      int max_attempts, const ob_backoff *bo) {
    ob_buf_puts(b, "UPDATE ");
    ob_buf_puts(b, qtable);
    /* MariaDB evaluates single-table SET assignments left to right, so the
     * expressions after the first see the incremented attempt_count. */
    ob_buf_puts(b, " SET attempt_count = attempt_count + 1, last_error = ");
    ob_sql_text_literal(b, error, error_len, OB_LAST_ERROR_MAX);
    /* processed_at records when a row reached its final state, dead too. */
    if (dead) {
        ob_buf_puts(b, ", status = -1, next_attempt_at = NULL, processed_at = NOW(6)");
    } else {
        ob_buf_puts(b, ", status = IF(attempt_count >= ");
        ob_buf_i64(b, max_attempts);
        ob_buf_puts(b, ", -1, 0), processed_at = IF(attempt_count >= ");
        ob_buf_i64(b, max_attempts);
        ob_buf_puts(b, ", NOW(6), NULL), next_attempt_at = IF(attempt_count >= ");
        ob_buf_i64(b, max_attempts);
        ob_buf_puts(b, ", NULL, TIMESTAMPADD(MICROSECOND, FLOOR(");
        if (bo->kind == OUTBOX_BACKOFF_FIXED) {
            ob_buf_u64(b, (uint64_t)bo->base_ms * 1000u);
        } else {
            ob_buf_puts(b, "LEAST(");
            ob_buf_u64(b, (uint64_t)bo->max_ms * 1000u);
            ob_buf_puts(b, ", ");
            ob_buf_u64(b, (uint64_t)bo->base_ms * 1000u);
            ob_buf_puts(b, " * POW(2, LEAST(attempt_count - 1, 40)))");
        }
        if (bo->jitter > 0) {
            ob_buf_printf(b, " * (1 - %.4f * RAND())", bo->jitter > 1 ? 1.0 : bo->jitter);
        }
        ob_buf_puts(b, "), NOW(6)))");
    }
    ob_buf_puts(b, " WHERE id IN (");
}

void ob_sql_defer_head(ob_buf *b, const char *qtable, const char *error, size_t error_len,
                       uint64_t ms, int waiting_status) {
    ob_buf_puts(b, "UPDATE ");
    ob_buf_puts(b, qtable);
    ob_buf_puts(b, " SET last_error = ");
    ob_sql_text_literal(b, error, error_len, OB_LAST_ERROR_MAX);
    ob_buf_puts(b, ", next_attempt_at = TIMESTAMPADD(MICROSECOND, ");
    ob_buf_u64(b, ms * 1000u);
    ob_buf_puts(b, ", NOW(6))");
    if (waiting_status)
        ob_buf_printf(b, ", status = %d", waiting_status);
    ob_buf_puts(b, " WHERE id IN (");
}

uint64_t ob_backoff_delay_ms(const ob_backoff *bo, int attempt) {
    if (bo->kind == OUTBOX_BACKOFF_FIXED)
        return bo->base_ms;
    if (attempt < 1)
        attempt = 1;
    int shift = attempt - 1 > 40 ? 40 : attempt - 1;
    double d = (double)bo->base_ms * (double)((uint64_t)1 << shift);
    return d > (double)bo->max_ms ? bo->max_ms : (uint64_t)d;
}
