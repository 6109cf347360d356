/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Keeping the outbox table bounded and repairable: the schema text, and the
 * maintenance jobs (pending sampling, partition upkeep, cleanup, status, dead
 * letters) that run on a libuv loop the caller owns.
 *
 * The same job code serves two users: the relay's timers (see the
 * maintenance options in outbox/relay.h), and the one-shot subcommands of
 * outbox-uvrelay, which create a handle on their own loop, run one job and
 * close it.
 */
#ifndef OUTBOX_MAINT_H
#define OUTBOX_MAINT_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "outbox/common.h"
#include "outbox/id.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum outbox_partition_period {
    OUTBOX_PARTITION_DAY = 0,
    OUTBOX_PARTITION_MONTH = 1,
} outbox_partition_period;

/* Defined in outbox/relay.h. */
typedef struct outbox_relay_options outbox_relay_options;

typedef struct outbox_schema_options {
    const char *table;  /* "outbox"; optionally "schema.table" */
    int partitioned;    /* PARTITION BY RANGE COLUMNS(id) with a pmax tail */
    int monthly;        /* with partitioned: month partitions instead of days */
    uint32_t lookahead; /* with partitioned: periods created ahead of today (7) */
    int binary;         /* payload LONGBLOB instead of JSON */
    int with_function;  /* also emit the outbox_uuid_v7() SQL function (1) */
    uint64_t now_ms;    /* the "today" for partition bounds; 0 = the clock */
    int ordered;        /* also the seq and bucket columns and the indexes that ordered
                           delivery (--ordered, --leader) needs; they cost every write and
                           every status update, so they are left out unless asked for (0) */
} outbox_schema_options;

OUTBOX_EXPORT void outbox_schema_options_init(outbox_schema_options *o);

/* Builds the DDL text for the options. On success *out is a malloc'd,
 * NUL-terminated string the caller frees. Returns OUTBOX_EINVAL for a bad
 * table name (with a message in errbuf when it is not NULL). */
OUTBOX_EXPORT int outbox_schema_ddl(const outbox_schema_options *o, char **out, char *errbuf,
                                    size_t errlen);

/* Builds the ALTER TABLE that adds what ordered delivery needs (the seq and
 * bucket columns and their indexes) to an existing outbox table; safe to
 * apply twice. *out as for outbox_schema_ddl. */
OUTBOX_EXPORT int outbox_schema_migrate_ddl(const char *table, char **out, char *errbuf,
                                            size_t errlen);

/* --- maintenance jobs ------------------------------------------------------
 *
 * An outbox_maint handle owns one dedicated MariaDB connection, made when the
 * first job needs it and kept while the handle lives. Jobs run one after
 * another in the order they were queued; each ends with exactly one call of
 * its callback. While a job runs, the connection's socket is watched and
 * keeps the loop running until the job ends; a connected handle with no job
 * keeps no loop alive. Jobs share the one connection, so a job waits behind
 * one that is slow (a DDL statement waiting for a metadata lock, at most
 * ddl_lock_wait_s).
 *
 * Jobs that change the table's shape or delete in bulk (PARTITIONS, CLEANUP)
 * first take a named lock, GET_LOCK(name, 0), on the dedicated connection.
 * When another session holds it the round is skipped at once with
 * OUTBOX_EBUSY, and nothing is changed. The lock is released at the end of
 * the round (and by the server if the connection drops).
 *
 * Threads: every function here must be called on the loop thread, and every
 * callback runs on it.
 */

typedef struct outbox_maint outbox_maint;

typedef struct outbox_maint_options {
    const char *db_url;      /* mysql://user:pass@host:port/db[?socket=/path] (required); or
                              * several nodes, mysql://user:pass@h1:p1,h2:p2/db, tried in order */
    const char *db_password; /* overrides the URL's password when not NULL */
    const char *table;       /* "outbox"; optionally "schema.table" */

    /* --- partition maintainer --- */
    outbox_partition_period partition_period; /* day */
    uint32_t partition_lookahead;             /* periods after the current one to keep ready (7) */
    /* Full periods kept before the current one; 0 never drops (0). A partition
     * is expired once its upper bound is at or before the start of the period
     * `retention` periods before the current one. */
    uint32_t partition_retention;
    /* lock_wait_timeout of the maintenance session, in seconds (10). DDL that
     * waits longer for a metadata lock (behind a long transaction) gives up
     * with an error and is tried again next round, instead of stalling every
     * new query on the table while it waits. */
    uint32_t ddl_lock_wait_s;

    /* --- cleanup maintainer --- */
    uint64_t cleanup_retention_ms; /* delete processed rows older than this (7 days) */
    uint32_t cleanup_limit;        /* rows deleted per round at most (10000) */
    int cleanup_include_dead;      /* also delete dead rows older than the retention (0) */

    /* --- logging --- */
    outbox_log_fn log; /* NULL: silent */
    void *log_data;
    outbox_log_level log_level; /* (info) */

    /* --- TLS to MariaDB, as in outbox_relay_options --- */
    int db_tls;
    const char *db_tls_ca;
    const char *db_tls_cert;
    const char *db_tls_key;
    int db_tls_no_verify_host;

    /* Room for new fields, zero: outbox_relay_options embeds this struct,
     * and its size must not change, so that the relay's fields after it keep
     * their offsets for programs built against an older header. A new field
     * takes the place of reserved words (zero must mean its default). */
    uint64_t reserved[8];
} outbox_maint_options;

