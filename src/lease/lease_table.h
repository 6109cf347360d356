/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The lease on a Galera node: the same leases as lease.h, held as rows of
 * the lease table (`outbox_lease`, beside the outbox table) instead of
 * GET_LOCK, whose locks are node-local there. lease.c runs the rounds; this
 * file writes their statements and reads what only the table mode has.
 *
 * Rows, per outbox table (lease_key, the lock name prefix of lease.h):
 *   - kind 'i', slot = an instance's identity: its presence, with its mode
 *     ('p' unordered, 'm' ordered, 's' leader, 'c' cursor), its stale time
 *     (two thirds of its --lease-timeout) and `renewed`, the database's
 *     clock at its last round;
 *   - kind 'b', slot k: bucket k, with its holder's identity (or NULL);
 *   - kind 'l', slot 0: the leadership, with its holder's identity.
 * A bucket or the leadership is held while its holder's presence row
 * exists. Every round renews the instance's own presence row and deletes
 * the presence rows not renewed for their own stale time; a take is an UPDATE
 * that succeeds only on a row without a holder or whose holder's presence
 * is gone. On Galera, conflicting writes from two nodes are settled at
 * COMMIT by certification: the later one fails with error 1213, a lost
 * race, not an error. So a renewal and the deletion of the same presence
 * row, or two takes of one bucket, never both succeed, and a deleted
 * presence row is never written again: an instance that finds its row gone
 * (its renewal changed nothing) takes a new identity, and everything its
 * old one held is free for the others. Reads run with wsrep_sync_wait = 1,
 * so that they see every write-set committed in the cluster before them.
 *
 * An identity is a random 63-bit number, made anew at every registration
 * (start, reconnect, or after the row was deleted).
 */
#ifndef OB_LEASE_TABLE_H
#define OB_LEASE_TABLE_H

#include <stdint.h>

#include "buf.h"
#include "db.h"
#include "lease_backend.h"
#include "log.h"

/* The lease table's name in the outbox table's schema. */
#define OB_LEASE_TABLE "outbox_lease"

/* The index of the main result of every statement this file writes: the
 * statements before it (session setting, renewal, deletion of stale
 * presence rows, the leadership's take) give none worth reading. */
#define OB_LEASE_TBL_MAIN 5

/* The backend of the lease table (lease_backend.h; ob_lease_tbl is there). */
extern const ob_lease_backend ob_lease_table_backend;

/* For `outbox-uvrelay status` on a Galera node: two statements, of which
 * the second's rows (kind 'b' or 'l', slot, holder) name the live holder of
 * each bucket of `key` and of its leadership (a holder whose presence row
 * is gone or stale holds nothing). Without the lease table the second
 * statement answers no row rather than an error. `table` as below. */
void ob_lease_tbl_holders_sql(ob_buf *b, const char *table, const char *key);

/* `table`: the outbox table as configured ("outbox" or "schema.outbox"). */
void ob_lease_tbl_init(ob_lease_tbl *t, const char *table, const char *key, char mode,
                       uint32_t stale_ms);
/* A new identity; the presence row is written at the next round. */
void ob_lease_tbl_new_identity(ob_lease_tbl *t);

/* A round's statements into sql (reset first). `leader`: leader mode;
 * `leading`: the leadership is held. Main result (OB_LEASE_TBL_MAIN):
 *   plain: none (DO 0);
 *   ordered: rows (seq, the bucket's live holder, the holder of presence
 *     slot seq of this mode, NULL) for seq 0..63, the shape of lease.c's
 *     GET_LOCK survey (presence slots are the mode's live instances in
 *     identity order);
 *   leader, standing by: one row (1 when now leading, the holder, NULL);
 *   leader, leading: one row, 1 while still leading.
 * Then the mode check: two more results, a placeholder and the count of
 * live instances per mode, in ob_modes' order, as the named locks' check. */
void ob_lease_tbl_survey(ob_lease_tbl *t, ob_buf *sql, int leader, int leading);
/* The claims of the buckets in `take` and the release of those in
 * `release` into sql (reset first); main result: the buckets held. */
void ob_lease_tbl_claims(const ob_lease_tbl *t, ob_buf *sql, uint64_t take, uint64_t release);
/* The buckets the main result of a claim names. */
uint64_t ob_lease_tbl_owned(ob_db *db);

#endif
