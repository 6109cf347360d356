/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A scripted MariaDB server on the test's own loop, for unit tests of the
 * connection module (src/db/db.c) without a real server: it listens on a
 * free loopback port, greets each connection with a protocol 10 handshake,
 * takes any login, and answers each COM_QUERY as the test scripted it: an
 * OK (or, for "SELECT <word>", one row holding <word>), silence (a frozen
 * server whose kernel keeps the connection), or a closed connection. It
 * speaks just enough of the protocol for Connector/C's client: no TLS, no
 * compression, one statement per query.
 */
#ifndef OB_TEST_FAKE_MARIADB_H
#define OB_TEST_FAKE_MARIADB_H

#include <uv.h>

typedef enum fake_peer_mode {
    PEER_ANSWER, /* every query answered at once */
    PEER_STALL,  /* queries read and never answered, new connections never greeted */
    PEER_CLOSE   /* the connection closed when a query comes */
} fake_peer_mode;

typedef struct fake_peer fake_peer;

/* Listening at once on 127.0.0.1, a port of its choosing. NULL on failure. */
fake_peer *fake_peer_new(uv_loop_t *loop);
int fake_peer_port(const fake_peer *p);
/* How the queries from now on are answered (PEER_ANSWER at first). */
void fake_peer_mode_set(fake_peer *p, fake_peer_mode m);
/* Connections accepted, logins answered, queries received, COM_QUITs. */
int fake_peer_accepted(const fake_peer *p);
int fake_peer_logins(const fake_peer *p);
int fake_peer_queries(const fake_peer *p);
int fake_peer_quits(const fake_peer *p);
/* 1 while a connection is open on the server's side. */
int fake_peer_connected(const fake_peer *p);
/* The server closes its connection now (a server restarted, an idle
 * session killed). */
void fake_peer_drop(fake_peer *p);
/* 1 when `h` is one of the server's own handles (for a walk of the loop). */
int fake_peer_owns(const fake_peer *p, const uv_handle_t *h);
/* Closes the listener and the connection; freed once they closed (run the
 * loop). */
void fake_peer_close(fake_peer *p);

#endif