/* Fills `o` with the defaults given in the comments above. */
OUTBOX_EXPORT void outbox_maint_options_init(outbox_maint_options *o);

/* Fills `o` with the relay's maintenance settings (ro->maint) and the
 * relay's database, table and logging, so that a one-off job runs the way
 * the relay's timers do. Strings are borrowed: `ro` must outlive the
 * outbox_maint_create() that copies them. */
OUTBOX_EXPORT void outbox_maint_options_from_relay(outbox_maint_options *o,
                                                   const outbox_relay_options *ro);

typedef enum outbox_maint_kind {
    OUTBOX_MAINT_SAMPLE = 1,       /* pending count and the age of the oldest pending row */
    OUTBOX_MAINT_PARTITIONS = 2,   /* one round of the partition maintainer (takes the lock) */
    OUTBOX_MAINT_CLEANUP = 3,      /* one round of the cleanup maintainer (takes the lock) */
    OUTBOX_MAINT_STATUS = 4,       /* counts per status, lag, partitions, lock holder */
    OUTBOX_MAINT_DEAD_LIST = 5,    /* dead rows, oldest first */
    OUTBOX_MAINT_DEAD_REPLAY = 6,  /* dead rows become pending, attempts reset */
    OUTBOX_MAINT_DEAD_PURGE = 7,   /* dead rows are deleted */
    OUTBOX_MAINT_CURSOR_RESET = 8, /* cursor mode: the table's cursors go back to 0 */
} outbox_maint_kind;

/* One job to run. The struct and `id` are copied when the job is queued. */
typedef struct outbox_maint_job {
    outbox_maint_kind kind;
    /* DEAD_*: act on this row only (it must be dead); NULL: every dead row. */
    const outbox_id *id;
    /* DEAD_LIST: at most this many rows are returned (0: 100). */
    uint32_t limit;
    /* DEAD_PURGE: only rows created more than this long ago (0: any age). */
    uint64_t older_than_ms;
    /* CURSOR_RESET: reset the cursors even when they agree with the table's
     * counter (0: only when they do not, see cursor_mismatch). Read for that
     * kind only, so a program built before the field (0.1.0) may hand a
     * shorter struct for the others. */
    int all;
} outbox_maint_job;

/* A partition of the table, as listed by STATUS. */
typedef struct outbox_partition_info {
    const char *name;
    uint64_t bound_ms;     /* Unix ms of the exclusive upper bound; 0 for MAXVALUE */
    int64_t rows_estimate; /* information_schema TABLE_ROWS: an estimate only */
} outbox_partition_info;

/* A dead row, as listed by DEAD_LIST. */
typedef struct outbox_dead_row {
    outbox_id id;
    const char *aggregate_type;
    const char *aggregate_id;
    const char *event_type;
    int attempts;
    const char *last_error; /* NULL when none was recorded */
    const char *created_at; /* "YYYY-MM-DD hh:mm:ss.uuuuuu", UTC */
} outbox_dead_row;

