/* SPDX-License-Identifier: Apache-2.0 */
/* The order in which a connection tries the nodes of a --db URL with
 * several hosts, and when it moves. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "db_nodes.h"

static ob_db_node three[] = {{"h1", 1}, {"h2", 2}, {"h3", 3}};

static void starts_on_the_first_and_stays(void) {
    ob_db_nodes l;
    char msg[600];
    CHECK_EQ(ob_db_nodes_init(&l, three, 3, NULL, 0), 0);
    ob_db_nodes_round(&l);
    CHECK_STR(ob_db_nodes_host(&l), "h1");
    CHECK_EQ(ob_db_nodes_up(&l, 1000, msg, sizeof(msg)), 0); /* the first node: nothing to log */
    /* A statement error that is not a loss leaves the node alone; a reset
     * without a loss is not a move either (the owner calls lost only for
     * a loss). */
    ob_db_nodes_round(&l);
    CHECK_STR(ob_db_nodes_host(&l), "h1");
    ob_db_nodes_free(&l);
}

static void a_lost_session_moves_to_the_next_node_once(void) {
    ob_db_nodes l;
    char msg[600];
    CHECK_EQ(ob_db_nodes_init(&l, three, 3, NULL, 0), 0);
    ob_db_nodes_round(&l);
    CHECK_EQ(ob_db_nodes_up(&l, 1000, msg, sizeof(msg)), 0);
    ob_db_nodes_lost(&l, "Lost connection to server during query");
    ob_db_nodes_round(&l);
    CHECK_STR(ob_db_nodes_host(&l), "h2");
    /* h2 refuses: h3 is tried at once, in the same round. */
    CHECK_EQ(ob_db_nodes_failed(&l, "Connection refused"), 1);
    CHECK_STR(ob_db_nodes_host(&l), "h3");
    CHECK_EQ(ob_db_nodes_up(&l, 1000, msg, sizeof(msg)), 1);
    CHECK_CONTAINS(msg, "on database node 3 of 3 (h3:3)");
    CHECK_CONTAINS(msg, "node 2 of 3 (h2:2) given up: Connection refused");
    /* Retries on the same node log nothing more. */
    ob_db_nodes_round(&l);
    CHECK_EQ(ob_db_nodes_up(&l, 1000, msg, sizeof(msg)), 0);
    ob_db_nodes_free(&l);
}

static void a_round_tries_each_node_once(void) {
    ob_db_nodes l;
    char msg[600];
    CHECK_EQ(ob_db_nodes_init(&l, three, 3, NULL, 0), 0);
    ob_db_nodes_round(&l);
    ob_db_nodes_up(&l, 1000, msg, sizeof(msg));
    ob_db_nodes_lost(&l, "gone");
    ob_db_nodes_round(&l);
    CHECK_EQ(ob_db_nodes_failed(&l, "refused"), 1); /* h2 */
    CHECK_EQ(ob_db_nodes_failed(&l, "refused"), 1); /* h3, then h1 again */
    CHECK_STR(ob_db_nodes_host(&l), "h1");
    CHECK_EQ(ob_db_nodes_failed(&l, "refused"), 0); /* every node tried: backoff */
    /* The next round starts after the last node tried, and a second loss
     * report for the same session moves nothing. */
    ob_db_nodes_lost(&l, "gone");
    ob_db_nodes_round(&l);
    CHECK_STR(ob_db_nodes_host(&l), "h2");
    ob_db_nodes_free(&l);
}

static void a_silent_node_is_named_as_such(void) {
    ob_db_nodes l;
    char msg[600];
    CHECK_EQ(ob_db_nodes_init(&l, three, 3, NULL, 0), 0);
    ob_db_nodes_round(&l);
    ob_db_nodes_up(&l, 1000, msg, sizeof(msg));
    ob_db_nodes_silent(&l, 5000, 1);
    ob_db_nodes_lost(&l, "Lost connection to server during query");
    ob_db_nodes_round(&l);
    CHECK_EQ(ob_db_nodes_up(&l, 1000, msg, sizeof(msg)), 1);
    CHECK_CONTAINS(msg, "node 1 of 3 (h1:1) given up: no answer within 5000 ms");
    ob_db_nodes_free(&l);
}

