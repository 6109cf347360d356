/*
 * The relay's ordered modes: the lease that says which buckets this
 * instance owns, and each worker's share of them. In the unordered mode
 * the lease only holds this relay's mode lock and watches for relays of
 * another mode on the table (see lease.h).
 *
 * The owned buckets are dealt to the workers by their rank: the i-th owned
 * bucket goes to worker i % connections, so that one worker reads a bucket
 * at a time and the buckets spread evenly. Each worker's fetch statement is
 * built from its share when the share changes, into the worker's spare
 * buffer: the statement in use must stay untouched until its answer, so the
 * worker switches to the new one when it starts its next fetch. In leader mode the one
 * worker owns everything while the instance leads, and reads the whole
 * table in seq order.
 *
 * Fencing: each fetch statement that reads owned buckets ends with
 * DO GET_LOCK of the worker's lock (in the same round trip), named after the lease session, so that
 * an instance that finds this one's lease session silent can find and end
 * the worker sessions that hold its row locks too. While the lease is not
 * proven recently (ob_lease_valid) the workers fetch nothing and publish
 * nothing: by the time another instance may end this one, it has stopped.
 */
#include "relay_int.h"

#include <stdlib.h>
#include <string.h>

static const char no_fetch[] = "START TRANSACTION; SELECT 1 FROM DUAL WHERE 0";

static void build_fetch(outbox_relay *r, int i) {
    ob_buf *b = &r->order.sql[2 * i + !r->order.cur[i]];
    ob_buf_reset(b);
    r->order.fresh[i] = 1;
    if (r->o.leader && r->order.share[i] == OB_ALL_BUCKETS)
        ob_sql_fetch_strict(b, r->qtable, r->o.batch_size);
    else
        ob_sql_fetch_buckets(b, r->qtable, r->order.share[i], r->o.batch_size);
    /* After the rows' statement, whose result the worker reads second. */
    unsigned long session = ob_lease_session(r->order.lease);
    if (r->order.share[i] && session) {
        char name[64];
        ob_lease_worker_lock(name, r->order.base, session, i);
        ob_buf_printf(b, "; DO GET_LOCK(%s, 0)", name);
    }
}

static size_t fetch_sql(void *data, uint32_t index, const char **sql) {
    outbox_relay *r = data;
    if (r->order.share[index] && !ob_lease_valid(r->order.lease)) {
        *sql = no_fetch; /* not sure of the lease: claim nothing */
        return sizeof(no_fetch) - 1;
    }
    if (!r->order.fresh[index] && r->order.sql[2 * index + r->order.cur[index]].oom)
        build_fetch(r, index); /* the last build ran out of memory: try again */
    if (r->order.fresh[index]) {
        r->order.cur[index] = !r->order.cur[index];
        r->order.fresh[index] = 0;
    }
    ob_buf *b = &r->order.sql[2 * index + r->order.cur[index]];
    *sql = b->p;
    return b->oom ? 0 : b->len;
}

static void lease_changed(void *data, uint64_t owned) {
    outbox_relay *r = data;
    int rank = 0;
    for (int i = 0; i < r->nworkers; i++)
        r->order.share[i] = 0;
    if (r->o.leader) {
        r->order.share[0] = owned;
    } else {
        for (int k = 0; k < OB_BUCKETS; k++)
            if (owned >> k & 1)
                r->order.share[rank++ % r->nworkers] |= 1ULL << k;
    }
    for (int i = 0; i < r->nworkers; i++)
        build_fetch(r, i);
    r->stats.buckets_owned = (uint32_t)ob_bucket_count(owned);
    r->stats.leader = r->o.leader && owned != 0;
    /* Newly owned buckets may hold rows: idle workers look at once. */
    ob_flow_wake_all(&r->flow, NULL);
}

/* Before each publish. A stopping relay finishes its batches: its lease is
 * closing, but its workers' row locks still hold the rows. */
static int may_publish(void *data) {
    outbox_relay *r = data;
    return r->phase >= R_STOPPING || ob_lease_valid(r->order.lease);
}

/* Unordered: nothing leaves before the lease has looked for another mode. */
static int plain_may_publish(void *data) {
    outbox_relay *r = data;
    return r->phase >= R_STOPPING || ob_lease_checked(r->order.lease);
}

static void lease_fatal(void *data, const char *why) {
    outbox_relay *r = data;
    r->order.fatal(r, why);
}

static void lease_closed(void *data) {
    outbox_relay *r = data;
    r->order.lease = NULL;
    r->order.lease_open = 0;
    r->order.closed(r);
}

/* The lease's settings for this relay: a plain lease (the mode check alone)
 * in the unordered mode. */
static ob_lease *make_lease(outbox_relay *r) {
    ob_lease_config lc;
    memset(&lc, 0, sizeof(lc));
    lc.loop = r->loop;
    lc.log = &r->log;
    lc.db = r->env.db;
    lc.db.init_command = NULL;
    lc.db.op_timeout_ms = 10000;
    lc.qtable = r->qtable;
    lc.table = r->o.table;
    ob_lease_base(lc.base, r->db.database, r->o.table);
    memcpy(r->order.base, lc.base, sizeof(r->order.base));
    lc.leader = r->o.leader;
    lc.plain = !r->o.ordered && !r->o.leader;
    lc.interval_ms = 1000;
    lc.takeover_ms = r->o.lease_timeout_ms;
    ob_lease_callbacks cbs = {lease_changed, lease_fatal, lease_closed, r};
    return ob_lease_new(&lc, &cbs);
}

int ob_relay_order_prepare(outbox_relay *r, void (*fatal)(outbox_relay *r, const char *why),
                           void (*closed)(outbox_relay *r)) {
    r->order.fatal = fatal;
    r->order.closed = closed;
    if (!r->o.ordered && !r->o.leader) {
        r->env.owner.may_publish = plain_may_publish;
        r->order.lease = make_lease(r);
        return r->order.lease ? 0 : -1;
    }
    ob_worker_env *e = &r->env;
    e->order = r->o.leader ? OB_ORDER_STRICT : OB_ORDER_AGGREGATE;
    e->owner.fetch_sql = fetch_sql;
    e->owner.may_publish = may_publish;
    r->stats.buckets_total = OB_BUCKETS;
    r->order.share = calloc((size_t)r->nworkers, sizeof(uint64_t));
    r->order.sql = calloc((size_t)r->nworkers * 2, sizeof(ob_buf));
    r->order.cur = calloc((size_t)r->nworkers, 2);
    r->order.fresh = r->order.cur ? r->order.cur + r->nworkers : NULL;
    if (r->order.share == NULL || r->order.sql == NULL || r->order.cur == NULL)
        return -1;
    for (int i = 0; i < r->nworkers; i++)
        build_fetch(r, i); /* nothing owned yet: empty fetches */

    r->order.lease = make_lease(r);
    return r->order.lease ? 0 : -1;
}

void ob_relay_order_start(outbox_relay *r) {
    if (r->order.lease == NULL)
        return;
    r->order.lease_open = 1;
    ob_lease_start(r->order.lease);
}

void ob_relay_order_stop(outbox_relay *r) {
    if (r->order.lease_open && r->order.lease)
        ob_lease_close(r->order.lease);
}

void ob_relay_order_free(outbox_relay *r) {
    if (r->order.lease && !r->order.lease_open)
        ob_lease_free(r->order.lease);
    if (r->order.sql)
        for (int i = 0; i < r->nworkers * 2; i++)
            ob_buf_free(&r->order.sql[i]);
    free(r->order.sql);
    free(r->order.cur);
    free(r->order.share);
    memset(&r->order, 0, sizeof(r->order));
}
