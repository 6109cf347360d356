/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The link's changes of readiness, posted and delivered from the loop's
 * idle phase (libuv's pending queue, uv__io_feed, does the same for its own
 * events): set_state (link.c) posts, and the owner (the relay, which fans
 * the change out to its readers) hears of it only after the call that made
 * it has returned. A reader that calls the link from its ack handler (a
 * suspect answer, a refusal) or its ack deadline is never called back
 * inside that call. An active idle handle also keeps the loop from waiting
 * in its poll while a change is posted.
 */
#include "link_int.h"

#include <string.h>

/* Delivers the changes posted before this call, in order; those posted by
 * the callbacks wait for the next turn of the loop. */
static void deliver(ob_link *l) {
    uint8_t now[sizeof(l->posted)];
    int n = l->nposted;
    memcpy(now, l->posted, (size_t)n);
    l->nposted = 0;
    for (int i = 0; i < n; i++)
        if (l->cbs.on_ready)
            l->cbs.on_ready(l->cbs.data, now[i]);
}

static void on_post(uv_idle_t *h) {
    uv_idle_stop(h);
    deliver(h->data);
}

void ob_link_post_init(ob_link *l) {
    uv_idle_init(l->loop, &l->post);
    l->post.data = l;
    l->post_on = 1;
}

void ob_link_post_ready(ob_link *l, int ready) {
    /* Full (16 changes in one turn of the loop): the last one gives way,
     * so the owner still ends with the latest. */
    if (l->nposted == (int)sizeof(l->posted))
        l->nposted--;
    l->posted[l->nposted++] = (uint8_t)ready;
    if (l->post_on)
        uv_idle_start(&l->post, on_post);
}

void ob_link_post_close(ob_link *l, uv_close_cb cb) {
    l->post_on = 0;
    deliver(l);
    uv_close((uv_handle_t *)&l->post, cb);
}
