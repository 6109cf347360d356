/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench-claim: the DB-only limit. N processes, one connection each, run the
 * relay's own claim cycle with no publishing in between:
 *
 *   START TRANSACTION; SELECT ... FOR UPDATE SKIP LOCKED   (ob_sql_fetch)
 *   UPDATE ... WHERE id IN (...); COMMIT                   (ob_sql_processed_*)
 *
 * until a fetch comes back empty. The statements are built by the library's
 * own SQL builders, so the limit measures exactly what the relay sends.
 *
 *   bench-claim --db URL [--connections N] [--batch N] [--table T] [--delete]
 * Prints one line: rows=N seconds=S rate=R batches=B
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "common.h"
#include "sql.h"

typedef struct claim_cfg {
    const char *url;
    int batch;
    outbox_processing_mode mode;
    ob_buf fetch;
    char *qtable;
} claim_cfg;

typedef struct claim_slot {
    uint64_t rows, batches;
    uint64_t end_ns;
    char err[200];
} claim_slot;

static MYSQL *conns[256];

static int claim_setup(int i, void *slotp, void *data) {
    (void)slotp;
    claim_cfg *c = data;
    conns[i] = bn_db_connect(c->url, 1);
    return 0;
}

/* Runs the statement and returns the last result set (NULL when none). */
static MYSQL_RES *run(MYSQL *m, const char *sql, size_t len, claim_slot *s) {
    if (mysql_real_query(m, sql, (unsigned long)len) != 0) {
        snprintf(s->err, sizeof(s->err), "%u %s", mysql_errno(m), mysql_error(m));
        return NULL;
    }
    MYSQL_RES *last = NULL;
    int st;
    do {
        MYSQL_RES *r = mysql_store_result(m);
        if (r) {
            if (last)
                mysql_free_result(last);
            last = r;
        }
    } while ((st = mysql_next_result(m)) == 0);
    if (st > 0)
        snprintf(s->err, sizeof(s->err), "%u %s", mysql_errno(m), mysql_error(m));
    return last;
}

static int claim_work(int i, void *slotp, void *data) {
    claim_cfg *c = data;
    claim_slot *s = slotp;
    MYSQL *m = conns[i];
    ob_buf sql = OB_BUF_INIT;
    for (;;) {
        MYSQL_RES *res = run(m, c->fetch.p, c->fetch.len, s);
        if (s->err[0])
            return 1;
        uint64_t n = res ? mysql_num_rows(res) : 0;
        if (n == 0) {
            if (res)
                mysql_free_result(res);
            run(m, "COMMIT", 6, s);
            break;
        }
        ob_buf_reset(&sql);
        ob_sql_processed_head(&sql, c->qtable, c->mode);
        MYSQL_ROW row;
        int first = 1;
        while ((row = mysql_fetch_row(res)) != NULL) {
            ob_sql_add_id(&sql, (const unsigned char *)row[0], first);
            first = 0;
        }
        ob_sql_end_ids(&sql);
        ob_buf_puts(&sql, "COMMIT");
        mysql_free_result(res);
        MYSQL_RES *r2 = run(m, sql.p, sql.len, s);
        if (r2)
            mysql_free_result(r2);
        if (s->err[0])
            return 1;
        s->rows += n;
        s->batches++;
    }
    s->end_ns = bn_mono_ns();
    ob_buf_free(&sql);
    mysql_close(m);
    return 0;
}

int main(int argc, char **argv) {
    bn_set_tool("bench-claim");
    claim_cfg c;
    memset(&c, 0, sizeof(c));
    const char *table = "outbox";
    int n = 2;
    c.batch = 500;
    c.mode = OUTBOX_KEEP_PROCESSED;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--db") == 0)
            c.url = bn_need(a, v), i++;
        else if (strcmp(a, "--connections") == 0)
            n = (int)bn_long(a, v, 1, 256), i++;
        else if (strcmp(a, "--batch") == 0)
            c.batch = (int)bn_long(a, v, 1, 100000), i++;
        else if (strcmp(a, "--table") == 0)
            table = bn_need(a, v), i++;
        else if (strcmp(a, "--delete") == 0)
            c.mode = OUTBOX_DELETE_PROCESSED;
        else
            bn_die("unknown argument '%s'", a);
    }
    if (c.url == NULL)
        bn_die("--db is required");
    char err[256];
    if (ob_sql_check_table(table, err, sizeof(err)) != 0)
        bn_die("%s", err);
    ob_buf q = OB_BUF_INIT;
    ob_sql_quote_table(&q, table);
    c.qtable = q.p;
    ob_sql_fetch(&c.fetch, c.qtable, c.batch);

    bn_fork f = {n, sizeof(claim_slot), claim_setup, claim_work, &c, NULL, 0};
    int failed = bn_fork_join(&f);
    uint64_t rows = 0, batches = 0, end = f.go_ns;
    for (int i = 0; i < n; i++) {
        claim_slot *s = bn_fork_slot(&f, i);
        if (s->err[0])
            fprintf(stderr, "bench-claim: connection %d: %s\n", i, s->err);
        rows += s->rows;
        batches += s->batches;
        if (s->end_ns > end)
            end = s->end_ns;
    }
    double secs = (double)(end - f.go_ns) / 1e9;
    printf("rows=%llu seconds=%.3f rate=%.0f batches=%llu\n", (unsigned long long)rows, secs,
           secs > 0 ? (double)rows / secs : 0, (unsigned long long)batches);
    ob_buf_free(&c.fetch);
    ob_buf_free(&q);
    return failed ? 1 : 0;
}
