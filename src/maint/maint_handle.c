/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The maintenance handle: options, the dedicated connection, the job queue,
 * the named lock and the life cycle. The jobs themselves live in
 * maint_status.c, maint_partitions.c, maint_cleanup.c and maint_dead.c.
 *
 * The handle's state machine; every change goes through set_state():
 *
 *   DOWN --a job queued--> CONNECTING --ok--> READY --the head job begins--> RUNNING
 *    ^                        | failed: every queued job fails with it          |
 *    +------------------------+                                   the job ends  |
 *    |                                                                          |
 *    |                 holding the named lock: RELEASING (RELEASE_LOCK) <-------+
 *    |                                               |                          |
 *    |                                               v                          v
 *    +--- the connection lost <--- the job is over, its callback runs <---------+
 *                                    | the connection kept --> READY
 *
 *   RUNNING --the connection lost at a job's first statement--> DOWN; the job
 *   starts over once on a new connection.
 *   READY --the connection lost between jobs (the idle watch)--> DOWN.
 *   stop (any state) --> CLOSED: queued jobs fail, the connection closes.
 */
#include "maint_int.h"

#include "outbox/relay.h"

#include <mysqld_error.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void on_db(ob_db *db, int ok, void *data);
static void job_finish(outbox_maint *m, ob_job *j);

#include "schema.h"
#include "sql.h"

void outbox_maint_options_init(outbox_maint_options *o) {
    memset(o, 0, sizeof(*o));
    o->table = "outbox";
    o->partition_period = OUTBOX_PARTITION_DAY;
    o->partition_lookahead = 7;
    o->ddl_lock_wait_s = 10;
    o->cleanup_retention_ms = 7ULL * 24 * 3600 * 1000;
    o->cleanup_limit = 10000;
    o->log_level = OUTBOX_LOG_INFO;
}

void outbox_maint_options_from_relay(outbox_maint_options *o, const outbox_relay_options *ro) {
    *o = ro->maint;
    o->db_url = ro->db_url;
    o->db_password = ro->db_password;
    o->table = ro->table;
    o->log = ro->log;
    o->log_data = ro->log_data;
    o->log_level = ro->log_level;
    o->db_tls = ro->db_tls;
    o->db_tls_ca = ro->db_tls_ca;
    o->db_tls_cert = ro->db_tls_cert;
    o->db_tls_key = ro->db_tls_key;
    o->db_tls_no_verify_host = ro->db_tls_no_verify_host;
}

typedef struct kind_ops {
    void (*begin)(outbox_maint *m, ob_job *j);
    void (*step)(outbox_maint *m, ob_job *j, int ok);
} kind_ops;

static const kind_ops *ops_of(outbox_maint_kind kind) {
    static const kind_ops sample = {ob_job_sample_begin, ob_job_sample_step};
    static const kind_ops status = {ob_job_status_begin, ob_job_status_step};
    static const kind_ops partitions = {ob_job_partitions_begin, ob_job_partitions_step};
    static const kind_ops cleanup = {ob_job_cleanup_begin, ob_job_cleanup_step};
    static const kind_ops dead = {ob_job_dead_begin, ob_job_dead_step};
    static const kind_ops reset = {ob_job_cursor_reset_begin, ob_job_cursor_reset_step};
    switch (kind) {
    case OUTBOX_MAINT_CURSOR_RESET:
        return &reset;
    case OUTBOX_MAINT_SAMPLE:
        return &sample;
    case OUTBOX_MAINT_STATUS:
        return &status;
    case OUTBOX_MAINT_PARTITIONS:
        return &partitions;
    case OUTBOX_MAINT_CLEANUP:
        return &cleanup;
    case OUTBOX_MAINT_DEAD_LIST:
    case OUTBOX_MAINT_DEAD_REPLAY:
    case OUTBOX_MAINT_DEAD_PURGE:
        return &dead;
    }
    return NULL;
}

/* --- creation ------------------------------------------------------------ */

