/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The cursor reader's reads (cursor_int.h): the owned buckets' cursors and
 * a bucket's initialisation, the rows above the cursors with the gap check,
 * and the retry lane's status-2 rows. Each builds its statement into c->sql
 * or takes its result; cursor.c sends and changes the state.
 */
#include <stdlib.h>
#include <string.h>

#include "cursor_int.h"
#include "cursor_sql.h"
#include "lease.h"

/* On a Galera cluster, the other members' side of the gap proof: from the
 * next load on, a gap or a bucket's mark holds only once they proved it. */
void ob_cursor_members(ob_cursor *c, ob_gap_proof *p, const struct ob_lease *lease) {
    c->cfg.proof = p;
    c->cfg.lease = lease;
}

/* The owned buckets' cursors and held aggregates, under the fencing lock
 * when the lease has a session. */
void ob_cursor_load_sql(ob_cursor *c) {
    ob_buf_reset(&c->sql);
    /* On Galera, every read of the session waits for the write-sets
     * committed before it (set again after each reconnection: a load
     * always comes first). */
    if (c->cfg.proof)
        ob_buf_puts(&c->sql, "SET SESSION wsrep_sync_wait = 1; ");
    unsigned long session = c->own.lease_session(c->own.data);
    const char *lock = NULL;
    if (session) {
        ob_lease_worker_lock(c->lock, c->cfg.lock_base, session, (int)c->cfg.index);
        lock = c->lock;
    }
    ob_cursor_sql_load(&c->sql, c->cfg.qtable, c->cfg.ctable, c->cfg.table, c->owned, lock);
}

/* The cursors loaded. Returns 1 when buckets have no cursor row yet: the
 * statement that marks them is in c->sql; else reads go on from the
 * lowest cursor. */
int ob_cursor_take_load(ob_cursor *c) {
    int first = 0;
    while (ob_db_result(c->db, first) == NULL && first < 2)
        first++; /* the SET and the fencing lock's DO have no result set */
    uint64_t found = 0;
    char **row;
    while ((row = ob_db_next_row(c->db, first, NULL)) != NULL) {
        int k = row[0] ? atoi(row[0]) : -1;
        if (k < 0 || k >= OB_BUCKETS || row[1] == NULL)
            continue;
        c->floor[k] = strtoull(row[1], NULL, 10);
        found |= 1ULL << k;
    }
    ob_held_clear(&c->held);
    unsigned long *len;
    while ((row = ob_db_next_row(c->db, first + 1, &len)) != NULL)
        if (row[0] && row[1])
            ob_held_add(&c->held, row[0], len[0], row[1], len[1]);
    uint64_t missing = c->owned & ~found;
    if (missing) {
        c->init = missing;
        ob_buf_reset(&c->sql);
        ob_cursor_sql_mark(&c->sql, c->cfg.qtable);
        return 1;
    }
    c->active = c->owned;
    c->given_up = 0;
    c->resync = RESYNC_NONE;
    uint64_t top = UINT64_MAX;
    for (int k = 0; k < OB_BUCKETS; k++)
        if (c->active >> k & 1)
            top = min_u64(top, c->floor[k]);
    if (top == UINT64_MAX)
        top = 0;
    ob_gaps_init(&c->gaps, top);
    ob_gaps_members(&c->gaps, c->cfg.proof != NULL);
    ob_gaps_proven(&c->gaps, c->init_proven); /* seqs its check proved: resolved on sight */
    c->init_proven = 0;
    c->written = top;
    c->read_at = c->lane_at = 0;
    c->lane_clean = 0;
    ob_cursor_lane_restart(c);
    c->last_read = READ_NONE;
    if (c->active)
        OB_INFO(c->env.log, "cursor: reading %d bucket(s) from seq %llu (%zu aggregate(s) held)",
                ob_bucket_count(c->active), (unsigned long long)top, c->held.n);
    return 0;
}

