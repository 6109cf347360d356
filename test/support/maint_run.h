/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Helpers for the maintenance tests: run outbox_maint jobs to completion on
 * a test's loop, keep a copy of each result, and collect the log lines.
 * Header-only (static inline functions), so each test that includes it stands
 * alone.
 */
#ifndef OB_TEST_MAINT_RUN_H
#define OB_TEST_MAINT_RUN_H

#include <stdio.h>
#include <string.h>

#include "check.h"
#include "integ.h"
#include "outbox/maint.h"

/* A job's result, with its message copied (the original is only valid
 * during the callback). */
typedef struct tm_result {
    outbox_maint_result r;
    char message[1024];
    volatile int done;
} tm_result;

/* Every log line of the maintainers, joined with newlines. */
static char tm_logbuf[65536];

static inline void tm_log(outbox_log_level level, const char *msg, void *data) {
    size_t used = strlen(tm_logbuf);
    snprintf(tm_logbuf + used, sizeof(tm_logbuf) - used, "%s\n", msg);
    fprintf(stderr, "[%s] %s %s\n", data ? (const char *)data : "maint",
            outbox_log_level_name(level), msg);
}

static inline void tm_on_result(outbox_maint *m, const outbox_maint_result *r, void *data) {
    (void)m;
    tm_result *t = data;
    t->r = *r;
    snprintf(t->message, sizeof(t->message), "%s", r->message ? r->message : "");
    t->r.message = t->message;
    t->r.partitions = NULL;
    t->r.rows = NULL;
    t->done = 1;
}

/* Options for database `db`: table "outbox", daily periods, log to tm_log. */
static inline void tm_options(outbox_maint_options *o, const char *db) {
    outbox_maint_options_init(o);
    o->db_url = ti_db_url(db);
    o->log = tm_log;
    o->log_level = OUTBOX_LOG_DEBUG;
}

static inline outbox_maint *tm_new(uv_loop_t *loop, const outbox_maint_options *o) {
    outbox_maint *m = NULL;
    char err[512];
    if (outbox_maint_create(&m, loop, o, err, sizeof(err)) != OUTBOX_OK)
        CHECK_FAIL_("outbox_maint_create: %s", err);
    return m;
}

/* Queues a job without waiting for it. */
static inline void tm_start(outbox_maint *m, outbox_maint_kind kind, tm_result *t) {
    outbox_maint_job job;
    memset(&job, 0, sizeof(job));
    job.kind = kind;
    memset(t, 0, sizeof(*t));
    CHECK_EQ(outbox_maint_run(m, &job, tm_on_result, t), OUTBOX_OK);
}

/* Runs one job to its end (at most 30 s) and returns a copy of its result. */
static inline tm_result tm_run(uv_loop_t *loop, outbox_maint *m, outbox_maint_kind kind) {
    tm_result t;
    tm_start(m, kind, &t);
    CHECK_EQ(ti_run_until(loop, &t.done, 30000), 0);
    return t;
}

static inline void tm_stopped(outbox_maint *m, void *data) {
    (void)m;
    *(volatile int *)data = 1;
}

/* Stops the handle, waits for its last libuv handle to close, frees it. */
static inline void tm_close(uv_loop_t *loop, outbox_maint *m) {
    volatile int closed = 0;
    CHECK_EQ(outbox_maint_stop(m, tm_stopped, (void *)&closed), OUTBOX_OK);
    CHECK_EQ(ti_run_until(loop, &closed, 10000), 0);
    CHECK_EQ(outbox_maint_destroy(m), OUTBOX_OK);
}

/* The table's partitions as "name<bound hex> name<bound hex> ... pmax". */
static inline void tm_partitions(MYSQL *c, const char *db, const char *table, char *out,
                                 size_t len) {
    char sql[512];
    snprintf(sql, sizeof(sql),
             "SELECT PARTITION_NAME, PARTITION_DESCRIPTION FROM information_schema.PARTITIONS "
             "WHERE TABLE_SCHEMA = '%s' AND TABLE_NAME = '%s' ORDER BY "
             "PARTITION_ORDINAL_POSITION",
             db, table);
    if (mysql_query(c, sql) != 0)
        CHECK_FAIL_("%s", mysql_error(c));
    MYSQL_RES *res = mysql_store_result(c);
    MYSQL_ROW row;
    out[0] = '\0';
    size_t used = 0;
    while ((row = mysql_fetch_row(res)) != NULL) {
        const char *d = row[1] ? row[1] : "NULL";
        if (strncmp(d, "_binary 0x", 10) == 0)
            d += 10;
        used += (size_t)snprintf(out + used, len - used, "%s%s<%s>", used ? " " : "",
                                 row[0] ? row[0] : "NULL", d);
        if (used >= len)
            break;
    }
    mysql_free_result(res);
}

#endif
