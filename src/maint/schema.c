/* SPDX-License-Identifier: Apache-2.0 */
#include "schema.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "outbox/maint.h"
#include "lease_table.h"
#include "sql.h"

#define DAY_MS 86400000ULL

uint64_t ob_period_start(uint64_t ms, int monthly) {
    if (!monthly)
        return ms / DAY_MS * DAY_MS;
    time_t t = (time_t)(ms / 1000);
    struct tm tm;
    gmtime_r(&t, &tm);
    tm.tm_mday = 1;
    tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
    return (uint64_t)timegm(&tm) * 1000ULL;
}

uint64_t ob_period_add(uint64_t start, int monthly, int n) {
    if (!monthly)
        return start + (uint64_t)n * DAY_MS;
    time_t t = (time_t)(start / 1000);
    struct tm tm;
    gmtime_r(&t, &tm);
    tm.tm_mon += n;
    tm.tm_mday = 1;
    tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
    return (uint64_t)timegm(&tm) * 1000ULL;
}

void ob_period_name(uint64_t start, int monthly, char *out) {
    time_t t = (time_t)(start / 1000);
    struct tm tm;
    gmtime_r(&t, &tm);
    if (monthly)
        snprintf(out, 32, "p%04d%02d", tm.tm_year + 1900, tm.tm_mon + 1);
    else
        snprintf(out, 32, "p%04d%02d%02d", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday);
}

void ob_period_bound(ob_buf *b, uint64_t ms) {
    unsigned char id[16];
    memset(id, 0, sizeof(id));
    for (int i = 5; i >= 0; i--) {
        id[i] = (unsigned char)(ms & 0xff);
        ms >>= 8;
    }
    ob_buf_puts(b, "X'");
    ob_buf_hex(b, id, 16);
    ob_buf_putc(b, '\'');
}

void outbox_schema_options_init(outbox_schema_options *o) {
    memset(o, 0, sizeof(*o));
    o->table = "outbox";
    o->lookahead = 7;
    o->with_function = 1;
}

static uint64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000ULL + (uint64_t)ts.tv_nsec / 1000000ULL;
}

/* What ordered delivery needs (see docs/modes.md): a sequence the
 * server assigns at insert, so that events of one transaction, of one
 * millisecond and of any id generator keep their insertion order; the
 * aggregate's hash bucket, the unit that relay instances own; indexes that
 * read the pending rows in sequence order (all of them for a leader, one
 * bucket's for an owner), and one that finds an aggregate's row waiting for
 * a retry. AUTO_INCREMENT needs an index that starts with seq. */
#define OB_SEQ_COLUMN "seq             BIGINT UNSIGNED NOT NULL AUTO_INCREMENT"
#define OB_BUCKET_COLUMN                                                                           \
    "bucket          SMALLINT AS (CRC32(CONCAT(aggregate_type, 0x1F, aggregate_id)) % 64) STORED"
#define OB_SCHEMA_ORDER_COLUMNS "    " OB_SEQ_COLUMN ",\n    " OB_BUCKET_COLUMN ",\n"
#define OB_SEQ_INDEX "idx_seq (seq)"
#define OB_STATUS_SEQ_INDEX "idx_status_seq (status, seq)"
/* Cursor mode names it in a hint (OB_CURSOR_BUCKET_INDEX, cursor_sql.h). */
#define OB_BUCKET_INDEX "idx_bucket_seq (bucket, status, seq)"
#define OB_WAIT_INDEX "idx_aggregate_wait (aggregate_type, aggregate_id, status, next_attempt_at)"
#define OB_SCHEMA_ORDER_INDEXES                                                                    \
    "    INDEX " OB_SEQ_INDEX ",\n    INDEX " OB_STATUS_SEQ_INDEX ",\n    INDEX " OB_BUCKET_INDEX  \
    ",\n    INDEX " OB_WAIT_INDEX "\n"

/* Cursor mode's progress (--cursor, see src/cursor.c): one row per outbox
 * table and bucket, in the outbox table's schema, holding the highest seq
 * below which every row of the bucket is done. */
