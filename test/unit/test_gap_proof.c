/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The members' side of cursor mode's gap proof (src/readers/gap_proof.c)
 * against fake member connections (fake_member_link.c): one connection per
 * member of the probe's list, made for the member's address with the
 * member's deadline; a round asks every member, an idle relay does not ask
 * after every read, a member not proven yet is asked again; a member down or
 * missing shows in the count and the /readyz text; a new list closes the old
 * connections, whose late answers count for nothing; the close completes
 * once every connection closed.
 */
#include <string.h>
#include <uv.h>

#include "check.h"
#include "fake_member_link.h"
#include "gap_proof.h"

#define NONE -1.0

static uv_loop_t loop;
static ob_db_config dbc;
static const ob_log quiet = {NULL, NULL, OUTBOX_LOG_ERROR};

static ob_gap_proof *make(void) {
    memset(&dbc, 0, sizeof(dbc));
    dbc.host = "relay-node";
    dbc.port = 3306;
    dbc.user = "relay";
    dbc.op_timeout_ms = 60000;
    ob_gap_proof *p = ob_gap_proof_new(&loop, &dbc, &quiet);
    CHECK(p != NULL);
    return p;
}

static int closed_calls;
static void on_closed(void *data) {
    CHECK(data == &closed_calls);
    closed_calls++;
}

/* Closes the proof: it is gone only once every link closed. */
static void close_proof(ob_gap_proof *p) {
    closed_calls = 0;
    ob_gap_proof_close(p, on_closed, &closed_calls);
    uv_run(&loop, UV_RUN_NOWAIT);
    int open_links = 0;
    for (int k = 0; k < fake_nlinks; k++)
        open_links += !fake_links[k]->done;
    if (open_links > 0) {
        CHECK_EQ(closed_calls, 0); /* the links are still closing */
        for (int k = 0; k < fake_nlinks; k++)
            CHECK(fake_links[k]->closing);
        CHECK_EQ(fake_links_closed(), open_links);
    }
    uv_run(&loop, UV_RUN_DEFAULT);
    CHECK_EQ(closed_calls, 1);
    fake_links_reset();
}

/* Proves the latest round on link l, as gap_members.h describes: a statement
 * after the round began, the bound, then an answer past the margin with no
 * older transaction. */
static void prove(ob_member_link *l, double t) {
    fake_link_answer(l, t, NONE, 1);
    fake_link_answer(l, t + 0.5, NONE, 1);
    fake_link_answer(l, t + 1.0, NONE, 1);
}

/* Runs the loop until link l was asked `asks` times in all. */
static void until_asked(ob_member_link *l, int asks) {
    for (int i = 0; i < 2000 && l->asks < asks; i++)
        uv_run(&loop, UV_RUN_ONCE);
    CHECK_EQ(l->asks, asks);
}

static void a_link_per_member_and_rounds(void) {
    ob_gap_proof *p = make();
    CHECK_EQ(ob_gap_proof_set(p, "10.0.0.1:3306,10.0.0.2:3307,10.0.0.3:3306", 3, "10.0.0.3:3306"),
             0);
    CHECK_EQ(fake_nlinks, 2);
    ob_member_link *a = fake_links[0], *b = fake_links[1];
    CHECK_STR(a->host, "10.0.0.1");
    CHECK_EQ(a->port, 3306);
    CHECK_STR(b->host, "10.0.0.2");
    CHECK_EQ(b->port, 3307);
    /* A frozen member is down within its own deadline, not the relay's. */
    CHECK_EQ(a->op_timeout_ms, OB_MEMBER_DEADLINE_MS);
    CHECK(a->started && b->started);
    CHECK_STR(dbc.host, "relay-node"); /* the relay's settings are the proof's copy's */

    /* Nothing answered yet: both down, the first named. */
    CHECK_EQ(ob_gap_proof_missing(p), 2);
    CHECK_CONTAINS(ob_gap_proof_why(p), "Galera member 10.0.0.1:3306 cannot serve the gap proof "
                                        "(not connected yet), nor can others: its gaps wait");
    CHECK_EQ(ob_gap_proof_proven(p), 0);

    /* A read with a gap to bound begins a round: every member is asked. */
    CHECK_EQ(ob_gap_proof_round(p, 1), 1);
    CHECK_EQ(a->asks, 1);
    CHECK_EQ(b->asks, 1);
    /* An idle read soon after begins none and asks nobody. */
    CHECK_EQ(ob_gap_proof_round(p, 0), 1);
    CHECK_EQ(a->asks, 1);
    CHECK_EQ(b->asks, 1);

    prove(a, 100.0);
    CHECK_EQ(ob_gap_proof_proven(p), 0); /* b has proven nothing */
    CHECK_EQ(ob_gap_proof_missing(p), 1);
    CHECK_CONTAINS(ob_gap_proof_why(p), "Galera member 10.0.0.2:3307");
    prove(b, 200.0);
    CHECK_EQ(ob_gap_proof_proven(p), 1);
    CHECK_EQ(ob_gap_proof_missing(p), 0);
    CHECK(ob_gap_proof_why(p) == NULL);

    /* The next round: a member not proven yet is asked again every
     * OB_GAP_PROOF_REASK_MS; one proven is not. */
    CHECK_EQ(ob_gap_proof_round(p, 1), 2);
    int a_asks = a->asks, b_asks = b->asks;
    prove(a, 102.0);
    until_asked(b, b_asks + 2);
    CHECK_EQ(a->asks, a_asks);
    prove(b, 203.0);
    CHECK_EQ(ob_gap_proof_proven(p), 2);

    /* A member refused: it proves nothing, and /readyz says why. */
    fake_link_down(b, 1045, "Access denied for user 'relay'");
    CHECK_EQ(ob_gap_proof_missing(p), 1);
    CHECK_CONTAINS(ob_gap_proof_why(p), "Galera member 10.0.0.2:3307 cannot serve the gap proof "
                                        "(Access denied for user 'relay' (1045)): its gaps wait");
    CHECK_EQ(ob_gap_proof_round(p, 1), 3);
    prove(a, 104.0);
    CHECK_EQ(ob_gap_proof_proven(p), 2); /* no round past what b proved before */
    prove(b, 205.0);                     /* it answers again */
    CHECK_EQ(ob_gap_proof_proven(p), 3);
    close_proof(p);
}

