/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The relay's options: defaults, the built-in classifier, checks, and the
 * copy the relay keeps.
 */
#include "relay_int.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "sql.h"
#include "subject.h"
#include "tls_options.h"

/* The options as the first versioned release laid them out: a caller's
 * struct is at least this long. */
#define OPTIONS_MIN_SIZE (offsetof(outbox_relay_options, max_in_flight_bytes) + sizeof(uint64_t))

static void defaults(outbox_relay_options *o) {
    memset(o, 0, sizeof(*o));
    o->size = sizeof(*o);
    o->table = "outbox";
    o->stream = "OUTBOX";
    o->subject_prefix = "outbox";
    o->ce_source = "outbox-uvrelay";
    o->cloudevents = 1;
    o->connections = 2;
    o->batch_size = 500;
    o->poll_interval_ms = 100;
    o->poll_min_ms = 5;
    o->max_in_flight = 8192;
    o->ack_timeout_ms = 5000;
    o->max_attempts = 5;
    o->backoff = OUTBOX_BACKOFF_EXPONENTIAL;
    o->backoff_base_ms = 1000;
    o->backoff_max_ms = 60000;
    o->backoff_jitter = 0.2;
    o->duplicate_window_ms = 120000;
    o->shutdown_timeout_ms = 5000;
    o->processing = OUTBOX_KEEP_PROCESSED;
    outbox_maint_options_init(&o->maint);
    o->log_level = OUTBOX_LOG_INFO;
    o->max_in_flight_bytes = 32u * 1024 * 1024;
    o->lease_timeout_ms = 15000;
    o->db_failback_ms = 60000;
}

void outbox_relay_options_init_sized(outbox_relay_options *o, size_t size) {
    if (o == NULL || size < sizeof(o->size))
        return;
    outbox_relay_options d;
    defaults(&d);
    d.size = size;
    memcpy(o, &d, size < sizeof(d) ? size : sizeof(d));
    if (size > sizeof(d)) /* built against a newer header: create refuses it */
        memset((char *)o + sizeof(d), 0, size - sizeof(d));
}

int ob_relay_options_upgrade(const outbox_relay_options *o, outbox_relay_options *out, char *errbuf,
                             size_t errlen) {
    if (o->size < OPTIONS_MIN_SIZE || o->size > sizeof(*out))
        return ob_errf(errbuf, errlen, OUTBOX_EINVAL,
                       "outbox_relay_options: size %zu is not one this library (%s, %zu bytes) "
                       "knows: fill the options with outbox_relay_options_init, and build against "
                       "this library's headers or older ones",
                       o->size, outbox_version(), sizeof(*out));
    defaults(out);
    memcpy(out, o, o->size);
    out->size = sizeof(*out);
    return OUTBOX_OK;
}

outbox_verdict outbox_classify_default(const outbox_failure *f, void *data) {
    (void)data;
    switch (f->kind) {
    case OUTBOX_FAIL_MAX_PAYLOAD:
    case OUTBOX_FAIL_BAD_SUBJECT:
    case OUTBOX_FAIL_BAD_HEADERS:
        return OUTBOX_DEAD;
    case OUTBOX_FAIL_STREAM_ERROR:
        /* 400: the stream refuses this message as it is (too large, a failed
         * expectation header); sending it again cannot help. */
        return f->code == 400 ? OUTBOX_DEAD : OUTBOX_RETRY;
    case OUTBOX_FAIL_ACK_TIMEOUT:
    case OUTBOX_FAIL_NO_RESPONDERS:
    case OUTBOX_FAIL_DISCONNECTED:
    case OUTBOX_FAIL_PUBLISH_ERROR:
        return OUTBOX_RETRY;
    }
    return OUTBOX_RETRY;
}

/* A prefix is one or more dot-separated subject tokens (subject.h). */
static int check_prefix(const char *s) {
    char err[160];
    if (s == NULL || *s == '\0' || strlen(s) > 100)
        return -1;
    return ob_subject_check(s, strlen(s), "subject prefix", err, sizeof(err));
}

