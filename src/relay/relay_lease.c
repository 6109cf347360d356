/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The relay's ordered modes: the lease that says which buckets this
 * instance owns, and each worker's share of them. In the unordered mode
 * the lease only holds this relay's mode lock and watches for relays of
 * another mode on the table (see lease.h).
 *
 * The owned buckets are dealt to the workers by their rank: the i-th owned
 * bucket goes to worker i % connections, so that one worker reads a bucket
 * at a time and the buckets spread evenly. Each worker's fetch statement is
 * built when the worker starts a fetch (its previous statement is done
 * with then) if its share or its byte budget's row limit changed since. In
 * leader mode the one worker owns everything while the instance leads, and
 * reads the whole table in seq order.
 *
 * Fencing: each fetch statement that reads owned buckets takes the
 * worker's lock before it reads a row, named after the lease session, so that
 * an instance that finds this one's lease session silent can find and end
 * the worker sessions that hold its row locks too. While the lease is not
 * proven recently (ob_lease_valid) the workers fetch nothing and publish
 * nothing: by the time another instance may end this one, it has stopped.
 *
 * Cursor mode's buckets: a bucket the lease gives is read only once the
 * cursor switch (mode_switch.h) has found no cursor row for it, or has
 * converted its rows to the ordered modes' meaning and deleted the row.
 */
#include "relay_int.h"

#include "mode_switch.h"

#include <stdlib.h>
#include <string.h>

static const char no_fetch[] = "START TRANSACTION; SELECT 1 FROM DUAL WHERE 0";

/* `limit` of the buckets of `mask`, from the n-th on (round robin). */
static uint64_t some_buckets(uint64_t mask, int limit, unsigned n) {
    int have = ob_bucket_count(mask), skip = (int)(n % (unsigned)have);
    uint64_t out = 0;
    for (int pass = 0; pass < 2 && limit > 0; pass++)
        for (int k = 0; k < OB_BUCKETS && limit > 0; k++) {
            if (!(mask >> k & 1) || out >> k & 1)
                continue;
            if (skip > 0) {
                skip--;
                continue;
            }
            out |= 1ULL << k;
            limit--;
        }
    return out;
}

/* Worker i's fetch for at most `limit` rows. More owned buckets than rows
 * allowed (a small byte budget): `limit` of them per fetch, in turn, one
 * row each. */
static void build_fetch(outbox_relay *r, int i, int limit) {
    ob_buf *b = &r->order.sql[i];
    uint64_t share = r->order.share[i];
    ob_buf_reset(b);
    r->order.built[i] = limit;
    /* The worker's lock, taken before the fetch reads a row. */
    char name[64];
    unsigned long session = ob_lease_session(r->order.lease);
    if (session)
        ob_lease_worker_lock(name, r->order.base, session, i);
    const char *lock = session ? name : NULL;
    /* On Galera (the lease table) rows of other nodes can come late (sql.h). */
    int late = ob_lease_on_table(r->order.lease);
    if (r->mode->lease == OB_MODE_LEASE_LEADERSHIP && share == OB_ALL_BUCKETS) {
        ob_sql_fetch_strict(b, r->qtable, limit, lock, late);
        return;
    }
    if (ob_bucket_count(share) > limit) {
        share = some_buckets(share, limit, r->order.turn[i]++);
        r->order.built[i] = 0; /* another turn next time */
    }
    ob_sql_fetch_buckets(b, r->qtable, share, limit, lock, late);
}

/* Called when the worker starts a fetch, so its last statement is done
 * with: the statement is rebuilt in place when the share or the limit
 * changed. */
static size_t fetch_sql(void *data, uint32_t index, int limit, const char **sql) {
    outbox_relay *r = data;
    if (r->order.share[index] && !ob_lease_valid(r->order.lease)) {
        *sql = no_fetch; /* not sure of the lease: claim nothing */
        return sizeof(no_fetch) - 1;
    }
    ob_buf *b = &r->order.sql[index];
    if (r->order.built[index] != limit || b->oom)
        build_fetch(r, (int)index, limit);
    *sql = b->p;
    return b->oom ? 0 : b->len;
}

/* Deals the owned buckets that are ready (no cursor row) to the workers.
 * A leader reads the whole table: nothing until every bucket is ready. */
static void deal(outbox_relay *r) {
    uint64_t owned = r->order.owned, readable = owned & r->order.ready;
    int rank = 0;
    for (int i = 0; i < r->nreaders; i++)
        r->order.share[i] = 0;
    if (r->mode->lease == OB_MODE_LEASE_LEADERSHIP) {
        r->order.share[0] = readable == owned ? owned : 0;
    } else {
        for (int k = 0; k < OB_BUCKETS; k++)
            if (readable >> k & 1)
                r->order.share[rank++ % r->nreaders] |= 1ULL << k;
    }
    for (int i = 0; i < r->nreaders; i++)
        r->order.built[i] = 0; /* rebuilt at the worker's next fetch */
    /* Newly readable buckets may hold rows: idle workers look at once. */
    ob_flow_wake_all(&r->flow, NULL);
}

static void lease_changed(void *data, uint64_t owned) {
    outbox_relay *r = data;
    r->order.owned = owned;
    r->order.on_table = ob_lease_on_table(r->order.lease);
    r->stats.buckets_owned = (uint32_t)ob_bucket_count(owned);
    r->stats.leader = r->mode->lease == OB_MODE_LEASE_LEADERSHIP && owned != 0;
    /* A bucket with a cursor row is converted before its first fetch. */
    if (r->order.sw)
        ob_cursor_switch_want(r->order.sw, owned & ~r->order.ready);
    deal(r);
}

