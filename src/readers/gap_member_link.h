/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One connection to another member of a Galera cluster for cursor mode's
 * gap proof (gap_members.h): it runs the members' statement
 * (ob_members_sql_probe, in a session with wsrep_sync_wait = 1) when its
 * owner asks, one at a time, and tells the owner when each is sent and what
 * it answered (gap_proof.h owns one per member).
 *
 *   NEW --start--> CONNECTING --ok--> IDLE (asked: SENDING at once)
 *                   |   fail--> CONNECT_WAIT --timer--> CONNECTING
 *   IDLE --ask--> SENDING --ok--> IDLE (an ask meanwhile: SENDING again)
 *                  | lost or refused--> CONNECT_WAIT (the owner is told: down)
 *   any state --close--> CLOSING
 *
 * A lost connection, a refused connection or statement (the relay's
 * account locked or its password changed there, PROCESS missing), or a
 * node that is not Synced all make the member prove nothing: the owner is
 * told it is down; the link connects again after the policy's backoff
 * (db_life.h). A refusal is never fatal, at start or later: the relay's own
 * node proved its configuration, and the relay goes on delivering the rows
 * above the gaps; the failure is said once (again when it changes), and
 * once more when the member serves again. Every function runs on the loop
 * thread; nothing waits on the network.
 */
#ifndef OB_GAP_MEMBER_LINK_H
#define OB_GAP_MEMBER_LINK_H

#include <uv.h>

#include "db.h"
#include "log.h"

typedef struct ob_member_link ob_member_link;

typedef struct ob_member_link_callbacks {
    /* The statement is being sent (ob_members_asked). */
    void (*sent)(void *data, int index);
    /* Its answer: the member's clock, the oldest other transaction's start
     * (negative: none), whether the node is Synced (ob_members_answer). */
    void (*answer)(void *data, int index, double now_s, double oldest_s, int synced);
    /* The member proves nothing until its next answer (ob_members_down);
     * err and msg say why (0 and "" when the connection was lost). */
    void (*down)(void *data, int index, unsigned err, const char *msg);
    void (*closed)(void *data);
    void *data;
} ob_member_link_callbacks;

/* cfg names the member (its host and port; strings copied by the
 * connection); index is the member's in ob_members. NULL when out of
 * memory. */
ob_member_link *ob_member_link_new(uv_loop_t *loop, const ob_db_config *cfg, const ob_log *log,
                                   int index, const ob_member_link_callbacks *cbs);
void ob_member_link_start(ob_member_link *l);
/* Runs the statement as soon as the connection is free. */
void ob_member_link_ask(ob_member_link *l);
/* Why the member proves nothing now (its last error with its number, "not
 * Synced (state)", "not connected yet"); "" once it answered Synced. */
const char *ob_member_link_why(const ob_member_link *l);
void ob_member_link_close(ob_member_link *l);
void ob_member_link_free(ob_member_link *l);

#endif
