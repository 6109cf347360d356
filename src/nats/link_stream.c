/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The stream, as the link asks about it: the info and create requests, and
 * what their replies mean. Pure decisions over the link's fields and its
 * log; link.c acts on the answer (which state comes next), so nothing here
 * calls the state machine back.
 *
 * A stream the relay has once seen (an info or create answered with its
 * configuration) is never created again: found missing later, it was
 * deleted under the relay, and the events it held are gone. Made again with
 * the relay's own settings it would look healthy while it is not the
 * operator's stream (other replicas, no limits, wider subjects), so the
 * link pauses instead, says so once, and waits for the operator to make it
 * again as it was (LS_PAUSE).
 */
#include "link_int.h"

#include "subject.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* JetStream API error codes the link reacts to. */
#define JS_ERR_STREAM_NOT_FOUND 10059
#define JS_ERR_SUBJECTS_OVERLAP 10065
#define JS_ERR_NO_PEERS 10005 /* no suitable peers for placement: a cluster still settling */

static void create_body(const ob_link *l, ob_buf *body) {
    char subjects[160];
    snprintf(subjects, sizeof(subjects), "%s.>", l->cfg.subject_prefix);
    json_t *cfg =
        json_pack("{s:s, s:[s], s:s, s:s, s:s, s:I, s:i}", "name", l->cfg.stream, "subjects",
                  subjects, "retention", "limits", "storage", "file", "discard", "old",
                  "duplicate_window", (json_int_t)(l->cfg.duplicate_window_ms * 1000000ULL),
                  "num_replicas", l->cfg.replicas > 0 ? l->cfg.replicas : 1);
    char *text = cfg ? json_dumps(cfg, JSON_COMPACT) : NULL;
    if (text)
        ob_buf_puts(body, text);
    free(text);
    json_decref(cfg);
}

void ob_link_stream_request(const ob_link *l, int create, char *subj, size_t n, ob_buf *body) {
    snprintf(subj, n, "$JS.API.STREAM.%s.%s", create ? "CREATE" : "INFO", l->cfg.stream);
    if (create)
        create_body(l, body);
}

static int subjects_cover(json_t *subjects, const char *prefix) {
    size_t i;
    json_t *v;
    size_t pl = strlen(prefix);
    json_array_foreach(subjects, i, v) {
        const char *s = json_string_value(v);
        if (s == NULL)
            continue;
        if (strcmp(s, ">") == 0)
            return 1;
        if (strncmp(s, prefix, pl) == 0 && strcmp(s + pl, ".>") == 0)
            return 1;
    }
    return 0;
}

/* 1 when the stream's subjects take some subject the relay publishes to
 * (`<prefix>.<aggregate_type>.<event_type>`), or list none (a stream
 * without subjects takes its own name: not for the link to judge). */
static int subjects_take_any(const ob_link *l, json_t *subjects) {
    char mine[192];
    snprintf(mine, sizeof(mine), "%s.*.>", l->cfg.subject_prefix);
    if (!json_is_array(subjects) || json_array_size(subjects) == 0)
        return 1;
    size_t i;
    json_t *v;
    json_array_foreach(subjects, i, v) {
        const char *s = json_string_value(v);
        if (s && ob_subject_patterns_meet(s, mine))
            return 1;
    }
    return 0;
}

