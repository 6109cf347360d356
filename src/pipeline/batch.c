/* SPDX-License-Identifier: Apache-2.0 */
#include "batch.h"

/* A deferral never waits longer than this (paused.h backs off to 5 s). */
#define OB_PAUSE_LONGEST_MS 60000u

#include <stdlib.h>
#include <time.h>
#include <string.h>

int ob_batch_init(ob_batch *b, int cap, int order) {
    memset(b, 0, sizeof(*b));
    b->slots = calloc((size_t)cap, sizeof(ob_slot));
    b->cap = cap;
    b->check_before = (order & OB_BATCH_CHECK_BEFORE) != 0;
    b->order = order &= ~OB_BATCH_CHECK_BEFORE;
    if (order) {
        b->chain = malloc((size_t)cap * 2 * sizeof(int));
        b->ready = malloc((size_t)cap * sizeof(int));
    }
    return b->slots && ((b->chain && b->ready) || !order) ? 0 : -1;
}

void ob_batch_free(ob_batch *b) {
    free(b->slots);
    free(b->chain);
    free(b->ready);
    ob_buf_free(&b->sql);
    ob_buf_free(&b->errs);
    memset(b, 0, sizeof(*b));
}

static const char *col(char **row, unsigned long *len, int c, size_t *n) {
    *n = row[c] ? len[c] : 0;
    return row[c] ? row[c] : "";
}

static uint32_t aggregate_hash(const ob_row *r) {
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < r->aggregate_type_len; i++)
        h = (h ^ (unsigned char)r->aggregate_type[i]) * 16777619u;
    h = (h ^ 0x1f) * 16777619u;
    for (size_t i = 0; i < r->aggregate_id_len; i++)
        h = (h ^ (unsigned char)r->aggregate_id[i]) * 16777619u;
    return h;
}

static int same_aggregate(const ob_row *a, const ob_row *b) {
    return a->aggregate_type_len == b->aggregate_type_len &&
           a->aggregate_id_len == b->aggregate_id_len &&
           memcmp(a->aggregate_type, b->aggregate_type, a->aggregate_type_len) == 0 &&
           memcmp(a->aggregate_id, b->aggregate_id, a->aggregate_id_len) == 0;
}

/* Links every slot to the previous slot of its aggregate; a row waiting for
 * its retry is held, and so (in ob_batch_next_ready) is what follows it. */
static void link_aggregates(ob_batch *b) {
    size_t size = (size_t)b->cap * 2;
    for (size_t i = 0; i < size; i++)
        b->chain[i] = -1;
    for (int i = 0; i < b->n; i++) {
        ob_slot *s = &b->slots[i];
        size_t h = aggregate_hash(&s->row) % size;
        while (b->chain[h] >= 0 && !same_aggregate(&b->slots[b->chain[h]].row, &s->row))
            h = (h + 1) % size;
        s->prev = b->chain[h];
        if (s->prev >= 0)
            b->slots[s->prev].next = i;
        b->chain[h] = i;
        if (s->state == OB_SLOT_UNSENT && s->before != 0 &&
            (s->prev < 0 || b->slots[s->prev].seq != s->before)) {
            s->state = OB_SLOT_HELD; /* an earlier row of its aggregate came late */
            b->n_late++;
        }
        b->n_held += s->state == OB_SLOT_HELD;
    }
}

