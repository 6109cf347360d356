/* SPDX-License-Identifier: Apache-2.0 */
#include "relay_maint.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock_skew.h"
#include "outbox/maint.h"

enum { T_SAMPLE, T_PARTITIONS, T_CLEANUP, T_COUNT };

struct ob_timers {
    uv_loop_t *loop;
    const outbox_relay_options *o;
    const ob_log *log;
    outbox_stats *stats;
    outbox_maint *h;
    uv_timer_t timers[T_COUNT];
    int busy[T_COUNT]; /* the timer's job is queued or running */
    int open;          /* timers and the handle still closing */
    int started;
    ob_sample_log sample_log;
    ob_skew skew; /* the relay's clock against the database's */
    void (*closed_cb)(void *data);
    void *closed_data;
};

static const outbox_maint_kind kinds[T_COUNT] = {OUTBOX_MAINT_SAMPLE, OUTBOX_MAINT_PARTITIONS,
                                                 OUTBOX_MAINT_CLEANUP};

ob_timers *ob_timers_new(uv_loop_t *loop, const outbox_relay_options *ro, const ob_log *log,
                         outbox_stats *stats, char *errbuf, size_t errlen) {
    outbox_maint_options o;
    outbox_maint_options_from_relay(&o, ro);
    ob_timers *t = calloc(1, sizeof(*t));
    if (t == NULL) {
        snprintf(errbuf, errlen, "out of memory");
        return NULL;
    }
    t->loop = loop;
    t->o = ro;
    t->log = log;
    t->stats = stats;
    if (outbox_maint_create(&t->h, loop, &o, errbuf, errlen) != OUTBOX_OK) {
        free(t);
        return NULL;
    }
    return t;
}

void ob_timers_free(ob_timers *t) {
    if (t == NULL)
        return;
    outbox_maint_destroy(t->h); /* never started, or stopped */
    free(t);
}

int ob_sample_log_info(ob_sample_log *s, uint64_t now_ms, int64_t pending) {
    if (s->said && (pending == s->pending || now_ms - s->at_ms < OB_SAMPLE_LOG_INTERVAL_MS))
        return 0;
    s->said = 1;
    s->at_ms = now_ms;
    s->pending = pending;
    return 1;
}

/* The sample read the database's clock: the skew follows, and is said when
 * it is large or changed much (an alert on the delivery lag would otherwise
 * fire on a healthy relay whose host clock is wrong). */
static void on_clock(ob_timers *t, const outbox_maint_result *res) {
    ob_skew_say say =
        ob_skew_add(&t->skew, res->db_clock_s, res->clock_sent_s, res->clock_answered_s);
    if (!t->skew.known)
        return;
    double skew = ob_skew_value(&t->skew), err = ob_skew_error(&t->skew);
    t->stats->clock_skew_s = skew;
    t->stats->clock_skew_error_s = err;
    if (say == OB_SKEW_APART)
        OB_WARN(t->log,
                "clock: this host's clock runs %.3f s %s the database's (within %.3f s); "
                "the delivery lag is measured on the database's clock; the host's log "
                "timestamps are not (set its time with NTP)",
                skew < 0 ? -skew : skew, skew < 0 ? "behind" : "ahead of", err);
    else if (say == OB_SKEW_AGREE)
        OB_INFO(t->log, "clock: this host's clock agrees with the database's again (%.3f s apart)",
                skew < 0 ? -skew : skew);
}

static void on_sample(ob_timers *t, const outbox_maint_result *res) {
    uint64_t now = uv_now(t->loop);
    on_clock(t, res);
    t->stats->pending = res->pending;
    t->stats->oldest_pending_ms = res->oldest_pending_ms;
    t->stats->pending_sampled_at_ms = now;
    outbox_log_level level =
        ob_sample_log_info(&t->sample_log, now, res->pending) ? OUTBOX_LOG_INFO : OUTBOX_LOG_DEBUG;
    ob_logf(t->log, level, "pending: %lld row(s), oldest %lld ms", (long long)res->pending,
            (long long)res->oldest_pending_ms);
    if (res->message && res->message[0]) {
        /* The table was replaced since the last sample (maint.h). */
        t->stats->table_replaced++;
        OB_WARN(t->log, "%s", res->message);
    }
}

static void on_job(outbox_maint *h, const outbox_maint_result *res, void *data) {
    (void)h;
    ob_timers *t = data;
    int k = res->kind == OUTBOX_MAINT_SAMPLE       ? T_SAMPLE
            : res->kind == OUTBOX_MAINT_PARTITIONS ? T_PARTITIONS
                                                   : T_CLEANUP;
    t->busy[k] = 0;
    if (res->status == OUTBOX_ESTATE)
        return; /* closing */
    if (res->status == OUTBOX_EBUSY) {
        OB_DEBUG(t->log, "%s: %s", outbox_maint_kind_name(res->kind), res->message);
        return;
    }
    if (res->status != OUTBOX_OK) {
        ob_logf(t->log, res->status == OUTBOX_ESCHEMA ? OUTBOX_LOG_ERROR : OUTBOX_LOG_WARN,
                "%s: %s", outbox_maint_kind_name(res->kind), res->message);
        return;
    }
    if (k == T_SAMPLE)
        on_sample(t, res);
    else if (k == T_PARTITIONS && (res->created || res->dropped || res->kept))
        OB_INFO(t->log, "partitions: %u created, %u dropped, %u kept (pending rows)", res->created,
                res->dropped, res->kept);
}

static void on_timer(uv_timer_t *timer) {
    ob_timers *t = timer->data;
    int k = (int)(timer - t->timers);
    if (t->busy[k])
        return; /* still queued or running: not queued a second time */
    outbox_maint_job job;
    memset(&job, 0, sizeof(job));
    job.kind = kinds[k];
    t->busy[k] = 1;
    if (outbox_maint_run(t->h, &job, on_job, t) != OUTBOX_OK)
        t->busy[k] = 0;
}

void ob_timers_start(ob_timers *t) {
    const outbox_relay_options *o = t->o;
    const uint32_t every[T_COUNT] = {o->pending_sample_ms, o->partition_check_ms,
                                     o->cleanup_check_ms};
    t->started = 1;
    for (int k = 0; k < T_COUNT; k++) {
        uv_timer_init(t->loop, &t->timers[k]);
        t->timers[k].data = t;
        uv_unref((uv_handle_t *)&t->timers[k]);
        /* The first round runs at once, then at the interval. */
        if (every[k])
            uv_timer_start(&t->timers[k], on_timer, 0, every[k]);
    }
}

static void closed(ob_timers *t) {
    if (--t->open == 0 && t->closed_cb)
        t->closed_cb(t->closed_data);
}

static void timer_closed(uv_handle_t *h) {
    closed(h->data);
}

static void handle_closed(outbox_maint *h, void *data) {
    (void)h;
    closed(data);
}

void ob_timers_stop(ob_timers *t, void (*cb)(void *data), void *data) {
    t->closed_cb = cb;
    t->closed_data = data;
    if (!t->started) {
        if (cb)
            cb(data);
        return;
    }
    t->open = T_COUNT + 1;
    for (int k = 0; k < T_COUNT; k++)
        uv_close((uv_handle_t *)&t->timers[k], timer_closed);
    outbox_maint_stop(t->h, handle_closed, t);
}
