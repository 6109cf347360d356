/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The blocking JetStream publisher of the one-shot commands (js_blocking.h):
 * a plain connection (nats_check.h), a synchronous subscription on its own
 * inbox for the acks, and the relay's own message builder, so a message
 * published here is the one the relay would have published (only the reply
 * subject differs, which JetStream does not store).
 */
#include "js_blocking.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "log.h"
#include "nats_check.h"
#include "subject.h"

struct ob_jsb {
    natsConnection *nc;
    natsSubscription *sub;
    natsMsg *last; /* the last answer read, kept while ack->desc points into it */
    char inbox[64];
    size_t inbox_len;
    ob_buf subject, reply, scratch, block;
};

int ob_jsb_open(ob_jsb **out, const outbox_relay_options *o, char *err, size_t errlen) {
    *out = NULL;
    ob_jsb *j = calloc(1, sizeof(*j));
    if (j == NULL)
        return ob_errf(err, errlen, OUTBOX_ENOMEM, "out of memory");
    int rc = ob_nats_connect_blocking(o, 5000, 0, &j->nc, err, errlen);
    if (rc != OUTBOX_OK) {
        free(j);
        return rc;
    }
    natsInbox *inbox = NULL;
    natsStatus s = natsInbox_Create(&inbox);
    if (s == NATS_OK) {
        snprintf(j->inbox, sizeof(j->inbox), "%s", (const char *)inbox);
        j->inbox_len = strlen(j->inbox);
        natsInbox_Destroy(inbox);
        char subj[80];
        snprintf(subj, sizeof(subj), "%s.*", j->inbox);
        s = natsConnection_SubscribeSync(&j->sub, j->nc, subj);
    }
    if (s == NATS_OK)
        s = natsSubscription_SetPendingLimits(j->sub, -1, -1);
    if (s != NATS_OK) {
        ob_jsb_close(j);
        return ob_errf(err, errlen, OUTBOX_ENATS, "NATS: cannot subscribe to an inbox: %s",
                       natsStatus_GetText(s));
    }
    *out = j;
    return OUTBOX_OK;
}

/* 1 when some subject of the stream meets "<prefix>.*.>" (a stream that
 * lists none takes its own name only). */
static int takes_prefix(json_t *subjects, const char *prefix, char *listed, size_t n) {
    char mine[192];
    snprintf(mine, sizeof(mine), "%s.*.>", prefix);
    size_t i, used = 0;
    json_t *v;
    listed[0] = '\0';
    json_array_foreach(subjects, i, v) {
        const char *s = json_string_value(v);
        if (s && ob_subject_patterns_meet(s, mine))
            return 1;
        int k = snprintf(listed + used, n - used, "%s%s", used ? ", " : "", s ? s : "?");
        if (k < 0 || (size_t)k >= n - used)
            break;
        used += (size_t)k;
    }
    return 0;
}

static int read_info(json_t *info, const char *stream, const char *prefix, ob_jsb_stream *out,
                     char *err, size_t errlen) {
    json_t *e = json_object_get(info, "error");
    if (e) {
        json_int_t code = json_integer_value(json_object_get(e, "code"));
        const char *d = json_string_value(json_object_get(e, "description"));
        if (code == 404)
            return ob_errf(err, errlen, OUTBOX_ENOTFOUND,
                           "stream %s does not exist (create it first, with subjects '%s.>'; "
                           "nothing was published)",
                           stream, prefix);
        return ob_errf(err, errlen, OUTBOX_ENATS, "JetStream refused the stream info of %s: %s",
                       stream, d ? d : "?");
    }
    json_t *cfg = json_object_get(info, "config");
    char listed[160];
    if (!takes_prefix(json_object_get(cfg, "subjects"), prefix, listed, sizeof(listed)))
        return ob_errf(err, errlen, OUTBOX_ESCHEMA,
                       "stream %s takes no subject under '%s.' (it lists %s): name another "
                       "--subject-prefix or --stream; nothing was published",
                       stream, prefix, listed[0] ? listed : "none");
    out->window_ms =
        (uint64_t)json_integer_value(json_object_get(cfg, "duplicate_window")) / 1000000ULL;
    out->max_bytes = (int64_t)json_integer_value(json_object_get(cfg, "max_bytes"));
    out->messages =
        (uint64_t)json_integer_value(json_object_get(json_object_get(info, "state"), "messages"));
    return OUTBOX_OK;
}

int ob_jsb_stream_check(ob_jsb *j, const char *stream, const char *prefix, ob_jsb_stream *info,
                        char *err, size_t errlen) {
    memset(info, 0, sizeof(*info));
    if (ob_stream_name_check(stream) != 0)
        return ob_errf(err, errlen, OUTBOX_EINVAL,
                       "stream name '%s' is not allowed: no spaces, '.', '*', '>', '/' or '\\'",
                       stream ? stream : "");
    char subj[256];
    snprintf(subj, sizeof(subj), "$JS.API.STREAM.INFO.%s", stream);
    natsMsg *reply = NULL;
    natsStatus s = natsConnection_Request(&reply, j->nc, subj, NULL, 0, 5000);
    if (s != NATS_OK)
        return ob_errf(err, errlen, OUTBOX_ENATS, "JetStream does not answer (%s)",
                       s == NATS_NO_RESPONDERS ? "no responders: is JetStream enabled?"
                                               : natsStatus_GetText(s));
    json_error_t je;
    json_t *doc = json_loadb(natsMsg_GetData(reply), (size_t)natsMsg_GetDataLength(reply), 0, &je);
    natsMsg_Destroy(reply);
    if (doc == NULL)
        return ob_errf(err, errlen, OUTBOX_ENATS, "JetStream's stream info is not JSON: %s",
                       je.text);
    int rc = read_info(doc, stream, prefix, info, err, errlen);
    json_decref(doc);
    return rc;
}

