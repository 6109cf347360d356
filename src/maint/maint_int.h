/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The maintenance handle's private structure, shared by maint_handle.c (the
 * connection, the job queue and the life cycle) and the jobs:
 * maint_status.c (sample, status), maint_partitions.c, maint_cleanup.c and
 * maint_dead.c.
 *
 * A job is a small state machine of its own. The handle calls its `begin`
 * once the connection is ready, and its `step` each time a statement the job
 * sent has finished. The job answers by sending the next statement
 * (ob_maint_send) or by finishing (ob_maint_done), which releases the named
 * lock first when the job holds it.
 */
#ifndef OB_MAINT_INT_H
#define OB_MAINT_INT_H

#include <uv.h>

#include "buf.h"
#include "db.h"
#include "db_life.h"
#include "log.h"
#include "outbox/maint.h"
#include "partition_plan.h"
#include "url.h"

typedef enum maint_state {
    MS_DOWN,       /* no connection; the next job connects */
    MS_CONNECTING, /* waiting for the connection */
    MS_READY,      /* connected; no job running */
    MS_RUNNING,    /* waiting for a statement of the job at the head of the queue */
    MS_RELEASING,  /* waiting for RELEASE_LOCK before the head job's callback */
    MS_CLOSED      /* closing or closed; jobs are refused */
} maint_state;

typedef struct ob_job ob_job;

struct ob_job {
    outbox_maint_job req; /* req.id points to `id` when set */
    outbox_id id;
    outbox_maint_cb cb;
    void *data;
    int step;           /* the job's own state; 0 before begin */
    int locked;         /* holds the named lock */
    int sent;           /* statements sent so far */
    int retried;        /* started over once after a lost connection */
    double server_s;    /* the server's clock (UNIX_TIMESTAMP(NOW(6))) when the job read it */
    double sent_wall_s; /* the host's wall clock when the last statement was sent */
    outbox_maint_result res;
    char msg[768];
    char database[400]; /* STATUS: res.database's text */
    /* The statement repeated by ob_maint_send_batch, without its LIMIT, and
     * what follows the LIMIT (batch_tail, may be NULL). batch_res is the
     * index of the statement whose affected rows count. */
    ob_buf batch;
    const char *batch_tail;
    int batch_res;
    uint64_t batch_asked;
    uint64_t batch_left;
    /* The cursor probe (maint_cursor.c), run before the job begins. */
    int probing;        /* waiting for the probe's answer (1), or the layout's (2) */
    uint64_t cursored;  /* buckets of the table with a cursor row; 0: not in cursor mode */
    int64_t cursor[64]; /* their cursors (0 for the others) */
    int in_trx;         /* sends statements that open a transaction: a failure drops the
                           connection, which rolls it back and frees its locks */
    /* Job-owned arrays, freed with the job. */
    ob_part *parts;
    size_t nparts;
    size_t *expired;
    size_t nexpired;
    void *rows; /* outbox_dead_row[] or outbox_partition_info[] */
    ob_job *next;
};

struct outbox_maint {
    uv_loop_t *loop;
    maint_state state;
    outbox_maint_options o; /* strings owned */
    ob_log log;
    ob_db_url url;
    ob_db_config dbcfg; /* points into url */
    char *init_command;
    ob_db *db;          /* made by the first job */
    ob_db_life life;    /* never settled: a job that cannot connect fails, refused or not */
    char *qtable;       /* the table quoted for SQL, as the relay writes it */
    char *ctable;       /* the cursor table beside it (ob_cursor_table_name) */
    char *name;         /* "schema.table" (the URL's database when unqualified), for messages */
    char *is_where;     /* "TABLE_SCHEMA = .. AND TABLE_NAME = '..'" for information_schema */
    char refused[300];  /* the cursor table's refusal, while its layout is read */
    char lock_name[65]; /* the named lock of this table's maintenance, for messages */
    char *lock_sql;     /* the lock name as an SQL literal */
    ob_job *head, *tail;
    ob_buf sql; /* the statement in flight; valid until it finishes */
    outbox_maint_stop_cb close_cb;
    void *close_data;
    int closed;      /* the stop completed */
    int64_t created; /* the table's CREATE_TIME at the last sample, 0 unknown */
    /* The handle's side of a job's life, set by maint_handle.c: the
     * callback of every statement a job sends, and the end of a job whose
     * status is set (the named lock released first when it is held). */
    ob_db_cb on_statement;
    void (*finish)(outbox_maint *m, ob_job *j);
};

/* --- what the jobs use of the handle (maint_job.c) ---------------------- */

/* Sends m->sql for job j, noting the host's wall clock (j->sent_wall_s).
 * Returns 0; on failure the job is finished with an error and -1 is
 * returned (the caller just returns). */
int ob_maint_send(outbox_maint *m, ob_job *j);

/* The host's wall clock, in seconds since the epoch. */
double ob_maint_wall_s(void);

/* The statement that reads the database's clock. */
#define OB_MAINT_CLOCK_SQL "SELECT UNIX_TIMESTAMP(NOW(6))"

/* Sends j->batch followed by " LIMIT n", n = min(batch size, rows left).
 * Returns 1 when sent, 0 when no rows are left to change. The caller counts
 * ob_db_affected(m->db, 0) in its step and calls this again while the last
 * run changed as many rows as asked (ob_maint_batch_full). */