static void cursor_table_ddl(ob_buf *b, const char *table) {
    const char *dot = strchr(table, '.');
    ob_buf_puts(b, "\n-- Cursor mode (--cursor): each bucket's progress; one table for the "
                   "database.\nCREATE TABLE IF NOT EXISTS ");
    if (dot) {
        ob_buf_putc(b, '`');
        ob_buf_append(b, table, (size_t)(dot - table));
        ob_buf_puts(b, "`.");
    }
    ob_buf_puts(b, OB_CURSOR_TABLE
                " (\n"
                "    table_name  VARCHAR(192)    NOT NULL,\n"
                "    bucket      SMALLINT        NOT NULL,\n"
                "    seq         BIGINT UNSIGNED NOT NULL,\n"
                "    witness     VARCHAR(64)     NULL,\n"
                "    updated_at  TIMESTAMP(6)    NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON "
                "UPDATE CURRENT_TIMESTAMP(6),\n"
                "    PRIMARY KEY (table_name, bucket)\n"
                ") ENGINE = InnoDB;\n");
}

/* The leases on a Galera node (src/lease/lease_table.h): one table for the
 * database, in the outbox table's schema. */
static void lease_table_ddl(ob_buf *b, const char *table) {
    const char *dot = strchr(table, '.');
    ob_buf_puts(b, "\n-- The relays' leases on a Galera cluster (unused on a single server); one "
                   "table\n-- for the database.\nCREATE TABLE IF NOT EXISTS ");
    if (dot) {
        ob_buf_putc(b, '`');
        ob_buf_append(b, table, (size_t)(dot - table));
        ob_buf_puts(b, "`.");
    }
    ob_buf_puts(b, OB_LEASE_TABLE " (\n"
                                  "    lease_key   VARCHAR(32)     NOT NULL,\n"
                                  "    kind        CHAR(1)         NOT NULL,\n"
                                  "    slot        BIGINT UNSIGNED NOT NULL,\n"
                                  "    holder      BIGINT UNSIGNED NULL,\n"
                                  "    mode        CHAR(1)         NULL,\n"
                                  "    stale_ms    INT UNSIGNED    NULL,\n"
                                  "    epoch       BIGINT UNSIGNED NOT NULL DEFAULT 0,\n"
                                  "    renewed     TIMESTAMP(6)    NULL,\n"
                                  "    PRIMARY KEY (lease_key, kind, slot)\n"
                                  ") ENGINE = InnoDB;\n");
}

/* Cursor mode takes every row at or below its bucket's cursor for
 * delivered, which holds only while seq comes from the counter: a value an
 * INSERT sets is replaced by the counter's next (NULL makes one even under
 * NO_AUTO_VALUE_ON_ZERO), so that a row is never written below a cursor.
 * One statement without a body, so that it runs as piped to the mariadb
 * client and through the C API alike. */
/* The trigger's name, in the table's schema: at most 64 characters, the
 * table's (cut to 60) and _seq. */
static void trigger_name(ob_buf *b, const char *table) {
    const char *dot = strchr(table, '.');
    if (dot) {
        ob_buf_putc(b, '`');
        ob_buf_append(b, table, (size_t)(dot - table));
        ob_buf_puts(b, "`.");
    }
    ob_buf_printf(b, "`%.60s_seq`", dot ? dot + 1 : table);
}

static void seq_trigger_ddl(ob_buf *b, const char *table, int replace) {
    ob_buf_puts(b, "\n-- seq is the server's: a value an INSERT gives is replaced by the next of "
                   "the\n-- counter (cursor mode takes rows at or below a cursor for delivered). "
                   "Creating\n-- a trigger needs the TRIGGER privilege, and with the binary log "
                   "on SUPER\n-- unless log_bin_trust_function_creators=1 (error 1419): then "
                   "everything\n-- above is made, and someone with SUPER runs `schema --migrate` "
                   "for this.\n");
    if (replace) {
        /* A trigger's name is unique in its schema: after a RENAME TABLE
         * swap the old table keeps it, and the new one would get none. */
        ob_buf_puts(b, "DROP TRIGGER IF EXISTS ");
        trigger_name(b, table);
        ob_buf_puts(b, ";\n");
    }
    ob_buf_puts(b, "CREATE TRIGGER IF NOT EXISTS ");
    trigger_name(b, table);
    ob_buf_puts(b, " BEFORE INSERT ON ");
    ob_sql_quote_table(b, table);
    ob_buf_puts(b, " FOR EACH ROW SET NEW.seq = NULL;\n");
}

void ob_cursor_table_name(ob_buf *b, const char *table) {
    const char *dot = strchr(table, '.');
    if (dot) {
        ob_buf_putc(b, '`');
        ob_buf_append(b, table, (size_t)(dot - table));
        ob_buf_puts(b, "`.");
    }
    ob_buf_puts(b, OB_CURSOR_TABLE);
}

