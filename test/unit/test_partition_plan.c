/* SPDX-License-Identifier: Apache-2.0 */
/* The partition maintainer's decisions, without a server. */
#include <stdlib.h>

#include "check.h"
#include "partition_plan.h"
#include "schema.h"

#define DAY 86400000ULL
/* 2026-11-21T00:00:00Z and 13:00 that day */
#define D 1795219200000ULL
#define NOW (D + 13 * 3600 * 1000ULL)

/* Daily partitions for days first..last (relative to D), then pmax. */
static size_t days(ob_part *p, int first, int last) {
    size_t n = 0;
    for (int i = first; i <= last; i++, n++) {
        uint64_t s = ob_period_add(D, 0, i);
        ob_period_name(s, 0, p[n].name);
        p[n].bound_ms = ob_period_add(s, 0, 1);
        p[n].is_max = 0;
    }
    snprintf(p[n].name, sizeof(p[n].name), "pmax");
    p[n].is_max = 1;
    p[n].bound_ms = 0;
    return n + 1;
}

static void bounds(void) {
    uint64_t ms;
    int is_max;
    CHECK_EQ(ob_part_parse_bound("MAXVALUE", &ms, &is_max), 0);
    CHECK_EQ(is_max, 1);
    CHECK_EQ(ob_part_parse_bound("_binary 0x01a2008d740000000000000000000000", &ms, &is_max), 0);
    CHECK_EQ(is_max, 0);
    CHECK_EQ(ms, 0x01a2008d7400ULL);
    /* Upper-case digits are fine; random low bits and other forms are not. */
    CHECK_EQ(ob_part_parse_bound("_binary 0x01A2008D740000000000000000000000", &ms, &is_max), 0);
    CHECK_EQ(ob_part_parse_bound("_binary 0x01a2008d740000000000000000000001", &ms, &is_max), -1);
    CHECK_EQ(ob_part_parse_bound("_binary 0x01a2008d74", &ms, &is_max), -1);
    CHECK_EQ(ob_part_parse_bound("'2026-11-22'", &ms, &is_max), -1);
    CHECK_EQ(ob_part_parse_bound(NULL, &ms, &is_max), -1);
}

static void names(void) {
    uint64_t s;
    CHECK_EQ(ob_part_parse_name("p20261121", 0, &s), 0);
    CHECK_EQ(s, D);
    CHECK_EQ(ob_part_parse_name("p202611", 1, &s), 0);
    CHECK_EQ(s, ob_period_start(D, 1));
    CHECK_EQ(ob_part_parse_name("p20260231", 0, &s), -1); /* no such day */
    CHECK_EQ(ob_part_parse_name("p202611", 0, &s), -1);   /* monthly name, daily table */
    CHECK_EQ(ob_part_parse_name("p20261121", 1, &s), -1);
    CHECK_EQ(ob_part_parse_name("pmax", 0, &s), -1);
    CHECK_EQ(ob_part_parse_name("x20261121", 0, &s), -1);
}

static void refusals(void) {
    ob_part p[16];
    char err[600];
    size_t n = days(p, 0, 2);
    CHECK_EQ(ob_part_check("d.outbox", "RANGE COLUMNS", "`id`", p, n, 0, err, sizeof(err)), 0);

    CHECK_EQ(ob_part_check("d.outbox", NULL, NULL, p, 0, 0, err, sizeof(err)), -1);
    CHECK_CONTAINS(err, "table d.outbox is not partitioned");
    CHECK_CONTAINS(err, "cleanup maintainer");

    CHECK_EQ(ob_part_check("d.outbox", "HASH", "`id`", p, n, 0, err, sizeof(err)), -1);
    CHECK_CONTAINS(err, "partitioned by HASH(`id`), not RANGE COLUMNS(id)");

    /* Monthly maintainer on a daily table. */
    CHECK_EQ(ob_part_check("d.outbox", "RANGE COLUMNS", "`id`", p, n, 1, err, sizeof(err)), -1);
    CHECK_CONTAINS(err, "partition p20261121 of table d.outbox is not a monthly partition name");

    /* No MAXVALUE tail. */
    CHECK_EQ(ob_part_check("d.outbox", "RANGE COLUMNS", "`id`", p, n - 1, 0, err, sizeof(err)), -1);
    CHECK_CONTAINS(err, "no MAXVALUE tail partition");

    /* A bound that is not where the named day ends. */
    p[1].bound_ms += DAY;
    CHECK_EQ(ob_part_check("d.outbox", "RANGE COLUMNS", "`id`", p, n, 0, err, sizeof(err)), -1);
    CHECK_CONTAINS(err,
                   "partition p20261122 of table d.outbox does not end where its daily period");
}

