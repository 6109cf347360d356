/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A connection's settings (ob_db_config) and the group its connections may
 * share, apart from db.h so that the files beside db.c that need only the
 * settings (db_socket.c, db_nodes.c) include nothing of the connection.
 */
#ifndef OB_DB_CONFIG_H
#define OB_DB_CONFIG_H

#include <stdint.h>

#include "url.h"

/* Connections that share a group (every connection of one relay) share
 * what one of them finds about a node: when one gets no answer from its node
 * within its op_timeout_ms (a frozen server, whose kernel still keeps the
 * TCP connections alive), the others on that node drop their sessions at
 * once and move on too, whatever their own deadlines. Only with several
 * nodes. But a node whose cluster probe (a fresh, cheap statement of the
 * cluster watch) answered after the late statement was sent is busy, not
 * dead (a long cluster-wide DDL holds every commit): the late connection is
 * made again on the same node, and the others stay. Zero-initialised by its
 * owner, who keeps it until every connection in it is closed; used on one
 * loop. */
typedef struct ob_db_group {
    struct ob_db_nodes *first;
    int answered;            /* 1 + the node whose cluster probe answered last; 0 none */
    uint64_t answered_ms;    /* when (the loop's clock) */
    uint64_t busy_said;      /* when a busy node was last said at warn level (the loop's clock) */
    uint64_t first_up_ms;    /* when a session was last made on the first node */
    uint64_t retry_first_ms; /* no connection tries the first node again before this */
    uint64_t failbacks;      /* sessions moved back to the first node */
} ob_db_group;

typedef struct ob_db_config {
    const char *host; /* name or address; resolved on the loop */
    unsigned port;
    /* Several nodes (a cluster), in the order to try them; when n_nodes is
     * 0, host and port name the one server. See "Nodes" in db.h. */
    const ob_db_node *nodes;
    int n_nodes;
    ob_db_group *group; /* may be NULL */
    const char *user;
    const char *password; /* may be NULL */
    const char *database;
    const char *socket; /* unix socket path; when set, host and port are unused */
    unsigned connect_timeout_s;
    unsigned read_timeout_s;  /* must outlast any legitimate wait, such as GET_LOCK */
    uint32_t op_timeout_ms;   /* our own deadline for one operation; 0 = none */
    uint32_t failback_ms;     /* a session away from the first node goes back after; 0 never */
    const char *init_command; /* run by connect, may be NULL */

    /* TLS. On when `tls` is set; the server's certificate chain is then
     * always verified: against tls_ca when given, else the system store.
     * The host name is checked too unless tls_no_verify_host is set. To
     * check a host name (not an address) the name is handed to the library,
     * which then resolves it itself inside connect. */
    int tls;
    const char *tls_ca;   /* PEM file of the CAs to trust, may be NULL */
    const char *tls_cert; /* client certificate (PEM), may be NULL */
    const char *tls_key;  /* its private key (PEM), may be NULL */
    int tls_no_verify_host;
} ob_db_config;

/* Points host, port, user, password, database and socket of `cfg` into `u`
 * (which must outlive cfg). */
static inline void ob_db_url_to_config(const ob_db_url *u, ob_db_config *cfg) {
    cfg->host = u->host;
    cfg->port = u->port;
    cfg->nodes = u->nodes;
    cfg->n_nodes = u->n_nodes;
    cfg->user = u->user;
    cfg->password = u->password;
    cfg->database = u->database;
    cfg->socket = u->socket;
}

#endif