/* The switch found no cursor row in these buckets, or converted them. */
static void switch_ready(void *data, uint64_t buckets) {
    outbox_relay *r = data;
    r->order.ready |= buckets;
    if (buckets & r->order.owned)
        deal(r);
}

static void switch_fatal(void *data, const char *why) {
    outbox_relay *r = data;
    r->order.fatal(r, why);
}

static void maybe_closed(outbox_relay *r) {
    if (r->order.lease == NULL && r->order.sw == NULL && r->order.lease_open) {
        r->order.lease_open = 0;
        r->order.closed(r);
    }
}

static void switch_closed(void *data) {
    outbox_relay *r = data;
    r->order.sw = NULL;
    maybe_closed(r);
}

/* The switch that converts owned buckets out of cursor mode. Without one
 * (out of memory) the relay cannot tell which buckets are safe to read. */
static void make_switch(outbox_relay *r) {
    ob_cursor_switch_config c;
    memset(&c, 0, sizeof(c));
    c.loop = r->loop;
    c.log = &r->log;
    c.db = r->env.db;
    c.db.op_timeout_ms = 120000; /* a chunk of OB_CURSOR_SWITCH_CHUNK rows, with room */
    c.qtable = r->qtable;
    c.table = r->o.table;
    ob_cursor_switch_callbacks cbs = {switch_ready, switch_fatal, switch_closed, r};
    r->order.sw = ob_cursor_switch_new(&c, &cbs);
    if (r->order.sw == NULL)
        r->order.fatal(r, "out of memory for the cursor switch");
}

/* Before each publish. A stopping relay finishes its batches: its lease is
 * closing, but its workers' row locks still hold the rows. Not on a Galera
 * node, where row locks are the node's own: there the lease stays open
 * until the readers close (relay.c), and only while it is proven. */
static int may_publish(void *data) {
    outbox_relay *r = data;
    return (r->phase >= R_STOPPING && !r->order.on_table) || ob_lease_valid(r->order.lease);
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
    maybe_closed(r);
}

ob_lease *ob_relay_make_lease(outbox_relay *r, void (*changed)(void *data, uint64_t owned)) {
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
    lc.mode = r->mode;
    lc.interval_ms = r->mode->interval_ms;
    lc.takeover_ms = r->o.lease_timeout_ms;
    ob_lease_callbacks cbs = {changed, lease_fatal, lease_closed, r};
    return ob_lease_new(&lc, &cbs);
}

static ob_lease *make_lease(outbox_relay *r) {
    return ob_relay_make_lease(r, lease_changed);
}

int ob_relay_lease_prepare(outbox_relay *r, void (*fatal)(outbox_relay *r, const char *why),
                           void (*closed)(outbox_relay *r)) {
    r->order.fatal = fatal;
    r->order.closed = closed;
    if (r->mode->lease == OB_MODE_LEASE_NONE) {
        r->env.owner.may_publish = plain_may_publish;
        r->order.lease = make_lease(r);
        return r->order.lease ? 0 : -1;
    }
    ob_reader_env *e = &r->env;
    e->order = r->mode->one_reader ? OB_ORDER_STRICT : OB_ORDER_AGGREGATE;
    e->owner.fetch_sql = fetch_sql;
    e->owner.may_publish = may_publish;
    r->stats.buckets_total = OB_BUCKETS;
    /* The byte budget is shared by the workers there are (one in leader
     * mode, whatever --connections says). */
    e->fetch_bytes = r->o.max_in_flight_bytes / (uint64_t)r->nreaders;
    r->order.share = calloc((size_t)r->nreaders, sizeof(uint64_t));
    r->order.sql = calloc((size_t)r->nreaders, sizeof(ob_buf));
    r->order.built = calloc((size_t)r->nreaders, sizeof(int));
    r->order.turn = calloc((size_t)r->nreaders, sizeof(unsigned));
    if (r->order.share == NULL || r->order.sql == NULL || r->order.built == NULL ||
        r->order.turn == NULL)
        return -1;

    r->order.lease = make_lease(r);
    return r->order.lease ? 0 : -1;
}

void ob_relay_lease_start(outbox_relay *r) {
    if (r->order.lease == NULL)
        return;
    r->order.lease_open = 1;
    if (r->mode->switches_cursor)
        make_switch(r);
    ob_lease_start(r->order.lease);
}

void ob_relay_lease_stop(outbox_relay *r) {
    if (r->order.lease_stopped)
        return;
    r->order.lease_stopped = 1;
    if (r->order.lease_open && r->order.sw)
        ob_cursor_switch_close(r->order.sw);
    if (r->order.lease_open && r->order.lease)
        ob_lease_close(r->order.lease);
}

void ob_relay_lease_free(outbox_relay *r) {
    if (r->order.lease && !r->order.lease_open)
        ob_lease_free(r->order.lease);
    if (r->order.sql)
        for (int i = 0; i < r->nreaders; i++)
            ob_buf_free(&r->order.sql[i]);
    free(r->order.sql);
    free(r->order.built);
    free(r->order.turn);
    free(r->order.share);
    memset(&r->order, 0, sizeof(r->order));
}