/* The mark of a bucket's initialisation: its MAX(seq). */
void ob_cursor_take_mark(ob_cursor *c) {
    char **row = ob_db_next_row(c->db, 0, NULL);
    /* NOW(6) is the statement's start, and a transaction may take a seq
     * below the MAX between the two: the bound is the next statement's. */
    c->init_t1 = 0;
    c->init_max = row && row[1] ? strtoull(row[1], NULL, 10) : 0;
    /* On Galera the mark holds once the members proved the round begun now. */
    c->init_round = c->cfg.proof ? ob_gap_proof_round(c->cfg.proof, 1) : 0;
}

/* Every seq <= init_max is resolved once no transaction that started at or
 * before the mark is alive (see gaps.h): the cursor rows can be made.
 * Returns 1 when proven (their INSERT is in c->sql), 0 not yet. */
int ob_cursor_take_check(ob_cursor *c) {
    char **row = ob_db_next_row(c->db, 0, NULL);
    double tc = row && row[0] ? strtod(row[0], NULL) : 0;
    double oldest = row && row[1] ? strtod(row[1], NULL) : -1;
    ob_cursor_process_back(c);
    if (c->init_t1 == 0)
        c->init_t1 = tc;
    if (!ob_gaps_proves(c->init_t1, tc, oldest))
        return 0;
    if (c->cfg.proof && ob_gap_proof_proven(c->cfg.proof) < c->init_round)
        return 0; /* the members are asked again until they prove it */
    ob_buf_reset(&c->sql);
    ob_cursor_sql_init(&c->sql, c->cfg.qtable, c->cfg.ctable, c->cfg.table, c->init, c->init_max,
                       c->bucket_index);
    return 1;
}

/* The cursor rows made: reads go on from them, the seqs below them proven. */
void ob_cursor_take_init(ob_cursor *c) {
    OB_INFO(c->env.log, "cursor: %d bucket(s) without a cursor start at or below seq %llu",
            ob_bucket_count(c->init), (unsigned long long)c->init_max);
    c->init = 0;
    c->init_proven = c->init_max;
}

/* Row cursors over a read's result for ob_batch_load: they feed the gap
 * tracker every seq and hand over the rows to publish. */
typedef struct read_cur {
    ob_cursor *c;
    extras *x;
    int lane;
    int n;         /* rows handed over */
    int seen;      /* rows of the result */
    int fresh;     /* new rows (above top or in a gap) */
    int soon;      /* lane: rows due within the horizon */
    int past;      /* lane: 1 when a row, read or not, is due within the horizon; -1 unknown */
    uint64_t last; /* the last seq seen */
} read_cur;

static char **read_next(void *p, unsigned long **lengths) {
    read_cur *rc = p;
    ob_cursor *c = rc->c;
    char **row;
    unsigned long *len;
    while ((row = ob_db_next_row(c->db, rc->lane ? 0 : 1, &len)) != NULL) {
        rc->seen++;
        if (row[OB_CCOL_SEQ] == NULL || row[OB_CCOL_BUCKET] == NULL)
            continue;
        uint64_t seq = strtoull(row[OB_CCOL_SEQ], NULL, 10);
        int k = atoi(row[OB_CCOL_BUCKET]);
        rc->last = seq;
        if (rc->lane) {
            rc->soon += row[OB_CCOL_STATUS] == NULL || strcmp(row[OB_CCOL_STATUS], "1") != 0;
            /* rows past the LIMIT due within the horizon (NULL: not asked) */
            rc->past = row[OB_CCOL_SOON] == NULL ? -1 : strcmp(row[OB_CCOL_SOON], "0") != 0;
        } else {
            if (!ob_gaps_take(&c->gaps, seq))
                continue;
            rc->fresh++;
            if (k >= 0 && k < OB_BUCKETS && (c->handoff >> k & 1))
                c->handoff_seq = min_u64(c->handoff_seq, seq - 1); /* not published */
            if (k < 0 || k >= OB_BUCKETS || !(ob_cursor_live(c) >> k & 1) || seq <= c->floor[k] ||
                row[OB_CCOL_STATUS] == NULL || strcmp(row[OB_CCOL_STATUS], "0") != 0)
                continue;
        }
        if (row[OB_COL_ID] == NULL || len[OB_COL_ID] != 16 || k < 0 || k >= OB_BUCKETS)
            continue;
        rc->x->seq[rc->n] = seq;
        rc->x->bucket[rc->n] = (uint8_t)k;
        rc->n++;
        *lengths = len;
        return row;
    }
    return NULL;
}