int outbox_schema_migrate_ddl(const char *table, char **out, char *errbuf, size_t errlen) {
    char err[256];
    *out = NULL;
    if (ob_sql_check_table(table, err, sizeof(err)) != 0) {
        if (errbuf)
            snprintf(errbuf, errlen, "%s", err);
        return OUTBOX_EINVAL;
    }
    ob_buf b = OB_BUF_INIT;
    ob_buf_puts(&b,
                "-- Adds what ordered delivery (--ordered, --leader) needs to an existing outbox\n"
                "-- table, and the lease table relays on a Galera cluster need. Rows already\n"
                "-- there get their sequence in id order. The ALTER copies the table: run it at\n"
                "-- a quiet time. It is safe to run twice.\n");
    ob_buf_puts(&b, "ALTER TABLE ");
    ob_sql_quote_table(&b, table);
    ob_buf_puts(&b, "\n    ADD COLUMN IF NOT EXISTS " OB_SEQ_COLUMN ",\n"
                    "    ADD COLUMN IF NOT EXISTS " OB_BUCKET_COLUMN ",\n"
                    "    ADD INDEX IF NOT EXISTS " OB_SEQ_INDEX ",\n"
                    "    ADD INDEX IF NOT EXISTS " OB_STATUS_SEQ_INDEX ",\n"
                    "    ADD INDEX IF NOT EXISTS " OB_BUCKET_INDEX ",\n"
                    "    ADD INDEX IF NOT EXISTS " OB_WAIT_INDEX ";\n");
    cursor_table_ddl(&b, table);
    /* A cursor table of an earlier release: the witness by which relays
     * tell the table its cursors were written for (cursor_fit.h). */
    ob_buf_puts(&b, "ALTER TABLE ");
    ob_cursor_table_name(&b, table);
    ob_buf_puts(&b, " ADD COLUMN IF NOT EXISTS witness VARCHAR(64) NULL AFTER seq;\n");
    lease_table_ddl(&b, table);
    seq_trigger_ddl(&b, table, 1);
    if (b.oom) {
        ob_buf_free(&b);
        return OUTBOX_ENOMEM;
    }
    *out = b.p;
    return OUTBOX_OK;
}

/* A UUIDv7 from the server's clock and RANDOM_BYTES: 48 bits of
 * milliseconds, version 7, 12 random bits, variant 10, 62 random bits. Both
 * the id column's default and outbox_uuid_v7() use it. */
#define UUID_V7_SQL(ind)                                                                           \
    "UNHEX(CONCAT(\n" ind "    LPAD(HEX(FLOOR(UNIX_TIMESTAMP(NOW(3)) * 1000)), 12, '0'),\n" ind    \
    "    '7', SUBSTR(HEX(RANDOM_BYTES(2)), 2, 3),\n" ind                                           \
    "    HEX(128 | (ASCII(RANDOM_BYTES(1)) & 63)),\n" ind "    HEX(RANDOM_BYTES(7))))"

/* PARTITION BY RANGE COLUMNS (id): one partition per period from `start`,
 * `lookahead` more, and pmax. */
static void partitions_ddl(ob_buf *b, uint64_t start, int monthly, uint32_t lookahead) {
    ob_buf_puts(b, "\nPARTITION BY RANGE COLUMNS (id) (\n");
    for (uint32_t i = 0; i <= lookahead; i++) {
        uint64_t p = ob_period_add(start, monthly, (int)i);
        char name[32];
        ob_period_name(p, monthly, name);
        ob_buf_printf(b, "    PARTITION %s VALUES LESS THAN (", name);
        ob_period_bound(b, ob_period_add(p, monthly, 1));
        ob_buf_puts(b, "),\n");
    }
    ob_buf_puts(b, "    PARTITION pmax VALUES LESS THAN (MAXVALUE)\n)");
}

