/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The database nodes one connection may use (the hosts of a --db URL, in the
 * order written) and which of them it uses: the connection's first
 * connect tries them in order and stays on the first that answers; a
 * session lost on its node (the node died, was refused, left the primary
 * component, or fell silent) makes the next connect start at the node after
 * it, going round. Each connect tries every node once at most before it
 * reports the failure, so the owner's backoff applies between rounds.
 * Private to src/db; runs on the connection's loop.
 */
#ifndef OB_DB_NODES_H
#define OB_DB_NODES_H

#include <stddef.h>

#include "db_config.h"

/* A busy node (ob_db_nodes_busy) is said at warn level at most this often. */
#define OB_DB_BUSY_SAY_MS 60000
#include "url.h"

typedef struct ob_db_nodes {
    int n;                            /* at least 1 */
    ob_db_node node[OB_DB_MAX_NODES]; /* hosts owned */
    int cur;                          /* the node being tried, or in use */
    int tried;                        /* nodes tried in this round */
    int on;                           /* the node of the last session made; -1 before */
    int left;                         /* the node given up last, -1 when none */
    char why[200];                    /* why it was given up */
    char told[200];                   /* why, when a deadline or another connection found it */
    ob_db_group *group;               /* NULL when in none */
    struct ob_db_nodes *next, *prev;  /* in the group */
    int fd;            /* the socket of the session on `on`, -1 when none (kept by db.c) */
    int stay;          /* the session's loss was the node's business: the next round starts on it */
    uint64_t away_ms;  /* when the session left the first node; 0 on it */
    uint64_t retry_ms; /* its next try of the first node, not before */
    int back;          /* this round tries the first node again (ob_db_nodes_failback) */
} ob_db_nodes;

/* Copies the n nodes (n 0: host and port alone). Returns 0, or -1 when out
 * of memory (nothing left allocated). */
int ob_db_nodes_init(ob_db_nodes *l, const ob_db_node *nodes, int n, const char *host,
                     unsigned port);
void ob_db_nodes_free(ob_db_nodes *l);

/* The node to try now. */
const char *ob_db_nodes_host(const ob_db_nodes *l);
unsigned ob_db_nodes_port(const ob_db_nodes *l);

/* A round of connects begins. */
void ob_db_nodes_round(ob_db_nodes *l);

/* The session on the current node was lost (why: the error): the next
 * round starts at the node after it. No-op with one node. */
void ob_db_nodes_lost(ob_db_nodes *l, const char *why);

/* A connect to the current node failed with why: 1 when another node is
 * left to try in this round (it is now current), 0 when every node was
 * tried (the next round starts at the node after this one). */
int ob_db_nodes_failed(ob_db_nodes *l, const char *why);

/* A session was made on the current node at now (the loop's clock, ms): 1
 * when that is a move (another node than the last session's, or than the
 * first node at start), with a line for the log in msg ("on database node 2
 * of 3 (127.0.0.1:3308); node 1 (127.0.0.1:3307) given up: <why>", or
 * "back on database node 1 of 3 ..." after ob_db_nodes_failback), 0
 * otherwise. */
int ob_db_nodes_up(ob_db_nodes *l, uint64_t now, char *msg, size_t len);

/* Failback: a session away from the first node (the preferred one, listed
 * first) for hold_ms or more may try it again, at a point where the owner
 * can drop its session (no transaction open). One connection of a group
 * tries per hold_ms; once the first node took a session of the group since
 * this one left it, the others follow at once. 1 when due at now (a try),
 * 2 when due to follow, 0 not due: with hold_ms 0 (never), one node, or on
 * the first node. */
int ob_db_nodes_failback_due(const ob_db_nodes *l, uint64_t now, uint32_t hold_ms);

/* The next round starts on the first node (the owner dropped the session);
 * should it fail, the round goes on from there, and the next try is a
 * hold_ms later. */
void ob_db_nodes_failback(ob_db_nodes *l, uint64_t now, uint32_t hold_ms);

/* Joins l to group g (may be NULL); leave before l is freed. */
void ob_db_nodes_join(ob_db_nodes *l, ob_db_group *g);
void ob_db_nodes_leave(ob_db_nodes *l);

/* The current node gave no answer within ms: it is given up when the
 * session ends, and with `others`, every other connection of the group with
 * a session on it has its socket shut down, so that its statement, or its
 * next one, fails as lost and it moves on too. */
void ob_db_nodes_silent(ob_db_nodes *l, unsigned ms, int others);

/* The cluster probe was answered on the node of l's session at now (the
 * loop's clock, ms): the group takes it as a sign of life of that node. */
void ob_db_nodes_answered(ob_db_nodes *l, uint64_t now);

/* l's statement on its node had no answer within ms, at now: nonzero when
 * the node is busy rather than dead (with several nodes, its cluster probe
 * answered since the statement was sent), with a line for the log in msg:
 * 2 when it is to be said at warn level (once a minute for the group), 1 at
 * debug. The session's loss then keeps the node: the next connect starts
 * on it. 0 otherwise (msg untouched). */
int ob_db_nodes_busy(ob_db_nodes *l, uint64_t now, unsigned ms, char *msg, size_t len);

/* A whole round failed: with several nodes, err (len bytes) is prefixed
 * with "no database node answered; the last tried: ". */
void ob_db_nodes_round_failed(const ob_db_nodes *l, char *err, size_t len);

/* "node 2 of 3 (host:port)" for node i, or "host:port" when there is one. */
void ob_db_nodes_name(const ob_db_nodes *l, int i, char *out, size_t len);

#endif