/* The next read: the clock, the gap check when one is due, and the rows. */
void ob_cursor_read_sql(ob_cursor *c) {
    uint64_t now = uv_now(c->env.loop);
    int check = ob_gaps_checkable(&c->gaps) && now >= c->check_at &&
                (!c->no_process || now >= c->process_at);
    if (check)
        c->check_at = now + CHECK_EVERY_MS;
    c->check_sent = check;
    ob_buf_reset(&c->sql);
    ob_cursor_sql_read(&c->sql, c->cfg.qtable, &c->gaps, c->active, c->env.batch_size, check,
                       c->stop != 0);
}

/* A read's result: the gaps, the next batch, and when to read again.
 * Returns 1 when rows make the next batch. */
int ob_cursor_take_rows(ob_cursor *c) {
    uint64_t now = uv_now(c->env.loop);
    char **row = ob_db_next_row(c->db, 0, NULL);
    if (row && row[0])
        ob_gaps_stamp(&c->gaps, strtod(row[0], NULL));
    /* With a check, the second column is the oldest other transaction's
     * start, NULL when there is none. */
    if (row && row[0] && c->check_sent)
        ob_gaps_check(&c->gaps, strtod(row[0], NULL), row[1] ? strtod(row[1], NULL) : -1);
    if (c->check_sent)
        ob_cursor_process_back(c);
    /* The third, when asked for, is MAX(seq): a mark for the next check. */
    if (row && row[0] && row[2])
        ob_gaps_mark(&c->gaps, strtoull(row[2], NULL, 10));
    read_cur rc = {c, &c->next_x, 0, 0, 0, 0, 0, 0, 0};
    int n = ob_batch_load(&c->next, read_next, &rc, c->env.broker.ops->epoch(c->env.broker.self));
    ob_batch_set_binary(&c->next, ob_db_col_binary(c->db, 1, OB_COL_PAYLOAD));
    c->next.gen = ++c->gen;
    ob_gaps_read_end(&c->gaps, rc.seen >= c->env.batch_size ? rc.last : UINT64_MAX);
    if (c->cfg.proof) { /* on Galera: the members' round that bounds this read's gaps */
        uint64_t r = ob_gap_proof_round(c->cfg.proof, ob_gaps_unbound(&c->gaps));
        ob_gaps_round(&c->gaps, r, ob_gap_proof_proven(c->cfg.proof));
    }
    c->env.stats->cursor_gap_age_s = ob_gaps_age(&c->gaps);
    int cut = rc.seen >= c->env.batch_size, ready = 0;
    c->last_read = cut ? READ_CUT : rc.fresh > 0 ? READ_FRESH : READ_QUIET;
    if (c->gaps.oom || (n > 0 && ob_cursor_keep_rows(&c->next, &c->next_x) != 0)) {
        OB_WARN(c->env.log, "cursor: out of memory for a batch; reading again from the cursors");
        c->gaps.oom = 0;
        c->next.n = 0;
        ob_cursor_resync(c, RESYNC_NO_MEMORY);
    } else if (n > 0) {
        ready = 1;
        c->env.stats->fetched += (uint64_t)n;
    }
    if (cut)
        c->read_at = now;
    else if (rc.fresh > 0 || now < c->hot_until)
        c->read_at = now + c->cfg.poll_min_ms;
    else
        c->read_at = now + c->env.poll_interval_ms;
    if (rc.fresh > 0)
        c->hot_until = now + HOT_MS;
    if (c->gaps.n > 0)
        c->read_at = min_u64(c->read_at, now + GAP_POLL_MS);
    return ready;
}

/* Status-2 rows were written: the lane looks again at its busy pace. */
void ob_cursor_lane_dirty(ob_cursor *c) {
    c->lane_clean = 0;
    c->lane_at = min_u64(c->lane_at, uv_now(c->env.loop) + LANE_EVERY_MS);
}

/* The lane's pass starts again from the lowest seq. */
void ob_cursor_lane_restart(ob_cursor *c) {
    c->lane_from = 0;
    c->lane_lost = 0;
    ob_held_clear(&c->lane_carry);
}