int ob_batch_load(ob_batch *b, ob_row_cursor next_row, void *cur, uint32_t epoch) {
    int n = 0;
    char **row;
    unsigned long *len;
    while (n < b->cap && (row = next_row(cur, &len)) != NULL) {
        ob_slot *s = &b->slots[n];
        memset(s, 0, sizeof(*s));
        s->prev = s->next = -1;
        if (row[OB_COL_ID] == NULL || len[OB_COL_ID] != 16)
            continue; /* cannot be addressed again; never happens with the schema */
        ob_row *r = &s->row;
        /* The id outlives the result: isolating a row writes it after the
         * finishing statement has replaced the fetch's result. */
        memcpy(s->id, row[OB_COL_ID], 16);
        r->id = s->id;
        r->aggregate_type = col(row, len, OB_COL_AGGREGATE_TYPE, &r->aggregate_type_len);
        r->aggregate_id = col(row, len, OB_COL_AGGREGATE_ID, &r->aggregate_id_len);
        r->event_type = col(row, len, OB_COL_EVENT_TYPE, &r->event_type_len);
        r->payload = col(row, len, OB_COL_PAYLOAD, &r->payload_len);
        r->headers = row[OB_COL_HEADERS];
        r->headers_len = len[OB_COL_HEADERS];
        r->attempts = row[OB_COL_ATTEMPTS] ? atoi(row[OB_COL_ATTEMPTS]) : 0;
        r->created_at = row[OB_COL_CREATED_AT];
        r->created_at_len = len[OB_COL_CREATED_AT];
        s->state = OB_SLOT_UNSENT;
        if (b->order && row[OB_COL_WAITING] && strcmp(row[OB_COL_WAITING], "1") == 0)
            s->state = OB_SLOT_HELD; /* still waiting for its retry */
        if (b->check_before) {
            s->seq = row[OB_OCOL_SEQ] ? strtoull(row[OB_OCOL_SEQ], NULL, 10) : 0;
            s->before = row[OB_OCOL_BEFORE] ? strtoull(row[OB_OCOL_BEFORE], NULL, 10) : 0;
        }
        n++;
    }
    b->n = n;
    b->next_pub = 0;
    b->outstanding = 0;
    b->gen++;
    b->epoch = epoch;
    b->n_acked = b->n_dup = b->n_retry = b->n_dead = b->n_released = b->n_held = 0;
    b->n_deferred = b->n_late = 0;
    ob_buf_reset(&b->errs);
    if (b->order)
        link_aggregates(b);
    b->nready = 0;
    b->rescan = 1;
    return n;
}

void ob_batch_touched(ob_batch *b) {
    b->rescan = 1;
}

/* The previous row of its aggregate failed, was held or was given back: a
 * row must not pass it. */
static int blocks_for_good(uint8_t st) {
    return st != OB_SLOT_UNSENT && st != OB_SLOT_INFLIGHT && st != OB_SLOT_ACKED;
}

/* Unsent, and the previous row of its aggregate (if any) acked. */
static int may_leave(const ob_batch *b, const ob_slot *s) {
    return s->state == OB_SLOT_UNSENT && (s->prev < 0 || b->slots[s->prev].state == OB_SLOT_ACKED);
}

/* OB_ORDER_AGGREGATE: holds every unsent row behind a row that blocks for
 * good (in slot order, so a hold passes down a whole chain), then stacks
 * the unsent rows that may leave now, the lowest slot on top. */
static void rebuild_ready(ob_batch *b) {
    b->rescan = 0;
    b->nready = 0;
    for (int i = b->next_pub; i < b->n; i++) {
        ob_slot *s = &b->slots[i];
        if (s->state == OB_SLOT_UNSENT && s->prev >= 0 &&
            blocks_for_good(b->slots[s->prev].state)) {
            s->state = OB_SLOT_HELD;
            b->n_held++;
        }
    }
    for (int i = b->n - 1; i >= b->next_pub; i--)
        if (may_leave(b, &b->slots[i]))
            b->ready[b->nready++] = i;
}

int ob_batch_next_ready(ob_batch *b) {
    while (b->next_pub < b->n && b->slots[b->next_pub].state != OB_SLOT_UNSENT)
        b->next_pub++;
    if (b->order == OB_ORDER_AGGREGATE) {
        if (b->rescan)
            rebuild_ready(b);
        while (b->nready > 0) {
            int i = b->ready[--b->nready];
            if (may_leave(b, &b->slots[i]))
                return i;
        }
        return -1;
    }
    for (int i = b->next_pub; i < b->n; i++) {
        ob_slot *s = &b->slots[i];
        if (s->state != OB_SLOT_UNSENT)
            continue;
        if (s->prev < 0)
            return i;
        uint8_t before = b->slots[s->prev].state;
        if (before == OB_SLOT_ACKED)
            return i;
        if (before == OB_SLOT_UNSENT || before == OB_SLOT_INFLIGHT) {
            if (b->order == OB_ORDER_STRICT)
                return -1;
            continue;
        }
        /* The previous row failed or was held or given back: this one
         * must not pass it. */
        s->state = OB_SLOT_HELD;
        b->n_held++;
        if (i == b->next_pub)
            b->next_pub++;
    }
    return -1;
}

static int leave_flight(ob_batch *b, ob_slot *s) {
    if (s->state != OB_SLOT_INFLIGHT)
        return 0;
    b->outstanding--;
    return 1;
}

void ob_batch_set_binary(ob_batch *b, int binary) {
    for (int i = 0; i < b->n; i++)
        b->slots[i].row.payload_binary = binary;
}

