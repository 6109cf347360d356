/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The relay's cursor mode (--cursor): the bucket lease (presence lock 'c',
 * see lease.h) and the cursor reader (cursor.h) that delivers the owned
 * buckets. relay.c makes it in place of the workers and the ordered modes'
 * shares; the reader's publishes come back through the link as a worker's
 * would, with the reader's number.
 */
#include "relay_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cursor.h"
#include "schema.h"

static void lease_changed(void *data, uint64_t owned) {
    outbox_relay *r = data;
    r->stats.buckets_owned = (uint32_t)ob_bucket_count(owned);
    if (r->cursor)
        ob_cursor_owned(r->cursor, owned);
}

static int c_lease_valid(void *data) {
    outbox_relay *r = data;
    return ob_lease_valid(r->order.lease);
}

static unsigned long c_lease_session(void *data) {
    outbox_relay *r = data;
    return ob_lease_session(r->order.lease);
}

static int c_drain_wanted(void *data) {
    outbox_relay *r = data;
    return r->o.on_drained != NULL && !r->drained && r->phase == R_RUNNING &&
           ob_lease_checked(r->order.lease);
}

static void c_drained(void *data) {
    outbox_relay *r = data;
    r->drained = 1;
    OB_INFO(&r->log, "no pending rows left (drained): every owned bucket's cursor passed the "
                     "last committed row");
    if (r->o.on_drained)
        r->o.on_drained(r, r->o.drained_data);
}

static void c_fatal(void *data, const char *why) {
    outbox_relay *r = data;
    r->order.fatal(r, why);
}

static void proof_closed(void *data) {
    outbox_relay *r = data;
    r->proof = NULL;
    r->open_readers--;
    r->order.closed(r);
}

/* The reader closed: the lease goes now, not at the stop, so that the
 * reader's last cursor write is made while the buckets are still its own.
 * The members' proof it borrowed goes after it. */
static void c_closed(void *data) {
    outbox_relay *r = data;
    ob_relay_lease_stop(r);
    if (r->proof) {
        ob_gap_proof_close(r->proof, proof_closed, r);
        return;
    }
    r->open_readers--;
    r->order.closed(r);
}

void ob_relay_cursor_cluster(outbox_relay *r, const ob_cluster *c) {
    if (r->cursor == NULL || !ob_cluster_is_galera(c))
        return;
    if (r->proof == NULL) {
        r->proof = ob_gap_proof_new(r->loop, &r->env.db, &r->log);
        if (r->proof == NULL) {
            r->order.fatal(r, "out of memory for the members' gap proof");
            return;
        }
        ob_cursor_members(r->cursor, r->proof, r->order.lease);
    }
    char was[sizeof(r->members_why)];
    snprintf(was, sizeof(was), "%s", r->members_why);
    r->members_why[0] = '\0';
    if (c->self[0] == '\0' || strcmp(c->self, "AUTO") == 0)
        snprintf(r->members_why, sizeof(r->members_why),
                 "cursor: wsrep_node_incoming_address is not set on this node: the other "
                 "members cannot be named, gaps wait");
    else if (ob_gap_proof_set(r->proof, c->members, c->size, c->self) != 0)
        snprintf(r->members_why, sizeof(r->members_why),
                 "cursor: the member list '%.64s' cannot serve (wsrep_node_incoming_address "
                 "must be set on every node): gaps wait",
                 c->members);
    if (r->members_why[0] && strcmp(was, r->members_why) != 0)
        OB_WARN(&r->log, "%s", r->members_why);
}

const char *ob_relay_cursor_members_why(const outbox_relay *r) {
    if (r->proof == NULL)
        return NULL;
    if (r->members_why[0])
        return r->members_why;
    return ob_gap_proof_why(r->proof);
}

int ob_relay_cursor_prepare(outbox_relay *r, void (*fatal)(outbox_relay *r, const char *why),
                            void (*closed)(outbox_relay *r)) {
    r->order.fatal = fatal;
    r->order.closed = closed;
    r->order.readers_hold_lease = 1;
    r->stats.buckets_total = OB_BUCKETS;
    ob_buf ct = OB_BUF_INIT;
    ob_cursor_table_name(&ct, r->o.table);
    r->ctable = ct.p;
    if (r->ctable == NULL)
        return -1;

    r->order.lease = ob_relay_make_lease(r, lease_changed);
    if (r->order.lease == NULL)
        return -1;

    const outbox_relay_options *o = &r->o;
    ob_cursor_config cc;
    memset(&cc, 0, sizeof(cc));
    cc.env = &r->env;
    cc.qtable = r->qtable;
    cc.ctable = r->ctable;
    cc.table = o->table;
    cc.lock_base = r->order.base;
    cc.db_user = r->db.user;
    cc.poll_min_ms = o->poll_min_ms ? o->poll_min_ms : 1;
    cc.horizon_ms = (uint64_t)(o->backoff_max_ms > o->backoff_base_ms ? o->backoff_max_ms
                                                                      : o->backoff_base_ms) +
                    1000;
    cc.index = 0;
    cc.trust_seq = o->cursor_trust_seq;
    ob_cursor_owner co = {
        c_lease_valid, c_lease_session, c_drain_wanted, c_drained, c_fatal, c_closed, r};
    r->readers = calloc(1, sizeof(*r->readers));
    if (r->readers == NULL)
        return -1;
    r->cursor = ob_cursor_new(&cc, &co);
    if (r->cursor == NULL)
        return -1;
    r->readers[0] = (ob_reader){&ob_cursor_reader_ops, r->cursor};
    r->nreaders = 1; /* its publisher number, cc.index */
    return 0;
}