/* A row written status 2 below the page of a pass under way (a lane row
 * failing again, a row that committed late) is not seen again by this
 * pass: a later page's row of its aggregate must not pass it. One above
 * the page is seen in turn; carrying its aggregate would hold a busy
 * aggregate's due rows pass after pass. */
void ob_cursor_lane_hold(ob_cursor *c, const ob_row *r, uint64_t seq) {
    if (c->lane_from && seq <= c->lane_from &&
        ob_held_add(&c->lane_carry, r->aggregate_type, r->aggregate_type_len, r->aggregate_id,
                    r->aggregate_id_len) != 0)
        c->lane_lost = 1;
}

/* The retry lane's read: the next page of the owned buckets' status-2 rows.
 * A lane longer than a batch is read in pages, each above the last seq of
 * the previous one, so that rows due past a full page of rows due later
 * are reached; a short page ends the pass, and the next read starts again
 * from the lowest seq. A lane that fits one page is read whole each time,
 * as one statement. */
void ob_cursor_lane_sql(ob_cursor *c) {
    c->lane_at = uv_now(c->env.loop) + LANE_EVERY_MS;
    uint64_t mask = c->active & c->owned;
    /* Buckets changed mid-pass (their rows below the page were not seen
     * by this pass), or the carry missed an aggregate: from the start. */
    if (c->lane_from && (mask != c->lane_mask || c->lane_lost))
        ob_cursor_lane_restart(c);
    c->lane_mask = mask;
    ob_buf_reset(&c->sql);
    /* Whether a row past the LIMIT is due matters to the drain only: asked
     * while one is wanted (it may scan every status-2 row of the buckets). */
    ob_cursor_sql_lane(&c->sql, c->cfg.qtable, mask, c->lane_from, c->env.batch_size,
                       c->cfg.horizon_ms, c->own.drain_wanted(c->own.data));
}

/* A page of the lane's pass, loaded in b. On a page past the pass's start,
 * the rows of aggregates carried from the pages before stay status 2 (the
 * next pass delivers them in turn), and so, in the batch, do the rows
 * behind them. A full page: the pass goes on above `last`, carrying the
 * aggregates of its rows that wait. The last page: the pass is whole, and
 * the held set becomes the aggregates it left waiting, carried or on this
 * page. */
static void lane_page(ob_cursor *c, ob_batch *b, int whole, uint64_t last) {
    if (c->lane_from && c->lane_carry.n > 0) {
        for (int i = 0; i < b->n; i++) {
            ob_slot *s = &b->slots[i];
            if (s->state == OB_SLOT_UNSENT &&
                ob_held_has(&c->lane_carry, s->row.aggregate_type, s->row.aggregate_type_len,
                            s->row.aggregate_id, s->row.aggregate_id_len))
                s->state = OB_SLOT_HELD;
        }
        ob_batch_touched(b);
    }
    if (!whole) {
        for (int i = 0; i < b->n; i++)
            if (b->slots[i].state == OB_SLOT_HELD &&
                ob_held_add(&c->lane_carry, b->slots[i].row.aggregate_type,
                            b->slots[i].row.aggregate_type_len, b->slots[i].row.aggregate_id,
                            b->slots[i].row.aggregate_id_len) != 0)
                c->lane_lost = 1;
        c->lane_from = last;
        return;
    }
    if (!c->lane_lost) {
        ob_held t = c->held; /* the old set is cleared as the next carry */
        c->held = c->lane_carry;
        c->lane_carry = t;
        for (int i = 0; i < b->n; i++)
            ob_held_add(&c->held, b->slots[i].row.aggregate_type,
                        b->slots[i].row.aggregate_type_len, b->slots[i].row.aggregate_id,
                        b->slots[i].row.aggregate_id_len);
    }
    ob_cursor_lane_restart(c);
}

/* The lane's rows. Returns 1 when they make the batch being published, 0
 * when none is due. */
