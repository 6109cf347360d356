/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The gap proof of cursor mode across a Galera cluster's other members:
 * pure bookkeeping of their answers, and the statements they are sent (the
 * cursor reader uses them through gap_proof.h). Unit-tested in
 * test/unit/test_gap_members.c; the
 * two facts below are checked on a real cluster by integ.galera_cursor_facts.
 *
 * The proof (the single-server one of gaps.h, per member):
 *
 *   A read R on the relay's node saw seq h committed and g < h missing. The
 *   transaction holding g (if any) runs on some member m. Fact 1: m's
 *   AUTO_INCREMENT counter passes h once m has applied h's write-set (the
 *   applier inserts h explicitly, and InnoDB raises the table's counter on
 *   an explicit insert above it). So the holder on m took g before m applied
 *   h. A statement sent to m after R completed, with wsrep_sync_wait = 1,
 *   runs only once m has applied every write-set committed before it, h's
 *   included: its NOW(6) on m is a bound_m at or after the holder's start.
 *   A later statement on m answered at m's time T >= bound_m + 0.2 s that
 *   finds no INNODB_TRX transaction started at or before FLOOR(bound_m)
 *   proves no holder on m is alive. When that holds for every member (the
 *   relay's own node by its own check), a read on the relay's node that
 *   starts after every such check, with wsrep_sync_wait = 1, sees g if it
 *   committed anywhere; if g is still missing there, it never will be.
 *
 * Rounds: when a read on the relay's node completes and found a gap or
 * read a mark that waits for its bound, the reader begins a round
 * (ob_members_begin); with nothing to bound, one every 5 s keeps the
 * members' health current (gap_proof.h). Every member connection runs one statement at
 * a time (ob_members_sql_probe): its clock, the oldest other transaction's
 * start, and the node's state. NOW(6) is a statement's start, which may
 * come before its sync wait ended; so a statement sent after a round began
 * makes the member apply that round's write-sets, and the clock of the
 * statement after it is the round's bound there. A later answer at or past
 * the margin that finds no older transaction proves the round there. A
 * bound waits for its proof before a newer round takes its place (a proof
 * of a later round covers the earlier ones). A gap revealed by
 * a read may be verified once the round begun after that read is proven on
 * every member (ob_members_proven), and the local check of gaps.h holds.
 *
 * A member that is not connected, not Synced, or missing from the list
 * (fewer members than the cluster's size minus one) proves nothing: gaps
 * stay open, the cursor waits, never passes one. The list is the probe's
 * wsrep_incoming_addresses, which needs wsrep_node_incoming_address set on
 * every node (on loopback it reads AUTO otherwise): an entry AUTO makes the
 * list unusable. An empty entry is a Galera Arbitrator (garbd), which is
 * counted in the cluster's size but stores no data and runs no transaction:
 * it holds no seq, and is left out of the proof. A member that joins or leaves changes the list;
 * ob_members_set keeps the state of the addresses that stay.
 *
 * Fencing (fact 2): on Galera the cursor's advance also writes the relay's
 * own presence row in the lease table (ob_members_sql_advance), in the same
 * statement. A new owner takes a bucket only once the old owner's presence
 * row was deleted; a thawed old owner's advance then changes nothing (the
 * row is gone on its node) or fails certification at COMMIT (error 1213,
 * the deletion was certified first): it never moves a cursor after.
 */
#ifndef OB_GAP_MEMBERS_H
#define OB_GAP_MEMBERS_H

#include <stdint.h>

#include "buf.h"

#define OB_MEMBERS_MAX 15

typedef struct ob_member {
    char addr[64];   /* host:port, as wsrep_incoming_addresses lists it */
    int up;          /* connected, and Synced at its last answer */
    uint64_t asked;  /* the round under way when its statement was sent */
    uint64_t synced; /* the round its last answer made it apply: the next bounds it */
    uint64_t round;  /* the round its bound is for; 0 none */
    double bound_s;  /* its clock at the first answer of `round` */
    uint64_t proven; /* the latest round proven on it */
} ob_member;

typedef struct ob_members {
    ob_member m[OB_MEMBERS_MAX];
    int n;          /* members other than the relay's node */
    int size;       /* the cluster's size from the probe; -1 unknown */
    int arbiters;   /* empty entries of the list: arbitrators (garbd), counted in size */
    int usable;     /* the list names every member by address */
    uint64_t round; /* the latest round begun; rounds start at 1 */
} ob_members;

void ob_members_init(ob_members *ms);

/* Takes the probe's member list (comma-separated host:port) and the
 * cluster's size; `self` is the relay's node (its entry is left out).
 * Members that stay keep their state; new ones start down; empty entries
 * are arbitrators, counted apart. Returns 0, or -1 when the list cannot
 * serve (an entry AUTO, more members than OB_MEMBERS_MAX, or the relay's
 * node not in it): usable is then 0. */
int ob_members_set(ob_members *ms, const char *list, int size, const char *self);

/* A read on the relay's node completed: a new round, its number. */
uint64_t ob_members_begin(ob_members *ms);

/* Member i's statement is being sent now. */
void ob_members_asked(ob_members *ms, int i);

/* Member i answered: its clock `now_s`, the oldest other transaction's
 * start `oldest_s` (negative: none), `synced` its state is Synced. */
void ob_members_answer(ob_members *ms, int i, double now_s, double oldest_s, int synced);

/* Member i's connection was lost or refused: it proves nothing until it
 * answers again, and its bound is void. */
void ob_members_down(ob_members *ms, int i);

/* The latest round proven on every member; 0 when none, or when a member
 * is missing from the list. A member down proves no round past those it
 * proved before. A one-node cluster (no members) proves every round. */
uint64_t ob_members_proven(const ob_members *ms);

/* Server time on member i at which its next answer may prove its round:
 * bound + margin; 0 when its next answer gives the bound. */
double ob_members_due(const ob_members *ms, int i);

/* How many members are missing or down (for /readyz and a metric). */
int ob_members_missing(const ob_members *ms);

/* A member's statement (the session runs with wsrep_sync_wait = 1):
 * UNIX_TIMESTAMP(NOW(6)), the oldest other live transaction's start, and
 * wsrep_local_state_comment. */
void ob_members_sql_probe(ob_buf *b);

/* The cursor's advance on Galera, fenced by the presence row `me` of the
 * lease table `ltable` (quoted) under `key`: the cursors of the buckets in
 * `mask` below `seq` move to it, and the presence row's epoch is bumped, in
 * one statement; nothing moves when the row is gone. */
void ob_members_sql_advance(ob_buf *b, const char *ctable, const char *table, const char *ltable,
                            const char *key, uint64_t me, uint64_t mask, uint64_t seq);

#endif