/* outbox_uuid_v7(), in the table's schema when the name has one. */
static void function_ddl(ob_buf *b, const char *table) {
    const char *dot = strchr(table, '.');
    ob_buf_puts(b, "\n-- UUIDv7 ids from plain SQL: INSERT INTO outbox (id, ...) VALUES "
                   "(outbox_uuid_v7(), ...)\n"
                   "-- With the binary log on, creating a function needs the SUPER privilege\n"
                   "-- (error 1419) unless log_bin_trust_function_creators=1. Without either,\n"
                   "-- use `schema --no-function` and leave id out of INSERTs: the column's\n"
                   "-- default makes the same ids.\n");
    ob_buf_puts(b, "CREATE FUNCTION IF NOT EXISTS ");
    if (dot) {
        ob_buf_putc(b, '`');
        ob_buf_append(b, table, (size_t)(dot - table));
        ob_buf_puts(b, "`.");
    }
    ob_buf_puts(b, "outbox_uuid_v7() RETURNS BINARY(16) NOT DETERMINISTIC NO SQL\n"
                   "RETURN " UUID_V7_SQL("") ";\n");
}

int outbox_schema_ddl(const outbox_schema_options *o, char **out, char *errbuf, size_t errlen) {
    char err[256];
    *out = NULL;
    if (ob_sql_check_table(o->table, err, sizeof(err)) != 0) {
        if (errbuf)
            snprintf(errbuf, errlen, "%s", err);
        return OUTBOX_EINVAL;
    }
    ob_buf b = OB_BUF_INIT;
    ob_buf_puts(&b, "-- The outbox table: the contract producers in any language write to.\n"
                    "-- status: 0 pending, 1 processed, -1 dead. An INSERT may leave out id: the\n"
                    "-- column's default is a UUIDv7 made by the server.\n");
    uint64_t start = 0;
    if (o->partitioned) {
        start = ob_period_start(o->now_ms ? o->now_ms : now_ms(), o->monthly);
        char day[32];
        time_t t = (time_t)(start / 1000);
        struct tm tm;
        gmtime_r(&t, &tm);
        strftime(day, sizeof(day), "%Y-%m-%d", &tm);
        ob_buf_printf(&b,
                      "-- The partitions below start on %s, the %s this was generated: make\n"
                      "-- the table with a fresh `outbox-uvrelay schema --partitioned%s`, and let\n"
                      "-- the partition maintainer (--partition-interval) keep periods ahead.\n",
                      day, o->monthly ? "month" : "day", o->monthly ? " --monthly" : "");
    }
    ob_buf_puts(&b, "CREATE TABLE IF NOT EXISTS ");
    ob_sql_quote_table(&b, o->table);
    ob_buf_puts(
        &b,
        " (\n"
        "    id              BINARY(16)    NOT NULL DEFAULT (" UUID_V7_SQL(
            "                                  ") "),\n"
                                                  "    aggregate_type  VARCHAR(128)  NOT NULL,\n"
                                                  "    aggregate_id    VARCHAR(128)  NOT NULL,\n"
                                                  "    event_type      VARCHAR(128)  NOT NULL,\n");
    ob_buf_puts(&b, o->binary ? "    payload         LONGBLOB      NOT NULL,\n"
                              : "    payload         JSON          NOT NULL,\n");
    ob_buf_puts(&b, "    headers         JSON          NULL,\n"
                    "    status          SMALLINT      NOT NULL DEFAULT 0,\n"
                    "    attempt_count   INT           NOT NULL DEFAULT 0,\n"
                    "    last_error      VARCHAR(1024) NULL,\n"
                    "    next_attempt_at TIMESTAMP(6)  NULL,\n"
                    "    created_at      TIMESTAMP(6)  NOT NULL DEFAULT CURRENT_TIMESTAMP(6),\n"
                    "    processed_at    TIMESTAMP(6)  NULL,\n");
    if (o->ordered)
        ob_buf_puts(&b, OB_SCHEMA_ORDER_COLUMNS);
    ob_buf_puts(&b, "    PRIMARY KEY (id),\n"
                    "    INDEX idx_status_id (status, id)");
    ob_buf_puts(&b, o->ordered ? ",\n" OB_SCHEMA_ORDER_INDEXES : "\n");
    ob_buf_puts(&b, ") ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin");
    if (o->partitioned)
        partitions_ddl(&b, start, o->monthly, o->lookahead);
    ob_buf_puts(&b, ";\n");
    if (o->ordered)
        cursor_table_ddl(&b, o->table);
    lease_table_ddl(&b, o->table);
    if (o->with_function)
        function_ddl(&b, o->table);
    /* Last: on a server with the binary log and without SUPER it fails
     * (error 1419) after everything else was made. */
    if (o->ordered)
        seq_trigger_ddl(&b, o->table, 0);
    if (b.oom) {
        ob_buf_free(&b);
        return OUTBOX_ENOMEM;
    }
    *out = b.p;
    return OUTBOX_OK;
}
