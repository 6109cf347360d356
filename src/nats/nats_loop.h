/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nats.c's socket on the relay's libuv loop: the project's own attach,
 * read, write and detach callbacks for natsOptions_SetEventLoop.
 *
 * How they stay clear of the known defects of nats.c's event-loop mode:
 * - The loop polls a dup() of nats.c's socket, never nats.c's own
 *   descriptor: nats.c may close its socket while the loop still polls
 *   (nats.c #814), and the number cannot be reused under the poll, since
 *   the duplicate stays open until the loop closes it.
 * - Each attachment has one poll handle, closed once (a flag), in a close
 *   callback that also frees it (#1005: closed twice after a silent
 *   disconnect).
 * - A callback called off the loop thread (nats.c's connect on the thread
 *   pool attaches there) only records what it wants under a mutex; the
 *   loop applies it at its next ob_nats_loop_sync. On the loop thread it is
 *   applied at once.
 * - After every read the poll checks that the connection is still open and
 *   stops polling otherwise, so an end of file cannot spin the loop.
 * The caller keeps nats.c's reconnect, ping timer and flusher off (see
 * link_client_loop.c), so that every read, write, close and destroy of the
 * connection happens on the loop thread: the parser is never carried from
 * one socket to the next (#1007: 3.4.1 keeps it across a reconnect), and
 * nothing destroys the connection during a read (#888).
 *
 * Threads: one ob_nats_loop per link, made and used on the loop thread;
 * the four callbacks may run on any thread.
 */
#ifndef OB_NATS_LOOP_H
#define OB_NATS_LOOP_H

#include <nats/nats.h>
#include <uv.h>

typedef struct ob_nats_loop ob_nats_loop;

/* on_read runs on the loop after each read event of any connection (to
 * drain synchronous subscriptions). Returns NULL when out of memory. */
ob_nats_loop *ob_nats_loop_new(uv_loop_t *loop, void (*on_read)(void *data), void *data);
/* Registers the callbacks on o, for connections driven by nl. */
natsStatus ob_nats_loop_options(ob_nats_loop *nl, natsOptions *o);
/* On the loop: applies what callbacks on other threads asked for. */
void ob_nats_loop_sync(ob_nats_loop *nl);
/* How many read events there were (a count, not a time: a probe's echo
 * can come back within the millisecond it left). */
uint64_t ob_nats_loop_reads(const ob_nats_loop *nl);
/* On the loop: shuts down the socket of nc's attachments (both ways), so
 * that nats.c's next read finds it closed. */
void ob_nats_loop_shutdown(ob_nats_loop *nl, const natsConnection *nc);
/* Closes nl's prepare hook without freeing nl: for a link that leaves a
 * connection nats.c never confirmed closed (what nats.c may still touch
 * stays). */
void ob_nats_loop_quiet(ob_nats_loop *nl);
/* Frees nl once its prepare hook and every attachment's handle have
 * closed (in their close callbacks). Call after every connection that used
 * it was destroyed. */
void ob_nats_loop_free(ob_nats_loop *nl);

#endif
