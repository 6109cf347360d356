/* SPDX-License-Identifier: Apache-2.0 */
/* What a connection is on: the cluster probe's rows read into an ob_cluster,
 * its description, and the refusal of the locking modes on Galera. */
#include <string.h>

#include "check.h"
#include "cluster.h"

/* Rows as information_schema gives them (capital names). */
static void galera_node(ob_cluster *c, const char *size) {
    ob_cluster_init(c);
    ob_cluster_set(c, "WSREP_ON", "ON");
    ob_cluster_set(c, "WSREP_PROVIDER_NAME", "Galera");
    ob_cluster_set(c, "WSREP_CLUSTER_SIZE", size);
    ob_cluster_set(c, "WSREP_CLUSTER_STATUS", "Primary");
    ob_cluster_set(c, "WSREP_LOCAL_STATE_COMMENT", "Synced");
    ob_cluster_set(c, "WSREP_INCOMING_ADDRESSES", "127.0.0.1:3306,127.0.0.1:3307,127.0.0.1:3308");
    c->known = 1;
}

static void a_galera_node_is_described(void) {
    ob_cluster c;
    char d[400];
    galera_node(&c, "3");
    CHECK(ob_cluster_is_galera(&c));
    CHECK_EQ(c.size, 3);
    ob_cluster_describe(&c, d, sizeof(d));
    CHECK_STR(d, "Galera cluster of 3 nodes (Primary), this node Synced, members "
                 "127.0.0.1:3306,127.0.0.1:3307,127.0.0.1:3308");
}

static void a_single_server_is_not_galera(void) {
    ob_cluster c;
    char d[200], why[600];
    /* A server built without wsrep: the probe finds no row at all. */
    ob_cluster_init(&c);
    c.known = 1;
    CHECK(!ob_cluster_is_galera(&c));
    ob_cluster_describe(&c, d, sizeof(d));
    CHECK_STR(d, "a single server (wsrep off)");
    CHECK(ob_cluster_refusal(&c, &ob_mode_cursor, why, sizeof(why)) == NULL);
    /* wsrep off, as Debian's packaged server runs by default. */
    ob_cluster_set(&c, "wsrep_on", "OFF");
    CHECK(!ob_cluster_is_galera(&c));
    /* wsrep on without a provider replicates nothing. */
    ob_cluster_set(&c, "wsrep_on", "ON");
    ob_cluster_set(&c, "wsrep_provider_name", "");
    CHECK(!ob_cluster_is_galera(&c));
    ob_cluster_describe(&c, d, sizeof(d));
    CHECK_STR(d, "a single server (wsrep on, no provider loaded)");
    CHECK(ob_cluster_refusal(&c, &ob_mode_ordered, why, sizeof(why)) == NULL);
}

static void an_unknown_answer_refuses_nothing(void) {
    ob_cluster c;
    char d[100], why[600];
    ob_cluster_init(&c);
    CHECK(!ob_cluster_is_galera(&c));
    ob_cluster_describe(&c, d, sizeof(d));
    CHECK_STR(d, "not known yet");
    CHECK(ob_cluster_refusal(&c, &ob_mode_leader, why, sizeof(why)) == NULL);
}

/* On Galera the other modes' leases are rows of the lease table
 * (lease_table.h); cursor mode runs when every member is named by address
 * (its gap proof asks each of them, gap_members.h), and is refused naming
 * the cause otherwise. */
