/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The link's client with nats.c on its own threads (over TLS by default,
 * or outbox_relay_options.nats_client = OUTBOX_NATS_CLIENT_THREADS): nats.c
 * reads and writes on its reader and flusher threads, pings and reconnects
 * on its own, and delivers the inbox's messages on its delivery thread,
 * which reads each reply into a record and leaves it in the mailbox
 * (link_mailbox.c) for the loop. Over TLS this is the safe client: nats.c
 * 3.4.1 waits in poll() without a deadline for the rest of a TLS record it
 * has begun to read, a wait that must not happen on the loop.
 */
#include "link_int.h"

static int subscribe(ob_link *l) {
    return ob_link_mailbox_subscribe(l, l->conn) == NATS_OK ? 0 : -1;
}

static void close_conn(ob_link *l) {
    if (ob_link_client_unsubscribe(l) == 0)
        natsConnection_Close(l->nc);
}

static int start(ob_link *l) {
    if (uv_async_init(l->loop, &l->async, ob_link_mailbox_on_async) != 0)
        return -1;
    l->async.data = l;
    return 1;
}

static int rebuilds(ob_link *l) {
    (void)l;
    return 0; /* nats.c reconnects by itself */
}

const link_ops ob_link_threads_ops = {
    .name = "nats.c on its own threads",
    .init = ob_link_mailbox_init,
    .start = start,
    .connect = ob_link_client_connect,
    .subscribe = subscribe,
    .request = ob_link_client_request,
    .last_error = ob_link_client_last_error,
    .close = close_conn,
    .close_done = ob_link_client_close_done,
    .drop = ob_link_client_drop,
    .stop = ob_link_client_stop,
    .rebuilds = rebuilds,
    .free = ob_link_client_free,
};
