/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The other members' side of cursor mode's gap proof on a Galera cluster
 * (gap_members.h): the members' bookkeeping, one connection per member
 * (gap_member_link.h), and the re-asking of a member whose bound is not
 * proven yet. The cursor reader begins a round after each read on its own
 * node (ob_gap_proof_round) and reads which round every member proved
 * (ob_gap_proof_proven). On a single server there is none: the reader's
 * proof is the local one of gaps.h alone.
 *
 * The member list comes from the cluster probe (cluster.h's members, i.e.
 * wsrep_incoming_addresses); every change of it closes the connections and
 * makes new ones for the new list (the members prove nothing until they
 * answer again). Every function runs on the loop thread.
 */
#ifndef OB_GAP_PROOF_H
#define OB_GAP_PROOF_H

#include <stdint.h>
#include <uv.h>

#include "db_config.h"
#include "gap_members.h"
#include "log.h"

/* A member's statement answers within this, or the member is down. */
#define OB_MEMBER_DEADLINE_MS 10000

/* How long after its previous answer a member whose bound is not proven
 * yet is asked again: the margin of gaps.h. */
#define OB_GAP_PROOF_REASK_MS 200

typedef struct ob_gap_proof ob_gap_proof;

/* db: the relay's database settings (user, password, TLS; the host and port
 * are each member's). Borrowed: it outlives the proof. NULL when out of
 * memory. */
ob_gap_proof *ob_gap_proof_new(uv_loop_t *loop, const ob_db_config *db, const ob_log *log);

/* The probe's member list, the cluster's size, and the relay's node
 * (host:port). Returns 0, or -1 when the list cannot serve (the members
 * then prove nothing; ob_members_set says why). */
int ob_gap_proof_set(ob_gap_proof *p, const char *list, int size, const char *self);

/* With nothing to prove, a round still begins this often: a member down or
 * frozen shows in the metric within this and OB_MEMBER_DEADLINE_MS. */
#define OB_GAP_PROOF_IDLE_MS 5000

/* A read on the relay's node completed. `needed`: a gap or mark of it
 * waits for its bound (ob_gaps_unbound), so a new round begins and every
 * member is asked. Otherwise a round begins only when the latest began
 * OB_GAP_PROOF_IDLE_MS ago: an idle relay asks its members every 5 s, not
 * after every poll. Returns the round under way. */
uint64_t ob_gap_proof_round(ob_gap_proof *p, int needed);

/* The latest round proven on every member (ob_members_proven). */
uint64_t ob_gap_proof_proven(const ob_gap_proof *p);

/* Members missing or down, for /readyz and the metric. */
int ob_gap_proof_missing(const ob_gap_proof *p);

/* Why a member proves nothing, for /readyz: the first one down, by its
 * address, with its last error; NULL when none is missing or down. The text
 * is the proof's own, valid until the next call. */
const char *ob_gap_proof_why(ob_gap_proof *p);

/* Closes every connection; `closed` is called once all are gone, and the
 * proof is freed then. */
void ob_gap_proof_close(ob_gap_proof *p, void (*closed)(void *data), void *data);

#endif
