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

/* The reader closed: the lease goes now, not at the stop, so that the
 * reader's last cursor write is made while the buckets are still its own. */
static void c_closed(void *data) {
    outbox_relay *r = data;
    r->open_readers--;
    ob_relay_lease_stop(r);
    r->order.closed(r);
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
