/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Rows to messages: the subject, the reply subject that brings the ack back
 * to its slot, the headers and the data, published on the link's
 * connection. The scratch buffers are the link's, reused from one message
 * to the next.
 */
#include "link_int.h"

#include <string.h>

static int fail_with(ob_pub_fail *f, outbox_failure_kind kind, int code, const char *text) {
    f->kind = kind;
    f->code = code;
    size_t n = strlen(text);
    if (n >= sizeof(f->text))
        n = sizeof(f->text) - 1;
    memcpy(f->text, text, n);
    f->text[n] = '\0';
    f->len = n;
    return -1;
}

static outbox_failure_kind kind_of(natsStatus st) {
    switch (st) {
    case NATS_CONNECTION_CLOSED:
    case NATS_CONNECTION_DISCONNECTED:
    case NATS_NOT_YET_CONNECTED:
    case NATS_INSUFFICIENT_BUFFER:
    case NATS_IO_ERROR:
    case NATS_STALE_CONNECTION:
        return OUTBOX_FAIL_DISCONNECTED;
    default:
        return OUTBOX_FAIL_PUBLISH_ERROR;
    }
}

/* "<inbox>.<worker>.<gen>.<slot>" into l->reply; the inbox part is written
 * once per connection. */
static const char *reply_subject(ob_link *l, uint32_t worker, uint32_t gen, uint32_t slot) {
    if (l->reply_prefix == 0) {
        memcpy(l->reply, l->conn->inbox, l->conn->inbox_len);
        l->reply[l->conn->inbox_len] = '.';
        l->reply_prefix = l->conn->inbox_len + 1;
    }
    size_t n = l->reply_prefix;
    n += ob_u64_to_dec(worker, l->reply + n);
    l->reply[n++] = '.';
    n += ob_u64_to_dec(gen, l->reply + n);
    l->reply[n++] = '.';
    n += ob_u64_to_dec(slot, l->reply + n);
    l->reply[n] = '\0';
    return l->reply;
}

void ob_link_spent_flush(ob_link *l) {
    for (int i = 0; i < l->nspent; i++)
        natsMsg_Destroy(l->spent[i]);
    l->nspent = 0;
    l->spent_bytes = 0;
}

void ob_link_spend(ob_link *l, natsMsg *msg, size_t bytes) {
    if (l->nspent == LINK_SPENT_MAX || l->spent_bytes + bytes > LINK_SPENT_BYTES)
        ob_link_spent_flush(l);
    l->spent[l->nspent++] = msg;
    l->spent_bytes += bytes;
}

int ob_link_publish(ob_link *l, uint32_t worker, uint32_t gen, uint32_t slot, const ob_row *row,
                    ob_pub_fail *fail) {
    char err[512];
    outbox_failure_kind kind = OUTBOX_FAIL_PUBLISH_ERROR;
    if (l->nc == NULL || l->conn == NULL)
        return fail_with(fail, OUTBOX_FAIL_DISCONNECTED, 0, "not connected to NATS");
    ob_buf_reset(&l->subject);
    if (ob_message_subject(&l->subject, l->cfg.subject_prefix, row, err, sizeof(err)) != 0)
        return fail_with(fail, OUTBOX_FAIL_BAD_SUBJECT, 0, err);
    const char *reply = reply_subject(l, worker, gen, slot);

    natsMsg *msg = NULL;
    ob_message_opts mo = {l->cfg.ce_source, 0};
    if (ob_message_create(&msg, l->subject.p, reply, row, &mo, &l->scratch, &l->block, &kind, err,
                          sizeof(err)) != 0)
        return fail_with(fail, kind, 0, err);
    natsStatus st = natsConnection_PublishMsg(l->nc, msg);
    l->sends++;
    if (l->probe_slow && l->ops->busy)
        l->ops->busy(l);
    if (st == NATS_MAX_PAYLOAD) {
        /* Says which part is too big: the payload or the headers. */
        ob_message_too_big(msg, natsConnection_GetMaxPayload(l->nc), err, sizeof(err));
        natsMsg_Destroy(msg);
        return fail_with(fail, OUTBOX_FAIL_MAX_PAYLOAD, st, err);
    }
    ob_link_spend(l, msg, row->payload_len);
    if (st == NATS_OK)
        return 0;
    return fail_with(fail, kind_of(st), st, natsStatus_GetText(st));
}
