/*
 * Maintenance on the relay's loop: timers that queue jobs, and one dedicated
 * MariaDB connection that runs the jobs one after another, so maintenance
 * never takes a worker's connection or holds locks in a batch transaction.
 *
 * Timers are unreferenced: they never keep an otherwise idle loop alive.
 *
 * Jobs:
 *   sample   pending count and the age of the oldest pending row
 */
#include "relay_int.h"

#include <stdlib.h>
#include <string.h>

#include "buf.h"

typedef enum maint_state {
    M_IDLE,       /* not started */
    M_CONNECTING, /* waiting for the maintenance connection */
    M_READY,      /* connected; no job running */
    M_SAMPLING,   /* waiting for the pending-count queries */
    M_BACKOFF,    /* connection lost; waiting before reconnecting */
    M_CLOSING,    /* closing handles */
    M_CLOSED
} maint_state;

enum { JOB_SAMPLE = 1 };

struct ob_maint {
    outbox_relay *r;
    maint_state state;
    ob_db *db;
    uv_timer_t sample_timer;
    uv_timer_t retry_timer;
    int queued; /* JOB_* bits waiting for the connection */
    int attempts;
    int handles_open;
    ob_buf sql;
};

static void run_next(ob_maint *m);
static void on_db(ob_db *db, int ok, void *data);

ob_maint *ob_maint_new(outbox_relay *r) {
    ob_maint *m = calloc(1, sizeof(*m));
    if (m == NULL)
        return NULL;
    m->r = r;
    m->state = M_IDLE;
    return m;
}

void ob_maint_free(ob_maint *m) {
    if (m == NULL)
        return;
    ob_buf_free(&m->sql);
    free(m);
}

static void on_retry(uv_timer_t *t);

static void connect_db(ob_maint *m) {
    m->state = M_CONNECTING;
    if (ob_db_connect(m->db, on_db, m) != 0) {
        m->state = M_BACKOFF;
        uv_timer_start(&m->retry_timer, on_retry, 1000, 0);
    }
}

static void on_retry(uv_timer_t *t) {
    ob_maint *m = t->data;
    if (m->state == M_BACKOFF)
        connect_db(m);
}

static void queue_job(ob_maint *m, int job) {
    m->queued |= job;
    if (m->state == M_READY)
        run_next(m);
}

static void on_sample_timer(uv_timer_t *t) {
    queue_job(t->data, JOB_SAMPLE);
}

void ob_maint_start(ob_maint *m) {
    outbox_relay *r = m->r;
    ob_db_config cfg = r->dbcfg;
    /* Maintenance statements may wait for metadata locks: allow longer. */
    cfg.op_timeout_ms = 10 * 60 * 1000;
    cfg.read_timeout_s = 15 * 60;
    m->db = ob_db_new(r->loop, &cfg, &r->log, "maint");
    uv_timer_init(r->loop, &m->sample_timer);
    uv_timer_init(r->loop, &m->retry_timer);
    m->sample_timer.data = m;
    m->retry_timer.data = m;
    uv_unref((uv_handle_t *)&m->sample_timer);
    uv_unref((uv_handle_t *)&m->retry_timer);
    m->handles_open = 3;
    if (r->o.pending_sample_ms) {
        uv_timer_start(&m->sample_timer, on_sample_timer, 0, r->o.pending_sample_ms);
    }
    connect_db(m);
}

static void run_next(ob_maint *m) {
    outbox_relay *r = m->r;
    if (m->queued & JOB_SAMPLE) {
        m->queued &= ~JOB_SAMPLE;
        ob_buf_reset(&m->sql);
        ob_buf_puts(&m->sql, "SELECT COUNT(*) FROM ");
        ob_buf_puts(&m->sql, r->qtable);
        ob_buf_puts(&m->sql, " WHERE status = 0; SELECT TIMESTAMPDIFF(MICROSECOND, created_at, "
                             "NOW(6)) FROM ");
        ob_buf_puts(&m->sql, r->qtable);
        ob_buf_puts(&m->sql, " WHERE status = 0 ORDER BY id LIMIT 1");
        m->state = M_SAMPLING;
        if (ob_db_query(m->db, m->sql.p, m->sql.len, on_db, m) != 0)
            m->state = M_READY;
        return;
    }
}

static int64_t first_int(MYSQL_RES *res, int64_t dflt) {
    MYSQL_ROW row = res ? mysql_fetch_row(res) : NULL;
    return row && row[0] ? strtoll(row[0], NULL, 10) : dflt;
}

static void lost(ob_maint *m) {
    outbox_relay *r = m->r;
    OB_WARN(&r->log, "maint: database error: %s", ob_db_error(m->db));
    if (!ob_db_lost(m->db)) {
        m->state = M_READY;
        run_next(m);
        return;
    }
    m->attempts++;
    m->state = M_BACKOFF;
    uint64_t d = 1000u << (m->attempts > 4 ? 4 : m->attempts);
    uv_timer_start(&m->retry_timer, on_retry, d, 0);
}

static void on_db(ob_db *db, int ok, void *data) {
    (void)db;
    ob_maint *m = data;
    outbox_relay *r = m->r;
    if (m->state == M_CLOSING || m->state == M_CLOSED)
        return;
    if (!ok) {
        lost(m);
        return;
    }
    switch (m->state) {
    case M_CONNECTING:
        m->attempts = 0;
        m->state = M_READY;
        run_next(m);
        return;
    case M_SAMPLING: {
        int64_t pending = first_int(ob_db_result(m->db, 0), -1);
        int64_t age_us = first_int(ob_db_result(m->db, 1), 0);
        r->stats.pending = pending;
        r->stats.oldest_pending_ms = pending > 0 ? age_us / 1000 : 0;
        r->stats.pending_sampled_at_ms = uv_now(r->loop);
        OB_DEBUG(&r->log, "maint: %lld pending, oldest %lld ms", (long long)pending,
                 (long long)r->stats.oldest_pending_ms);
        m->state = M_READY;
        run_next(m);
        return;
    }
    default:
        return;
    }
}

static void handle_closed(ob_maint *m) {
    if (--m->handles_open == 0) {
        m->state = M_CLOSED;
        ob_relay_child_closed(m->r);
    }
}

static void timer_closed(uv_handle_t *h) {
    handle_closed(h->data);
}

static void db_closed(void *data) {
    handle_closed(data);
}

void ob_maint_stop(ob_maint *m) {
    if (m->state == M_IDLE) {
        m->state = M_CLOSED;
        ob_relay_child_closed(m->r);
        return;
    }
    m->state = M_CLOSING;
    uv_close((uv_handle_t *)&m->sample_timer, timer_closed);
    uv_close((uv_handle_t *)&m->retry_timer, timer_closed);
    ob_db_close(m->db, db_closed, m);
    m->db = NULL;
}