static void cursor_mode_needs_the_members_named_on_galera(void) {
    ob_cluster c;
    char why[600];
    galera_node(&c, "3");
    CHECK(ob_cluster_refusal(&c, &ob_mode_plain, why, sizeof(why)) == NULL);
    CHECK(ob_cluster_refusal(&c, &ob_mode_ordered, why, sizeof(why)) == NULL);
    CHECK(ob_cluster_refusal(&c, &ob_mode_leader, why, sizeof(why)) == NULL);
    /* without wsrep_node_incoming_address */
    CHECK(ob_cluster_refusal(&c, &ob_mode_cursor, why, sizeof(why)) == why);
    CHECK(strstr(why, "cursor mode on a Galera node (a cluster of 3 nodes)") == why);
    CHECK(strstr(why, "wsrep_node_incoming_address is not set on this node") != NULL);
    CHECK(strstr(why, "use --ordered or the plain mode") != NULL);
    ob_cluster_set(&c, "WSREP_NODE_INCOMING_ADDRESS", "10.0.0.1:3306");
    ob_cluster_set(&c, "WSREP_INCOMING_ADDRESSES", "10.0.0.2:3306,AUTO,10.0.0.1:3306");
    CHECK(ob_cluster_refusal(&c, &ob_mode_cursor, why, sizeof(why)) == why);
    CHECK(strstr(why, "does not name every member") != NULL);
    ob_cluster_set(&c, "WSREP_INCOMING_ADDRESSES", "10.0.0.2:3306,10.0.0.3:3306,10.0.0.1:3306");
    CHECK(ob_cluster_refusal(&c, &ob_mode_cursor, why, sizeof(why)) == NULL);
    /* an arbitrator (garbd) lists an empty entry: it runs no transaction */
    ob_cluster_set(&c, "WSREP_INCOMING_ADDRESSES", "10.0.0.2:3306,,10.0.0.1:3306");
    CHECK(ob_cluster_refusal(&c, &ob_mode_cursor, why, sizeof(why)) == NULL);
    ob_cluster_set(&c, "WSREP_INCOMING_ADDRESSES", "10.0.0.1:3306,");
    CHECK(ob_cluster_refusal(&c, &ob_mode_cursor, why, sizeof(why)) == NULL);
    ob_cluster_set(&c, "WSREP_INCOMING_ADDRESSES", "10.0.0.2:3306,,AUTO,10.0.0.1:3306");
    CHECK(ob_cluster_refusal(&c, &ob_mode_cursor, why, sizeof(why)) == why);
    /* the relay's node missing from the list */
    ob_cluster_set(&c, "WSREP_NODE_INCOMING_ADDRESS", "10.0.0.9:3306");
    CHECK(ob_cluster_refusal(&c, &ob_mode_cursor, why, sizeof(why)) == why);
    /* one node named is accepted: it has no other member to ask */
    galera_node(&c, "1");
    ob_cluster_set(&c, "WSREP_NODE_INCOMING_ADDRESS", "10.0.0.1:3306");
    ob_cluster_set(&c, "WSREP_INCOMING_ADDRESSES", "10.0.0.1:3306");
    CHECK(ob_cluster_refusal(&c, &ob_mode_cursor, why, sizeof(why)) == NULL);
}

static void server_text_is_cut_and_cleaned(void) {
    ob_cluster c;
    char long_members[1000];
    memset(long_members, 'a', sizeof(long_members) - 1);
    long_members[sizeof(long_members) - 1] = '\0';
    galera_node(&c, "3");
    ob_cluster_set(&c, "WSREP_INCOMING_ADDRESSES", long_members);
    CHECK_EQ(strlen(c.members), sizeof(c.members) - 1);
    ob_cluster_set(&c, "WSREP_LOCAL_STATE_COMMENT", "Syn\033[2Jced\n");
    CHECK_STR(c.state, "Syn?[2Jced?");
    ob_cluster_set(&c, "WSREP_CLUSTER_SIZE", "3x");
    CHECK_EQ(c.size, -1);
    ob_cluster_set(&c, "WSREP_CLUSTER_SIZE", "-2");
    CHECK_EQ(c.size, -1);
    ob_cluster_set(&c, NULL, "x");
    ob_cluster_set(&c, "WSREP_ON", NULL);
    CHECK(c.wsrep_on);
}

static void differences_that_matter(void) {
    ob_cluster a, b;
    galera_node(&a, "3");
    galera_node(&b, "3");
    CHECK(!ob_cluster_differs(&a, &b));
    ob_cluster_set(&b, "WSREP_CLUSTER_SIZE", "2");
    CHECK(ob_cluster_differs(&a, &b));
    galera_node(&b, "3");
    ob_cluster_set(&b, "WSREP_LOCAL_STATE_COMMENT", "Donor/Desynced");
    CHECK(ob_cluster_differs(&a, &b));
}

static void a_node_out_of_the_primary_component_is_unfit(void) {
    ob_cluster c;
    char why[200];
    galera_node(&c, "3");
    CHECK(!ob_cluster_unfit(&c, why, sizeof(why))); /* wsrep_ready not reported */
    ob_cluster_set(&c, "WSREP_READY", "ON");
    CHECK(!ob_cluster_unfit(&c, why, sizeof(why)));
    ob_cluster_set(&c, "WSREP_READY", "OFF");
    CHECK(ob_cluster_unfit(&c, why, sizeof(why)));
    CHECK_STR(why, "the node is not ready (wsrep_ready OFF, cluster status Primary)");
    galera_node(&c, "1");
    ob_cluster_set(&c, "WSREP_CLUSTER_STATUS", "non-Primary");
    CHECK(ob_cluster_unfit(&c, why, sizeof(why)));
    CHECK_CONTAINS(why, "non-Primary");
    ob_cluster_init(&c); /* a single server is always fit */
    c.known = 1;
    CHECK(!ob_cluster_unfit(&c, why, sizeof(why)));
}

int main(void) {
    a_galera_node_is_described();
    a_single_server_is_not_galera();
    an_unknown_answer_refuses_nothing();
    cursor_mode_needs_the_members_named_on_galera();
    server_text_is_cut_and_cleaned();
    differences_that_matter();
    a_node_out_of_the_primary_component_is_unfit();
    return 0;
}
