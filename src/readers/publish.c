/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A reader's publishing context (publish.h): publishing a batch and taking
 * its answers: capacity from the flow control, the broker's verdict per
 * row, acks, and the ack deadline that tells a silent broker (its fault:
 * rows go back without an attempt) from a row the broker did not answer
 * while it answered others (the row's fault).
 */
#include "publish.h"

#include "stats.h"

#include <stdio.h>
#include <string.h>

void ob_pub_init(ob_pub *p, const ob_reader_env *env, uint32_t index, const char *name,
                 void (*on_capacity)(ob_flow_member *), void (*on_wake)(ob_flow_member *)) {
    p->env = env;
    p->index = index;
    snprintf(p->name, sizeof(p->name), "%s", name);
    p->fm.on_capacity = on_capacity;
    p->fm.on_wake = on_wake;
}

void ob_pub_give_back(ob_pub *p, int n) {
    if (n > 0) {
        p->env->stats->in_flight -= (uint32_t)n;
        ob_flow_release(p->env->flow, (uint32_t)n);
    }
}

static void publish_one(ob_pub *p, int i) {
    const ob_reader_env *e = p->env;
    ob_batch *b = &p->batch;
    if (e->broker.ops->publish(e->broker.self, p->index, b->gen, (uint32_t)i, &b->slots[i].row,
                               &p->pf) != 0) {
        ob_batch_fail(b, i, p->pf.kind, p->pf.code, 0, p->pf.text, p->pf.len);
        ob_stats_failure(e->stats, p->pf.kind);
        /* Refused before it left: the capacity taken for it goes back, the
         * in-flight gauge never counted it. */
        ob_flow_release(e->flow, 1);
        return;
    }
    ob_batch_sent(b, i, uv_now(e->loop));
    e->stats->in_flight++;
    e->stats->published++;
}

uint64_t ob_pub_ack_due_in(const ob_pub *p) {
    uint64_t oldest = ob_batch_oldest_inflight(&p->batch);
    if (oldest == UINT64_MAX)
        return UINT64_MAX;
    uint64_t now = uv_now(p->env->loop), due = oldest + p->env->ack_timeout_ms;
    return due > now ? due - now : 0;
}

static const char paused_text[] =
    "its subject is full (max_msgs_per_subject): waits, without an attempt, for the subject "
    "to take messages again";

/* Publishes the rows that may leave now (in an ordered batch, those whose
 * aggregate has nothing earlier in flight), as far as the capacity allows.
 * A row whose subject is paused waits without leaving. */
static void publish_ready(ob_pub *p) {
    const ob_reader_env *e = p->env;
    ob_batch *b = &p->batch;
    int i;
    while ((i = ob_batch_next_ready(b)) >= 0) {
        uint64_t wait = ob_paused_wait(e->paused, &b->slots[i].row, uv_now(e->loop));
        if (wait > 0) {
            ob_batch_defer(b, i, wait, paused_text, sizeof(paused_text) - 1);
            continue;
        }
        if (!e->broker.ops->ready(e->broker.self) ||
            (e->owner.may_publish && !e->owner.may_publish(e->owner.data))) {
            /* the broker went away, or the lease may have */
            ob_pub_give_back(p, ob_batch_release_open(b));
            break;
        }
        if (!ob_flow_acquire(e->flow, &p->fm))
            break; /* EV_CAPACITY resumes */
        publish_one(p, i);
    }
}

int ob_pub_some(ob_pub *p) {
    publish_ready(p);
    return ob_batch_complete(&p->batch);
}

/* A failed answer: the broker says whose fault it is (broker.h). The
 * broker's own (a full stream, a resource limit) releases the row without
 * an attempt and pauses the broker; the row's, or one not known yet, costs
 * the row an attempt, and a suspect one asks the broker whether it answers.
 * Returns 1 when the slot was in flight. */
static int failed(ob_pub *p, const ob_ack *a) {
    const ob_broker *k = &p->env->broker;
    ob_batch *b = &p->batch;
    ob_verdict v;
    k->ops->verdict(k->self, a, &b->slots[a->slot].row, &v);
    if (v.blame == OB_BLAME_BROKER) {
        int was = ob_batch_release(b, (int)a->slot);
        k->ops->refused(k->self, v.text);
        return was;
    }
    if (v.blame == OB_BLAME_SUBJECT) {
        /* The subject alone is refused: it pauses, its rows wait without
         * an attempt, and the others flow. */
        uint64_t wait;
        ob_paused_refused(p->env->paused, &b->slots[a->slot].row, uv_now(p->env->loop), &wait);
        char text[OB_LAST_ERROR_MAX];
        int n = snprintf(text, sizeof(text), "%.*s: %s", (int)v.len, v.text, paused_text);
        size_t len = n < 0 ? 0 : (size_t)n < sizeof(text) ? (size_t)n : sizeof(text) - 1;
        return ob_batch_defer(b, (int)a->slot, wait, text, len);
    }
    int was = ob_batch_fail(b, (int)a->slot, v.kind, v.code, v.err_code, v.text, v.len);
    ob_stats_failure(p->env->stats, v.kind);
    if (v.blame == OB_BLAME_SUSPECT)
        k->ops->suspect(k->self, v.suspect);
    return was;
}

void ob_pub_take_ack(ob_pub *p, const ob_ack *a) {
    const ob_reader_env *e = p->env;
    ob_batch *b = &p->batch;
    if (a->gen != b->gen || a->slot >= (uint32_t)b->n ||
        b->slots[a->slot].state != OB_SLOT_INFLIGHT)
        return; /* a late answer for an earlier batch or an expired publish */
    int was;
    if (a->result == OB_ACKED_STORED || a->result == OB_ACKED_DUPLICATE) {
        /* A duplicate is answered whatever the subject's room: only a
         * message stored ends its subject's pause. */
        if (a->result == OB_ACKED_STORED)
            ob_paused_stored(e->paused, &b->slots[a->slot].row, b->slots[a->slot].sent_at,
                             uv_now(e->loop));
        was = ob_batch_acked(b, (int)a->slot, a->result == OB_ACKED_DUPLICATE);
        /* created_at is the database's clock: the host's, less its skew. */
        if (e->stats->clock_skew_error_s >= 0 || !e->lag_awaits_clock)
            ob_hist_observe(&e->stats->delivery_lag, ob_wall_s() - e->stats->clock_skew_s -
                                                         ob_row_created_s(&b->slots[a->slot].row));
    } else {
        was = failed(p, a);
    }
    ob_pub_give_back(p, was);
}

/* The ack deadline passed for the oldest publishes (the timer may fire
 * early: then nothing has expired and nothing is said). A broker that answered
 * nothing since they left is silent (frozen, or its connection is dead):
 * that is its fault, so they go back without an attempt and the link is
 * told. A broker that answers others but not these may be electing the
 * stream's leader: the link asks whether the stream answers, and the rows
 * are charged an attempt only if it does (see ob_pub_after_answers). */
static void note_unanswered(ob_pub *p, int rows, uint64_t oldest) {
    ob_unmarked *u = p->env->unanswered;
    if (u == NULL || rows <= 0)
        return;
    if (u->rows == 0 || oldest < u->oldest_at)
        u->oldest_at = oldest;
    u->rows += rows;
}

void ob_pub_outage(ob_pub *p) {
    ob_batch *b = &p->batch;
    int rows = 0, was = 0;
    uint64_t oldest = UINT64_MAX;
    for (int i = 0; i < b->n; i++) {
        const ob_slot *s = &b->slots[i];
        /* In flight, or expired while the broker answered others (its
         * check under way): either may be stored already. */
        if (s->state != OB_SLOT_INFLIGHT &&
            (s->state != OB_SLOT_FAILED || s->kind != OUTBOX_FAIL_ACK_TIMEOUT))
            continue;
        rows++;
        if (s->sent_at < oldest)
            oldest = s->sent_at;
        was += ob_batch_release(b, i);
    }
    note_unanswered(p, rows, oldest);
    ob_pub_give_back(p, was);
}

void ob_unmarked_say(const ob_reader_env *e, ob_unmarked *u, uint64_t slack_ms, const char *cause) {
    if (u == NULL || u->rows == 0)
        return;
    uint64_t window = e->broker.ops->window_ms(e->broker.self);
    uint64_t away = uv_now(e->loop) - u->oldest_at;
    if (window > 0 && away + slack_ms >= window)
        OB_WARN(e->log,
                "%d row(s) published up to %llu ms ago %s; that is longer than the stream's "
                "duplicate window (%llu ms): they are published again and may be stored twice",
                u->rows, (unsigned long long)away, cause, (unsigned long long)window);
    u->rows = 0;
}

void ob_pub_say_unanswered(ob_pub *p) {
    ob_unmarked_say(p->env, p->env->unanswered, 0, "got no answer before the broker's outage");
}

void ob_pub_ack_deadline(ob_pub *p) {
    const ob_reader_env *e = p->env;
    static const char t[] = "no ack from JetStream within the ack timeout";
    uint64_t now = uv_now(e->loop);
    if (now < e->ack_timeout_ms)
        return;
    uint64_t before = now - e->ack_timeout_ms;
    uint64_t oldest = ob_batch_oldest_inflight(&p->batch);
    if (oldest == UINT64_MAX || oldest > before)
        return; /* early (the oldest was answered since the timer was armed): nothing expired */
    uint64_t heard = e->broker.ops->last_answer(e->broker.self);
    int silent = heard < oldest;
    int expired = ob_batch_expire(&p->batch, before, silent, t, sizeof(t) - 1);
    if (silent)
        note_unanswered(p, expired, oldest);
    if (!silent)
        for (int i = 0; i < expired; i++)
            ob_stats_failure(e->stats, OUTBOX_FAIL_ACK_TIMEOUT);
    ob_pub_give_back(p, expired);
    if (silent)
        e->broker.ops->unavailable(e->broker.self, "no answer within the ack timeout");
    else if (expired > 0)
        e->broker.ops->suspect(e->broker.self, "no ack within the ack timeout");
}

ob_after ob_pub_after_answers(ob_pub *p) {
    const ob_reader_env *e = p->env;
    /* In an ordered batch an answer can free the next row of its aggregate. */
    if (p->batch.order)
        publish_ready(p);
    if (!ob_batch_complete(&p->batch))
        return OB_AFTER_ACKS;
    /* A row failed in a way that may be the broker's (no responders, a
     * server error, no ack): wait for the link's verdict, which comes as
     * broker up (the rows' fault) or broker down (an outage: no attempts). */
    if (ob_batch_suspect(&p->batch) && !e->broker.ops->settled(e->broker.self))
        return OB_AFTER_VERDICT;
    return OB_AFTER_FINISH;
}

void ob_pub_log_passed(const ob_pub *p) {
    const ob_reader_env *e = p->env;
    const ob_batch *b = &p->batch;
    for (int i = 0; i < b->n; i++) {
        const ob_slot *s = &b->slots[i];
        if (s->state != OB_SLOT_WRITTEN && s->state != OB_SLOT_FAILED)
            continue;
        if (!s->dead && s->row.attempts + 1 < e->batch.max_attempts)
            continue;
        char text[OUTBOX_ID_TEXT_LEN + 1];
        outbox_id id;
        memcpy(id.b, s->row.id, sizeof(id.b));
        outbox_id_to_text(&id, text);
        ob_log_row lr = {s->id,
                         s->row.aggregate_type,
                         s->row.aggregate_type_len,
                         s->row.aggregate_id,
                         s->row.aggregate_id_len,
                         s->row.attempts + 1};
        OB_ROW_WARN(
            e->log, &lr,
            "%s: event %s of %.*s/%.*s is dead; the later events of that aggregate now pass it",
            p->name, text, (int)s->row.aggregate_type_len, s->row.aggregate_type,
            (int)s->row.aggregate_id_len, s->row.aggregate_id);
    }
}
