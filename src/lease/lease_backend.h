/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The lease's two backends behind one table of operations: the server's
 * named locks (lease_locks.c) on a single server, the lease table's rows
 * (lease_table.c) on a Galera node, where GET_LOCK, PROCESSLIST and KILL
 * are node-local. lease.c runs the rounds and the state machine, chooses a
 * backend at every connect by the cluster probe, and reaches it only
 * through ob_lease_backend; the backend writes the rounds' statements and
 * reads what only it knows. The mode (mode.h) says what is held: nothing,
 * buckets or the leadership.
 *
 * A new backend is an ob_lease_backend instance beside these two, and a
 * line in lease.c's choice. Every function runs on the loop thread.
 */
#ifndef OB_LEASE_BACKEND_H
#define OB_LEASE_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "buckets.h"
#include "buf.h"
#include "db.h"
#include "log.h"
#include "mode.h"

/* One lock (or row) of a claim statement, in column order. */
typedef struct ob_lease_claim {
    uint8_t kind; /* 'b' take bucket, 'r' release bucket, 'm' presence, 'l' leadership */
    uint8_t k;
} ob_lease_claim;

#define OB_LEASE_MAX_CLAIMS (OB_BUCKETS * 2 + 1)

/* The lease table's state (lease_table.h says what its rows are). */
typedef struct ob_lease_tbl {
    int registered;    /* the presence row of `me` was written */
    uint64_t me;       /* this instance's identity */
    char mode;         /* the mode's lock letter (mode.h), the presence row's mode */
    char key[32];      /* lease_key: the lock name prefix (ob_lease_base) */
    char name[160];    /* the lease table, quoted, in the outbox table's schema */
    uint32_t stale_ms; /* this instance's row is deleted once older than this */
    char leave[512];   /* the leave's statement, kept while it runs */
} ob_lease_tbl;

/* What the lease shares with its backend: handed to every operation. */
typedef struct ob_lease_ctx {
    const ob_mode *mode;
    const char *base;  /* the lock name prefix (ob_lease_base) */
    const char *table; /* the outbox table as configured, for messages */
    const ob_log *log;
    uint32_t stale_ms; /* a holder silent this long loses its leases */
    ob_db *db;
    ob_buf sql; /* the statement under way */
    ob_lease_claim claims[OB_LEASE_MAX_CLAIMS];
    int nclaims;
    int mode_lock;    /* named locks: the mode lock of a mode without buckets is held */
    ob_lease_tbl tbl; /* the lease table's state, kept across both backends */
} ob_lease_ctx;

typedef struct ob_lease_backend {
    const char *says; /* logged when the lease comes to use it */
    int first;        /* the index of a round's first result of the lease's own */
    /* The presence is a row that every round renews, not a lock: it counts
     * as held from the connect, and the rounds come at least four times a
     * stale time, whatever the mode. */
    int renews;
    int releases_late; /* a bucket given up is released at the next round */
    int claims_prove;  /* a bucket claim's answer proves the lease, as a round's does */
    /* A new connection, this backend chosen for it. */
    void (*connected)(ob_lease_ctx *c);
    /* A round's statement into c->sql (reset): main result `first`, as
     * ob_lease_tbl_survey describes for each lease kind (leading: the
     * leadership is held); then the mode check's two results. */
    void (*survey)(ob_lease_ctx *c, int leading);
    /* After a round answered; NULL: nothing to read. */
    void (*surveyed)(ob_lease_ctx *c);
    /* The identity that the survey's holders name. */
    unsigned long (*me)(const ob_lease_ctx *c);
    /* The claim statement for c->claims into c->sql (reset). */
    void (*claims)(ob_lease_ctx *c);
    /* The buckets a claim's answer says are held; NULL: each claim's
     * column says 1 when it was got. */
    uint64_t (*held)(ob_lease_ctx *c);
    /* The statement that lists the sessions of a silent holder's workers
     * (at most `most`), into c->sql (reset); NULL: the backend's rounds
     * never name a silent holder (its presence expires instead). */
    void (*fence)(ob_lease_ctx *c, unsigned long victim, int most);
    /* A failed statement: 1 handled (a lost race, the lease working), 2 a
     * misconfiguration (before the lease was `settled`) with its cause in
     * why, 0 anything else; NULL: always 0. */
    int (*failed)(ob_lease_ctx *c, int settled, char *why, size_t n);
    /* 1 while a clean stop has something to give up (rows); NULL: the
     * closed connection gives up everything. */
    int (*has_rows)(const ob_lease_ctx *c);
    /* Gives up this instance's leases; the connection must be idle; cb
     * NULL: sent, not waited for. -1 when nothing was sent. NULL: as
     * has_rows. */
    int (*leave)(ob_lease_ctx *c, ob_db_cb cb, void *data);
} ob_lease_backend;

#endif