static void handle_free(outbox_maint *m) {
    free((char *)m->o.db_url);
    free((char *)m->o.db_password);
    free((char *)m->o.db_tls_ca);
    free((char *)m->o.db_tls_cert);
    free((char *)m->o.db_tls_key);
    free((char *)m->o.table);
    ob_db_url_free(&m->url);
    free(m->init_command);
    free(m->qtable);
    free(m->ctable);
    free(m->name);
    free(m->is_where);
    free(m->lock_sql);
    ob_buf_free(&m->sql);
    free(m);
}

/* MariaDB lock names are at most 64 characters: a long schema.table is
 * replaced by its FNV-1a hash. The name goes to the server as a hex literal,
 * so a database name from the URL needs no quoting. */
static int make_lock_name(outbox_maint *m) {
    static const char prefix[] = "outbox-uvrelay:";
    size_t n = strlen(prefix) + strlen(m->name);
    if (n < sizeof(m->lock_name)) {
        snprintf(m->lock_name, sizeof(m->lock_name), "%s%s", prefix, m->name);
    } else {
        uint64_t h = 1469598103934665603ULL;
        for (const char *p = m->name; *p; p++)
            h = (h ^ (unsigned char)*p) * 1099511628211ULL;
        snprintf(m->lock_name, sizeof(m->lock_name), "%s%016llx", prefix, (unsigned long long)h);
    }
    ob_buf b = OB_BUF_INIT;
    ob_buf_puts(&b, "X'");
    ob_buf_hex(&b, (const unsigned char *)m->lock_name, strlen(m->lock_name));
    ob_buf_putc(&b, '\'');
    m->lock_sql = b.p;
    return m->lock_sql ? 0 : -1;
}

/* The table's names: quoted for statements, for information_schema, and
 * for people. An unqualified table lives in the URL's database, which is
 * the session's current database. */
static int make_names(outbox_maint *m, const char *table) {
    const char *dot = strchr(table, '.');
    const char *bare = dot ? dot + 1 : table;
    ob_buf q = OB_BUF_INIT, w = OB_BUF_INIT;
    ob_buf c = OB_BUF_INIT;
    ob_sql_quote_table(&q, table);
    m->qtable = q.p;
    ob_cursor_table_name(&c, table);
    m->ctable = c.p;
    if (dot) {
        ob_buf_printf(&w, "TABLE_SCHEMA = '%.*s'", (int)(dot - table), table);
        m->name = strdup(table);
    } else {
        ob_buf_puts(&w, "TABLE_SCHEMA = DATABASE()");
        if (asprintf(&m->name, "%s.%s", m->url.database, table) < 0)
            m->name = NULL;
    }
    ob_buf_printf(&w, " AND TABLE_NAME = '%s'", bare);
    m->is_where = w.p;
    return m->qtable && m->ctable && m->is_where && m->name ? make_lock_name(m) : -1;
}