void ob_batch_sent(ob_batch *b, int i, uint64_t now) {
    ob_slot *s = &b->slots[i];
    s->state = OB_SLOT_INFLIGHT;
    s->sent_at = now;
    b->outstanding++;
}

int ob_batch_fail(ob_batch *b, int i, outbox_failure_kind kind, int code, int err_code,
                  const char *msg, size_t len) {
    ob_slot *s = &b->slots[i];
    int was = leave_flight(b, s);
    s->state = OB_SLOT_FAILED;
    b->rescan = 1;
    s->kind = (uint8_t)kind;
    s->code = code;
    s->err_code = err_code;
    if (len > OB_LAST_ERROR_MAX * 4)
        len = OB_LAST_ERROR_MAX * 4;
    s->err_off = (uint32_t)b->errs.len;
    s->err_len = (uint32_t)len;
    ob_buf_append(&b->errs, msg, len);
    return was;
}

int ob_batch_defer(ob_batch *b, int i, uint64_t ms, const char *msg, size_t len) {
    int was = ob_batch_fail(b, i, OUTBOX_FAIL_STREAM_ERROR, 0, 0, msg, len);
    ob_slot *s = &b->slots[i];
    s->state = OB_SLOT_DEFERRED;
    /* In steps of a quarter second, so that a batch's rows share few
     * statements. */
    ms = (ms + 249) / 250 * 250;
    s->defer_ms = ms > OB_PAUSE_LONGEST_MS ? OB_PAUSE_LONGEST_MS : (uint32_t)ms;
    return was;
}

int ob_batch_release(ob_batch *b, int i) {
    ob_slot *s = &b->slots[i];
    int was = leave_flight(b, s);
    s->state = OB_SLOT_RELEASED;
    b->rescan = 1;
    return was;
}

int ob_batch_acked(ob_batch *b, int i, int dup) {
    ob_slot *s = &b->slots[i];
    int was = leave_flight(b, s);
    s->state = OB_SLOT_ACKED;
    b->n_dup += dup != 0;
    /* The next row of its aggregate may leave now. The stack holds each
     * slot once between rebuilds, so it cannot fill; were it full, the next
     * call would look at the whole batch rather than lose the row. */
    if (b->order == OB_ORDER_AGGREGATE && s->next >= 0) {
        if (b->nready < b->cap)
            b->ready[b->nready++] = s->next;
        else
            b->rescan = 1;
    }
    return was;
}

int ob_batch_release_open(ob_batch *b) {
    int was = 0;
    for (int i = 0; i < b->n; i++) {
        uint8_t st = b->slots[i].state;
        if (st == OB_SLOT_INFLIGHT || st == OB_SLOT_UNSENT)
            was += ob_batch_release(b, i);
    }
    b->next_pub = b->n;
    return was;
}

int ob_batch_expire(ob_batch *b, uint64_t before, int release, const char *msg, size_t len) {
    int was = 0;
    for (int i = 0; i < b->n; i++) {
        ob_slot *s = &b->slots[i];
        if (s->state != OB_SLOT_INFLIGHT || s->sent_at > before)
            continue;
        was += release ? ob_batch_release(b, i)
                       : ob_batch_fail(b, i, OUTBOX_FAIL_ACK_TIMEOUT, 0, 0, msg, len);
    }
    return was;
}

/* A failure that may be the broker's: no responders, no ack, a server error. */
static int suspect_failure(const ob_slot *s) {
    return s->state == OB_SLOT_FAILED &&
           (s->kind == OUTBOX_FAIL_NO_RESPONDERS || s->kind == OUTBOX_FAIL_ACK_TIMEOUT ||
            (s->kind == OUTBOX_FAIL_STREAM_ERROR && s->code >= 500));
}

int ob_batch_suspect(const ob_batch *b) {
    for (int i = 0; i < b->n; i++)
        if (suspect_failure(&b->slots[i]))
            return 1;
    return 0;
}

int ob_batch_complete(const ob_batch *b) {
    if (b->outstanding != 0)
        return 0;
    for (int i = b->next_pub; i < b->n; i++)
        if (b->slots[i].state == OB_SLOT_UNSENT)
            return 0;
    return 1;
}

uint64_t ob_batch_oldest_inflight(const ob_batch *b) {
    uint64_t oldest = UINT64_MAX;
    for (int i = 0; i < b->n; i++)
        if (b->slots[i].state == OB_SLOT_INFLIGHT && b->slots[i].sent_at < oldest)
            oldest = b->slots[i].sent_at;
    return oldest;
}

