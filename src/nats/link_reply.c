/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A reply on the link's inbox read into a small record: the reply subject
 * says whose publish it answers ("<inbox>.<worker>.<gen>.<slot>") or which
 * JetStream API request ("<inbox>.c.<seq>"), and the data is a PubAck.
 * Both clients use it: the one on the loop where it reads its
 * subscription, the threaded one on nats.c's delivery thread. It touches
 * nothing but the message and the record.
 */
#include "link_int.h"

#include <string.h>

#include "puback.h"

static int parse_u32(const char **p, const char *end, uint32_t *out) {
    const char *s = *p;
    uint64_t v = 0;
    if (s >= end || *s < '0' || *s > '9')
        return -1;
    while (s < end && *s >= '0' && *s <= '9') {
        v = v * 10 + (uint64_t)(*s - '0');
        if (v > UINT32_MAX)
            return -1;
        s++;
    }
    *p = s;
    *out = (uint32_t)v;
    return 0;
}

static void read_puback(natsMsg *msg, ob_ack *a) {
    const char *data = natsMsg_GetData(msg);
    size_t len = (size_t)natsMsg_GetDataLength(msg);
    ob_puback pa;
    if (ob_puback_parse(data, len, &pa) != 0) {
        a->result = OB_ACKED_GARBLED;
        a->text = data ? data : "";
        a->text_len = data ? len : 0;
    } else if (pa.ok) {
        a->result = pa.duplicate ? OB_ACKED_DUPLICATE : OB_ACKED_STORED;
        a->seq = pa.seq;
        a->stream = pa.stream;
        a->stream_len = pa.stream_len;
    } else {
        a->result = OB_ACKED_ERROR;
        a->code = pa.code;
        a->err_code = pa.err_code;
        a->text = pa.desc ? pa.desc : "";
        a->text_len = pa.desc_len;
    }
}

int ob_link_read_reply(const link_conn *c, natsMsg *msg, inbox_reply *r) {
    const char *subj = natsMsg_GetSubject(msg);
    size_t n = strlen(subj);
    memset(r, 0, sizeof(*r));
    if (n <= c->inbox_len + 1 || memcmp(subj, c->inbox, c->inbox_len) != 0 ||
        subj[c->inbox_len] != '.')
        return -1;
    const char *p = subj + c->inbox_len + 1, *end = subj + n;
    if (*p == 'c' && p + 1 < end && p[1] == '.') {
        p += 2;
        if (parse_u32(&p, end, &r->ack.slot) != 0 || p != end)
            return -1;
        r->control = 1;
        r->msg = msg;
        return 0;
    }
    if (parse_u32(&p, end, &r->ack.worker) != 0 || p == end || *p++ != '.' ||
        parse_u32(&p, end, &r->ack.gen) != 0 || p == end || *p++ != '.' ||
        parse_u32(&p, end, &r->ack.slot) != 0 || p != end)
        return -1;
    if (natsMsg_IsNoResponders(msg))
        r->ack.result = OB_ACKED_NO_RESPONDERS;
    else
        read_puback(msg, &r->ack);
    return 0;
}
