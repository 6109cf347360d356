/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What db.c does around its socket that needs no connection state: the TCP
 * keepalive that bounds how long a dead peer goes unnoticed, the check of
 * an idle connection that became readable, and TLS (the options, the
 * handshake's blocking waits, the connect errors named). Private to src/db.
 */
#ifndef OB_DB_SOCKET_H
#define OB_DB_SOCKET_H

#include <mysql.h>
#include <stddef.h>

#include "db_config.h"

/* How a dead server is noticed on a TCP connection: keepalive probes after
 * OB_DB_KEEPIDLE_S of silence, every OB_DB_KEEPINTVL_S, OB_DB_KEEPCNT
 * unanswered ones end the connection; data the server does not acknowledge
 * ends it after OB_DB_USER_TIMEOUT_MS. Both come to at most 8 s, within
 * OB_DB_LOSS_BOUND_MS (db.h). */
#define OB_DB_KEEPIDLE_S 2
#define OB_DB_KEEPINTVL_S 2
#define OB_DB_KEEPCNT 3
#define OB_DB_USER_TIMEOUT_MS 8000

/* Turns TCP keepalive on with the times above. Returns 0, or -1 with errno
 * (the socket is then left as it was, and still works). */
int ob_db_socket_keepalive(int fd);

/* Called when an idle connection's socket became readable or reported an
 * error: nothing is due from the server while no statement runs, so the
 * server closed it (end of stream), the network reset it or keepalive gave
 * up (an error), or the server spoke unasked, which it does only before it
 * closes a session. Returns 1 with why (a short text) in those cases, 0
 * when nothing is there after all (a wake-up to ignore). Never blocks. */
int ob_db_socket_closed(int fd, char *why, size_t len);

/* 1 when h is an IPv4 or IPv6 address, not a name. */
int ob_db_is_address(const char *h);

/* The system store's CA file, or NULL when it has none. */
const char *ob_db_system_ca_file(void);

/* The wait Connector/C runs inside the TLS handshake (MARIADB_OPT_IO_WAIT). */
int ob_db_tls_io_wait(my_socket fd, my_bool is_read, int timeout);

/* The TLS options of a connection's settings (ob_db_config's tls_*) set on
 * m (before connect): the chain always verified, the handshake's waits
 * bounded. */
void ob_db_tls_options(MYSQL *m, const char *ca, const char *cert, const char *key,
                       int no_verify_host);

/* Connector/C 3.3 leaves a TLS socket in blocking mode after connect, so a
 * later SSL_read would wait inside a _start call: puts fd back in
 * non-blocking mode. Returns 0 or -1. */
int ob_db_socket_nonblocking(int fd);

/* A new MYSQL handle with the options of cfg set (non-blocking, timeouts,
 * character set, init command, TCP unless a socket is named, TLS); not yet
 * connected. NULL when out of memory. */
MYSQL *ob_db_mysql_new(const ob_db_config *cfg);

#endif
