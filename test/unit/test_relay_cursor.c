/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Cursor mode's part of the relay (relay/relay_cursor.c), in a relay made
 * by outbox_relay_create with --cursor against the fake broker, fake
 * connections and a fake members' gap proof (fake_gap_proof.c). What it
 * decides: a members' proof only on a Galera node, made once; a node whose
 * members cannot be named refused at start (the relay exits 1) and, later,
 * holding the gaps back with the reason on /readyz, said once; the lease
 * closed only after the reader, the proof after it.
 */
#include "fake_gap_proof.h"
#include "relay_harness.h"

static const char *const galera[] = {"wsrep_on",
                                     "ON",
                                     "wsrep_provider_name",
                                     "Galera",
                                     "wsrep_cluster_size",
                                     "3",
                                     "wsrep_cluster_status",
                                     "Primary",
                                     "wsrep_ready",
                                     "ON",
                                     "wsrep_incoming_addresses",
                                     "10.0.0.1:3306,10.0.0.2:3306,10.0.0.3:3306",
                                     "wsrep_node_incoming_address",
                                     "10.0.0.1:3306",
                                     NULL};

static outbox_relay *make_cursor(void) {
    outbox_relay_options o = options(1);
    o.cursor = 1;
    outbox_relay *r = make(&o);
    CHECK_EQ(r->nreaders, 1);
    CHECK(r->cursor != NULL);
    CHECK(r->order.readers_hold_lease);
    answer("cluster", FAKE_CONNECT);
    return r;
}

/* A later answer of the watch, as ob_cluster_read would make it of rows. */
static void tell_cluster(outbox_relay *r, const char *const *pairs, const char *self) {
    ob_cluster c;
    ob_cluster_init(&c);
    for (int i = 0; pairs[i]; i += 2)
        ob_cluster_set(&c, pairs[i],
                       strcmp(pairs[i], "wsrep_node_incoming_address") == 0 ? self : pairs[i + 1]);
    c.known = 1;
    ob_relay_cursor_cluster(r, &c);
}

/* A single server: no members to prove, no proof; the lease starts at the
 * watch's first answer, not before. */
static void a_single_server_needs_no_proof(void) {
    outbox_relay *r = make_cursor();
    CHECK(fake_db_named("lease") == NULL);
    answer_watch(NULL);
    pending("lease", FAKE_CONNECT);
    CHECK(r->proof == NULL);
    CHECK(outbox_relay_paused(r) == NULL);
    CHECK_EQ(stats_of(r).cursor_members_down, 0);
    CHECK_EQ(stats_of(r).buckets_total, OB_BUCKETS);
    stop_and_destroy(r);
    CHECK_EQ(seen.fatals, 0);
}

/* A Galera node that cannot name its members at the first answer: the
 * relay cannot go on, naming the variable to set; no lease is taken. */
static void unnamed_members_at_start_are_fatal(void) {
    outbox_relay *r = make_cursor();
    static const char *const unnamed[] = {"wsrep_on",
                                          "ON",
                                          "wsrep_provider_name",
                                          "Galera",
                                          "wsrep_cluster_size",
                                          "3",
                                          "wsrep_cluster_status",
                                          "Primary",
                                          "wsrep_ready",
                                          "ON",
                                          "wsrep_node_incoming_address",
                                          "AUTO",
                                          NULL};
    answer_watch(unnamed);
    CHECK_EQ(seen.fatals, 1);
    CHECK_CONTAINS(seen.why, "cursor mode on a Galera node (a cluster of 3 nodes)");
    CHECK_CONTAINS(seen.why, "wsrep_node_incoming_address is not set on this node");
    CHECK_STR(outbox_relay_errmsg(r), seen.why);
    CHECK(r->proof == NULL);
    for (int i = 0; i < 20; i++)
        uv_run(&loop, UV_RUN_NOWAIT);
    CHECK(fake_db_named("lease") == NULL);
    stop_and_destroy(r);
}

