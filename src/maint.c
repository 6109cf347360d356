/*
 * Maintenance on the relay's loop: one timer per enabled job (pending
 * sampler, partition maintainer, cleanup maintainer), each queueing its job
 * on an outbox_maint handle, which runs the jobs one after another on its
 * own dedicated MariaDB connection. So maintenance never takes a worker's
 * connection or holds locks in a batch transaction, and the relay runs the
 * very code that `outbox-uvrelay partitions|cleanup --once` runs.
 *
 * The timers are unreferenced: they never keep an otherwise idle loop alive.
 * A job still queued or running when its timer fires again is not queued a
 * second time.
 */
#include "relay_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outbox/maint.h"

enum { T_SAMPLE, T_PARTITIONS, T_CLEANUP, T_COUNT };

/* The pending sample is logged at info at most this often, at debug
 * otherwise, so that a fast sampler (the progress line samples every second)
 * does not flood the log. */
#define SAMPLE_LOG_INTERVAL_MS 60000

struct ob_maint {
    outbox_relay *r;
    outbox_maint *h;
    uv_timer_t timers[T_COUNT];
    int busy[T_COUNT]; /* the timer's job is queued or running */
    int open;          /* timers and the handle still closing */
    int started;
    uint64_t sample_logged_ms;
};

static const outbox_maint_kind kinds[T_COUNT] = {OUTBOX_MAINT_SAMPLE, OUTBOX_MAINT_PARTITIONS,
                                                 OUTBOX_MAINT_CLEANUP};

ob_maint *ob_maint_new(outbox_relay *r, char *errbuf, size_t errlen) {
    outbox_maint_options o;
    outbox_maint_options_from_relay(&o, &r->o);
    ob_maint *m = calloc(1, sizeof(*m));
    if (m == NULL) {
        snprintf(errbuf, errlen, "out of memory");
        return NULL;
    }
    m->r = r;
    if (outbox_maint_create(&m->h, r->loop, &o, errbuf, errlen) != OUTBOX_OK) {
        free(m);
        return NULL;
    }
    return m;
}

void ob_maint_free(ob_maint *m) {
    if (m == NULL)
        return;
    if (m->h && !m->started)
        outbox_maint_close(m->h, NULL, NULL); /* nothing on the loop yet: frees at once */
    free(m);
}

static void on_sample(ob_maint *m, const outbox_maint_result *res) {
    outbox_relay *r = m->r;
    uint64_t now = uv_now(r->loop);
    r->stats.pending = res->pending;
    r->stats.oldest_pending_ms = res->oldest_pending_ms;
    r->stats.pending_sampled_at_ms = now;
    outbox_log_level level = OUTBOX_LOG_DEBUG;
    if (m->sample_logged_ms == 0 || now - m->sample_logged_ms >= SAMPLE_LOG_INTERVAL_MS) {
        level = OUTBOX_LOG_INFO;
        m->sample_logged_ms = now;
    }
    ob_logf(&r->log, level, "pending: %lld row(s), oldest %lld ms", (long long)res->pending,
            (long long)res->oldest_pending_ms);
}

static void on_job(outbox_maint *h, const outbox_maint_result *res, void *data) {
    (void)h;
    ob_maint *m = data;
    outbox_relay *r = m->r;
    int t = res->kind == OUTBOX_MAINT_SAMPLE       ? T_SAMPLE
            : res->kind == OUTBOX_MAINT_PARTITIONS ? T_PARTITIONS
                                                   : T_CLEANUP;
    m->busy[t] = 0;
    if (res->status == OUTBOX_ESTATE)
        return; /* closing */
    if (res->status == OUTBOX_EBUSY) {
        OB_DEBUG(&r->log, "%s: %s", outbox_maint_kind_name(res->kind), res->message);
        return;
    }
    if (res->status != OUTBOX_OK) {
        ob_logf(&r->log, res->status == OUTBOX_ESCHEMA ? OUTBOX_LOG_ERROR : OUTBOX_LOG_WARN,
                "%s: %s", outbox_maint_kind_name(res->kind), res->message);
        return;
    }
    if (t == T_SAMPLE)
        on_sample(m, res);
    else if (t == T_PARTITIONS && (res->created || res->dropped || res->kept))
        OB_INFO(&r->log, "partitions: %u created, %u dropped, %u kept (pending rows)", res->created,
                res->dropped, res->kept);
}

static void on_timer(uv_timer_t *timer) {
    ob_maint *m = timer->data;
    int t = (int)(timer - m->timers);
    if (m->busy[t])
        return;
    outbox_maint_job job;
    memset(&job, 0, sizeof(job));
    job.kind = kinds[t];
    m->busy[t] = 1;
    if (outbox_maint_run(m->h, &job, on_job, m) != OUTBOX_OK)
        m->busy[t] = 0;
}

void ob_maint_start(ob_maint *m) {
    const outbox_relay_options *o = &m->r->o;
    const uint32_t every[T_COUNT] = {o->pending_sample_ms, o->partition_check_ms,
                                     o->cleanup_check_ms};
    m->started = 1;
    for (int t = 0; t < T_COUNT; t++) {
        uv_timer_init(m->r->loop, &m->timers[t]);
        m->timers[t].data = m;
        uv_unref((uv_handle_t *)&m->timers[t]);
        /* The first round runs at once, then at the interval. */
        if (every[t])
            uv_timer_start(&m->timers[t], on_timer, 0, every[t]);
    }
}

static void closed(ob_maint *m) {
    if (--m->open == 0)
        ob_relay_child_closed(m->r);
}

static void timer_closed(uv_handle_t *h) {
    closed(h->data);
}

static void handle_closed(void *data) {
    ob_maint *m = data;
    m->h = NULL;
    closed(m);
}

void ob_maint_stop(ob_maint *m) {
    if (!m->started) {
        ob_relay_child_closed(m->r);
        return;
    }
    m->open = T_COUNT + 1;
    for (int t = 0; t < T_COUNT; t++)
        uv_close((uv_handle_t *)&m->timers[t], timer_closed);
    outbox_maint_close(m->h, handle_closed, m);
}
