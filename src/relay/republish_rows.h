/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The reading side of outbox_republish_run() (outbox/republish.h): which
 * rows, in which order, read in keyset pages on a blocking connection. The
 * statements are SELECTs only; their text is built by
 * ob_rp_where()/ob_rp_page_sql(), pure functions unit-tested without a
 * server.
 */
#ifndef OB_REPUBLISH_ROWS_H
#define OB_REPUBLISH_ROWS_H

#include <mysql.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "outbox/relay.h"
#include "outbox/republish.h"
#include "row.h"

/* Rows read a page. */
#define OB_RP_PAGE 500

/* The table as the statements see it. */
typedef struct ob_rp_names {
    const char *table;  /* as configured: "t" or "db.t" (the cursor table's key) */
    const char *qtable; /* quoted */
    const char *ctable; /* the cursor table, quoted; NULL when the table has none */
    int has_seq;        /* the table has seq (ordered or cursor schema) */
} ob_rp_names;

/* Checks and normalizes a created_at bound ("YYYY-MM-DD[ T]HH:MM[:SS[.f]][Z]"
 * or a date alone) into out as "YYYY-MM-DD HH:MM:SS.ffffff". Returns 0 or
 * -1. */
int ob_rp_time(const char *in, char *out, size_t outlen);

/* " FROM <t> o [LEFT JOIN <cursor> c ...] WHERE <delivered> AND <range>";
 * since and until already normalized (or NULL). */
void ob_rp_where(ob_buf *b, const ob_rp_names *n, const outbox_republish_options *o,
                 const char *since, const char *until);
/* The page after (seq or id) `after` (NULL: from the start): the columns of
 * sql.h's fetch, then seq (or NULL), in delivery order, OB_RP_PAGE rows. */
void ob_rp_page_sql(ob_buf *b, const ob_rp_names *n, const char *where, int has_after,
                    uint64_t after_seq, const unsigned char *after_id);

/* The reader: a blocking connection and the table's layout. */
typedef struct ob_rp_reader {
    MYSQL *m;
    ob_rp_names names;
    char *qtable, *ctable, *is_where;
    char *cname; /* the cursor table as an operator writes it: db.outbox_cursor */
    ob_buf where, sql;
    MYSQL_RES *res;
    int binary; /* the payload column is binary */
} ob_rp_reader;

/* Connects and reads the layout (seq, the cursor table). Returns OUTBOX_OK,
 * or OUTBOX_EDB / OUTBOX_EINVAL / OUTBOX_ESCHEMA with err. */
int ob_rp_open(ob_rp_reader *r, const outbox_relay_options *o, char *err, size_t errlen);
/* The count of the range and its oldest created_at, and the table's oldest
 * row's. */
int ob_rp_survey(ob_rp_reader *r, uint64_t *count, char *oldest_range, char *oldest_table,
                 size_t len, char *err, size_t errlen);
/* Reads the next page into r->res. Returns the number of rows (0 at the
 * end) or -1 with err. */
int ob_rp_next_page(ob_rp_reader *r, int has_after, uint64_t after_seq,
                    const unsigned char *after_id, char *err, size_t errlen);
/* The next row of the page as an ob_row (pointing into r->res), with its
 * seq. Returns 0, or -1 at the page's end. */
int ob_rp_row(ob_rp_reader *r, ob_row *row, uint64_t *seq);
void ob_rp_close(ob_rp_reader *r);

#endif