static void split(void) {
    ob_part p[64];
    ob_buf b = OB_BUF_INIT;

    /* Today and tomorrow exist; a lookahead of 3 adds the two days after. */
    size_t n = days(p, 0, 1);
    CHECK_EQ(ob_part_split_sql(&b, "`outbox`", p, n, 0, NOW, 3), 2);
    CHECK_STR(b.p, "ALTER TABLE `outbox` REORGANIZE PARTITION `pmax` INTO ("
                   "PARTITION p20261123 VALUES LESS THAN (X'01a20ada2c0000000000000000000000'), "
                   "PARTITION p20261124 VALUES LESS THAN (X'01a21000880000000000000000000000'), "
                   "PARTITION `pmax` VALUES LESS THAN (MAXVALUE))");

    /* Nothing to do: no statement at all. */
    ob_buf_reset(&b);
    CHECK_EQ(ob_part_split_sql(&b, "`outbox`", p, n, 0, NOW, 1), 0);
    CHECK_EQ(b.len, 0);

    /* The table is behind (newest partition ended five days ago): the first
     * new partition is today's, and it also covers the gap. */
    n = days(p, -9, -6);
    ob_buf_reset(&b);
    CHECK_EQ(ob_part_split_sql(&b, "`outbox`", p, n, 0, NOW, 0), 1);
    CHECK_CONTAINS(b.p,
                   "PARTITION p20261121 VALUES LESS THAN (X'01a2008d740000000000000000000000')");

    /* Only the tail: partitions from today on. */
    n = days(p, 0, -1);
    CHECK_EQ(n, 1);
    ob_buf_reset(&b);
    CHECK_EQ(ob_part_split_sql(&b, "`outbox`", p, n, 0, NOW, 2), 3);
    CHECK_CONTAINS(b.p, "PARTITION p20261121 ");
    CHECK_CONTAINS(b.p, "PARTITION p20261123 ");

    /* Monthly, across the year's end. */
    snprintf(p[0].name, sizeof(p[0].name), "p202611");
    p[0].is_max = 0;
    p[0].bound_ms = ob_period_add(ob_period_start(D, 1), 1, 1);
    snprintf(p[1].name, sizeof(p[1].name), "pmax");
    p[1].is_max = 1;
    p[1].bound_ms = 0;
    ob_buf_reset(&b);
    CHECK_EQ(ob_part_split_sql(&b, "`d`.`outbox`", p, 2, 1, NOW, 2), 2);
    CHECK_CONTAINS(b.p, "PARTITION p202612 ");
    CHECK_CONTAINS(b.p, "PARTITION p202701 ");
    ob_buf_free(&b);
}

static void expiry(void) {
    ob_part p[64];
    size_t idx[64];
    size_t n = days(p, -10, 2);
    /* Retention 3: today and the three days before it stay. */
    size_t k = ob_part_expired(p, n, 0, NOW, 3, idx);
    CHECK_EQ(k, 7);
    CHECK_STR(p[idx[0]].name, "p20261111");
    CHECK_STR(p[idx[6]].name, "p20261117");
    CHECK_EQ(ob_part_expired(p, n, 0, NOW, 0, idx), 0);
    /* The tail is never expired, even when it is the only partition. */
    n = days(p, 0, -1);
    CHECK_EQ(ob_part_expired(p, n, 0, NOW, 1, idx), 0);
}

int main(void) {
    bounds();
    names();
    refusals();
    split();
    expiry();
    puts("test_partition_plan: ok");
    return 0;
}
