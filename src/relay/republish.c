/* SPDX-License-Identifier: Apache-2.0 */
/*
 * outbox_republish_run() (outbox/republish.h): the rows of republish_rows.c
 * published through the blocking publisher of js_blocking.h, with a window
 * of outstanding acks. A row counts once JetStream acked it; the position
 * reported (and where a failed run resumes) is the first row not acked, so
 * rows acked out of order behind it are published again on a resume and
 * dropped by the stream's duplicate window.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "js_blocking.h"
#include "log.h"
#include "outbox/republish.h"
#include "relay_int.h"
#include "republish_rows.h"

/* One publish awaiting its ack. */
typedef struct rp_slot {
    uint64_t seq;
    unsigned char id[16];
    int done; /* acked, or skipped as a row that cannot be a message */
} rp_slot;

typedef struct rp_run {
    const outbox_republish_options *o;
    outbox_republish_progress *p;
    ob_log log;
    ob_jsb *js;
    ob_message_opts mo;
    rp_slot *ring;
    uint32_t window;
    uint64_t low; /* the first tag not done */
    uint64_t next_progress_ms;
    char *err;
    size_t errlen;
} rp_run;

static uint64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* The id one above `id` (big-endian), an inclusive bound for "after". */
static void id_next(const unsigned char *id, unsigned char *out) {
    memcpy(out, id, 16);
    for (int i = 15; i >= 0 && ++out[i] == 0; i--)
        ;
}

static void progress(rp_run *r, int force) {
    uint64_t t = now_ms();
    if (!r->o->progress || (!force && t < r->next_progress_ms))
        return;
    r->next_progress_ms = t + (r->o->progress_ms ? r->o->progress_ms : 5000);
    r->o->progress(r->p, r->o->progress_data);
}

/* Moves `low` past the rows done, and the position with it. */
static void advance(rp_run *r) {
    while (r->low < r->p->sent && r->ring[r->low % r->window].done) {
        rp_slot *s = &r->ring[r->low % r->window];
        r->p->last_seq = s->seq;
        memcpy(r->p->last_id.b, s->id, 16);
        r->p->any_acked = 1;
        r->low++;
    }
}

/* Where a new run resumes: the first row not acked, or the one after the
 * last acked when none is outstanding. */
static void set_resume(rp_run *r) {
    outbox_republish_progress *p = r->p;
    p->resume_valid = 1;
    if (r->low < p->sent) {
        rp_slot *s = &r->ring[r->low % r->window];
        p->resume_seq = s->seq;
        memcpy(p->resume_id.b, s->id, 16);
    } else if (p->any_acked) {
        p->resume_seq = p->last_seq + 1;
        id_next(p->last_id.b, p->resume_id.b);
    } else {
        p->resume_valid = 0; /* nothing acked: run it again as it was */
    }
}

/* Reads one answer (waiting up to wait_ms). Returns 0 (an ack, or none in
 * time), or an OUTBOX_E* status with r->err. */
static int take_ack(rp_run *r, uint32_t wait_ms, int *got) {
    uint64_t tag;
    ob_puback a;
    char why[256];
    *got = 0;
    int rc = ob_jsb_next_ack(r->js, wait_ms, &tag, &a, why, sizeof(why));
    if (rc == 1)
        return OUTBOX_OK;
    if (rc < 0)
        return ob_errf(r->err, r->errlen, OUTBOX_ENATS, "NATS: %s", why);
    *got = 1;
    if (tag < r->low || tag >= r->p->sent || r->ring[tag % r->window].done)
        return OUTBOX_OK; /* not ours, or answered already */
    if (!a.ok)
        return ob_errf(r->err, r->errlen, OUTBOX_ENATS, "JetStream refused a message: %.*s",
                       (int)(a.desc_len > 300 ? 300 : a.desc_len), a.desc ? a.desc : "");
    /* Stored by a stream that took the subjects from the one named (deleted
     * under the run): not sent where it was meant to go. */
    const char *want = r->o->relay->stream;
    if (a.stream && (a.stream_len != strlen(want) || memcmp(a.stream, want, a.stream_len) != 0))
        return ob_errf(r->err, r->errlen, OUTBOX_ENATS,
                       "stream %.*s, not stream %s, stored a message: another stream takes the "
                       "subjects; run the republish again once stream %s takes them",
                       (int)(a.stream_len > 128 ? 128 : a.stream_len), a.stream, want, want);
    r->ring[tag % r->window].done = 1;
    r->p->acked++;
    r->p->duplicates += a.duplicate != 0;
    advance(r);
    return OUTBOX_OK;
}

