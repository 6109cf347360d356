/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Parsing of the two connection URLs:
 *   mysql://user:password@host:port/database?socket=/path/to.sock
 *   mysql://user:password@host1:port1,host2:port2,.../database  (a cluster)
 *   nats://[user:password@|token@]host[:port][,nats://...]   (tls:// for TLS)
 * User, password, token and database are percent-decoded. Everything before
 * the last '@' is the user information, so a password may hold '/', '?',
 * ':' or '@' as written ('%' must be written %25); a database name or socket
 * path with '@' must write it %40. In a NATS list, a comma starts the next
 * server only when "nats://" follows it.
 *
 * Secrets: no message ever quotes any part of a URL that could hold a
 * credential (say which part is wrong, not what it holds), and log lines
 * show URLs only through ob_url_redact().
 */
#ifndef OB_URL_H
#define OB_URL_H

#include <stddef.h>

/* At most this many database nodes in one URL. */
#define OB_DB_MAX_NODES 16

typedef struct ob_db_node {
    char *host;    /* without brackets for IPv6 */
    unsigned port; /* 3306 when absent */
} ob_db_node;

typedef struct ob_db_url {
    char *user;     /* "" when absent */
    char *password; /* NULL when absent */
    char *host;     /* the first node's, without brackets for IPv6 */
    unsigned port;  /* the first node's, 3306 when absent */
    char *database;
    char *socket; /* NULL unless ?socket= was given (then one node only) */
    /* Every node, in the order written (nodes[0] is host and port above):
     * the connections try them in this order. */
    int n_nodes;
    ob_db_node nodes[OB_DB_MAX_NODES];
} ob_db_url;

#define OB_NATS_MAX_SERVERS 16

typedef struct ob_nats_server {
    char *user;     /* decoded; with no password it is a token; NULL when absent */
    char *password; /* decoded; NULL when absent */
    char *host;
    unsigned port; /* 4222 when absent */
    int tls;       /* written as tls:// */
} ob_nats_server;

typedef struct ob_nats_url {
    int n;
    ob_nats_server srv[OB_NATS_MAX_SERVERS];
} ob_nats_url;

/* Both return 0, or -1 with a message in err. On error nothing is left
 * allocated. */
int ob_db_url_parse(const char *s, ob_db_url *out, char *err, size_t errlen);
void ob_db_url_free(ob_db_url *u);

/* The one place a database URL becomes connection settings: parses `url`
 * and, when `password` is not NULL, puts it in place of the URL's password.
 * Returns 0, or -1 with a message in err (nothing left allocated). */
int ob_db_settings(const char *url, const char *password, ob_db_url *out, char *err, size_t errlen);

int ob_nats_url_parse(const char *s, ob_nats_url *out, char *err, size_t errlen);
void ob_nats_url_free(ob_nats_url *u);
/* 1 when any server was written tls://. */
int ob_nats_url_tls(const ob_nats_url *u);

/* Rebuilds server i as a URL with `host` in place of the written host
 * (used to hand nats.c an address resolved on the loop). Returns a malloc'd
 * string. */
char *ob_nats_server_url(const ob_nats_server *s, const char *host);

/* Overwrites, in place and length for length, the password (or a NATS
 * token) of every URL in `url` with '*': for strings that must stay where
 * they are, such as the process's argv. */
void ob_url_mask(char *url);

/* A copy of `url` with any password or NATS token replaced by "***" (a
 * database user alone is kept), for log lines. Works on any text, parsed or
 * not; comma-separated NATS lists are redacted server by server.
 * Returns a malloc'd string. */
char *ob_url_redact(const char *url);

#endif
