/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The batches a cursor reader publishes (cursor_int.h): the extras of their
 * rows, the rows of held aggregates, the next batch taken in, rows given
 * back put up again, and the highest seq below which all is done.
 */
#include <stdlib.h>

#include "cursor_int.h"

int ob_cursor_publishable(const ob_cursor *c) {
    return !c->halted && c->stop < 2 && !c->misfit && !c->refusing &&
           c->own.lease_valid(c->own.data);
}

int ob_cursor_may_publish(void *data) {
    return ob_cursor_publishable(data);
}

static int extras_init(extras *x, int cap) {
    x->seq = calloc((size_t)cap, sizeof(*x->seq));
    x->bucket = calloc((size_t)cap, sizeof(*x->bucket));
    return x->seq && x->bucket ? 0 : -1;
}

static void extras_free(extras *x) {
    free(x->seq);
    free(x->bucket);
    ob_buf_free(&x->arena);
}

int ob_cursor_batches_init(ob_cursor *c, int cap) {
    if (ob_batch_init(&c->pub.batch, cap, OB_ORDER_AGGREGATE) != 0 ||
        ob_batch_init(&c->next, cap, OB_ORDER_AGGREGATE) != 0 || extras_init(&c->cur_x, cap) ||
        extras_init(&c->next_x, cap))
        return -1;
    return 0;
}

/* The reader's memory (cursor.h): its batches, its gaps and held
 * aggregates, its statement. */
void ob_cursor_free(ob_cursor *c) {
    if (c == NULL)
        return;
    ob_cursor_batches_free(c);
    ob_gaps_free(&c->gaps);
    ob_held_free(&c->held);
    ob_held_free(&c->lane_carry);
    ob_buf_free(&c->sql);
    free(c);
}

void ob_cursor_batches_free(ob_cursor *c) {
    ob_batch_free(&c->pub.batch);
    ob_batch_free(&c->next);
    extras_free(&c->cur_x);
    extras_free(&c->next_x);
}

/* Copies the fields of the batch's rows out of the result. Returns 0, or
 * -1 out of memory. */
int ob_cursor_keep_rows(ob_batch *b, extras *x) {
    size_t total = 0;
    for (int i = 0; i < b->n; i++) {
        const ob_row *r = &b->slots[i].row;
        total += r->aggregate_type_len + r->aggregate_id_len + r->event_type_len + r->payload_len +
                 r->headers_len + r->created_at_len + 6;
    }
    ob_buf_reset(&x->arena);
    if (ob_buf_reserve(&x->arena, total + 1) != 0)
        return -1;
    for (int i = 0; i < b->n; i++) {
        ob_row *r = &b->slots[i].row;
        const char **f[] = {&r->aggregate_type, &r->aggregate_id, &r->event_type,
                            &r->payload,        &r->headers,      &r->created_at};
        size_t *l[] = {&r->aggregate_type_len, &r->aggregate_id_len, &r->event_type_len,
                       &r->payload_len,        &r->headers_len,      &r->created_at_len};
        for (int k = 0; k < 6; k++) {
            if (*f[k] == NULL)
                continue;
            char *at = x->arena.p ? x->arena.p + x->arena.len : NULL;
            ob_buf_append(&x->arena, *f[k], *l[k]);
            ob_buf_putc(&x->arena, '\0');
            *f[k] = at;
        }
    }
    return x->arena.oom ? -1 : 0;
}

/* Rows of held aggregates are not published: they are written status 2
 * (and the rows after them in the batch with them). */
static void mark_held(ob_cursor *c) {
    ob_batch *b = &c->pub.batch;
    if (c->held.n == 0)
        return;
    for (int i = 0; i < b->n; i++) {
        ob_slot *s = &b->slots[i];
        if (s->state == OB_SLOT_UNSENT &&
            ob_held_has(&c->held, s->row.aggregate_type, s->row.aggregate_type_len,
                        s->row.aggregate_id, s->row.aggregate_id_len))
            s->state = OB_SLOT_HELD;
    }
    ob_batch_touched(b);
}

/* The unsent rows of the batch being published whose bucket is given up
 * (or was, since the batch was read) are given back: their new owner
 * publishes them, after the rows of theirs that were left unsent before.
 * Returns how many. */
static int release_lost(ob_cursor *c) {
    int n = 0;
    for (int i = 0; i < c->pub.batch.n; i++)
        if (c->pub.batch.slots[i].state == OB_SLOT_UNSENT && !ob_cursor_owns(c, i)) {
            ob_batch_release(&c->pub.batch, i);
            n++;
        }
    return n;
}

void ob_cursor_swap_in_next(ob_cursor *c) {
    ob_batch tb = c->pub.batch;
    c->pub.batch = c->next;
    c->next = tb;
    extras tx = c->cur_x;
    c->cur_x = c->next_x;
    c->next_x = tx;
    c->next.n = 0;
    /* The batch read ahead may hold rows of buckets given up since it was
     * read: they must not leave, as the rows before them in the batch given
     * up did not (cursor.c moves cur_phase on after this). */
    c->dropped = c->next_dropped;
    c->next_dropped = 0;
    c->pub.batch.epoch = c->env.broker.ops->epoch(c->env.broker.self);
    release_lost(c);
    mark_held(c);
}