int outbox_maint_create(outbox_maint **out, uv_loop_t *loop, const outbox_maint_options *o,
                        char *errbuf, size_t errlen) {
    char err[512];
    *out = NULL;
    if (loop == NULL || o == NULL)
        return ob_errf(errbuf, errlen, OUTBOX_EINVAL, "loop and options are required");
    if (ob_sql_check_table(o->table, err, sizeof(err)) != 0)
        return ob_errf(errbuf, errlen, OUTBOX_EINVAL, "%s", err);
    if (o->partition_period != OUTBOX_PARTITION_DAY &&
        o->partition_period != OUTBOX_PARTITION_MONTH)
        return ob_errf(errbuf, errlen, OUTBOX_EINVAL, "partition period must be day or month");
    if (o->partition_lookahead > 1000)
        return ob_errf(errbuf, errlen, OUTBOX_EINVAL, "partition lookahead must be 0-1000 (got %u)",
                       o->partition_lookahead);
    if (o->partition_retention > 100000)
        return ob_errf(errbuf, errlen, OUTBOX_EINVAL,
                       "partition retention must be 0-100000 periods (got %u)",
                       o->partition_retention);
    if (o->ddl_lock_wait_s < 1 || o->ddl_lock_wait_s > 31536000)
        return ob_errf(errbuf, errlen, OUTBOX_EINVAL, "DDL lock wait must be 1 s to 1 year");
    if (o->cleanup_limit < 1)
        return ob_errf(errbuf, errlen, OUTBOX_EINVAL, "cleanup limit must be at least 1");

    outbox_maint *m = calloc(1, sizeof(*m));
    if (m == NULL)
        return ob_errf(errbuf, errlen, OUTBOX_ENOMEM, "out of memory");
    if (ob_db_settings(o->db_url, o->db_password, &m->url, err, sizeof(err)) != 0) {
        free(m);
        return ob_errf(errbuf, errlen, OUTBOX_EINVAL, "%s", err);
    }
    m->loop = loop;
    m->state = MS_DOWN;
    ob_db_life_init(&m->life, NULL, NULL);
    m->on_statement = on_db;
    m->finish = job_finish;
    m->o = *o;
    m->o.db_url = strdup(o->db_url);
    m->o.db_password = o->db_password ? strdup(o->db_password) : NULL;
    m->o.table = strdup(o->table);
    m->o.db_tls_ca = o->db_tls_ca ? strdup(o->db_tls_ca) : NULL;
    m->o.db_tls_cert = o->db_tls_cert ? strdup(o->db_tls_cert) : NULL;
    m->o.db_tls_key = o->db_tls_key ? strdup(o->db_tls_key) : NULL;
    m->log.fn = o->log;
    m->log.data = o->log_data;
    m->log.level = o->log_level;
    if (strchr(o->table, '.') == NULL && (m->url.database == NULL || *m->url.database == '\0')) {
        handle_free(m);
        return ob_errf(errbuf, errlen, OUTBOX_EINVAL,
                       "table '%s' has no database: name one in the URL (mysql://.../db) or "
                       "write the table as db.table",
                       o->table);
    }
    if (asprintf(&m->init_command,
                 "SET SESSION tx_isolation = 'READ-COMMITTED', time_zone = '+00:00', "
                 "lock_wait_timeout = %u",
                 o->ddl_lock_wait_s) < 0)
        m->init_command = NULL;
    if (!m->o.db_url || !m->o.table || (o->db_password && !m->o.db_password) || !m->init_command ||
        (o->db_tls_ca && !m->o.db_tls_ca) || (o->db_tls_cert && !m->o.db_tls_cert) ||
        (o->db_tls_key && !m->o.db_tls_key) || make_names(m, o->table) != 0) {
        handle_free(m);
        return ob_errf(errbuf, errlen, OUTBOX_ENOMEM, "out of memory");
    }
    ob_db_url_to_config(&m->url, &m->dbcfg);
    m->dbcfg.connect_timeout_s = 10;
    /* DDL may wait for metadata locks and REORGANIZE copies the tail's rows:
     * allow far longer than the relay's batch statements. */
    m->dbcfg.op_timeout_ms = 30 * 60 * 1000;
    m->dbcfg.read_timeout_s = 35 * 60;
    m->dbcfg.init_command = m->init_command;
    m->dbcfg.tls = o->db_tls || o->db_tls_ca || o->db_tls_cert;
    m->dbcfg.tls_ca = m->o.db_tls_ca;
    m->dbcfg.tls_cert = m->o.db_tls_cert;
    m->dbcfg.tls_key = m->o.db_tls_key;
    m->dbcfg.tls_no_verify_host = o->db_tls_no_verify_host;
    *out = m;
    return OUTBOX_OK;
}

/* --- the state machine --------------------------------------------------- */