static void a_new_list_closes_the_old_links(void) {
    ob_gap_proof *p = make();
    CHECK_EQ(ob_gap_proof_set(p, "h1:3306,h2:3306,h3:3306", 3, "h3:3306"), 0);
    CHECK_EQ(fake_nlinks, 2);
    ob_member_link *old1 = fake_links[0];
    prove(old1, 10.0);
    CHECK_EQ(ob_gap_proof_missing(p), 1);
    /* The same list again: the links stay. */
    CHECK_EQ(ob_gap_proof_set(p, "h1:3306,h2:3306,h3:3306", 3, "h3:3306"), 0);
    CHECK_EQ(fake_nlinks, 2);
    CHECK(!old1->closing);
    /* A member replaced: every link is made anew, and the members prove
     * nothing until they answer again. */
    CHECK_EQ(ob_gap_proof_set(p, "h1:3306,h4:3306,h3:3306", 3, "h3:3306"), 0);
    CHECK(fake_links[0]->closing && fake_links[1]->closing);
    CHECK_EQ(fake_nlinks, 4);
    CHECK_STR(fake_links[3]->host, "h4");
    CHECK_EQ(ob_gap_proof_missing(p), 2);
    /* A late answer of a link being closed counts for nothing. */
    fake_link_answer(old1, 12.0, NONE, 1);
    fake_link_down(fake_links[1], 2013, "Lost connection");
    CHECK_EQ(ob_gap_proof_missing(p), 2);
    CHECK_EQ(fake_links_closed(), 2);
    prove(fake_link_of(0), 20.0);
    CHECK_EQ(ob_gap_proof_missing(p), 1);
    /* Without memory for a member's link: it stays down. */
    fake_link_fail_next = 1;
    CHECK_EQ(ob_gap_proof_set(p, "h1:3306,h5:3306,h3:3306", 3, "h3:3306"), 0);
    CHECK_EQ(fake_links_closed(), 2);
    CHECK(fake_link_of(0) == NULL);
    CHECK(fake_link_of(1) != NULL);
    CHECK_EQ(ob_gap_proof_missing(p), 2);
    CHECK_CONTAINS(ob_gap_proof_why(p), "Galera member h1:3306 cannot serve the gap proof "
                                        "(no connection)");
    /* A list that cannot serve (no wsrep_node_incoming_address): no link. */
    int made = fake_nlinks;
    CHECK_EQ(ob_gap_proof_set(p, "AUTO,AUTO,AUTO", 3, "h3:3306"), -1);
    CHECK_EQ(fake_nlinks, made);
    CHECK_EQ(ob_gap_proof_proven(p), 0);
    CHECK_EQ(fake_links_closed(), 1);
    /* A cluster larger than its list: the missing member is counted. */
    CHECK_EQ(ob_gap_proof_set(p, "h1:3306,h3:3306", 3, "h3:3306"), 0);
    prove(fake_link_of(0), 30.0);
    CHECK_EQ(ob_gap_proof_missing(p), 1);
    CHECK_CONTAINS(ob_gap_proof_why(p), "the cluster has 3 nodes, and its member list names 2");
    close_proof(p);
}

/* A one-node cluster: no member to ask, every round proven at once, and a
 * set after the close is refused. */
static void one_node_and_closing(void) {
    ob_gap_proof *p = make();
    CHECK_EQ(ob_gap_proof_set(p, "h1:3306", 1, "h1:3306"), 0);
    CHECK_EQ(fake_nlinks, 0);
    CHECK_EQ(ob_gap_proof_round(p, 1), 1);
    CHECK_EQ(ob_gap_proof_proven(p), 1);
    CHECK(ob_gap_proof_why(p) == NULL);
    close_proof(p);
}

int main(void) {
    uv_loop_init(&loop);
    a_link_per_member_and_rounds();
    a_new_list_closes_the_old_links();
    one_node_and_closing();
    CHECK_EQ(uv_loop_close(&loop), 0);
    puts("test_gap_proof: ok");
    return 0;
}
