/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the maintenance jobs use of their handle: sending a statement,
 * batching a change, reading common answers, finishing a job. The handle
 * (maint_handle.c) hangs its two entry points on the structure
 * (on_statement, finish), so that the jobs and this file call nothing of
 * it by name: the handle calls the jobs, never the other way.
 */
#include "maint_int.h"

#include <mysqld_error.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double ob_maint_wall_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int ob_maint_send(outbox_maint *m, ob_job *j) {
    j->sent++;
    j->sent_wall_s = ob_maint_wall_s();
    if (m->sql.oom) {
        ob_maint_done(m, j, OUTBOX_ENOMEM, "out of memory");
        return -1;
    }
    if (ob_db_query(m->db, m->sql.p, m->sql.len, m->on_statement, m) != 0) {
        ob_maint_done(m, j, OUTBOX_EDB, "the maintenance connection is not ready");
        return -1;
    }
    return 0;
}

int ob_maint_send_batch(outbox_maint *m, ob_job *j) {
    if (j->batch_left == 0)
        return 0;
    j->batch_asked = j->batch_left < OB_MAINT_BATCH ? j->batch_left : OB_MAINT_BATCH;
    ob_buf_reset(&m->sql);
    ob_buf_append(&m->sql, j->batch.p, j->batch.len);
    ob_buf_puts(&m->sql, " LIMIT ");
    ob_buf_u64(&m->sql, j->batch_asked);
    if (j->batch_tail)
        ob_buf_puts(&m->sql, j->batch_tail);
    return ob_maint_send(m, j) == 0 ? 1 : -1;
}

int ob_maint_batch_full(outbox_maint *m, ob_job *j, uint64_t *counter) {
    uint64_t n = ob_db_affected(m->db, j->batch_res);
    *counter += n;
    j->batch_left -= n < j->batch_left ? n : j->batch_left;
    return n >= j->batch_asked;
}

void ob_maint_done(outbox_maint *m, ob_job *j, int status, const char *fmt, ...) {
    j->res.status = status;
    j->msg[0] = '\0';
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(j->msg, sizeof(j->msg), fmt, ap);
        va_end(ap);
    }
    m->finish(m, j);
}

void ob_maint_db_failed(outbox_maint *m, ob_job *j, const char *what) {
    unsigned e = ob_db_errno(m->db);
    if (e == ER_NO_SUCH_TABLE)
        ob_maint_done(m, j, OUTBOX_ENOTFOUND, "table %s does not exist", m->name);
    else if (e == ER_LOCK_WAIT_TIMEOUT)
        ob_maint_done(m, j, OUTBOX_EDB,
                      "%s gave up after waiting %u s for a lock: a long transaction is using "
                      "table %s; the next round tries again",
                      what, m->o.ddl_lock_wait_s, m->name);
    else
        ob_maint_done(m, j, OUTBOX_EDB, "%s failed: %s", what, ob_db_error(m->db));
}

void ob_maint_lock_sql(outbox_maint *m, ob_buf *b) {
    ob_buf_printf(b, "SELECT GET_LOCK(%s, 0), UNIX_TIMESTAMP(NOW(6))", m->lock_sql);
}

int ob_maint_lock_result(outbox_maint *m, ob_job *j, MYSQL_RES *res) {
    MYSQL_ROW row = res ? mysql_fetch_row(res) : NULL;
    if (row == NULL || row[0] == NULL || row[1] == NULL) {
        ob_maint_done(m, j, OUTBOX_EDB, "GET_LOCK('%s', 0) gave no answer", m->lock_name);
        return -1;
    }
    j->locked = strcmp(row[0], "1") == 0;
    j->server_s = strtod(row[1], NULL);
    return 0;
}

long ob_maint_alloc_rows(outbox_maint *m, ob_job *j, MYSQL_RES *res, size_t size) {
    size_t n = res ? (size_t)mysql_num_rows(res) : 0;
    if (n == 0)
        return 0;
    j->rows = calloc(n, size);
    if (j->rows == NULL) {
        ob_maint_done(m, j, OUTBOX_ENOMEM, "out of memory");
        return -1;
    }
    return (long)n;
}

int64_t ob_maint_first_int(MYSQL_RES *res, int64_t dflt) {
    MYSQL_ROW row = res ? mysql_fetch_row(res) : NULL;
    return row && row[0] ? strtoll(row[0], NULL, 10) : dflt;
}

const char *outbox_maint_kind_name(outbox_maint_kind kind) {
    switch (kind) {
    case OUTBOX_MAINT_SAMPLE:
        return "sample";
    case OUTBOX_MAINT_PARTITIONS:
        return "partitions";
    case OUTBOX_MAINT_CLEANUP:
        return "cleanup";
    case OUTBOX_MAINT_STATUS:
        return "status";
    case OUTBOX_MAINT_DEAD_LIST:
        return "dead list";
    case OUTBOX_MAINT_DEAD_REPLAY:
        return "dead replay";
    case OUTBOX_MAINT_DEAD_PURGE:
        return "dead purge";
    case OUTBOX_MAINT_CURSOR_RESET:
        return "cursor-reset";
    }
    return "?";
}
