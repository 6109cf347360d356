/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A worker's side of the database (worker_int.h): a failure classified by
 * whose fault it is, the connection coming up and going down (with the
 * published rows a lost connection leaves unmarked), and the statements
 * and results that need no change of state: the fetch, the drain probe's
 * row, a refused row's, the probe of the grants. Called by worker.c only;
 * the state changes are worker.c's.
 */
#include <mysqld_error.h>
#include <stdio.h>
#include <string.h>

#include "stats.h"
#include "worker_int.h"

/* A run of transaction conflicts, and rows marked dead, are said at most
 * this often. */
#define OB_CONFLICT_SAY_MS 60000

/* The batch's published rows will not be marked: the connection that held
 * their transaction is gone. Counted for the warning on reconnect. */
void ob_worker_note_unmarked(ob_worker *w) {
    ob_unmarked *u = w->env->unmarked;
    if (u && w->pub.batch.n_acked > 0 &&
        (w->state == W_FINISHING || w->state == W_ISOLATING || w->state == W_REFUSING ||
         w->state == W_ISO_COMMITTING)) {
        if (u->rows == 0 || w->batch_published_at < u->oldest_at)
            u->oldest_at = w->batch_published_at;
        u->rows += w->pub.batch.n_acked;
    }
}

/* The connection is gone: the gauge of connections up follows. */
void ob_worker_db_down(ob_worker *w) {
    ob_db_life_down(&w->life);
}

/* Rows published but left unmarked by a lost connection are published
 * again. Past the stream's duplicate window the stream cannot tell the copy
 * from the original: say how many, once. */
static void warn_unmarked(ob_worker *w) {
    const ob_reader_env *e = w->env;
    ob_unmarked_say(e, e->unmarked, e->ack_timeout_ms,
                    "were not marked before the database connection was lost");
}

/* A statement's failure that may be one row's: not a lost connection, a
 * conflict, or an error that every row would meet. */
int ob_worker_row_level(ob_worker *w) {
    unsigned no = ob_db_errno(w->db);
    return !ob_db_lost(w->db) && no != ER_LOCK_DEADLOCK && no != ER_LOCK_WAIT_TIMEOUT &&
           !ob_db_errno_is_refusal(no);
}

/* A database operation failed: classify it by whose fault it is, say so
 * and count it; worker.c acts on the verdict. */
ob_fault ob_worker_classify(ob_worker *w, const char *during) {
    const ob_reader_env *e = w->env;
    unsigned no = ob_db_errno(w->db);
    e->stats->db_errors++;
    if (ob_db_lost(w->db)) {
        ob_worker_db_down(w);
        w->failback = 0; /* a round that failed whole: the next session is news */
        if (w->state != W_CONNECTING)
            OB_WARN(e->log, "%s: database connection lost while %s: %s; reconnecting", w->pub.name,
                    during, ob_db_error(w->db));
        else if (ob_db_life_say(&w->life, no)) /* a lasting outage is said once */
            OB_WARN(e->log, "%s: cannot connect to the database: %s; retrying", w->pub.name,
                    ob_db_error(w->db));
        /* The server rolls back the open transaction when the connection
         * drops: the claimed rows are pending again, and whatever was already
         * published is absorbed by Msg-Id dedup, if it comes back within the
         * stream's duplicate window (checked on reconnect). */
        ob_worker_note_unmarked(w);
        return OB_FAULT_LOST;
    }
    if (ob_db_errno_is_refusal(no) && w->state != W_CONNECTING) {
        /* Every row would meet it (a privilege taken away, a read-only
         * server): claim nothing, and publish nothing again, until a
         * statement that writes nothing but needs every privilege passes. */
        if (!w->refusing)
            OB_WARN(e->log,
                    "%s: the database refuses the relay's statements while %s: %u %s%s; "
                    "claiming no rows until it accepts them again",
                    w->pub.name, during, no, ob_db_error(w->db), ob_db_error_hint(no));
        snprintf(w->refusal, sizeof(w->refusal), "the database refuses the relay's writes: %u %s",
                 no, ob_db_error(w->db));
        w->refusing = 1;
        return OB_FAULT_REFUSED;
    }
    if (no == ER_LOCK_DEADLOCK || no == ER_LOCK_WAIT_TIMEOUT) {
        /* InnoDB (or Galera's certification) rolled the transaction back; go
         * again at once. Conflicts come in runs (ordered workers waiting on
         * one another's locks, producers on several nodes): said at most
         * once a minute, with the count of those not said. */
        uint64_t now = uv_now(e->loop);
        if (w->conflict_said != 0 && now - w->conflict_said < OB_CONFLICT_SAY_MS) {
            w->conflicts_unsaid++;
            return OB_FAULT_CONFLICT;
        }
        OB_WARN(e->log,
                "%s: transaction conflict while %s (%u %s); retrying the batch "
                "(%u more since the last such line; said at most once a minute)",
                w->pub.name, during, no, ob_db_error(w->db), w->conflicts_unsaid);
        w->conflict_said = now == 0 ? 1 : now;
        w->conflicts_unsaid = 0;
        return OB_FAULT_CONFLICT;
    }
    OB_ERROR(e->log, "%s: database error while %s: %u %s%s", w->pub.name, during, no,
             ob_db_error(w->db), ob_db_error_hint(no));
    return OB_FAULT_ERROR;
}

