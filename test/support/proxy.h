/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A TCP forwarder on the test's own loop, standing between a client under
 * test and a real server: it can be absent (connections refused), present,
 * or frozen (it keeps the connections but forwards nothing), so a test can
 * make a server "down at start and up a second later" or "frozen" without
 * touching the servers other tests share.
 */
#ifndef OB_TEST_PROXY_H
#define OB_TEST_PROXY_H

#include <uv.h>

typedef struct ti_proxy ti_proxy;

/* Picks a free loopback port for a forwarder to upstream_host:upstream_port;
 * nothing listens until ti_proxy_listen. */
ti_proxy *ti_proxy_new(uv_loop_t *loop, const char *upstream_host, int upstream_port);
int ti_proxy_port(const ti_proxy *p);
/* Starts accepting connections; returns 0 or a libuv error. */
int ti_proxy_listen(ti_proxy *p);
/* Frozen (1): bytes are read but held back; thawing (0) sends them on. */
void ti_proxy_freeze(ti_proxy *p, int frozen);
/* Closes the listener and every connection, then frees the proxy once its
 * handles are closed (run the loop). */
void ti_proxy_close(ti_proxy *p);

#endif
