/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The lease's statements on a single server, where the leases are named
 * locks (lease.h names them): lease.c runs the rounds, this file writes the
 * parts of their statements that name the locks, as lease_table.c writes the
 * lease table's, and serves as the lease's backend there
 * (lease_backend.h). Every value written is the relay's own: the lock name
 * prefix is hex, kinds are letters, numbers are integers.
 */
#ifndef OB_LEASE_LOCKS_H
#define OB_LEASE_LOCKS_H

#include <stdint.h>

#include "buf.h"
#include "lease_backend.h"

/* The backend of the named locks. */
extern const ob_lease_backend ob_lease_locks_backend;

/* A lock's name, quoted: '<base>:leader' for kind 'l', else
 * '<base>:<kind><k>'. */
void ob_lease_lock_name(ob_buf *b, const char *base, char kind, int k);

/* What every round's statement ends with: results 1 and 2, the claim of
 * the mode lock of `mine` (a mode's lock letter) when `claim` (else a
 * placeholder), and the count of each mode's locks, in ob_modes' order. */
void ob_lease_locks_modes(ob_buf *b, const char *base, char mine, int claim);

/* The ordered survey: rows (seq, the holder of bucket seq, the holder of
 * presence lock seq of `mode`, NULL) for seq 0..63. */
void ob_lease_locks_survey(ob_buf *b, const char *base, char mode);

/* " UNION ALL SELECT NULL, ..., ID": the holders of this table's leases
 * (the leadership when `leader`, else the buckets and the presence locks of
 * `mode`) among the sessions idle longer than stale_ms; `nulls` columns
 * before the session id. At most one row per lock, so that no number of
 * other idle sessions (of this user, or of every user when the relay has
 * PROCESS) can crowd a silent owner out. Reading PROCESSLIST for one's own
 * user needs no privilege. */
void ob_lease_locks_idle(ob_buf *b, const char *base, int leader, char mode, uint32_t stale_ms,
                         int nulls);

/* The sessions that hold a worker lock of the instance whose lease session
 * is `victim` (ob_lease_worker_lock), at most `most`. */
void ob_lease_locks_workers(ob_buf *b, const char *base, unsigned long victim, int most);

#endif
