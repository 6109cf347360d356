/* SPDX-License-Identifier: Apache-2.0 */
/* The byte budget of a worker's fetches: the LIMIT follows the row size. */
#include "check.h"
#include "fetch_budget.h"

/* A batch of n rows with `payload` bytes of payload each. */
static void fill(ob_batch *b, int n, size_t payload) {
    b->n = n;
    for (int i = 0; i < n; i++) {
        memset(&b->slots[i].row, 0, sizeof(ob_row));
        b->slots[i].row.payload_len = payload;
    }
}

static uint64_t row_bytes(size_t payload) {
    ob_row r;
    memset(&r, 0, sizeof(r));
    r.payload_len = payload;
    return ob_fetch_row_bytes(&r);
}

int main(void) {
    ob_batch b;
    CHECK_EQ(ob_batch_init(&b, 500, 0), 0);
    ob_fetch_budget f;
    size_t len;

    /* No byte limit: the shared statement serves, every fetch asks for the batch size. */
    ob_fetch_budget_init(&f, 0, 500);
    CHECK_EQ(ob_fetch_budget_limit(&f), 500);
    CHECK(ob_fetch_budget_sql(&f, "`outbox`", &len) == NULL);
    CHECK_EQ(ob_fetch_budget_asked(&f), 500);
    ob_fetch_budget_free(&f);

    /* 4 MiB per worker (32 MiB over 8 connections). Before any row: rows of
     * 1 MiB assumed, so 4 rows. */
    uint64_t share = 4u * 1024 * 1024;
    ob_fetch_budget_init(&f, share, 500);
    CHECK_EQ(ob_fetch_budget_limit(&f), 4);
    const char *sql = ob_fetch_budget_sql(&f, "`outbox`", &len);
    CHECK(sql != NULL);
    CHECK_CONTAINS(sql, "LIMIT 4 FOR UPDATE SKIP LOCKED");
    CHECK_EQ(len, strlen(sql));
    CHECK_EQ(ob_fetch_budget_asked(&f), 4);

    /* Small rows: the batch size binds. */
    fill(&b, 4, 512);
    ob_fetch_budget_seen(&f, &b);
    CHECK_EQ(ob_fetch_budget_limit(&f), 500);
    sql = ob_fetch_budget_sql(&f, "`outbox`", &len);
    CHECK_CONTAINS(sql, "LIMIT 500 FOR UPDATE");

    /* The statement is rebuilt only when the limit changes. */
    const char *again = ob_fetch_budget_sql(&f, "`outbox`", &len);
    CHECK(again == sql);

    /* Rows grow to 64 KiB: the limit follows at once. */
    fill(&b, 500, 65536);
    ob_fetch_budget_seen(&f, &b);
    CHECK_EQ(ob_fetch_budget_limit(&f), (int)(share / row_bytes(65536)));
    CHECK_INT(ob_fetch_budget_limit(&f) * row_bytes(65536), <=, share);
    sql = ob_fetch_budget_sql(&f, "`outbox`", &len);
    CHECK_CONTAINS(sql, "LIMIT 63 FOR UPDATE");

    /* They shrink again: the estimate comes down halfway per batch. */
    fill(&b, 63, 512);
    ob_fetch_budget_seen(&f, &b);
    uint64_t est = (row_bytes(65536) + row_bytes(512)) / 2;
    CHECK_EQ(f.estimate, est);
    CHECK_EQ(ob_fetch_budget_limit(&f), (int)(share / est));
    for (int i = 0; i < 20; i++)
        ob_fetch_budget_seen(&f, &b);
    CHECK_EQ(ob_fetch_budget_limit(&f), 500);

    /* A row larger than the whole share is still fetched, alone. */
    fill(&b, 1, 8u * 1024 * 1024);
    ob_fetch_budget_seen(&f, &b);
    CHECK_EQ(ob_fetch_budget_limit(&f), 1);
    sql = ob_fetch_budget_sql(&f, "`outbox`", &len);
    CHECK_CONTAINS(sql, "LIMIT 1 FOR UPDATE");
    CHECK_EQ(ob_fetch_budget_asked(&f), 1);

    /* An empty fetch teaches nothing. */
    uint64_t before = f.estimate;
    fill(&b, 0, 0);
    ob_fetch_budget_seen(&f, &b);
    CHECK_EQ(f.estimate, before);

    ob_fetch_budget_free(&f);

    /* Two workers' held bytes add up in a shared gauge with its peak; the
     * ordered modes' fetches ask through ob_fetch_budget_next. */
    uint64_t total = 0, peak = 0;
    ob_fetch_budget g;
    ob_fetch_budget_init(&f, 100 * row_bytes(1000), 500);
    ob_fetch_budget_init(&g, 100 * row_bytes(1000), 500);
    ob_fetch_budget_count(&f, &total, &peak);
    ob_fetch_budget_count(&g, &total, &peak);
    CHECK_EQ(ob_fetch_budget_next(&f), 1); /* large rows assumed before any was seen */
    CHECK_EQ(ob_fetch_budget_asked(&f), 1);
    fill(&b, 1, 1000);
    ob_fetch_budget_seen(&f, &b);
    CHECK_EQ(ob_fetch_budget_next(&f), 100);
    CHECK_EQ(ob_fetch_budget_asked(&f), 100);
    fill(&b, 100, 1000);
    ob_fetch_budget_seen(&f, &b);
    ob_fetch_budget_seen(&g, &b);
    CHECK_EQ(total, 200 * row_bytes(1000));
    fill(&b, 0, 0);
    ob_fetch_budget_seen(&f, &b); /* an empty fetch holds nothing */
    CHECK_EQ(total, 100 * row_bytes(1000));
    CHECK_EQ(peak, 200 * row_bytes(1000));
    ob_fetch_budget_free(&g);
    CHECK_EQ(total, 0);
    ob_fetch_budget_free(&f);
    ob_batch_free(&b);
    puts("test_fetch_budget: ok");
    return 0;
}