/* A Galera node naming its members: one proof, made at the first answer
 * and kept. Later answers that cannot name them hold the gaps back, with
 * the reason on /readyz, warned once per change; the proof's own reason
 * shows when the names are fine. */
static void members_later_unnamed_hold_the_gaps_back(void) {
    outbox_relay *r = make_cursor();
    answer_watch(galera);
    pending("lease", FAKE_CONNECT);
    ob_gap_proof *proof = r->proof;
    CHECK(proof != NULL);
    CHECK(outbox_relay_paused(r) == NULL);
    CHECK_EQ(stats_of(r).cursor_members_down, 0);
    proof->round = 3; /* a round the members have not all proved */
    proof->proven = 2;
    CHECK_EQ(stats_of(r).cursor_members_down, 1);
    proof->proven = 3;

    tell_cluster(r, galera, "AUTO");
    CHECK(r->proof == proof);
    CHECK_STR(outbox_relay_paused(r),
              "cursor: wsrep_node_incoming_address is not set on this node: the other members "
              "cannot be named, gaps wait");
    tell_cluster(r, galera, "AUTO");
    CHECK_EQ(logged("wsrep_node_incoming_address is not set on this node"), 1);

    proof->refuse_set = 1;
    tell_cluster(r, galera, "10.0.0.1:3306");
    CHECK_STR(outbox_relay_paused(r), "cursor: the member list '10.0.0.1:3306,10.0.0.2:3306,"
                                      "10.0.0.3:3306' cannot serve (wsrep_node_incoming_address "
                                      "must be set on every node): gaps wait");
    proof->refuse_set = 0;
    proof->why = "members: 10.0.0.2:3306 does not answer";
    tell_cluster(r, galera, "10.0.0.1:3306");
    CHECK_STR(outbox_relay_paused(r), "members: 10.0.0.2:3306 does not answer");
    proof->why = NULL;
    CHECK(outbox_relay_paused(r) == NULL);
    CHECK(r->proof == proof);
    CHECK_EQ(seen.fatals, 0);

    /* A single server's answer changes nothing of the proof. */
    ob_cluster single;
    ob_cluster_init(&single);
    single.known = 1;
    ob_relay_cursor_cluster(r, &single);
    CHECK(r->proof == proof);
    stop_and_destroy(r);
}

/* The reader writes under the lease to its end: a graceful stop closes the
 * lease only once the reader has closed, and the members' proof after the
 * reader too; then the relay has stopped. */
static void the_lease_outlives_the_reader(void) {
    outbox_relay *r = make_cursor();
    answer_watch(galera);
    pending("lease", FAKE_CONNECT);
    answer("cursor", FAKE_CONNECT);
    pending("cursor", FAKE_QUERY); /* its probe */
    int proofs = fake_gap_proof_closes();
    CHECK_EQ(outbox_relay_stop(r, on_stopped, NULL), OUTBOX_OK);
    /* The reader is closing (its handles' close callbacks are to come):
     * the lease and the proof wait for it. */
    CHECK_STR(reader_state(r, 0), "closing");
    CHECK(!r->order.lease_stopped);
    CHECK(r->proof != NULL);
    CHECK(fake_db_named("lease") != NULL);
    RUN_UNTIL(seen.stops == 1);
    CHECK(r->order.lease_stopped);
    CHECK_EQ(fake_gap_proof_closes(), proofs + 1);
    CHECK_EQ(outbox_relay_destroy(r), OUTBOX_OK);
    CHECK_EQ(fake_db_open_count(), 0);
    CHECK_EQ(uv_loop_close(&loop), 0);
    CHECK_EQ(uv_loop_init(&loop), 0);
}

int main(void) {
    uv_loop_init(&loop);
    a_single_server_needs_no_proof();
    unnamed_members_at_start_are_fatal();
    members_later_unnamed_hold_the_gaps_back();
    the_lease_outlives_the_reader();
    CHECK_EQ(uv_loop_close(&loop), 0);
    printf("test_relay_cursor: ok\n");
    return 0;
}