/* Waits until at most `max_out` publishes await their ack. */
static int drain_to(rp_run *r, uint64_t max_out) {
    uint32_t limit = r->o->ack_timeout_ms ? r->o->ack_timeout_ms : 10000;
    uint64_t since = now_ms();
    while (r->p->sent - r->low > max_out) {
        int got = 0, rc = take_ack(r, 200, &got);
        if (rc != OUTBOX_OK)
            return rc;
        progress(r, 0);
        if (got)
            since = now_ms();
        else if (now_ms() - since >= limit)
            return ob_errf(r->err, r->errlen, OUTBOX_ENATS,
                           "no ack from JetStream within %u ms (%llu outstanding)", limit,
                           (unsigned long long)(r->p->sent - r->low));
    }
    return OUTBOX_OK;
}

/* Holds the pace of o->rate: the next publish waits for its time, reading
 * acks meanwhile. */
static int pace(rp_run *r, uint64_t start_ms) {
    if (r->o->rate <= 0)
        return OUTBOX_OK;
    uint64_t due = start_ms + (uint64_t)((double)r->p->sent * 1000.0 / r->o->rate);
    for (uint64_t t = now_ms(); t < due; t = now_ms()) {
        int got = 0, rc = take_ack(r, (uint32_t)(due - t), &got);
        if (rc != OUTBOX_OK)
            return rc;
        if (!got && r->p->sent == r->low) {
            struct timespec ts = {0, (long)((due - t) % 1000) * 1000000L};
            ts.tv_sec = (time_t)((due - t) / 1000);
            nanosleep(&ts, NULL);
        }
    }
    return OUTBOX_OK;
}

static int publish_row(rp_run *r, const ob_row *row, uint64_t seq) {
    rp_slot *s = &r->ring[r->p->sent % r->window];
    s->seq = seq;
    memcpy(s->id, row->id, 16);
    s->done = 0;
    char why[512];
    int rc = ob_jsb_publish(r->js, r->p->sent, r->o->relay->subject_prefix, &r->mo, row, why,
                            sizeof(why));
    if (rc < 0)
        return ob_errf(r->err, r->errlen, OUTBOX_ENATS, "%s", why);
    r->p->sent++;
    if (rc == 1) {
        /* The relay would have made this row dead; it has no message. */
        ob_log_row lr = {row->id,           row->aggregate_type,   row->aggregate_type_len,
                         row->aggregate_id, row->aggregate_id_len, 0};
        ob_logf_row(&r->log, OUTBOX_LOG_WARN, &lr, "republish: row skipped: %s", why);
        s->done = 1;
        r->p->skipped++;
        advance(r);
    }
    return OUTBOX_OK;
}

/* Every page in order; each row waits for room in the window and its time. */
static int publish_all(rp_run *r, ob_rp_reader *rd) {
    uint64_t start = now_ms(), seq = 0, last_seq = 0;
    unsigned char last_id[16];
    int has_after = 0;
    for (;;) {
        int n = ob_rp_next_page(rd, has_after, last_seq, last_id, r->err, r->errlen);
        if (n < 0)
            return OUTBOX_EDB;
        if (n == 0)
            break;
        ob_row row;
        while (ob_rp_row(rd, &row, &seq) == 0) {
            int rc = drain_to(r, r->window - 1);
            if (rc == OUTBOX_OK)
                rc = pace(r, start);
            if (rc == OUTBOX_OK)
                rc = publish_row(r, &row, seq);
            if (rc != OUTBOX_OK)
                return rc;
            r->p->matched++;
            last_seq = seq;
            memcpy(last_id, row.id, 16);
            has_after = 1;
            progress(r, 0);
        }
    }
    return drain_to(r, 0);
}

static int check_range(const outbox_republish_options *o, char *since, char *until, size_t len,
                       char *err, size_t errlen) {
    if (o->since && ob_rp_time(o->since, since, len) != 0)
        return ob_errf(err, errlen, OUTBOX_EINVAL,
                       "since: '%s' is not a UTC time (YYYY-MM-DD HH:MM:SS)", o->since);
    if (o->until && ob_rp_time(o->until, until, len) != 0)
        return ob_errf(err, errlen, OUTBOX_EINVAL,
                       "until: '%s' is not a UTC time (YYYY-MM-DD HH:MM:SS)", o->until);
    if (o->since && o->until && strcmp(since, until) >= 0)
        return ob_errf(err, errlen, OUTBOX_EINVAL,
                       "the range is empty: since %s is not before "
                       "until %s",
                       since, until);
    if (o->has_seq_range && o->seq_from > o->seq_to)
        return ob_errf(err, errlen, OUTBOX_EINVAL, "the seq range %llu-%llu is empty",
                       (unsigned long long)o->seq_from, (unsigned long long)o->seq_to);
    if (o->id_from && o->id_to && memcmp(o->id_from->b, o->id_to->b, 16) > 0)
        return ob_errf(err, errlen, OUTBOX_EINVAL, "the id range is empty: from is above to");
    if (o->rate < 0)
        return ob_errf(err, errlen, OUTBOX_EINVAL, "the rate must be 0 (no limit) or more");
    return OUTBOX_OK;
}

