/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The pure logic of the partition maintainer: reading the rows of
 * information_schema.PARTITIONS, deciding whether the table is partitioned
 * the way the maintainer expects, which periods to split off the MAXVALUE
 * tail, and which partitions are past the retention. No I/O here, so all of
 * it is unit-tested without a server.
 *
 * The expected shape is the one `outbox-uvrelay schema --partitioned` makes:
 * PARTITION BY RANGE COLUMNS(id); partitions named pYYYYMMDD (daily) or
 * pYYYYMM (monthly), each ending where the next period starts (the smallest
 * UUIDv7 of that millisecond, X'<12 hex digits><20 zeros>'); and a MAXVALUE
 * tail, last.
 */
#ifndef OB_PARTITION_PLAN_H
#define OB_PARTITION_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

typedef struct ob_part {
    char name[65];
    int is_max;        /* the MAXVALUE tail */
    uint64_t bound_ms; /* exclusive upper bound, Unix ms; 0 for the tail */
    int64_t rows;      /* TABLE_ROWS, an estimate */
} ob_part;

/* Parses a PARTITION_DESCRIPTION of a RANGE COLUMNS(id) partition:
 * "MAXVALUE", or "_binary 0x" and 32 hex digits whose last 20 are zeros.
 * Returns 0, or -1 when it is neither. */
int ob_part_parse_bound(const char *desc, uint64_t *bound_ms, int *is_max);

/* The start (Unix ms) of the period a partition name stands for: pYYYYMMDD
 * when daily, pYYYYMM when monthly. Returns 0, or -1 when the name is not a
 * period name of that kind. */
int ob_part_parse_name(const char *name, int monthly, uint64_t *start_ms);

/* Checks the table's partitions, in ordinal order. `method` and
 * `expression` are PARTITION_METHOD and PARTITION_EXPRESSION (NULL when the
 * table is not partitioned). Returns 0, or -1 with a message for the
 * operator in err. */
int ob_part_check(const char *qtable, const char *method, const char *expression, const ob_part *p,
                  size_t n, int monthly, char *err, size_t errlen);

/* The partitions to split off the tail so that the periods up to
 * `lookahead` after the current one exist. When some are missing, appends
 *   ALTER TABLE t REORGANIZE PARTITION <tail> INTO (PARTITION ..., <tail>)
 * to `b` and returns how many partitions it creates; otherwise appends
 * nothing and returns 0. When the newest partition ends before the current
 * period, the first new partition (named for the current period) also
 * covers the gap, so no row moves between existing partitions. The list
 * must have passed ob_part_check(). */
uint32_t ob_part_split_sql(ob_buf *b, const char *qtable, const ob_part *p, size_t n, int monthly,
                           uint64_t now_ms, uint32_t lookahead);

/* Writes to idx the positions of partitions past the retention, oldest
 * first, and returns how many there are (0 when retention is 0). */
size_t ob_part_expired(const ob_part *p, size_t n, int monthly, uint64_t now_ms, uint32_t retention,
                       size_t *idx);

#endif