int ob_maint_send_batch(outbox_maint *m, ob_job *j);
/* After a batch statement: adds its affected rows to the job's counters and
 * returns nonzero when it changed as many rows as it was allowed to. */
int ob_maint_batch_full(outbox_maint *m, ob_job *j, uint64_t *counter);
#define OB_MAINT_BATCH 1000

/* Finishes job j with `status` and a message (fmt may be NULL on success),
 * releasing the named lock first when the job holds it. The results of the
 * job's last statement stay readable in its callback only when the job held
 * no lock (the release statement replaces them). */
void ob_maint_done(outbox_maint *m, ob_job *j, int status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* Finishes job j after a failed statement: maps the server's error to a
 * status (a missing table is OUTBOX_ENOTFOUND) and says what was being done. */
void ob_maint_db_failed(outbox_maint *m, ob_job *j, const char *what);

/* Appends "SELECT GET_LOCK('<name>', 0), UNIX_TIMESTAMP(NOW(6))". */
void ob_maint_lock_sql(outbox_maint *m, ob_buf *b);
/* Reads that result: sets j->locked and j->server_s. Returns 0, or -1 (and
 * finishes the job) when the server did not answer as expected. */
int ob_maint_lock_result(outbox_maint *m, ob_job *j, MYSQL_RES *res);

/* Sets b to "DELETE FROM t WHERE status = -1 AND created_at < <cut_s>
 * [AND id = X'..'] ORDER BY id", ready for ob_maint_send_batch. */
void ob_maint_delete_dead_sql(outbox_maint *m, ob_buf *b, double cut_s, const outbox_id *id);

/* Points j->rows at a zeroed array with one `size`-byte element per row of
 * `res` and returns the row count. On failure the job is finished with
 * OUTBOX_ENOMEM and -1 is returned. */
long ob_maint_alloc_rows(outbox_maint *m, ob_job *j, MYSQL_RES *res, size_t size);

/* A result's first column of its first row as an integer, or dflt. */
int64_t ob_maint_first_int(MYSQL_RES *res, int64_t dflt);

/* --- cursor mode (maint_cursor.c) ---------------------------------------
 * A table is in cursor mode for the operator's jobs when the cursor table
 * (outbox_cursor) has rows for it. The handle sends the probe before the
 * begin of the jobs that need it; without the cursor table the probe finds
 * no rows and every job runs as it always did. */

/* Nonzero for the job kinds that read the cursors before they begin. */
int ob_maint_needs_cursors(outbox_maint_kind kind);
/* Sets m->sql to the probe. */
void ob_maint_cursor_probe_sql(outbox_maint *m);
/* Reads the probe's answer into j->cursored and j->cursor. Returns 0, 1
 * when it sent another statement (the cursor table refused: the table's
 * layout is read, and the answer comes here again), or -1 when the job was
 * finished with an error (a missing cursor table is no error: no cursors;
 * a refused one is, on the ordered layout, naming the grant). */
int ob_maint_cursor_probe_result(outbox_maint *m, ob_job *j, int ok);
/* Appends "'<table>'", the cursor table's name for this table, as a literal. */
void ob_maint_cursor_name(outbox_maint *m, ob_buf *b);
/* Appends the bucket's cursor as a subquery of outbox_cursor: NULL when
 * the bucket has no cursor row. */
void ob_maint_cursor_of_row(outbox_maint *m, ob_buf *b);
/* Appends "START TRANSACTION; SELECT ... LOCK IN SHARE MODE; ": the cursor
 * rows of this table cannot move, appear or go until the COMMIT, so that a
 * statement that follows reads them as they stay (an ordered relay's
 * conversion takes them FOR UPDATE first, see cursor_switch.h). */
void ob_maint_cursor_hold_sql(outbox_maint *m, ob_buf *b);
/* STATUS and SAMPLE in cursor mode: appends the statement with one row
 * (bucket, pending) per bucket that has pending rows, and the statement
 * whose result is the age in microseconds of the oldest pending row. */
void ob_maint_cursor_pending_sql(outbox_maint *m, const ob_job *j, ob_buf *b);
/* Reads the first of those results into j->res (pending, bucket_pending,
 * bucket_cursor, cursor_mode); returns the rows with status 0 above the
 * cursors. */
int64_t ob_maint_cursor_pending_result(ob_job *j, MYSQL_RES *res);

/* The jobs. begin runs once the connection is ready; step after each
 * statement the job sent has finished (ok = 0: it failed, see m->db). */
void ob_job_sample_begin(outbox_maint *m, ob_job *j);
void ob_job_sample_step(outbox_maint *m, ob_job *j, int ok);
void ob_job_status_begin(outbox_maint *m, ob_job *j);
void ob_job_status_step(outbox_maint *m, ob_job *j, int ok);
void ob_job_partitions_begin(outbox_maint *m, ob_job *j);
void ob_job_partitions_step(outbox_maint *m, ob_job *j, int ok);
void ob_job_cleanup_begin(outbox_maint *m, ob_job *j);
void ob_job_cleanup_step(outbox_maint *m, ob_job *j, int ok);
void ob_job_dead_begin(outbox_maint *m, ob_job *j);
void ob_job_dead_step(outbox_maint *m, ob_job *j, int ok);
void ob_job_cursor_reset_begin(outbox_maint *m, ob_job *j);
void ob_job_cursor_reset_step(outbox_maint *m, ob_job *j, int ok);

#endif