static outbox_verdict classify(ob_batch *b, const ob_batch_config *cfg, ob_slot *s) {
    outbox_id id;
    memcpy(id.b, s->row.id, 16);
    char msg[OB_LAST_ERROR_MAX + 1];
    size_t n = s->err_len > OB_LAST_ERROR_MAX ? OB_LAST_ERROR_MAX : s->err_len;
    memcpy(msg, b->errs.p + s->err_off, n);
    msg[n] = '\0';
    outbox_failure f = {(outbox_failure_kind)s->kind, s->code, s->err_code, msg, &id,
                        s->row.attempts + 1};
    return cfg->classify(&f, cfg->classify_data);
}

/* Appends one statement for every failed slot sharing this one's error text
 * and verdict, marking them written. */
static void add_fail_group(ob_batch *b, const ob_batch_config *cfg, int first) {
    ob_slot *a = &b->slots[first];
    const char *text = b->errs.p + a->err_off;
    ob_sql_fail_head(&b->sql, cfg->qtable, text, a->err_len, a->dead, cfg->max_attempts,
                     &cfg->backoff);
    int n = 0;
    for (int i = first; i < b->n; i++) {
        ob_slot *s = &b->slots[i];
        if (s->state != OB_SLOT_FAILED || s->dead != a->dead || s->err_len != a->err_len ||
            memcmp(b->errs.p + s->err_off, text, a->err_len) != 0)
            continue;
        ob_sql_add_id(&b->sql, s->row.id, n++ == 0);
        /* Counted as dead when this attempt reaches max_attempts. */
        if (s->dead || s->row.attempts + 1 >= cfg->max_attempts)
            b->n_dead++;
        else
            b->n_retry++;
        s->state = OB_SLOT_WRITTEN;
    }
    ob_sql_end_ids(&b->sql);
}

/* Appends one statement for every deferred slot sharing this one's wait and
 * text (the refusal), marking them written. */
static void add_defer_group(ob_batch *b, const ob_batch_config *cfg, int first) {
    ob_slot *a = &b->slots[first];
    const char *text = b->errs.p + a->err_off;
    ob_sql_defer_head(&b->sql, cfg->qtable, text, a->err_len, a->defer_ms, 0);
    int n = 0;
    for (int i = first; i < b->n; i++) {
        ob_slot *s = &b->slots[i];
        if (s->state != OB_SLOT_DEFERRED || s->deferred_in || s->defer_ms != a->defer_ms ||
            s->err_len != a->err_len || memcmp(b->errs.p + s->err_off, text, a->err_len) != 0)
            continue;
        ob_sql_add_id(&b->sql, s->row.id, n++ == 0);
        b->n_deferred++;
        s->deferred_in = 1;
    }
    ob_sql_end_ids(&b->sql);
}

void ob_batch_decide(ob_batch *b, const ob_batch_config *cfg, int interrupted) {
    for (int i = 0; i < b->n; i++) {
        ob_slot *s = &b->slots[i];
        if (s->state != OB_SLOT_FAILED)
            continue;
        s->dead = classify(b, cfg, s) == OUTBOX_DEAD;
        /* The broker has not said yet whether it was down: a failure that
         * may be its fault does not end the row. It goes back untouched and
         * is tried again once the check has answered; charged then. */
        if ((interrupted & OB_DECIDE_UNSETTLED) && suspect_failure(s) &&
            (s->dead || s->row.attempts + 1 >= cfg->max_attempts)) {
            s->dead = 0;
            s->state = OB_SLOT_RELEASED;
            continue;
        }
        /* An outage burns no attempts: retryable failures during one go
         * back untouched. */
        if (!s->dead &&
            ((interrupted & OB_DECIDE_INTERRUPTED) || s->kind == OUTBOX_FAIL_DISCONNECTED))
            s->state = OB_SLOT_RELEASED;
    }
}