/* Appends to out (of n bytes, `*used` taken) what fits. */
static void add(char *out, size_t n, size_t *used, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void add(char *out, size_t n, size_t *used, const char *fmt, ...) {
    if (*used >= n - 1)
        return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(out + *used, n - *used, fmt, ap);
    va_end(ap);
    if (k > 0)
        *used = (size_t)k < n - *used ? *used + (size_t)k : n - 1;
}

/* "a, b" of the stream's subjects. */
static void list_subjects(json_t *subjects, char *out, size_t n) {
    size_t used = 0, i;
    json_t *v;
    out[0] = '\0';
    json_array_foreach(subjects, i, v) {
        const char *s = json_string_value(v);
        add(out, n, &used, "%s%s", i ? ", " : "", s ? s : "?");
    }
}

static const char *text_of(json_t *o, const char *key) {
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "?";
}

/* What the operator needs to make the stream again as it was: its
 * subjects, replicas, storage and the limits it had (those set). */
static void describe(json_t *config, char *out, size_t n) {
    static const char *const limits[] = {"max_msgs", "max_bytes", "max_msgs_per_subject",
                                         "max_msg_size", "max_consumers"};
    char subjects[160];
    size_t used = 0;
    list_subjects(json_object_get(config, "subjects"), subjects, sizeof(subjects));
    add(out, n, &used, "subjects %s, %lld replica(s), %s storage, %s retention",
        subjects[0] ? subjects : "(its name)",
        (long long)json_integer_value(json_object_get(config, "num_replicas")),
        text_of(config, "storage"), text_of(config, "retention"));
    for (size_t i = 0; i < sizeof(limits) / sizeof(limits[0]); i++) {
        json_int_t v = json_integer_value(json_object_get(config, limits[i]));
        if (v > 0)
            add(out, n, &used, ", %s %lld", limits[i], (long long)v);
    }
    json_int_t age = json_integer_value(json_object_get(config, "max_age"));
    if (age > 0)
        add(out, n, &used, ", max_age %llds", (long long)(age / 1000000000LL));
    const char *discard = json_string_value(json_object_get(config, "discard"));
    if (discard && strcmp(discard, "old") != 0)
        add(out, n, &used, ", discard %s", discard);
    add(out, n, &used, ", duplicate window %llds",
        (long long)(json_integer_value(json_object_get(config, "duplicate_window")) /
                    1000000000LL));
}

/* The stream answers but takes none of the relay's subjects: its
 * configuration is the broker side's fault, not the rows'. Publishing
 * pauses (no row is charged, readiness ends with the reason) and the stream
 * is asked again until it takes them. Said once. */
static link_stream_next pause_unlisted(ob_link *l, json_t *subjects) {
    if (!l->unlisted) {
        char listed[160];
        list_subjects(subjects, listed, sizeof(listed));
        snprintf(l->unlisted_why, sizeof(l->unlisted_why),
                 "stream %s lists no subject the relay publishes to ('%s.>'; it lists %s)",
                 l->cfg.stream, l->cfg.subject_prefix, listed);
        OB_ERROR(l->log,
                 "nats: %s; pausing, rows keep their attempts, until a stream takes the "
                 "subjects again",
                 l->unlisted_why);
        l->unlisted = 1;
        l->refusals++;
    }
    return LS_PAUSE;
}

/* A stream the relay had seen is not found: it was deleted under the
 * relay. Said once per loss, with what the stream was. */
static link_stream_next pause_missing(ob_link *l) {
    if (!l->missing) {
        snprintf(l->missing_why, sizeof(l->missing_why),
                 "stream %s was deleted while the relay ran (the events it held are gone); "
                 "publishing nothing until it exists again",
                 l->cfg.stream);
        OB_ERROR(l->log,
                 "nats: stream %s was deleted while the relay ran: the events it held are "
                 "gone; publishing nothing (rows keep their attempts) until it exists again. "
                 "Re-create it as it was (%s) and rebuild it from the outbox "
                 "(docs/operations.md, \"The stream was deleted\")",
                 l->cfg.stream, l->stream_was[0] ? l->stream_was : "its settings not read");
        l->missing = 1;
        l->losses++;
        l->top_seq = 0; /* a stream made again starts over */
        l->refusals++;
        l->unlisted = 0; /* the stream is gone: that is the reason now */
        l->full = l->full_streak = 0;
    }
    return LS_PAUSE;
}

/* The stream as an info or create reply describes it. */
static link_stream_next check_stream(ob_link *l, json_t *info, char *why, size_t n) {
    json_t *config = json_object_get(info, "config");
    json_t *subjects = json_object_get(config, "subjects");
    json_int_t window_ns = json_integer_value(json_object_get(config, "duplicate_window"));
    uint64_t window_ms = (uint64_t)window_ns / 1000000ULL;
    l->window_ms = window_ms;
    l->max_bytes = (int64_t)json_integer_value(json_object_get(config, "max_bytes"));
    l->stream_seen = 1;
    l->stream_lists = json_is_array(subjects) && json_array_size(subjects) > 0;
    describe(config, l->stream_was, sizeof(l->stream_was));
    if (l->missing) {
        OB_WARN(l->log,
                "nats: stream %s exists again (%s); it holds none of the events published "
                "before its deletion unless they were restored",
                l->cfg.stream, l->stream_was);
        l->missing = 0;
    }
    /* A clustered server reports the stream's cluster; one replica there
     * means one node's loss stops the stream. */
    json_t *cluster = json_object_get(info, "cluster");
    json_int_t replicas = json_integer_value(json_object_get(config, "num_replicas"));
    if (json_string_value(json_object_get(cluster, "name")) && replicas <= 1 &&
        !l->warned_replicas++)
        OB_WARN(l->log,
                "nats: stream %s has a single replica on a clustered server: losing the node that "
                "holds it stops the relay (create it with more replicas, --stream-replicas)",
                l->cfg.stream);
    if (!subjects_take_any(l, subjects))
        return pause_unlisted(l, subjects);
    if (l->unlisted) {
        OB_INFO(l->log, "nats: stream %s takes '%s.>' again; resuming", l->cfg.stream,
                l->cfg.subject_prefix);
        l->unlisted = 0;
    }
    if (subjects && !subjects_cover(subjects, l->cfg.subject_prefix) && !l->warned_subjects++)
        OB_WARN(l->log,
                "nats: stream %s does not list the subject '%s.>'; publishes may find no "
                "stream",
                l->cfg.stream, l->cfg.subject_prefix);
    if (window_ms < l->cfg.retry_horizon_ms) {
        snprintf(
            why, n,
            "stream %s keeps Msg-Ids for %llu ms, shorter than the relay's retry horizon of "
            "%llu ms (ack timeout + the longer of the maximum backoff and the database's operation "
            "timeout): a late retry could be stored twice",
            l->cfg.stream, (unsigned long long)window_ms,
            (unsigned long long)l->cfg.retry_horizon_ms);
        if (l->cfg.strict_duplicate_window) {
            OB_ERROR(l->log, "nats: %s; refusing to run (strict duplicate window)", why);
            return LS_FATAL;
        }
        if (!l->warned_window)
            OB_WARN(l->log, "nats: %s", why);
        l->warned_window = 1;
    }
    if (l->elsewhere) {
        OB_INFO(l->log, "nats: stream %s takes '%s.>' again; resuming", l->cfg.stream,
                l->cfg.subject_prefix);
        l->elsewhere = 0;
    }
    ob_logf(l->log, l->say_ready ? OUTBOX_LOG_INFO : OUTBOX_LOG_DEBUG,
            "nats: stream %s is ready (duplicate window %llu ms)", l->cfg.stream,
            (unsigned long long)window_ms);
    l->say_ready = 0;
    return LS_READY;
}

/* JetStream's error answer to the request. */
static link_stream_next refused(ob_link *l, json_t *err, char *why, size_t n) {
    int code = (int)json_integer_value(json_object_get(err, "err_code"));
    const char *desc = json_string_value(json_object_get(err, "description"));
    if (!l->stream_create && code == JS_ERR_STREAM_NOT_FOUND) {
        if (l->stream_seen)
            return pause_missing(l);
        OB_INFO(l->log, "nats: stream %s does not exist; creating it for '%s.>'", l->cfg.stream,
                l->cfg.subject_prefix);
        return LS_CREATE;
    }
    if (l->stream_create && code == JS_ERR_SUBJECTS_OVERLAP) {
        OB_WARN(l->log,
                "nats: cannot create stream %s: %s; another stream already takes '%s.>', "
                "publishing to it",
                l->cfg.stream, desc ? desc : "subjects overlap", l->cfg.subject_prefix);
        return LS_READY;
    }
    if (l->stream_create && !l->ever_ready && code != JS_ERR_NO_PEERS) {
        /* The stream as configured cannot be made (replicas the server
         * cannot have, a name or limit it refuses): a misconfiguration that
         * retrying will not heal. A cluster still placing peers will. */
        snprintf(why, n, "nats: JetStream refused to create stream %s: %s (%d)", l->cfg.stream,
                 desc ? desc : "?", code);
        OB_ERROR(l->log, "%s", why);
        return LS_FATAL;
    }
    OB_WARN(l->log, "nats: JetStream refused the stream %s request: %s (%d); retrying",
            l->stream_create ? "create" : "info", desc ? desc : "?", code);
    return LS_RETRY;
}

link_stream_next ob_link_stream_reply(ob_link *l, const link_reply *msg, char *why, size_t n) {
    if (msg->no_responders) {
        OB_WARN(l->log, "nats: JetStream is not answering (no responders); retrying");
        return LS_RETRY;
    }
    json_error_t jerr;
    json_t *root = json_loadb(msg->data ? msg->data : "", msg->len, 0, &jerr);
    if (root == NULL) {
        OB_WARN(l->log, "nats: unreadable JetStream reply: %s; retrying", jerr.text);
        return LS_RETRY;
    }
    link_stream_next next;
    json_t *err = json_object_get(root, "error");
    if (err == NULL) {
        if (l->stream_create)
            OB_INFO(l->log, "nats: created stream %s", l->cfg.stream);
        next = check_stream(l, root, why, n);
    } else {
        next = refused(l, err, why, n);
    }
    json_decref(root);
    return next;
}

/* One connection's messages are stored in the order they are published,
 * so the sequences its stored acks give only grow (a duplicate's is the
 * first copy's: not read here). A sequence below the highest one seen means
 * the stream lost what it had acknowledged: deleted and made again between
 * two publishes (too fast for a publish to find it missing), restored from
 * a backup, or a server that lost its unsynced writes in a crash. */
int ob_link_stream_stored(ob_link *l, uint64_t seq) {
    if (seq >= l->top_seq) {
        l->top_seq = seq;
        return 0;
    }
    OB_ERROR(l->log,
             "nats: stream %s went back from sequence %llu to %llu while the relay ran: it was "
             "deleted and made again, restored, or lost messages it had acknowledged; events it "
             "held are gone; rebuild it from the outbox (docs/operations.md, \"The stream was "
             "deleted\")",
             l->cfg.stream, (unsigned long long)l->top_seq, (unsigned long long)seq);
    l->losses++;
    l->top_seq = seq;
    return 1;
}

int ob_link_stream_elsewhere(ob_link *l, const ob_ack *a) {
    if ((a->result != OB_ACKED_STORED && a->result != OB_ACKED_DUPLICATE) || a->stream == NULL ||
        !l->stream_seen || !l->stream_lists)
        return 0;
    size_t n = strlen(l->cfg.stream);
    if (a->stream_len == n && memcmp(a->stream, l->cfg.stream, n) == 0)
        return 0;
    if (!l->elsewhere) {
        int len = a->stream_len > 128 ? 128 : (int)a->stream_len;
        snprintf(l->elsewhere_why, sizeof(l->elsewhere_why),
                 "stream %.*s, not the relay's stream %s, stores the relay's subjects ('%s.>'); "
                 "publishing nothing until stream %s takes them again",
                 len, a->stream, l->cfg.stream, l->cfg.subject_prefix, l->cfg.stream);
        OB_ERROR(l->log,
                 "nats: %s (rows keep their attempts; the messages it stored are not counted "
                 "delivered and are published again to stream %s)",
                 l->elsewhere_why, l->cfg.stream);
        l->elsewhere = 1;
        l->refusals++;
    }
    return 1;
}
