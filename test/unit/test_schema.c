/* SPDX-License-Identifier: Apache-2.0 */
/* Schema text and the partition arithmetic behind it. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "outbox/maint.h"
#include "schema.h"

/* 2026-11-21T13:00:00Z */
#define NOW_MS 1795266000000ULL

static void periods(void) {
    char name[32];
    uint64_t d = ob_period_start(NOW_MS, 0);
    CHECK_EQ(d, 1795219200000ULL); /* 2026-11-21T00:00:00Z */
    ob_period_name(d, 0, name);
    CHECK_STR(name, "p20261121");
    uint64_t m = ob_period_start(NOW_MS, 1);
    ob_period_name(m, 1, name);
    CHECK_STR(name, "p202611");
    /* December rolls into January of the next year. */
    ob_period_name(ob_period_add(m, 1, 2), 1, name);
    CHECK_STR(name, "p202701");
    ob_period_name(ob_period_add(d, 0, 10), 0, name);
    CHECK_STR(name, "p20261201");
    ob_buf b = OB_BUF_INIT;
    ob_period_bound(&b, 0x019aa5a1b000ULL);
    CHECK_STR(b.p, "X'019aa5a1b00000000000000000000000'");
    ob_buf_free(&b);
}

static void plain_and_binary(void) {
    outbox_schema_options o;
    char *ddl = NULL, err[256];
    outbox_schema_options_init(&o);
    CHECK_EQ(outbox_schema_ddl(&o, &ddl, err, sizeof(err)), OUTBOX_OK);
    CHECK_CONTAINS(ddl, "CREATE TABLE IF NOT EXISTS `outbox`");
    CHECK_CONTAINS(ddl, "payload         JSON          NOT NULL");
    CHECK_CONTAINS(ddl, "INDEX idx_status_id (status, id)");
    CHECK_CONTAINS(ddl, "CREATE FUNCTION IF NOT EXISTS outbox_uuid_v7()");
    CHECK(strstr(ddl, "PARTITION") == NULL);
    free(ddl);
    o.binary = 1;
    o.with_function = 0;
    o.table = "app.events";
    CHECK_EQ(outbox_schema_ddl(&o, &ddl, err, sizeof(err)), OUTBOX_OK);
    CHECK_CONTAINS(ddl, "`app`.`events`");
    CHECK_CONTAINS(ddl, "payload         LONGBLOB      NOT NULL");
    CHECK(strstr(ddl, "FUNCTION") == NULL);
    free(ddl);
    o.table = "bad name";
    CHECK_EQ(outbox_schema_ddl(&o, &ddl, err, sizeof(err)), OUTBOX_EINVAL);
    CHECK_CONTAINS(err, "bad name");
}

static void partitioned(void) {
    outbox_schema_options o;
    char *ddl = NULL, err[256];
    outbox_schema_options_init(&o);
    o.partitioned = 1;
    o.lookahead = 2;
    o.now_ms = NOW_MS;
    CHECK_EQ(outbox_schema_ddl(&o, &ddl, err, sizeof(err)), OUTBOX_OK);
    CHECK_CONTAINS(ddl, "PARTITION BY RANGE COLUMNS (id) (");
    /* p20261121 holds ids below the first id of 2026-11-22 (0x019aa... ms). */
    ob_buf b = OB_BUF_INIT;
    ob_buf_puts(&b, "PARTITION p20261121 VALUES LESS THAN (");
    ob_period_bound(&b, 1795219200000ULL + 86400000ULL);
    CHECK_CONTAINS(ddl, b.p);
    CHECK_CONTAINS(ddl, "PARTITION p20261123 VALUES LESS THAN (");
    CHECK(strstr(ddl, "p20261124") == NULL);
    CHECK_CONTAINS(ddl, "PARTITION pmax VALUES LESS THAN (MAXVALUE)");
    ob_buf_free(&b);
    free(ddl);
}

/* What cursor mode relies on: the seq trigger, made last (it may need
 * SUPER), and by the migration also on a table swapped in, whose old table
 * keeps the name (a trigger's name is unique in its schema). */
static void seq_trigger(void) {
    outbox_schema_options o;
    outbox_schema_options_init(&o);
    o.ordered = 1;
    char *ddl = NULL, err[256];
    CHECK_EQ(outbox_schema_ddl(&o, &ddl, err, sizeof(err)), OUTBOX_OK);
    const char *t = strstr(ddl, "CREATE TRIGGER IF NOT EXISTS `outbox_seq` BEFORE INSERT ON "
                                "`outbox` FOR EACH ROW SET NEW.seq = NULL;");
    CHECK(t != NULL);
    CHECK(t > strstr(ddl, "CREATE TABLE IF NOT EXISTS outbox_cursor"));
    CHECK(strstr(t, "CREATE ") == t);
    CHECK(strstr(t + 1, "CREATE ") == NULL);
    CHECK(strstr(ddl, "DROP TRIGGER") == NULL);
    free(ddl);
    CHECK_EQ(outbox_schema_migrate_ddl("app.outbox", &ddl, err, sizeof(err)), OUTBOX_OK);
    /* A cursor table of an earlier release gets the witness column. */
    CHECK_CONTAINS(ddl, "ALTER TABLE `app`.outbox_cursor ADD COLUMN IF NOT EXISTS witness "
                        "VARCHAR(64) NULL AFTER seq;");
    CHECK_CONTAINS(ddl, "DROP TRIGGER IF EXISTS `app`.`outbox_seq`;\nCREATE TRIGGER IF NOT "
                        "EXISTS `app`.`outbox_seq` BEFORE INSERT ON `app`.`outbox` FOR EACH ROW "
                        "SET NEW.seq = NULL;");
    free(ddl);
}

int main(void) {
    periods();
    seq_trigger();
    plain_and_binary();
    partitioned();
    puts("test_schema: ok");
    return 0;
}