/* Two connections of group g, both given the three nodes, neither connected. */
static void two_of_a_group(ob_db_group *g, ob_db_nodes *a, ob_db_nodes *b) {
    memset(g, 0, sizeof(*g));
    CHECK_EQ(ob_db_nodes_init(a, three, 3, NULL, 0), 0);
    CHECK_EQ(ob_db_nodes_init(b, three, 3, NULL, 0), 0);
    ob_db_nodes_join(a, g);
    ob_db_nodes_join(b, g);
}

static void two_gone(ob_db_nodes *a, ob_db_nodes *b) {
    ob_db_nodes_leave(a);
    ob_db_nodes_leave(b);
    ob_db_nodes_free(a);
    ob_db_nodes_free(b);
}

/* A late statement on a node whose cluster probe answered since it was
 * sent: the node is busy (a long DDL holds its commits), not dead; the
 * session is made again on it, said at warn level once a minute. A probe
 * answered before the statement was sent, or on another node, proves
 * nothing: the node is left as silent. */
static void a_busy_node_is_kept(void) {
    ob_db_group g;
    ob_db_nodes l, watch;
    char msg[600];
    two_of_a_group(&g, &l, &watch);
    ob_db_nodes_round(&l);
    ob_db_nodes_up(&l, 1000, msg, sizeof(msg));
    ob_db_nodes_round(&watch);
    ob_db_nodes_up(&watch, 1000, msg, sizeof(msg));
    CHECK_EQ(ob_db_nodes_busy(&l, 20000, 10000, msg, sizeof(msg)), 0); /* no probe yet */
    ob_db_nodes_answered(&watch, 9000); /* before the statement was sent at 10000 */
    CHECK_EQ(ob_db_nodes_busy(&l, 20000, 10000, msg, sizeof(msg)), 0);
    ob_db_nodes_answered(&watch, 15000);
    CHECK_EQ(ob_db_nodes_busy(&l, 20000, 10000, msg, sizeof(msg)), 2);
    CHECK_CONTAINS(msg, "database node 1 of 3 (h1:1) is busy, not dead: a statement had no "
                        "answer within 10000 ms, but the node answered its cluster probe 5000 ms "
                        "ago");
    ob_db_nodes_lost(&l, "Lost connection to server during query");
    ob_db_nodes_round(&l);
    CHECK_STR(ob_db_nodes_host(&l), "h1");
    CHECK_EQ(ob_db_nodes_up(&l, 1000, msg, sizeof(msg)), 0); /* no move to log */
    ob_db_nodes_answered(&watch, 25000);
    CHECK_EQ(ob_db_nodes_busy(&l, 30000, 10000, msg, sizeof(msg)), 1); /* said: debug */
    ob_db_nodes_lost(&l, "Lost connection to server during query");
    ob_db_nodes_answered(&watch, 80000);
    CHECK_EQ(ob_db_nodes_busy(&l, 85000, 10000, msg, sizeof(msg)), 2); /* a minute on */
    ob_db_nodes_lost(&l, "Lost connection to server during query");
    /* The probe's own deadline: its last answer predates it: silent. */
    CHECK_EQ(ob_db_nodes_busy(&watch, 91000, 5000, msg, sizeof(msg)), 0);
    /* A probe answered on another node says nothing of this one. */
    g.answered = 2;
    g.answered_ms = 99000;
    CHECK_EQ(ob_db_nodes_busy(&l, 100000, 10000, msg, sizeof(msg)), 0);
    ob_db_nodes_lost(&l, "Lost connection to server during query");
    ob_db_nodes_round(&l);
    CHECK_STR(ob_db_nodes_host(&l), "h2");
    two_gone(&l, &watch);
}