/* What a job did. Every pointer in it is valid only during the callback. */
typedef struct outbox_maint_result {
    outbox_maint_kind kind;
    /* OUTBOX_OK; OUTBOX_EBUSY when another instance holds the lock (the round
     * was skipped); OUTBOX_ESCHEMA when the table is not partitioned the way
     * the maintainer expects; OUTBOX_ENOTFOUND when the table does not
     * exist, or when a DEAD_REPLAY or DEAD_PURGE job with an id changed
     * nothing (the message says why); OUTBOX_EDB for database
     * errors; OUTBOX_EREFUSED when the server refused the connection for a
     * reason retrying cannot cure (TLS, certificate, credentials, unknown
     * database); OUTBOX_ESTATE when the handle closed before the job ran. */
    int status;
    /* what went wrong; "" on success, but for SAMPLE (plain and ordered
     * tables), which names there a table re-created or renamed since the
     * handle's last sample (its CREATE_TIME changed) and the tables renamed
     * or created in the same second, the other side of a swap */
    const char *message;

    /* SAMPLE, STATUS: -1 when unknown. */
    int64_t pending;
    int64_t oldest_pending_ms; /* 0 when nothing is pending */
    /* STATUS, DEAD_LIST (dead only) */
    int64_t processed;
    int64_t dead;
    unsigned long lock_holder;               /* STATUS: session id holding the lock, 0 when free */
    const outbox_partition_info *partitions; /* STATUS: empty when not partitioned */
    size_t npartitions;

    /* PARTITIONS */
    uint32_t created; /* partitions split off the MAXVALUE tail */
    uint32_t dropped; /* expired partitions dropped */
    uint32_t kept;    /* expired partitions kept because they hold pending rows */

    /* CLEANUP, DEAD_REPLAY, DEAD_PURGE: rows deleted or made pending. */
    uint64_t changed;
    uint64_t changed_dead; /* CLEANUP: dead rows among `changed` */

    /* DEAD_LIST */
    const outbox_dead_row *rows;
    size_t nrows;

    /* STATUS, ordered modes: the session holding each of the 64 bucket
     * leases and the leadership, 0 when free (on Galera the relay: see
     * holders_are_relays). */
    unsigned long bucket_holder[64];
    unsigned long leader_holder;

    /* SAMPLE, STATUS: nonzero when the table has rows in the cursor table
     * (cursor mode, --cursor; see docs/operations.md). Then
     * `pending` counts, per bucket, the rows with status 0 above the
     * bucket's cursor and the rows with status 2, and `processed` also
     * counts the rows with status 0 at or below their bucket's cursor. */
    int cursor_mode;
    int64_t bucket_cursor[64];  /* STATUS, cursor mode: the bucket's cursor, -1 without a row */
    int64_t bucket_pending[64]; /* STATUS, cursor mode: the bucket's pending rows */

    /* Every job that reads the cursors (all but DEAD_LIST and DEAD_PURGE):
     * nonzero when a cursor of the table is at or above the table's
     * AUTO_INCREMENT counter, which only a reset of the table can cause (a
     * TRUNCATE, an ALTER TABLE ... AUTO_INCREMENT, a restore, cursors copied
     * from another server): the rows at or below the cursors may be new, and
     * nothing tells them from delivered ones. STATUS reports it; CLEANUP and
     * PARTITIONS refuse to run (OUTBOX_ESCHEMA); CURSOR_RESET repairs it.
     * STATUS then says why in `message`, though its status is OUTBOX_OK, and
     * SAMPLE and STATUS count every row with status 0 as pending. */
    int cursor_mismatch;
    int64_t next_seq;   /* the table's AUTO_INCREMENT counter, -1 when unknown */
    int64_t cursor_top; /* the highest cursor of the table, -1 without one */
    /* STATUS: what the connection is on, one line: "a single server (wsrep
     * off)", or "Galera cluster of 3 nodes (Primary), this node Synced,
     * members ..."; there the maintenance lock above is this node's only.
     * NULL when the server did not say. */
    const char *database;
    /* STATUS: nonzero on a Galera node, where the leases are rows of the
     * lease table: bucket_holder and leader_holder then name relays (their
     * identities in that table, cluster-wide), not sessions of this node. */
    int holders_are_relays;
    /* SAMPLE: the database's clock (UNIX_TIMESTAMP(NOW(6))), read after the
     * host's wall clock read clock_sent_s (the statement left) and before
     * it read clock_answered_s (its answer came): together they bound the
     * skew between the two clocks. Seconds since the epoch; 0 when unknown. */
    double db_clock_s;
    double clock_sent_s;
    double clock_answered_s;
} outbox_maint_result;

typedef void (*outbox_maint_cb)(outbox_maint *m, const outbox_maint_result *res, void *data);

/* Checks and copies the options (strings are duplicated). Touches neither
 * the loop nor the network. On success *out owns the handle; on error *out
 * is NULL and errbuf (when not NULL) says what was wrong. Returns
 * OUTBOX_EINVAL for bad options, OUTBOX_ENOMEM. */
OUTBOX_EXPORT int outbox_maint_create(outbox_maint **out, uv_loop_t *loop,
                                      const outbox_maint_options *o, char *errbuf, size_t errlen);

/* Queues a job. Connects first when the connection is down. `cb` is called
 * once, on the loop; it may run before this function returns (when the
 * connection cannot even be started), so set your own state first. When
 * this returns an error, `cb` is not called. Returns OUTBOX_OK,
 * OUTBOX_EINVAL for a bad job, OUTBOX_ESTATE after close, OUTBOX_ENOMEM. */
OUTBOX_EXPORT int outbox_maint_run(outbox_maint *m, const outbox_maint_job *job, outbox_maint_cb cb,
                                   void *data);

typedef void (*outbox_maint_stop_cb)(outbox_maint *m, void *data);

/* Stops the handle: jobs not finished yet are called back at once with
 * OUTBOX_ESTATE (a statement in flight is abandoned; the server finishes or
 * rolls it back, and releases the lock with the connection). Then the
 * connection is closed and `cb` (may be NULL) is called once every libuv
 * handle is closed; when none was ever opened, before this function
 * returns. Jobs are refused afterwards. Returns OUTBOX_ESTATE when already
 * stopped. */
OUTBOX_EXPORT int outbox_maint_stop(outbox_maint *m, outbox_maint_stop_cb cb, void *data);

/* Frees the handle: before any job ran, or once the stop callback ran;
 * NULL is a no-op. Returns OUTBOX_ESTATE, freeing nothing, while the handle
 * still has handles on the loop. */
OUTBOX_EXPORT int outbox_maint_destroy(outbox_maint *m);

/* The short name of a job kind: "sample", "partitions", "cleanup", ... */
OUTBOX_EXPORT const char *outbox_maint_kind_name(outbox_maint_kind kind);

#ifdef __cplusplus
}
#endif

#endif