int ob_relay_check_options(const outbox_relay_options *o, char *errbuf, size_t errlen) {
    char err[512];
    if (o->connections < 1 || o->connections > 256)
        return ob_errf(errbuf, errlen, OUTBOX_EINVAL, "connections must be 1-256 (got %d)",
                       o->connections);
    if (o->batch_size < 1 || o->batch_size > 10000)
        return ob_errf(errbuf, errlen, OUTBOX_EINVAL, "batch size must be 1-10000 (got %d)",
                       o->batch_size);
    if (o->poll_interval_ms < 1 || o->poll_interval_ms > 3600000)
        return ob_errf(errbuf, errlen, OUTBOX_EINVAL,
                       "poll interval must be 1 ms to 1 hour (got %u ms)", o->poll_interval_ms);
    if (o->wake_subject && *o->wake_subject) {
        size_t pl = o->subject_prefix ? strlen(o->subject_prefix) : 0;
        if (check_prefix(o->wake_subject) != 0)
            return ob_errf(errbuf, errlen, OUTBOX_EINVAL,
                           "wake subject '%s' is not a subject: dot-separated tokens without "
                           "wildcards or whitespace",
                           o->wake_subject);
        if (pl && strncmp(o->wake_subject, o->subject_prefix, pl) == 0 &&
            (o->wake_subject[pl] == '.' || o->wake_subject[pl] == '\0'))
            return ob_errf(errbuf, errlen, OUTBOX_EINVAL,
                           "wake subject '%s' falls under the stream's subjects '%s.>'",
                           o->wake_subject, o->subject_prefix);
    }
    if (o->db_failback_ms != 0 && (o->db_failback_ms < 1000 || o->db_failback_ms > 86400000))
        return ob_errf(errbuf, errlen, OUTBOX_EINVAL,
                       "database failback must be 0 (never) or 1 s to 1 day (got %u ms)",
                       o->db_failback_ms);
    if (o->lease_timeout_ms < 3000 || o->lease_timeout_ms > 3600000)
        return ob_errf(errbuf, errlen, OUTBOX_EINVAL,
                       "lease timeout must be 3 s to 1 hour (got %u ms)", o->lease_timeout_ms);
    if ((int)o->nats_client < OUTBOX_NATS_CLIENT_AUTO ||
        (int)o->nats_client > OUTBOX_NATS_CLIENT_THREADS)
        return ob_errf(errbuf, errlen, OUTBOX_EINVAL,
                       "nats_client must be OUTBOX_NATS_CLIENT_AUTO, _LOOP or _THREADS (got %d)",
                       (int)o->nats_client);
    if (o->cursor && (o->ordered || o->leader))
        return ob_errf(errbuf, errlen, OUTBOX_EINVAL,
                       "--cursor cannot be combined with --ordered or --leader: choose one mode");
    if (o->max_in_flight < 1)
        return ob_errf(errbuf, errlen, OUTBOX_EINVAL, "max in flight must be at least 1");
    if (o->ack_timeout_ms < 10)
        return ob_errf(errbuf, errlen, OUTBOX_EINVAL, "ack timeout must be at least 10 ms (got %u)",
                       o->ack_timeout_ms);
    if (o->max_attempts < 1 || o->max_attempts > 1000000)
        return ob_errf(errbuf, errlen, OUTBOX_EINVAL, "max attempts must be 1-1000000 (got %d)",
                       o->max_attempts);
    if (o->backoff_jitter < 0 || o->backoff_jitter > 1)
        return ob_errf(errbuf, errlen, OUTBOX_EINVAL, "backoff jitter must be between 0 and 1");
    if (o->backoff_base_ms < 1 || o->backoff_max_ms < o->backoff_base_ms)
        return ob_errf(errbuf, errlen, OUTBOX_EINVAL,
                       "backoff needs 1 <= base (%u ms) <= max (%u ms)", o->backoff_base_ms,
                       o->backoff_max_ms);
    if (o->duplicate_window_ms < 1000)
        return ob_errf(errbuf, errlen, OUTBOX_EINVAL, "duplicate window must be at least 1000 ms");
    if (ob_sql_check_table(o->table, err, sizeof(err)) != 0)
        return ob_errf(errbuf, errlen, OUTBOX_EINVAL, "%s", err);
    if (ob_stream_name_check(o->stream) != 0)
        return ob_errf(errbuf, errlen, OUTBOX_EINVAL,
                       "stream name '%s' is not allowed: no spaces, '.', '*', '>', '/' or '\\'",
                       o->stream ? o->stream : "");
    if (check_prefix(o->subject_prefix) != 0)
        return ob_errf(errbuf, errlen, OUTBOX_EINVAL,
                       "subject prefix '%s' is not allowed: dot-separated tokens without "
                       "wildcards or whitespace",
                       o->subject_prefix ? o->subject_prefix : "");
    if (o->ce_source == NULL || *o->ce_source == '\0')
        return ob_errf(errbuf, errlen, OUTBOX_EINVAL, "ce-source must not be empty");
    ob_nats_url nu;
    if (ob_nats_url_parse(o->nats_url, &nu, err, sizeof(err)) != 0)
        return ob_errf(errbuf, errlen, OUTBOX_EINVAL, "%s", err);
    ob_nats_url_free(&nu);
    return OUTBOX_OK;
}

static int dup_str(const char **dst, const char *src) {
    *dst = src ? strdup(src) : NULL;
    return src == NULL || *dst != NULL ? 0 : -1;
}

int ob_relay_copy_options(outbox_relay *r, const outbox_relay_options *o) {
    r->o = *o;
    r->mode = ob_mode_pick(o->ordered, o->leader, o->cursor);
    int bad = 0;
    bad |= dup_str(&r->o.db_url, o->db_url);
    bad |= dup_str(&r->o.db_password, o->db_password);
    bad |= dup_str(&r->o.nats_url, o->nats_url);
    bad |= dup_str(&r->o.table, o->table);
    bad |= dup_str(&r->o.stream, o->stream);
    bad |= dup_str(&r->o.subject_prefix, o->subject_prefix);
    bad |= dup_str(&r->o.ce_source, o->ce_source);
    bad |= dup_str(&r->o.wake_subject, o->wake_subject);
    bad |= ob_tls_options_dup(&r->o) != 0;
    return bad ? -1 : 0;
}

void ob_relay_free_options(outbox_relay_options *o) {
    free((char *)o->db_url);
    free((char *)o->db_password);
    free((char *)o->nats_url);
    free((char *)o->table);
    free((char *)o->stream);
    free((char *)o->subject_prefix);
    free((char *)o->ce_source);
    free((char *)o->wake_subject);
    ob_tls_options_free(o);
}