int ob_cursor_take_lane(ob_cursor *c) {
    read_cur rc = {c, &c->cur_x, 1, 0, 0, 0, 0, -1, 0};
    ob_batch *b = &c->pub.batch;
    int n = ob_batch_load(b, read_next, &rc, c->env.broker.ops->epoch(c->env.broker.self));
    ob_batch_set_binary(b, ob_db_col_binary(c->db, 0, OB_COL_PAYLOAD));
    b->gen = ++c->gen;
    int whole = rc.seen < c->env.batch_size, first = c->lane_from == 0;
    lane_page(c, b, whole, rc.last);
    /* A full page of rows due later, or a page past the pass's start, says
     * nothing of the other rows: clean only when the statement said none is
     * due, or when this read saw them all. */
    c->lane_clean = rc.soon == 0 && (rc.past == 0 || (whole && first));
    if (c->lane_clean && c->held.n == 0)
        c->lane_at = uv_now(c->env.loop) + LANE_IDLE_MS;
    int due = 0;
    for (int i = 0; i < n; i++)
        due += b->slots[i].state == OB_SLOT_UNSENT;
    if (due == 0 || ob_cursor_keep_rows(b, &c->cur_x) != 0) {
        b->n = 0;
        return 0;
    }
    c->dropped = 0;
    return 1;
}

int ob_cursor_drained(const ob_cursor *c) {
    return c->owned && c->active == c->owned && !c->resync && !c->init && c->cur_phase == B_EMPTY &&
           c->next_phase == B_EMPTY && c->last_read == READ_QUIET && c->gaps.n == 0 &&
           c->written >= c->gaps.top && c->lane_clean;
}

/* --- the duties of the reads (cursor_int.h) ------------------------------ */

static const char *const resync_names[] = {
    [RESYNC_NONE] = "the owned buckets differ from those loaded",
    [RESYNC_PROBED] = "the start-up probe passed",
    [RESYNC_LOST] = "the connection was lost",
    [RESYNC_FAILED] = "a statement of the load failed",
    [RESYNC_OWNED] = "the lease's buckets changed",
    [RESYNC_MISFIT] = "the table and its cursors are at odds",
    [RESYNC_FITS] = "the table and its cursors agree again",
    [RESYNC_REFUSED] = "the server refused a write",
    [RESYNC_NO_MEMORY] = "out of memory for a read",
};

int ob_cursor_load_due(const ob_cursor *c, const cursor_pass *p) {
    (void)p;
    return (c->resync || c->owned != c->active) && c->cur_phase == B_EMPTY && !c->handoff;
}

duty_out ob_cursor_load_run(ob_cursor *c, cursor_pass *p) {
    OB_DEBUG(c->env.log, "cursor: loading the cursors: %s", resync_names[c->resync]);
    ob_cursor_load_sql(c);
    p->drop = 1;
    p->send = CR_LOADING;
    return DUTY_SEND;
}

int ob_cursor_unowned_due(const ob_cursor *c, const cursor_pass *p) {
    (void)p;
    return !c->active;
}

duty_out ob_cursor_unowned_run(ob_cursor *c, cursor_pass *p) {
    c->read_at = p->now + c->env.poll_interval_ms;
    return DUTY_IDLE;
}

int ob_cursor_lane_due(const ob_cursor *c, const cursor_pass *p) {
    return c->cur_phase == B_EMPTY && (c->active & c->owned) && p->now >= c->lane_at;
}

duty_out ob_cursor_lane_run(ob_cursor *c, cursor_pass *p) {
    ob_cursor_lane_sql(c);
    p->send = CR_LANE_READING;
    return DUTY_SEND;
}

int ob_cursor_read_due(const ob_cursor *c, const cursor_pass *p) {
    return c->next_phase == B_EMPTY && p->now >= c->read_at;
}

duty_out ob_cursor_read_run(ob_cursor *c, cursor_pass *p) {
    ob_cursor_read_sql(c);
    p->send = CR_READING;
    return DUTY_SEND;
}

int ob_cursor_drained_due(const ob_cursor *c, const cursor_pass *p) {
    (void)p;
    return ob_cursor_drained(c) && c->own.drain_wanted(c->own.data);
}

/* The owner told; it may have stopped the reader meanwhile. */
duty_out ob_cursor_drained_run(ob_cursor *c, cursor_pass *p) {
    (void)p;
    c->own.drained(c->own.data);
    return c->state != CR_IDLE ? DUTY_DONE : DUTY_NEXT;
}