/* Gives back what the batch being published holds and forgets both. */
void ob_cursor_drop_current(ob_cursor *c) {
    if (c->cur_phase != B_EMPTY) {
        int n = ob_batch_release_open(&c->pub.batch);
        ob_pub_give_back(&c->pub, n);
        c->env.stats->released += (uint64_t)n;
    }
    ob_flow_leave(c->env.flow, &c->pub.fm);
    uv_timer_stop(&c->ack_timer);
    c->pub.batch.n = 0;
    c->next.n = 0;
    c->next_dropped = 0;
}

/* The highest seq below which every row of the active buckets is resolved
 * and done, but for the current batch when `with_cur` is 0 (its writes go
 * in the same round trip). */
uint64_t ob_cursor_safe_point(const ob_cursor *c, int with_cur) {
    uint64_t s = ob_gaps_done(&c->gaps);
    if (c->next_phase == B_READY && c->next.n > 0)
        s = min_u64(s, c->next_x.seq[0] - 1);
    if (with_cur && c->cur_phase != B_EMPTY && c->cur_from == FROM_READ && c->pub.batch.n > 0)
        s = min_u64(s, c->cur_x.seq[0] - 1);
    return s;
}

int ob_cursor_has_unsent(const ob_batch *b) {
    for (int i = b->next_pub; i < b->n; i++)
        if (b->slots[i].state == OB_SLOT_UNSENT)
            return 1;
    return 0;
}

/* Row i of the batch being published belongs to a bucket owned since the
 * batch began: a bucket given up and taken again meanwhile is read again
 * from its cursor, not published from this batch. */
int ob_cursor_owns(const ob_cursor *c, int i) {
    return (c->owned & ~c->dropped) >> c->cur_x.bucket[i] & 1;
}

/* Rows given back (an outage, the lease unsure) are published again: they
 * go back to unsent, with the rows held behind them. */
int ob_cursor_requeue(ob_cursor *c) {
    ob_batch *b = &c->pub.batch;
    int n = 0;
    for (int i = 0; i < b->n; i++)
        n += b->slots[i].state == OB_SLOT_RELEASED && ob_cursor_owns(c, i);
    if (n == 0)
        return 0;
    /* A bucket given up meanwhile keeps its rows released: its new owner
     * reads them again from the cursor, which never passed them. */
    for (int i = 0; i < b->n; i++) {
        ob_slot *s = &b->slots[i];
        if ((s->state == OB_SLOT_RELEASED || s->state == OB_SLOT_HELD) && ob_cursor_owns(c, i))
            s->state = OB_SLOT_UNSENT;
    }
    b->next_pub = 0;
    b->n_held = 0;
    ob_batch_touched(b);
    b->epoch = c->env.broker.ops->epoch(c->env.broker.self);
    mark_held(c);
    c->env.stats->released += (uint64_t)n;
    return n;
}

/* Buckets given up without a proven lease: the lease lapsed (a freeze or a
 * cut outlived it) or its connection was lost. The fence kept the reader
 * from publishing and writing since it lapsed; what it had under way is
 * left to the buckets' next owner. Said once, at the change. */
static void say_lapsed(const ob_cursor *c, uint64_t lost, int unsent) {
    OB_INFO(c->env.log,
            "cursor: %d bucket(s) given up without a proven lease: %d unsent row(s) of the batch "
            "under way not published, the cursors not moved past seq %llu (done up to seq %llu); "
            "their next owner publishes from their cursors",
            ob_bucket_count(lost), unsent, (unsigned long long)c->written,
            (unsigned long long)ob_cursor_safe_point(c, 1));
}

void ob_cursor_new_owned(ob_cursor *c, uint64_t owned) {
    uint64_t lost = c->owned & ~owned & c->active;
    c->dropped |= c->owned & ~owned;
    c->given_up |= c->owned & ~owned;
    if (c->next_phase == B_READY)
        c->next_dropped |= c->owned & ~owned;
    if (c->owned & ~owned & c->active) {
        c->handoff |= c->owned & ~owned & c->active;
        c->handoff_until = uv_now(c->env.loop) + HANDOFF_MS;
        c->handoff_written = 0;
    }
    c->owned = owned;
    /* The unsent rows of a bucket given up stay unsent: its new owner
     * publishes them. */
    int unsent = c->cur_phase != B_EMPTY ? release_lost(c) : 0;
    if (lost && !c->own.lease_valid(c->own.data))
        say_lapsed(c, lost, unsent);
    ob_cursor_resync(c, RESYNC_OWNED);
}

/* The duty "wake": leaves the flow's idle list and takes a producer's wake
 * (the next read is due at once); never takes the turn. */
duty_out ob_cursor_wake_run(ob_cursor *c, cursor_pass *p) {
    (void)p;
    if (c->pub.fm.list == OB_FLOW_IDLE)
        ob_flow_leave(c->env.flow, &c->pub.fm);
    if (ob_flow_take_wake(c->env.flow))
        c->read_at = 0;
    return DUTY_NEXT;
}
