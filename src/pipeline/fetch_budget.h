/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The byte budget of one worker's fetches. The rows of a claimed batch stay
 * in memory (the client library's result set) until the batch is written,
 * so the relay's memory is about connections x rows per fetch x row size.
 * A row count alone cannot bound that when payloads range from bytes to
 * megabytes; the budget turns max_in_flight_bytes into each fetch's LIMIT:
 *
 *   LIMIT = clamp(bytes per worker / estimated row size, 1, batch_size)
 *
 * Fewer rows are claimed rather than more bytes held, and a row is never
 * split: a row larger than the whole share is still fetched, alone. The
 * estimate follows the rows seen: it rises at once to a batch's average
 * when rows grow, and comes down halfway per batch when they shrink. Before
 * any row was seen it assumes large rows (OB_FETCH_FIRST_ROW_BYTES), so the
 * first fetch of a table of big payloads stays within the budget too.
 *
 * The fetch statement carries the LIMIT as a literal, so each worker keeps
 * its own copy and rebuilds it only when the limit changes. Pure apart from
 * that buffer; runs on the loop thread.
 */
#ifndef OB_FETCH_BUDGET_H
#define OB_FETCH_BUDGET_H

#include <stddef.h>
#include <stdint.h>

#include "batch.h"
#include "buf.h"

/* The row size assumed before any row was seen. */
#define OB_FETCH_FIRST_ROW_BYTES (1024 * 1024)
/* What a fetched row costs beyond its column bytes: the result set's row
 * header and column pointers, the batch slot. */
#define OB_FETCH_ROW_OVERHEAD 256

typedef struct ob_fetch_budget {
    uint64_t bytes;    /* this worker's share of the budget; 0: no byte limit */
    int max_rows;      /* the configured batch size */
    uint64_t estimate; /* bytes per row, 0 before any row was seen */
    int sql_limit;     /* the LIMIT written in sql, 0 before it was built */
    ob_buf sql;        /* START TRANSACTION; SELECT ... LIMIT n FOR UPDATE SKIP LOCKED */
    uint64_t held;     /* bytes of the last fetched batch */
    uint64_t *total;   /* the sum of every worker's held bytes (may be NULL) */
    uint64_t *peak;    /* the highest *total seen */
} ob_fetch_budget;

void ob_fetch_budget_init(ob_fetch_budget *f, uint64_t bytes, int max_rows);
void ob_fetch_budget_free(ob_fetch_budget *f);

/* The LIMIT of the next fetch: 1 to max_rows. */
int ob_fetch_budget_limit(const ob_fetch_budget *f);

/* The fetch statement for the next batch, rebuilt when its limit changed;
 * NULL when there is no byte limit (the shared batch_size statement
 * serves) or when out of memory. */
const char *ob_fetch_budget_sql(ob_fetch_budget *f, const char *qtable, size_t *len);

/* The LIMIT of the next fetch, remembered as asked: for fetches built by
 * someone else (the ordered modes' statements). */
int ob_fetch_budget_next(ob_fetch_budget *f);

/* Counts this worker's held bytes into a shared gauge and its peak (the
 * relay's stats); ob_fetch_budget_free takes them out again. */
void ob_fetch_budget_count(ob_fetch_budget *f, uint64_t *total, uint64_t *peak);

/* The LIMIT the last fetch asked for: fewer rows than that means the table
 * had no more to give. */
int ob_fetch_budget_asked(const ob_fetch_budget *f);

/* A fetch returned these rows (b->n of them); updates the estimate. */
void ob_fetch_budget_seen(ob_fetch_budget *f, const ob_batch *b);

/* The bytes a row holds while it is claimed, as the estimate counts them. */
uint64_t ob_fetch_row_bytes(const ob_row *r);

#endif
