/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What a database connection is on: a single server, or a node of a Galera
 * cluster (MariaDB's synchronous replication), with the cluster's size and
 * members and the node's state.
 *
 * The probe is one statement (ob_cluster_sql) that any user may run: it
 * reads information_schema, so it also answers on a server built without
 * wsrep. Its rows are name/value pairs; ob_cluster_read() turns them into an
 * ob_cluster, and the rest is pure: the description for logs and `status`,
 * and the refusal of cursor mode there.
 *
 * Cursor mode on a node with wsrep on and a provider loaded: INNODB_TRX is
 * node-local there, and AUTO_INCREMENT steps by the cluster's size with an
 * offset per node, so its gap proof asks every other member
 * (gap_members.h). It is refused when the probe cannot name them all
 * (wsrep_node_incoming_address unset: AUTO in the list). The other modes
 * run there: their leases are rows of the lease table (lease_table.h).
 */
#ifndef OB_CLUSTER_H
#define OB_CLUSTER_H

#include <mysql.h>
#include <stddef.h>

#include "mode.h"

typedef struct ob_cluster {
    int known;         /* the probe answered */
    int wsrep_on;      /* the server's wsrep_on is ON */
    int provider;      /* a wsrep provider is loaded (wsrep_provider_name set) */
    int size;          /* wsrep_cluster_size, -1 when not reported */
    char status[24];   /* wsrep_cluster_status: Primary, non-Primary, Disconnected */
    char state[48];    /* wsrep_local_state_comment: Synced, Donor/Desynced, Joining... */
    char members[256]; /* wsrep_incoming_addresses, cut when longer */
    int ready;         /* wsrep_ready: 1 ON, 0 OFF, -1 not reported */
    char self[64];     /* wsrep_node_incoming_address: this node in `members` */
} ob_cluster;

/* The probe: rows of (VARIABLE_NAME, VARIABLE_VALUE). */
extern const char ob_cluster_sql[];

void ob_cluster_init(ob_cluster *c);

/* Takes one row of the probe; names are compared without regard to case,
 * unknown names and NULL values are ignored. Values are the server's text:
 * cut to the field's size, never trusted beyond that. */
void ob_cluster_set(ob_cluster *c, const char *name, const char *value);

/* Reads every row of the probe's result into c (ob_cluster_init first);
 * sets c->known. res may be NULL (c stays unknown). */
void ob_cluster_read(ob_cluster *c, MYSQL_RES *res);

/* 1 when the connection is on a Galera node: wsrep on and a provider loaded. */
int ob_cluster_is_galera(const ob_cluster *c);

/* 1 when c is a Galera node that cannot serve the relay now: wsrep_ready
 * OFF, or its cluster status other than Primary (it refuses statements
 * with error 1047); why gets the reason. */
int ob_cluster_unfit(const ob_cluster *c, char *why, size_t n);

/* One line for logs and `status`: "a single server (wsrep off)", or
 * "Galera cluster of 3 nodes (Primary), this node Synced, members
 * 127.0.0.1:3306,...". out: at least 64 bytes; cut to n. */
void ob_cluster_describe(const ob_cluster *c, char *out, size_t n);

/* 1 when two descriptions would differ in what an operator cares about
 * (wsrep, provider, size, status, state or members). */
int ob_cluster_differs(const ob_cluster *a, const ob_cluster *b);

/* NULL when `mode` is correct on what c describes; otherwise writes into out
 * why the relay must not run there, naming the cause and what to do, and
 * returns out. */
const char *ob_cluster_refusal(const ob_cluster *c, const ob_mode *mode, char *out, size_t n);

#endif