void ob_worker_say_dead(ob_worker *w, int n) {
    uint64_t now = uv_now(w->env->loop);
    w->dead_unsaid += (uint64_t)n;
    if (n <= 0 || (w->dead_said != 0 && now - w->dead_said < OB_CONFLICT_SAY_MS))
        return;
    OB_WARN(w->env->log,
            "%s: %llu row(s) marked dead since the last such line (said at most once a minute; "
            "outbox_relay_dead_total counts them all); see last_error (outbox-uvrelay dead list)",
            w->pub.name, (unsigned long long)w->dead_unsaid);
    w->dead_said = now == 0 ? 1 : now;
    w->dead_unsaid = 0;
}

const char *ob_worker_fetch_sql(ob_worker *w, size_t *len) {
    w->fetch_sent_at = uv_now(w->env->loop);
    const ob_reader_owner *o = &w->env->owner;
    if (o->fetch_sql) { /* ordered: the owned buckets' statement */
        const char *sql;
        *len = o->fetch_sql(o->data, w->pub.index, ob_fetch_budget_next(&w->fb), &sql);
        if (*len == 0) { /* no memory for the statement: the owner builds it again next time */
            OB_WARN(w->env->log, "%s: out of memory for the fetch statement; trying again",
                    w->pub.name);
            return NULL;
        }
        return sql;
    }
    const char *sql = ob_fetch_budget_sql(&w->fb, w->env->batch.qtable, len);
    if (sql == NULL) { /* no byte budget (or no memory for the worker's own statement) */
        sql = w->env->sql_fetch;
        *len = w->env->sql_fetch_len;
    }
    return sql;
}

/* While a drain is awaited: the drain probe's row says how many pending
 * rows are due (within the longest backoff), how many are scheduled later
 * and when the first of those is. */
void ob_worker_drain_row(ob_worker *w) {
    const ob_reader_env *e = w->env;
    char **row = ob_db_next_row(w->db, 1, NULL);
    if (row && row[0] && strcmp(row[0], "0") == 0) {
        if (e->owner.table_empty)
            e->owner.table_empty(e->owner.data, w, row[1], row[2]);
    } else if (row && row[0] && !w->drain_said) {
        OB_INFO(e->log,
                "%s: draining: waiting for %s pending row(s) due now or retried within the "
                "backoff (held by other connections or waiting for their retry)",
                w->pub.name, row[0]);
        w->drain_said = 1;
    }
}

void ob_worker_db_up(ob_worker *w) {
    ob_db_life_up(&w->life);
    warn_unmarked(w);
    /* The group's try of the first node (it may have failed): the workers
     * parked meanwhile look once, so that they follow at their next step. */
    if (w->failback == 1)
        ob_flow_wake_all(w->env->flow, &w->pub.fm);
    /* A failback's session is said by its move ("back on database node 1"),
     * and a failed try, back where it was, is not news. */
    ob_logf(w->env->log, w->failback ? OUTBOX_LOG_DEBUG : OUTBOX_LOG_INFO,
            "%s: connected to the database (session %lu)", w->pub.name, ob_db_thread_id(w->db));
    w->failback = 0;
}

size_t ob_worker_refused_row_sql(ob_worker *w) {
    ob_batch *b = &w->pub.batch;
    char why[600];
    int n = snprintf(why, sizeof(why), "the database refused to write this row: %u %s",
                     ob_db_errno(w->db), ob_db_error(w->db));
    const ob_slot *s = w->iso >= 0 ? &b->slots[w->iso] : NULL;
    ob_log_row lr = {s ? s->id : NULL, NULL, 0, NULL, 0, s ? s->row.attempts + 1 : 0};
    OB_ROW_WARN(w->env->log, &lr, "%s: %s; marking it dead", w->pub.name, why);
    return ob_batch_refused_sql(b, &w->env->batch, w->iso, why, (size_t)n);
}

int ob_worker_grant_sql(ob_worker *w) {
    const ob_reader_env *env = w->env;
    /* Writes nothing, yet needs every privilege the finishing statements
     * need (reading a column in SET needs SELECT on it). */
    ob_buf_printf(&w->grant_sql,
                  "UPDATE %s SET status = status, attempt_count = attempt_count, last_error = "
                  "last_error, next_attempt_at = next_attempt_at, processed_at = processed_at "
                  "WHERE 1 = 0",
                  env->batch.qtable ? env->batch.qtable : "outbox");
    if (env->batch.processing == OUTBOX_DELETE_PROCESSED)
        ob_buf_printf(&w->grant_sql, "; DELETE FROM %s WHERE 1 = 0",
                      env->batch.qtable ? env->batch.qtable : "outbox");
    return w->grant_sql.oom ? -1 : 0;
}