int ob_jsb_stream_create(ob_jsb *j, const char *stream, const char *prefix, uint64_t window_ms,
                         int replicas, char *err, size_t errlen) {
    if (ob_stream_name_check(stream) != 0)
        return ob_errf(err, errlen, OUTBOX_EINVAL, "stream name '%s' is not allowed", stream);
    char subj[256], subjects[192];
    snprintf(subj, sizeof(subj), "$JS.API.STREAM.CREATE.%s", stream);
    snprintf(subjects, sizeof(subjects), "%s.>", prefix);
    json_t *cfg = json_pack("{s:s, s:[s], s:s, s:s, s:s, s:I, s:i}", "name", stream, "subjects",
                            subjects, "retention", "limits", "storage", "file", "discard", "old",
                            "duplicate_window", (json_int_t)(window_ms * 1000000ULL),
                            "num_replicas", replicas > 0 ? replicas : 1);
    char *text = cfg ? json_dumps(cfg, JSON_COMPACT) : NULL;
    json_decref(cfg);
    if (text == NULL)
        return ob_errf(err, errlen, OUTBOX_ENOMEM, "out of memory");
    natsMsg *reply = NULL;
    natsStatus s = natsConnection_Request(&reply, j->nc, subj, text, (int)strlen(text), 5000);
    free(text);
    if (s != NATS_OK)
        return ob_errf(err, errlen, OUTBOX_ENATS, "JetStream does not answer (%s)",
                       natsStatus_GetText(s));
    json_t *doc = json_loadb(natsMsg_GetData(reply), (size_t)natsMsg_GetDataLength(reply), 0, NULL);
    natsMsg_Destroy(reply);
    json_t *e = json_object_get(doc, "error");
    int rc = OUTBOX_OK;
    if (doc == NULL || e)
        rc = ob_errf(err, errlen, OUTBOX_ENATS, "JetStream refused to create stream %s: %s", stream,
                     e ? json_string_value(json_object_get(e, "description")) : "not JSON");
    json_decref(doc);
    return rc;
}

int ob_jsb_publish(ob_jsb *j, uint64_t tag, const char *prefix, const ob_message_opts *mo,
                   const ob_row *row, char *err, size_t errlen) {
    ob_buf_reset(&j->subject);
    if (ob_message_subject(&j->subject, prefix, row, err, errlen) != 0)
        return 1;
    ob_buf_reset(&j->reply);
    ob_buf_append(&j->reply, j->inbox, j->inbox_len);
    ob_buf_putc(&j->reply, '.');
    ob_buf_u64(&j->reply, tag);
    if (j->subject.oom || j->reply.oom) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    natsMsg *msg = NULL;
    outbox_failure_kind kind;
    if (ob_message_create(&msg, j->subject.p, j->reply.p, row, mo, &j->scratch, &j->block, &kind,
                          err, errlen) != 0)
        return 1;
    natsStatus s = natsConnection_PublishMsg(j->nc, msg);
    if (s == NATS_MAX_PAYLOAD)
        ob_message_too_big(msg, natsConnection_GetMaxPayload(j->nc), err, errlen);
    else if (s != NATS_OK)
        snprintf(err, errlen, "NATS refused the publish: %s", natsStatus_GetText(s));
    natsMsg_Destroy(msg);
    return s == NATS_OK ? 0 : -1;
}

int ob_jsb_next_ack(ob_jsb *j, uint32_t timeout_ms, uint64_t *tag, ob_puback *ack, char *err,
                    size_t errlen) {
    natsMsg_Destroy(j->last);
    j->last = NULL;
    natsStatus s = natsSubscription_NextMsg(&j->last, j->sub, timeout_ms);
    if (s == NATS_TIMEOUT)
        return 1;
    if (s != NATS_OK) {
        snprintf(err, errlen, "%s",
                 s == NATS_NO_RESPONDERS ? "no stream took a message's subject (no responders)"
                                         : natsStatus_GetText(s));
        return -1;
    }
    const char *subj = natsMsg_GetSubject(j->last);
    const char *dot = strrchr(subj, '.');
    *tag = dot ? strtoull(dot + 1, NULL, 10) : 0;
    const char *data = natsMsg_GetData(j->last);
    size_t len = (size_t)natsMsg_GetDataLength(j->last);
    if (ob_puback_parse(data, len, ack) != 0) {
        memset(ack, 0, sizeof(*ack));
        ack->desc = data;
        ack->desc_len = len;
    }
    return 0;
}

int ob_jsb_flush(ob_jsb *j, uint32_t timeout_ms, char *err, size_t errlen) {
    natsStatus s = natsConnection_FlushTimeout(j->nc, timeout_ms);
    if (s == NATS_OK)
        return 0;
    snprintf(err, errlen, "NATS: %s", natsStatus_GetText(s));
    return -1;
}

void ob_jsb_close(ob_jsb *j) {
    if (j == NULL)
        return;
    natsMsg_Destroy(j->last);
    natsSubscription_Destroy(j->sub);
    natsConnection_Destroy(j->nc);
    ob_buf_free(&j->subject);
    ob_buf_free(&j->reply);
    ob_buf_free(&j->scratch);
    ob_buf_free(&j->block);
    free(j);
}