static void one_node_never_moves(void) {
    ob_db_nodes l;
    char msg[600], err[128] = "Connection refused";
    CHECK_EQ(ob_db_nodes_init(&l, NULL, 0, "db", 3306), 0);
    ob_db_nodes_round(&l);
    CHECK_EQ(ob_db_nodes_failed(&l, "refused"), 0);
    ob_db_nodes_round_failed(&l, err, sizeof(err));
    CHECK_STR(err, "Connection refused");
    ob_db_nodes_lost(&l, "gone");
    CHECK_STR(ob_db_nodes_host(&l), "db");
    CHECK_EQ(ob_db_nodes_up(&l, 1000, msg, sizeof(msg)), 0);
    ob_db_nodes_name(&l, 0, msg, sizeof(msg));
    CHECK_STR(msg, "db:3306");
    ob_db_nodes_free(&l);
}

/* Failback: two connections of a group move from node 1 to node 2 at 1 s.
 * Neither goes back before the hold-down (60 s). Then one tries node 1 for
 * the group; while it fails, nobody tries again for a hold-down. Once node
 * 1 takes a session, the other follows at once, and the move is said. */
static void failback_after_a_hold_down(void) {
    ob_db_group g;
    ob_db_nodes a, b;
    char msg[600];
    two_of_a_group(&g, &a, &b);
    ob_db_nodes *both[2] = {&a, &b};
    for (int i = 0; i < 2; i++) {
        ob_db_nodes_round(both[i]);
        CHECK_EQ(ob_db_nodes_up(both[i], 500, msg, sizeof(msg)), 0);
        CHECK_EQ(ob_db_nodes_failback_due(both[i], 500000, 60000), 0); /* on the first */
        ob_db_nodes_lost(both[i], "Lost connection to server during query");
        ob_db_nodes_round(both[i]);
        CHECK_EQ(ob_db_nodes_up(both[i], 1000, msg, sizeof(msg)), 1);
        CHECK_STR(ob_db_nodes_host(both[i]), "h2");
    }
    CHECK_EQ(ob_db_nodes_failback_due(&a, 60999, 60000), 0); /* within the hold-down */
    CHECK_EQ(ob_db_nodes_failback_due(&a, 61000, 0), 0);     /* failback off */
    CHECK_EQ(ob_db_nodes_failback_due(&a, 61000, 60000), 1);
    /* a tries for the group; node 1 still refuses: the round goes on to 2. */
    ob_db_nodes_failback(&a, 61000, 60000);
    CHECK_STR(ob_db_nodes_host(&a), "h1");
    CHECK_EQ(ob_db_nodes_failed(&a, "Connection refused"), 1);
    CHECK_STR(ob_db_nodes_host(&a), "h2");
    CHECK_EQ(ob_db_nodes_up(&a, 61010, msg, sizeof(msg)), 0); /* where it was: no move */
    CHECK_EQ(ob_db_nodes_failback_due(&b, 61010, 60000), 0);  /* the group's turn is taken */
    CHECK_EQ(ob_db_nodes_failback_due(&a, 120000, 60000), 0);
    CHECK_EQ(ob_db_nodes_failback_due(&b, 121000, 60000), 1); /* a hold-down later */
    ob_db_nodes_failback(&b, 121000, 60000);
    CHECK_EQ(ob_db_nodes_up(&b, 121005, msg, sizeof(msg)), 1);
    CHECK_STR(msg, "back on database node 1 of 3 (h1:1), the first listed, after 120 s on node "
                   "2 of 3 (h2:2)");
    CHECK_EQ(g.failbacks, 1);
    CHECK_EQ(ob_db_nodes_failback_due(&b, 999999, 60000), 0); /* home */
    /* a follows at once: node 1 took a session of the group since a left. */
    CHECK_EQ(ob_db_nodes_failback_due(&a, 121010, 60000), 2);
    ob_db_nodes_failback(&a, 121010, 60000);
    CHECK_EQ(ob_db_nodes_up(&a, 121020, msg, sizeof(msg)), 1);
    CHECK_CONTAINS(msg, "back on database node 1 of 3 (h1:1), the first listed, after 120 s on");
    CHECK_EQ(g.failbacks, 2);
    two_gone(&a, &b);
}

int main(void) {
    starts_on_the_first_and_stays();
    a_lost_session_moves_to_the_next_node_once();
    a_round_tries_each_node_once();
    a_silent_node_is_named_as_such();
    a_busy_node_is_kept();
    one_node_never_moves();
    failback_after_a_hold_down();
    puts("test_db_nodes: ok");
    return 0;
}
