/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Finishing a cursor reader's batch (cursor_int.h): the statement that
 * writes what its rows need (failed rows, rows held behind them, a lane
 * batch's acked rows) and moves the cursors in the same round trip; the
 * tallies once it is written; and the cursor moves on their own (the
 * buckets given up, the regular advance).
 */
#include "cursor_int.h"
#include "cursor_sql.h"
#include "gap_members.h"
#include "lease.h"

/* Row i of the batch was written status 2. */
static void hold_aggregate(ob_cursor *c, int i) {
    const ob_row *r = &c->pub.batch.slots[i].row;
    if (ob_held_add(&c->held, r->aggregate_type, r->aggregate_type_len, r->aggregate_id,
                    r->aggregate_id_len) != 0)
        OB_WARN(c->env.log, "cursor: out of memory for a held aggregate");
    ob_cursor_lane_hold(c, r, c->cur_x.seq[i]);
}

/* 1 when the finished batch has rows to write in buckets this reader owns:
 * failed rows, rows held behind them, a lane batch's acked rows. */
static int owned_writes(const ob_cursor *c) {
    const ob_batch *b = &c->pub.batch;
    for (int i = 0; i < b->n; i++) {
        int st = b->slots[i].state;
        if ((st == OB_SLOT_FAILED || st == OB_SLOT_HELD || st == OB_SLOT_DEFERRED ||
             (c->cur_from == FROM_LANE && st == OB_SLOT_ACKED)) &&
            ob_cursor_owns(c, i))
            return 1;
    }
    return 0;
}

/* The acked rows are counted; a lane batch's are written status 1. */
static void write_acked(ob_cursor *c) {
    ob_batch *b = &c->pub.batch;
    int nacked = 0;
    for (int i = 0; i < b->n; i++) {
        ob_slot *s = &b->slots[i];
        if (s->state == OB_SLOT_ACKED) {
            c->fin_acked++;
            if (c->cur_from == FROM_LANE) {
                if (nacked == 0)
                    ob_sql_processed_head(&c->sql, c->cfg.qtable, c->env.batch.processing);
                ob_sql_add_id(&c->sql, s->row.id, nacked++ == 0);
            }
        }
    }
    if (nacked)
        ob_sql_end_ids(&c->sql);
}

/* Each failed row counts an attempt: status 2, or -1 dead at the last. */
static void write_failed(ob_cursor *c) {
    ob_batch *b = &c->pub.batch;
    const ob_reader_env *e = &c->env;
    for (int i = 0; i < b->n; i++) {
        ob_slot *s = &b->slots[i];
        if (s->state != OB_SLOT_FAILED || !ob_cursor_owns(c, i))
            continue; /* a bucket given up: its new owner decides */
        ob_cursor_sql_fail_head(&c->sql, c->cfg.qtable, b->errs.p + s->err_off, s->err_len, s->dead,
                                e->batch.max_attempts, &e->batch.backoff);
        ob_sql_add_id(&c->sql, s->row.id, 1);
        ob_sql_end_ids(&c->sql);
        if (s->dead || s->row.attempts + 1 >= e->batch.max_attempts) {
            c->fin_dead++;
        } else {
            c->fin_retry++;
            hold_aggregate(c, i);
            ob_cursor_lane_dirty(c);
        }
    }
}

/* Rows whose subject is paused wait in the retry lane (status 2), without
 * an attempt, holding their aggregate. */
static void write_deferred(ob_cursor *c) {
    ob_batch *b = &c->pub.batch;
    for (int i = 0; i < b->n; i++) {
        ob_slot *s = &b->slots[i];
        if (s->state != OB_SLOT_DEFERRED || !ob_cursor_owns(c, i))
            continue;
        ob_sql_defer_head(&c->sql, c->cfg.qtable, b->errs.p + s->err_off, s->err_len, s->defer_ms,
                          2);
        ob_sql_add_id(&c->sql, s->row.id, 1);
        ob_sql_end_ids(&c->sql);
        c->env.stats->deferred++;
        hold_aggregate(c, i);
        ob_cursor_lane_dirty(c);
    }
}

/* Rows held behind a failure are written status 2. */
static void write_held(ob_cursor *c) {
    ob_batch *b = &c->pub.batch;
    int nheld = 0;
    for (int i = 0; i < b->n && c->cur_from == FROM_READ; i++) {
        ob_slot *s = &b->slots[i];
        if (s->state != OB_SLOT_HELD || !ob_cursor_owns(c, i))
            continue;
        if (nheld == 0)
            ob_cursor_sql_hold_head(&c->sql, c->cfg.qtable);
        ob_sql_add_id(&c->sql, s->row.id, nheld++ == 0);
        hold_aggregate(c, i);
        ob_cursor_lane_dirty(c);
    }
    if (nheld)
        ob_sql_end_ids(&c->sql);
    c->fin_held = nheld;
}

/* The cursors of `mask` below `seq` move to it. On Galera the statement is
 * fenced by the relay's presence row in the lease table: it moves nothing
 * once another instance removed that row (gap_members.h). */
static void advance(ob_cursor *c, uint64_t mask, uint64_t seq) {
    const char *lt, *key;
    uint64_t me;
    if (c->cfg.proof && ob_lease_presence(c->cfg.lease, &lt, &key, &me))
        ob_members_sql_advance(&c->sql, c->cfg.ctable, c->cfg.table, lt, key, me, mask, seq);
    else
        ob_cursor_sql_advance(&c->sql, c->cfg.ctable, c->cfg.table, mask, seq);
    if (!c->stamped) {
        /* The table has no stamp yet: this move makes one (cursor_fit.h). */
        ob_cursor_fit_names t = ob_cursor_names(c);
        ob_buf_puts(&c->sql, "; ");
        ob_cursor_stamp_sql(&c->sql, &t, seq);
    }
}

ob_fin ob_cursor_finish_sql(ob_cursor *c) {
    ob_batch *b = &c->pub.batch;
    const ob_reader_env *e = &c->env;
    /* A suspect failure at its last attempt waits for the broker's check,
     * as the workers' do: no row ends for what may be the broker's fault. */
    int how = (e->broker.ops->epoch(e->broker.self) != b->epoch ? OB_DECIDE_INTERRUPTED : 0) |
              (e->broker.ops->settled(e->broker.self) ? 0 : OB_DECIDE_UNSETTLED);
    if (how & OB_DECIDE_INTERRUPTED)
        ob_pub_outage(&c->pub);
    ob_batch_decide(b, &e->batch, how);
    if (ob_cursor_requeue(c) > 0)
        return OB_FIN_AGAIN; /* published again once the broker and the lease allow */
    /* Rows are written only under a proven lease: an owner frozen or cut
     * off past it writes nothing on rows another relay may own by now. The
     * batch waits until the lease is proven again, or until its buckets are
     * given up (their new owner reads them again from cursors that never
     * passed them). A stop waits too, until its deadline drops the batch:
     * its rows stay above the cursors, to be read again. */
    if (!ob_cursor_may_publish(c) && owned_writes(c))
        return OB_FIN_WAIT;
    ob_pub_log_passed(&c->pub);
    ob_buf_reset(&c->sql);
    c->fin_acked = c->fin_dead = c->fin_retry = c->fin_held = 0;
    write_acked(c);
    write_failed(c);
    write_deferred(c);
    write_held(c);
    c->pending = 0;
    if (c->handoff && c->cur_from == FROM_READ) {
        /* The buckets given up: their rows of this batch that were not
         * acked stay above their last cursor. */
        uint64_t hs = UINT64_MAX;
        for (int i = 0; i < b->n; i++)
            if ((c->handoff >> c->cur_x.bucket[i] & 1) && b->slots[i].state != OB_SLOT_ACKED)
                hs = min_u64(hs, c->cur_x.seq[i] - 1);
        c->handoff_seq = min_u64(c->handoff_seq, hs);
    }
    if (c->sql.len == 0) {
        /* Nothing to write (the usual case): the batch is done, and the
         * cursor moves with the next advance while the next batch leaves. */
        return OB_FIN_DONE;
    }
    if (c->cur_from == FROM_READ && ob_cursor_live(c) && ob_cursor_may_publish(c)) {
        uint64_t safe = ob_cursor_safe_point(c, 0);
        if (safe > c->written) {
            advance(c, ob_cursor_live(c), safe);
            c->pending = safe;
        }
    }
    if (c->sql.p[c->sql.len - 1] == ';')
        c->sql.len--;
    c->sql.p[c->sql.len] = '\0';
    return OB_FIN_SEND;
}

void ob_cursor_finished(ob_cursor *c) {
    outbox_stats *st = c->env.stats;
    ob_flow_leave(c->env.flow, &c->pub.fm);
    st->acked += (uint64_t)c->fin_acked;
    st->duplicates += (uint64_t)c->pub.batch.n_dup;
    st->dead += (uint64_t)c->fin_dead;
    st->failed += (uint64_t)c->fin_retry;
    st->held_back += (uint64_t)c->fin_held;
    if (c->fin_acked || c->fin_dead || c->fin_retry)
        st->batches++;
    if (c->pending)
        c->written = c->pending;
    c->pending = 0;
    c->pub.batch.n = 0;
    c->last_read = READ_NONE;
}

/* The last cursor of the buckets given up: the lease keeps their locks one
 * more round, during which the reader goes on (publishing none of their
 * rows) and moves their cursors as far as the gaps it sees close allow, so
 * that their new owner publishes little again. */
int ob_cursor_hand_over_due(const ob_cursor *c, const cursor_pass *p) {
    (void)p;
    return c->handoff != 0;
}

/* The hand-over ends with the lease's round or the lease; until then it
 * takes the turn when its cursor can move. */
duty_out ob_cursor_hand_over_run(ob_cursor *c, cursor_pass *p) {
    if (p->now >= c->handoff_until || !c->own.lease_valid(c->own.data)) {
        c->handoff = 0;
        c->handoff_seq = UINT64_MAX;
        return DUTY_NEXT;
    }
    uint64_t seq = min_u64(c->handoff_seq, p->safe);
    if (seq <= c->handoff_written || p->now < c->handoff_at || c->cur_phase != B_EMPTY)
        return DUTY_NEXT;
    c->handoff_written = seq;
    c->handoff_at = p->now + GAP_POLL_MS;
    ob_buf_reset(&c->sql);
    advance(c, c->handoff, seq);
    c->pending = 0; /* not the owned buckets' cursor */
    p->send = CR_ADVANCING;
    return DUTY_SEND;
}

void ob_cursor_advance_sql(ob_cursor *c, uint64_t safe) {
    /* Each cursor UPDATE is a commit the reader's connection waits for:
     * once a second, but promptly while a drain waits for the cursors. */
    c->advance_at =
        uv_now(c->env.loop) + (c->own.drain_wanted(c->own.data) ? GAP_POLL_MS : ADVANCE_EVERY_MS);
    ob_buf_reset(&c->sql);
    advance(c, ob_cursor_live(c), safe);
    c->pending = safe;
}

int ob_cursor_advance_due(const ob_cursor *c, const cursor_pass *p) {
    return p->safe > c->written && p->now >= c->advance_at && ob_cursor_live(c) &&
           ob_cursor_publishable(c);
}

duty_out ob_cursor_advance_run(ob_cursor *c, cursor_pass *p) {
    ob_cursor_advance_sql(c, p->safe);
    p->send = CR_ADVANCING;
    return DUTY_SEND;
}

stop_step ob_cursor_stop_step(ob_cursor *c, const cursor_pass *p) {
    int go = (c->active & c->owned) && ob_cursor_publishable(c);
    if (c->cur_phase != B_EMPTY)
        return STOP_IN_FLIGHT;
    if (c->stop == 1 && c->next_phase == B_READY && go)
        return STOP_TAKE_IN;
    if (c->stop_until == 0)
        c->stop_until = p->now + STOP_GAPS_MS;
    if (c->stop == 1 && c->gaps.n > 0 && c->next_phase == B_EMPTY && p->now < c->stop_until && go)
        return STOP_WATCH;
    if (c->stop == 1 && p->safe > c->written && ob_cursor_live(c) && ob_cursor_publishable(c))
        return STOP_LAST_WORD;
    return STOP_CLOSE;
}
