/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Partition arithmetic shared by the schema text and the partition
 * maintainer: period starts in UTC, partition names, and the 16-byte UUIDv7
 * bound of a period start.
 */
#ifndef OB_SCHEMA_H
#define OB_SCHEMA_H

#include <stdint.h>

#include "buf.h"

/* The start (Unix ms, UTC) of the day or month containing `ms`. */
uint64_t ob_period_start(uint64_t ms, int monthly);
/* The start of the period `n` periods after the one starting at `start`. */
uint64_t ob_period_add(uint64_t start, int monthly, int n);
/* "pYYYYMMDD" or "pYYYYMM" for the period starting at `start`. out: 32 bytes. */
void ob_period_name(uint64_t start, int monthly, char *out);
/* Appends X'<12 hex digits of ms><20 zeros>': the smallest UUIDv7 of that ms. */
void ob_period_bound(ob_buf *b, uint64_t ms);

/* The cursor table's name (cursor mode), unquoted: one per database. */
#define OB_CURSOR_TABLE "outbox_cursor"
/* Appends the cursor table's name in the schema of `table` (a name that
 * passed ob_sql_check_table): `schema`.outbox_cursor or outbox_cursor. */
void ob_cursor_table_name(ob_buf *b, const char *table);

#endif
