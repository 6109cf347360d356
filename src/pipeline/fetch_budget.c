/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The byte budget of one worker's fetches (see fetch_budget.h).
 */
#include "fetch_budget.h"

#include "sql.h"

void ob_fetch_budget_init(ob_fetch_budget *f, uint64_t bytes, int max_rows) {
    f->bytes = bytes;
    f->max_rows = max_rows > 0 ? max_rows : 1;
    f->estimate = 0;
    f->sql_limit = 0;
    f->sql = (ob_buf)OB_BUF_INIT;
    f->held = 0;
    f->total = f->peak = NULL;
}

void ob_fetch_budget_count(ob_fetch_budget *f, uint64_t *total, uint64_t *peak) {
    f->total = total;
    f->peak = peak;
}

static void hold(ob_fetch_budget *f, uint64_t bytes) {
    if (f->total) {
        *f->total = *f->total - f->held + bytes;
        if (*f->total > *f->peak)
            *f->peak = *f->total;
    }
    f->held = bytes;
}

void ob_fetch_budget_free(ob_fetch_budget *f) {
    hold(f, 0);
    ob_buf_free(&f->sql);
    f->sql_limit = 0;
}

int ob_fetch_budget_limit(const ob_fetch_budget *f) {
    if (f->bytes == 0)
        return f->max_rows;
    uint64_t row = f->estimate ? f->estimate : OB_FETCH_FIRST_ROW_BYTES;
    uint64_t n = f->bytes / row;
    if (n < 1)
        return 1;
    return n < (uint64_t)f->max_rows ? (int)n : f->max_rows;
}

int ob_fetch_budget_next(ob_fetch_budget *f) {
    f->sql_limit = ob_fetch_budget_limit(f);
    return f->sql_limit;
}

int ob_fetch_budget_asked(const ob_fetch_budget *f) {
    return f->sql_limit ? f->sql_limit : f->max_rows;
}

const char *ob_fetch_budget_sql(ob_fetch_budget *f, const char *qtable, size_t *len) {
    if (f->bytes == 0)
        return NULL;
    int limit = ob_fetch_budget_limit(f);
    if (limit != f->sql_limit || f->sql.p == NULL) {
        ob_buf_reset(&f->sql);
        ob_sql_fetch(&f->sql, qtable, limit);
        if (f->sql.oom) {
            ob_buf_free(&f->sql);
            f->sql_limit = 0;
            return NULL;
        }
        f->sql_limit = limit;
    }
    *len = f->sql.len;
    return f->sql.p;
}

uint64_t ob_fetch_row_bytes(const ob_row *r) {
    return (uint64_t)r->payload_len + r->headers_len + r->aggregate_type_len + r->aggregate_id_len +
           r->event_type_len + r->created_at_len + 16 + OB_FETCH_ROW_OVERHEAD;
}

void ob_fetch_budget_seen(ob_fetch_budget *f, const ob_batch *b) {
    uint64_t sum = 0;
    for (int i = 0; i < b->n; i++)
        sum += ob_fetch_row_bytes(&b->slots[i].row);
    hold(f, sum);
    if (b->n <= 0)
        return;
    uint64_t avg = sum / (uint64_t)b->n;
    if (avg >= f->estimate || f->estimate == 0)
        f->estimate = avg; /* rows grew: follow at once */
    else
        f->estimate = (f->estimate + avg) / 2; /* shrank: come down halfway */
}
