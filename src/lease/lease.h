/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Leases: which part of the table this relay instance may deliver in
 * ordered mode, held as MariaDB named locks on one dedicated connection.
 *
 * The aggregates are hashed into OB_BUCKETS buckets (the table's generated
 * `bucket` column). Ordered mode: an instance holds GET_LOCK('<base>:b<k>')
 * for the buckets it owns and one presence lock '<base>:m<i>' that lets the
 * others count it. Every round (about a second) it reads who holds what with
 * IS_USED_LOCK, takes free buckets up to its fair share (buckets / live
 * instances, rounded up) and releases what it holds beyond it, so that a
 * joining instance gets its share within two rounds. In cursor mode a
 * bucket given up leaves in two rounds: the owner is told at once, and the
 * lock goes at the next round, so that the owner can write the bucket's last
 * cursor while it still holds it. The server releases a
 * dead instance's locks when it sees the session end; the survivors take
 * the buckets in their next round. Leader mode: one lock '<base>:leader';
 * its holder owns every bucket.
 *
 * Order never depends on the leases: a fetch reads a bucket's pending rows
 * with locking reads in seq order, so two instances that both think they own
 * a bucket take turns on its rows (see docs/modes.md). Leases only
 * keep instances from waiting on each other. Not on a Galera node, where row
 * locks are node-local: there order rests on the table leases and fencing.
 *
 * A silent owner (frozen, paused, partitioned) keeps its session and so its
 * locks. Every round also lists the sessions that hold a lease here and have
 * been idle longer than the stale time (two thirds of takeover_ms), however
 * many other sessions the server has; such a holder is ended with KILL
 * CONNECTION, together with
 * its workers' sessions, which each hold the lock ob_lease_worker_lock()
 * names, and its buckets go free. Its own side of the bargain: it publishes
 * only while ob_lease_valid(), that is while its last answered round was sent
 * less than half the stale time ago, so it stops before anyone may end it.
 *
 * One mode per table: every relay, ordered or not, holds a mode lock of its
 * mode ('<base>:p<k>' unordered, the presence lock '<base>:m<k>' ordered,
 * '<base>:s<k>' leader mode, the presence lock '<base>:c<k>' cursor mode) and every round counts
 * the other modes' locks. A relay that finds another mode at start stops (fatal); one that sees it
 * later warns once. An unordered relay runs a lease for that alone
 * (`plain`): it owns nothing and its rounds only look.
 *
 * On a Galera node GET_LOCK, PROCESSLIST and KILL are node-local: there the
 * same leases, rounds and mode check run on rows of the lease table
 * (lease_table.h), the other backend (lease_backend.h) chosen at every
 * connect by the cluster probe; a silent
 * owner's presence row expires instead of its session being ended, and an
 * instance that stops cleanly deletes its own.
 *
 * Life cycle: ob_lease_new -> ob_lease_start -> ob_lease_close, which calls
 * `closed` from the last close callback and frees the lease. Every function
 * runs on the loop thread.
 */
#ifndef OB_LEASE_H
#define OB_LEASE_H

#include <stdint.h>
#include <uv.h>

#include "buckets.h"
#include "db.h"
#include "log.h"
#include "mode.h"

typedef struct ob_lease ob_lease;

typedef struct ob_lease_config {
    uv_loop_t *loop;
    const ob_log *log;
    ob_db_config db;      /* strings copied by the connection */
    const char *qtable;   /* `schema`.`table`, checked for the ordering columns */
    const char *table;    /* the table's name as configured, for messages */
    char base[32];        /* lock name prefix, from ob_lease_base() */
    const ob_mode *mode;  /* what is held (mode.h): nothing, buckets or the leadership */
    uint32_t interval_ms; /* between rounds (1000, at most a quarter of the stale time; a plain
                             lease, which owns nothing, 5000 whatever the stale time) */
    uint32_t takeover_ms; /* a silent owner's share moves within this (15000) */
} ob_lease_config;

typedef struct ob_lease_callbacks {
    /* The owned buckets changed (a bit per bucket; all of them when
     * leading). Buckets are dropped here before their locks are released. */
    void (*changed)(void *data, uint64_t owned);
    /* The table lacks the ordering columns, or another mode runs on it: the
     * relay cannot run. */
    void (*fatal)(void *data, const char *why);
    void (*closed)(void *data);
    void *data;
} ob_lease_callbacks;

/* The lock name prefix for a table of a database: "obx:" and a 64-bit hash
 * of "<database>.<table>" in hex, so that every name fits MariaDB's 64
 * characters. out: 32 bytes. */
void ob_lease_base(char *out, const char *database, const char *table);

/* Returns NULL when out of memory. The config is copied. */
ob_lease *ob_lease_new(const ob_lease_config *cfg, const ob_lease_callbacks *cbs);
void ob_lease_start(ob_lease *l);
/* Drops every lease (by closing the connection) and frees the lease once
 * its handles are closed, then calls `closed`. On the lease table, where a
 * closed connection releases nothing, it first gives up this instance's
 * rows (the backend's leave), waiting at most about 2 s: call it once
 * nothing of this instance's can still be published (its readers closed),
 * so that the others may take its buckets at their next round. */
void ob_lease_close(ob_lease *l);
/* Frees a lease that was never started. */
void ob_lease_free(ob_lease *l);

/* 1 while this instance owns buckets and its lease was proven (a round sent
 * and answered) recently enough that no other instance can have ended it:
 * the check before each publish. */
int ob_lease_valid(const ob_lease *l);
/* 1 while the leases are rows of the lease table (on a Galera node). */
int ob_lease_on_table(const ob_lease *l);
/* On the lease table: the table (quoted), the lease_key and this
 * instance's presence slot (0 while its presence row is not written), for
 * a write fenced by that row (gap_members.h). Returns 0 when the lease is
 * not on the table. */
int ob_lease_presence(const ob_lease *l, const char **table, const char **key, uint64_t *me);
/* 1 once a round found no other mode on the table (or, for a plain lease,
 * once the check proved impossible: a server without the Sequence engine). */
int ob_lease_checked(const ob_lease *l);
/* The lease session's id while connected, else 0: the worker locks name it. */
unsigned long ob_lease_session(const ob_lease *l);
/* The name of the lock worker `index` of the instance whose lease session is
 * `session` holds, quoted for SQL: '<base>:w<session>.<index>'. out: 64 bytes. */
void ob_lease_worker_lock(char *out, const char *base, unsigned long session, int index);
/* The derived times, for tests and logs. */
uint32_t ob_lease_stale_ms(const ob_lease *l);
uint32_t ob_lease_valid_ms(const ob_lease *l);

#endif