size_t ob_batch_finish_sql(ob_batch *b, const ob_batch_config *cfg, int interrupted) {
    ob_batch_decide(b, cfg, interrupted);
    ob_buf_reset(&b->sql);
    b->n_acked = b->n_released = b->n_retry = b->n_dead = b->n_held = b->n_deferred = 0;
    for (int i = 0; i < b->n; i++) {
        ob_slot *s = &b->slots[i];
        if (s->state == OB_SLOT_ACKED) {
            if (b->n_acked == 0)
                ob_sql_processed_head(&b->sql, cfg->qtable, cfg->processing);
            ob_sql_add_id(&b->sql, s->row.id, b->n_acked == 0);
            b->n_acked++;
        } else if (s->state == OB_SLOT_RELEASED) {
            b->n_released++;
        } else if (s->state == OB_SLOT_HELD) {
            b->n_held++;
        }
    }
    if (b->n_acked)
        ob_sql_end_ids(&b->sql);
    for (int i = 0; i < b->n; i++)
        if (b->slots[i].state == OB_SLOT_FAILED)
            add_fail_group(b, cfg, i);
    for (int i = 0; i < b->n; i++)
        b->slots[i].deferred_in = 0;
    for (int i = 0; i < b->n; i++)
        if (b->slots[i].state == OB_SLOT_DEFERRED && !b->slots[i].deferred_in)
            add_defer_group(b, cfg, i);
    if (b->sql.oom) {
        ob_buf_reset(&b->sql);
        b->sql.oom = 0;
        b->n_acked = b->n_retry = b->n_dead = b->n_deferred = 0;
        b->n_released = b->n;
        return 0;
    }
    if (b->sql.len == 0)
        return 0;
    ob_buf_puts(&b->sql, "COMMIT");
    return b->sql.len;
}

int ob_batch_take_released(ob_batch *b) {
    int n = b->n_released;
    b->n_released = 0;
    return n;
}

int ob_batch_unacked(const ob_batch *b) {
    int n = 0;
    for (int i = 0; i < b->n; i++)
        n += b->slots[i].state != OB_SLOT_ACKED;
    return n;
}

int ob_batch_next_written(const ob_batch *b, int from) {
    for (int i = from < 0 ? 0 : from; i < b->n; i++)
        if (b->slots[i].state == OB_SLOT_ACKED || b->slots[i].state == OB_SLOT_WRITTEN)
            return i;
    return -1;
}

size_t ob_batch_row_sql(ob_batch *b, const ob_batch_config *cfg, int i) {
    ob_slot *s = &b->slots[i];
    ob_buf_reset(&b->sql);
    if (s->state == OB_SLOT_ACKED)
        ob_sql_processed_head(&b->sql, cfg->qtable, cfg->processing);
    else
        ob_sql_fail_head(&b->sql, cfg->qtable, b->errs.p + s->err_off, s->err_len, s->dead,
                         cfg->max_attempts, &cfg->backoff);
    ob_sql_add_id(&b->sql, s->row.id, 1);
    ob_sql_end_ids(&b->sql);
    return b->sql.oom ? 0 : b->sql.len - 1; /* one statement: without its ';' */
}

size_t ob_batch_refused_sql(ob_batch *b, const ob_batch_config *cfg, int i, const char *why,
                            size_t why_len) {
    ob_slot *s = &b->slots[i];
    if (s->state == OB_SLOT_ACKED)
        b->n_acked--;
    else if (s->dead || s->row.attempts + 1 >= cfg->max_attempts)
        b->n_dead--;
    else
        b->n_retry--;
    b->n_dead++;
    s->state = OB_SLOT_FAILED;
    ob_buf_reset(&b->sql);
    /* The refusal came from a check the row fails (its payload, say): the
     * statement that records it must not run that check again. */
    ob_buf_puts(&b->sql, "SET STATEMENT check_constraint_checks = 0 FOR ");
    ob_sql_fail_head(&b->sql, cfg->qtable, why, why_len, 1, cfg->max_attempts, &cfg->backoff);
    ob_sql_add_id(&b->sql, s->row.id, 1);
    ob_sql_end_ids(&b->sql);
    return b->sql.oom ? 0 : b->sql.len - 1;
}

static int digits(const char *s, int n) {
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

/* Days since 1970-01-01 of a civil date (proleptic Gregorian). */
static int64_t days_from_civil(int64_t y, int m, int d) {
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

double ob_row_created_s(const ob_row *row) {
    const char *t = row->created_at;
    if (t == NULL || row->created_at_len < 19)
        return 0;
    int y = digits(t, 4), mo = digits(t + 5, 2), d = digits(t + 8, 2);
    int h = digits(t + 11, 2), mi = digits(t + 14, 2), se = digits(t + 17, 2);
    if (y < 0 || mo < 1 || mo > 12 || d < 1 || h < 0 || mi < 0 || se < 0)
        return 0;
    double frac = 0, scale = 0.1;
    for (size_t i = 20; i < row->created_at_len && i < 26; i++, scale /= 10)
        frac += (t[i] - '0') * scale;
    return (double)(days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se) + frac;
}

double ob_wall_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}