static int run_nats(rp_run *r, ob_rp_reader *rd) {
    const outbox_relay_options *ro = r->o->relay;
    ob_jsb_stream info;
    int rc = ob_jsb_open(&r->js, ro, r->err, r->errlen);
    if (rc == OUTBOX_OK)
        rc = ob_jsb_stream_check(r->js, ro->stream, ro->subject_prefix, &info, r->err, r->errlen);
    if (rc == OUTBOX_ENOTFOUND && r->o->create_stream) {
        rc = ob_jsb_stream_create(r->js, ro->stream, ro->subject_prefix, ro->duplicate_window_ms,
                                  ro->stream_replicas, r->err, r->errlen);
        if (rc == OUTBOX_OK)
            rc = ob_jsb_stream_check(r->js, ro->stream, ro->subject_prefix, &info, r->err,
                                     r->errlen);
    }
    if (rc != OUTBOX_OK)
        return rc;
    r->p->stream_window_ms = info.window_ms;
    ob_buf ce = OB_BUF_INIT;
    if (ro->cloudevents)
        ob_ce_encode(&ce, ro->ce_source, strlen(ro->ce_source));
    r->mo.ce_source = ro->cloudevents ? ce.p : NULL;
    r->mo.ce_type_with_aggregate = 0;
    r->window = r->o->window ? r->o->window : 1024;
    r->ring = calloc(r->window, sizeof(*r->ring));
    if (r->ring == NULL || (ro->cloudevents && ce.oom))
        rc = ob_errf(r->err, r->errlen, OUTBOX_ENOMEM, "out of memory");
    if (rc == OUTBOX_OK)
        rc = publish_all(r, rd);
    if (rc != OUTBOX_OK)
        set_resume(r);
    progress(r, 1);
    ob_buf_free(&ce);
    free(r->ring);
    ob_jsb_close(r->js);
    return rc;
}

int outbox_republish_run(const outbox_republish_options *o, outbox_republish_progress *p, char *err,
                         size_t errlen) {
    memset(p, 0, sizeof(*p));
    if (o == NULL || o->relay == NULL)
        return ob_errf(err, errlen, OUTBOX_EINVAL, "options are required");
    int rc = ob_relay_check_options(o->relay, err, errlen);
    char since[40], until[40];
    if (rc == OUTBOX_OK)
        rc = check_range(o, since, until, sizeof(since), err, errlen);
    if (rc == OUTBOX_OK && o->relay->nats_url == NULL && !o->dry_run)
        rc = ob_errf(err, errlen, OUTBOX_EINVAL, "a NATS URL is required");
    if (rc != OUTBOX_OK)
        return rc;
    ob_rp_reader rd;
    rc = ob_rp_open(&rd, o->relay, err, errlen);
    p->has_seq = rd.names.has_seq;
    if (rc == OUTBOX_OK && o->has_seq_range && !rd.names.has_seq)
        rc = ob_errf(err, errlen, OUTBOX_EINVAL,
                     "table %s has no seq column (a plain table): select rows by time or id",
                     o->relay->table);
    uint64_t count = 0;
    if (rc == OUTBOX_OK) {
        ob_rp_where(&rd.where, &rd.names, o, o->since ? since : NULL, o->until ? until : NULL);
        rc = ob_rp_survey(&rd, &count, p->oldest_in_range, p->oldest_in_table,
                          sizeof(p->oldest_in_range), err, errlen);
    }
    p->total = count;
    if (rc == OUTBOX_OK && o->dry_run) {
        p->matched = count;
    } else if (rc == OUTBOX_OK) {
        rp_run r = {o,    p,     {o->relay->log, o->relay->log_data, o->relay->log_level},
                    NULL, {0},   NULL,
                    0,    0,     0,
                    err,  errlen};
        rc = run_nats(&r, &rd);
    }
    ob_rp_close(&rd);
    return rc;
}