static const char *state_name(maint_state s) {
    static const char *names[] = {"DOWN", "CONNECTING", "READY", "RUNNING", "RELEASING", "CLOSED"};
    return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

static void set_state(outbox_maint *m, maint_state s) {
    OB_DEBUG(&m->log, "maint: %s -> %s", state_name(m->state), state_name(s));
    m->state = s;
}

static void on_db(ob_db *db, int ok, void *data);

static void job_free(ob_job *j) {
    ob_buf_free(&j->batch);
    free(j->parts);
    free(j->expired);
    free(j->rows);
    free(j);
}

static void call_back(outbox_maint *m, ob_job *j) {
    j->res.message = j->msg;
    j->cb(m, &j->res, j->data);
    job_free(j);
}

/* Takes the head job off the queue and calls it back. */
static void deliver(outbox_maint *m) {
    ob_job *j = m->head;
    m->head = j->next;
    if (m->head == NULL)
        m->tail = NULL;
    call_back(m, j);
}

/* Fails every queued job. Jobs that the callbacks queue meanwhile are not
 * among them: they get a new connection attempt. */
static void fail_all(outbox_maint *m, int status, const char *msg) {
    ob_job *j = m->head;
    m->head = m->tail = NULL;
    while (j) {
        ob_job *next = j->next;
        j->res.status = status;
        snprintf(j->msg, sizeof(j->msg), "%s", msg);
        call_back(m, j);
        j = next;
    }
}

/* The head job starts: with the cursor probe first when it needs the
 * cursors (maint_cursor.c), else with its own begin. */
static void begin_job(outbox_maint *m, ob_job *j) {
    set_state(m, MS_RUNNING);
    if (ob_maint_needs_cursors(j->req.kind)) {
        ob_maint_cursor_probe_sql(m);
        j->probing = 1;
        ob_maint_send(m, j);
        return;
    }
    ops_of(j->req.kind)->begin(m, j);
}

/* The connection died between jobs (ob_db_watch): the next job connects
 * again rather than find it out. */
static void on_db_lost(ob_db *db, int ok, void *data) {
    outbox_maint *m = data;
    (void)ok;
    if (m->state != MS_READY)
        return;
    OB_DEBUG(&m->log, "maint: connection lost between jobs (%s)", ob_db_error(db));
    ob_db_life_down(&m->life);
    set_state(m, MS_DOWN);
}

static void run_next(outbox_maint *m) {
    if (m->head == NULL)
        return;
    if (m->state == MS_READY) {
        begin_job(m, m->head);
        return;
    }
    if (m->state != MS_DOWN)
        return;
    if (m->db == NULL) {
        m->db = ob_db_new(m->loop, &m->dbcfg, &m->log, "maint");
        if (m->db)
            ob_db_watch(m->db, on_db_lost, m);
    }
    if (m->db != NULL) {
        ob_db_reset(m->db);
        set_state(m, MS_CONNECTING);
        if (ob_db_connect(m->db, on_db, m) == 0)
            return;
    }
    set_state(m, MS_DOWN);
    fail_all(m, OUTBOX_EDB, "cannot start connecting to the database");
}

/* The head job is over (its result is set). */
static void job_over(outbox_maint *m) {
    if (ob_db_lost(m->db))
        ob_db_life_down(&m->life);
    set_state(m, ob_db_lost(m->db) ? MS_DOWN : MS_READY);
    deliver(m);
    if (m->state != MS_CLOSED)
        run_next(m);
}

static void on_db(ob_db *db, int ok, void *data) {
    outbox_maint *m = data;
    switch (m->state) {
    case MS_CONNECTING:
        if (!ok) {
            char msg[600];
            snprintf(msg, sizeof(msg), "cannot connect to the database: %s", ob_db_error(db));
            set_state(m, MS_DOWN);
            fail_all(m,
                     ob_db_life_verdict(&m->life, ob_db_errno(db)) == OB_DB_FATAL ? OUTBOX_EREFUSED
                                                                                  : OUTBOX_EDB,
                     msg);
            return;
        }
        ob_db_life_up(&m->life);
        set_state(m, MS_READY);
        run_next(m);
        return;
    case MS_RUNNING:
        if (!ok && ob_db_lost(db) && m->head->sent == 1 && !m->head->retried) {
            /* The server may have dropped the idle connection (its
             * wait_timeout is shorter than a daily maintenance interval).
             * A job's first statement reads, takes the lock, or (replay)
             * changes only dead rows, so sending it again is safe: the job
             * starts over once on a new connection. */
            OB_DEBUG(&m->log, "maint: connection lost (%s); reconnecting for the %s job",
                     ob_db_error(db), outbox_maint_kind_name(m->head->req.kind));
            m->head->retried = 1;
            m->head->sent = 0;
            m->head->step = 0;
            m->head->probing = 0;
            ob_db_life_down(&m->life);
            set_state(m, MS_DOWN);
            run_next(m);
            return;
        }
        if (m->head->probing) {
            ob_job *j = m->head;
            if (ob_maint_cursor_probe_result(m, j, ok) == 0)
                ops_of(j->req.kind)->begin(m, j);
            return;
        }
        ops_of(m->head->req.kind)->step(m, m->head, ok);
        return;
    case MS_RELEASING:
        if (!ok) {
            /* The lock may still be ours: only a new session is sure not to
             * hold it. */
            OB_WARN(&m->log, "maint: RELEASE_LOCK failed (%s); reconnecting", ob_db_error(db));
            ob_db_reset(db);
        }
        job_over(m);
        return;
    case MS_DOWN:
    case MS_READY:
    case MS_CLOSED:
        return;
    }
}

/* The end of job j, whose status is set (ob_maint_done, maint_job.c):
 * the named lock released first when the job holds it. */
static void job_finish(outbox_maint *m, ob_job *j) {
    if (j->in_trx && j->res.status != OUTBOX_OK && m->db) {
        /* A statement failed inside the job's transaction: the server
         * rolls it back, and releases the named lock, with the session. */
        j->locked = 0;
        ob_db_reset(m->db);
    }
    if (j->locked && ob_db_is_idle(m->db)) {
        j->locked = 0;
        ob_buf_reset(&m->sql);
        ob_buf_printf(&m->sql, "DO RELEASE_LOCK(%s)", m->lock_sql);
        set_state(m, MS_RELEASING);
        if (ob_db_query(m->db, m->sql.p, m->sql.len, on_db, m) == 0)
            return;
        ob_db_reset(m->db);
    }
    job_over(m);
}

/* --- the public calls ---------------------------------------------------- */

int outbox_maint_run(outbox_maint *m, const outbox_maint_job *job, outbox_maint_cb cb, void *data) {
    if (m->state == MS_CLOSED)
        return OUTBOX_ESTATE;
    if (job == NULL || cb == NULL || ops_of(job->kind) == NULL)
        return OUTBOX_EINVAL;
    ob_job *j = calloc(1, sizeof(*j));
    if (j == NULL)
        return OUTBOX_ENOMEM;
    /* `all` came in 0.2.0, last: a program built against 0.1.0's header
     * hands a shorter job, read only as far as the fields its kind has. */
    if (job->kind == OUTBOX_MAINT_CURSOR_RESET)
        j->req = *job;
    else
        memcpy(&j->req, job, offsetof(outbox_maint_job, all));
    if (job->id) {
        j->id = *job->id;
        j->req.id = &j->id;
    }
    if (j->req.kind == OUTBOX_MAINT_DEAD_LIST && j->req.limit == 0)
        j->req.limit = 100;
    j->cb = cb;
    j->data = data;
    j->res.kind = job->kind;
    j->res.pending = j->res.oldest_pending_ms = -1;
    j->res.processed = j->res.dead = -1;
    if (m->tail)
        m->tail->next = j;
    else
        m->head = j;
    m->tail = j;
    run_next(m);
    return OUTBOX_OK;
}

static void db_closed(void *data) {
    outbox_maint *m = data;
    m->closed = 1;
    if (m->close_cb)
        m->close_cb(m, m->close_data);
}

int outbox_maint_stop(outbox_maint *m, outbox_maint_stop_cb cb, void *data) {
    if (m->state == MS_CLOSED)
        return OUTBOX_ESTATE;
    set_state(m, MS_CLOSED);
    m->close_cb = cb;
    m->close_data = data;
    fail_all(m, OUTBOX_ESTATE, "the maintenance handle was stopped before the job finished");
    ob_db_life_closed(&m->life);
    if (m->db) {
        ob_db *db = m->db;
        m->db = NULL;
        ob_db_close(db, db_closed, m);
        return OUTBOX_OK;
    }
    db_closed(m);
    return OUTBOX_OK;
}

int outbox_maint_destroy(outbox_maint *m) {
    if (m == NULL)
        return OUTBOX_OK;
    if (m->db != NULL || (m->state == MS_CLOSED && !m->closed))
        return OUTBOX_ESTATE;
    handle_free(m);
    return OUTBOX_OK;
}
