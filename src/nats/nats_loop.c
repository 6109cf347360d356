/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nats.c's socket on the relay's libuv loop (see nats_loop.h for how the
 * callbacks avoid the event-loop mode's known defects).
 */
#include "nats_loop.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

/* One socket of one connection, from attach to the close of its poll. */
typedef struct nl_attach {
    struct ob_nats_loop *nl;
    natsConnection *nc;
    int fd;            /* our duplicate of nats.c's socket */
    int want;          /* UV_READABLE | UV_WRITABLE, as nats.c asked (under nl->mu) */
    int detached;      /* nats.c detached (under nl->mu) */
    int have;          /* what the poll watches (loop only) */
    int write_soon;    /* nats.c has bytes to write: the prepare hook writes them (loop only) */
    int write_blocked; /* the socket took only part: the poll waits for writability (loop only) */
    int inited;        /* the poll handle exists (loop only) */
    int closing;       /* uv_close was called on it (loop only) */
    uv_poll_t poll;
    struct nl_attach *next;
} nl_attach;

struct ob_nats_loop {
    uv_loop_t *loop;
    uv_thread_t thread; /* the loop's */
    uv_mutex_t mu;
    nl_attach *list;      /* under mu */
    int dirty;            /* a callback off the loop changed something (under mu) */
    int freeing;          /* free once the list is empty and the prepare hook closed (loop only) */
    int prepare_open;     /* the prepare hook is not closed yet (loop only) */
    int prepare_closing;  /* uv_close was called on it (loop only) */
    uv_prepare_t prepare; /* writes what nats.c buffered, once per loop iteration */
    uint64_t reads;       /* read events so far */
    void (*on_read)(void *data);
    void *data;
};

static int on_loop(ob_nats_loop *nl) {
    uv_thread_t self = uv_thread_self();
    return uv_thread_equal(&self, &nl->thread);
}

static void free_if_done(ob_nats_loop *nl, int empty) {
    if (empty && nl->freeing && !nl->prepare_open) {
        uv_mutex_destroy(&nl->mu);
        free(nl);
    }
}

static void unlink_and_free(nl_attach *a) {
    ob_nats_loop *nl = a->nl;
    uv_mutex_lock(&nl->mu);
    for (nl_attach **p = &nl->list; *p; p = &(*p)->next) {
        if (*p == a) {
            *p = a->next;
            break;
        }
    }
    int empty = nl->list == NULL;
    uv_mutex_unlock(&nl->mu);
    if (a->fd >= 0)
        close(a->fd);
    free(a);
    free_if_done(nl, empty);
}

static void poll_closed(uv_handle_t *h) {
    unlink_and_free(h->data);
}

static void apply(nl_attach *a);

static void on_poll(uv_poll_t *h, int status, int events) {
    nl_attach *a = h->data;
    ob_nats_loop *nl = a->nl;
    if (status < 0)
        events = UV_READABLE; /* the read finds the error and closes */
    if (events & UV_WRITABLE)
        natsConnection_ProcessWriteEvent(a->nc);
    if (events & UV_READABLE) {
        nl->reads++;
        natsConnection_ProcessReadEvent(a->nc);
    }
    /* nats.c may have detached during the call (an end of file or an
     * error closes the connection there, on this thread). */
    if (!a->closing && natsConnection_IsClosed(a->nc)) {
        uv_mutex_lock(&nl->mu);
        a->want = 0;
        uv_mutex_unlock(&nl->mu);
    }
    if (!a->closing)
        apply(a);
    if (nl->on_read)
        nl->on_read(nl->data);
}

static void on_prepare(uv_prepare_t *h);

/* On the loop: makes the poll match what nats.c asked for. A wish to write
 * is met by the prepare hook, which writes just before the loop next
 * waits (one write for everything published meanwhile, and no change of
 * the poll); only a socket that did not take it all is polled for
 * writability. */
static void apply(nl_attach *a) {
    ob_nats_loop *nl = a->nl;
    if (a->closing)
        return;
    uv_mutex_lock(&nl->mu);
    int want = a->want, detached = a->detached;
    uv_mutex_unlock(&nl->mu);
    if (detached) {
        if (!a->inited) {
            unlink_and_free(a);
            return;
        }
        a->closing = 1;
        uv_close((uv_handle_t *)&a->poll, poll_closed);
        return;
    }
    if (!a->inited) {
        if (uv_poll_init(nl->loop, &a->poll, a->fd) != 0)
            return; /* the read never comes; the liveness check closes it */
        a->poll.data = a;
        a->inited = 1;
    }
    int ev = want & UV_READABLE;
    if (!(want & UV_WRITABLE)) {
        a->write_soon = a->write_blocked = 0;
    } else if (a->write_blocked) {
        ev |= UV_WRITABLE;
    } else if (!a->write_soon && nl->prepare_open && !nl->prepare_closing) {
        a->write_soon = 1;
        uv_prepare_start(&nl->prepare, on_prepare);
    }
    if (ev == a->have)
        return;
    if (ev)
        uv_poll_start(&a->poll, ev, on_poll);
    else
        uv_poll_stop(&a->poll);
    a->have = ev;
}

/* Before the loop waits: writes what nats.c buffered since. */
static void on_prepare(uv_prepare_t *h) {
    ob_nats_loop *nl = h->data;
    uv_prepare_stop(h);
    for (;;) {
        nl_attach *todo = NULL;
        uv_mutex_lock(&nl->mu);
        for (nl_attach *a = nl->list; a && !todo; a = a->next)
            if (a->write_soon && a->inited && !a->closing)
                todo = a;
        uv_mutex_unlock(&nl->mu);
        if (todo == NULL)
            return;
        todo->write_soon = 0;
        /* A failed write closes the connection here; the attachment lives
         * until its poll's close callback. */
        natsConnection_ProcessWriteEvent(todo->nc);
        uv_mutex_lock(&nl->mu);
        int still = todo->want & UV_WRITABLE;
        uv_mutex_unlock(&nl->mu);
        if (still && !todo->closing)
            todo->write_blocked = 1; /* the rest when the socket takes it */
        apply(todo);
    }
}

void ob_nats_loop_sync(ob_nats_loop *nl) {
    uv_mutex_lock(&nl->mu);
    int dirty = nl->dirty;
    nl->dirty = 0;
    uv_mutex_unlock(&nl->mu);
    if (!dirty)
        return;
    /* apply() may free an attachment: look the list up again each time. */
    for (;;) {
        nl_attach *todo = NULL;
        int detached = 0;
        uv_mutex_lock(&nl->mu);
        for (nl_attach *a = nl->list; a; a = a->next) {
            if (!a->closing && (a->detached || !a->inited || a->want != a->have)) {
                todo = a;
                detached = a->detached;
                break;
            }
        }
        uv_mutex_unlock(&nl->mu);
        if (todo == NULL)
            return;
        apply(todo); /* a detached one is freed or closing after this */
        if (!detached && !todo->inited)
            return; /* could not make its poll: the liveness check closes it */
    }
}

/* Records a change; applies it at once on the loop thread. */
static natsStatus changed(nl_attach *a) {
    ob_nats_loop *nl = a->nl;
    if (on_loop(nl)) {
        apply(a);
        return NATS_OK;
    }
    uv_mutex_lock(&nl->mu);
    nl->dirty = 1;
    uv_mutex_unlock(&nl->mu);
    return NATS_OK;
}

static natsStatus cb_attach(void **user, void *loop, natsConnection *nc, natsSock sock) {
    ob_nats_loop *nl = loop;
    if (*user != NULL) {
        /* A reattach (nats.c reconnected): the old socket is done with. */
        nl_attach *old = *user;
        uv_mutex_lock(&nl->mu);
        old->detached = 1;
        uv_mutex_unlock(&nl->mu);
        changed(old);
        *user = NULL;
    }
    nl_attach *a = calloc(1, sizeof(*a));
    if (a == NULL)
        return NATS_NO_MEMORY;
    a->fd = dup((int)sock);
    if (a->fd < 0) {
        free(a);
        return NATS_SYS_ERROR;
    }
    a->nl = nl;
    a->nc = nc;
    a->want = UV_READABLE;
    uv_mutex_lock(&nl->mu);
    a->next = nl->list;
    nl->list = a;
    uv_mutex_unlock(&nl->mu);
    *user = a;
    return changed(a);
}

static natsStatus set_event(void *user, int ev, bool add) {
    nl_attach *a = user;
    uv_mutex_lock(&a->nl->mu);
    if (add)
        a->want |= ev;
    else
        a->want &= ~ev;
    uv_mutex_unlock(&a->nl->mu);
    return changed(a);
}

static natsStatus cb_read(void *user, bool add) {
    return set_event(user, UV_READABLE, add);
}

static natsStatus cb_write(void *user, bool add) {
    return set_event(user, UV_WRITABLE, add);
}

static natsStatus cb_detach(void *user) {
    nl_attach *a = user;
    uv_mutex_lock(&a->nl->mu);
    a->detached = 1;
    uv_mutex_unlock(&a->nl->mu);
    return changed(a);
}

ob_nats_loop *ob_nats_loop_new(uv_loop_t *loop, void (*on_read)(void *data), void *data) {
    ob_nats_loop *nl = calloc(1, sizeof(*nl));
    if (nl == NULL)
        return NULL;
    if (uv_mutex_init(&nl->mu) != 0) {
        free(nl);
        return NULL;
    }
    nl->loop = loop;
    nl->thread = uv_thread_self();
    uv_prepare_init(loop, &nl->prepare);
    nl->prepare.data = nl;
    nl->prepare_open = 1;
    nl->on_read = on_read;
    nl->data = data;
    return nl;
}

natsStatus ob_nats_loop_options(ob_nats_loop *nl, natsOptions *o) {
    return natsOptions_SetEventLoop(o, nl, cb_attach, cb_read, cb_write, cb_detach);
}

void ob_nats_loop_shutdown(ob_nats_loop *nl, const natsConnection *nc) {
    uv_mutex_lock(&nl->mu);
    for (nl_attach *a = nl->list; a; a = a->next)
        if (a->nc == nc && !a->detached && a->fd >= 0)
            shutdown(a->fd, SHUT_RDWR); /* the socket, shared with nats.c's descriptor */
    uv_mutex_unlock(&nl->mu);
}

uint64_t ob_nats_loop_reads(const ob_nats_loop *nl) {
    return nl->reads;
}

static void prepare_closed(uv_handle_t *h) {
    ob_nats_loop *nl = h->data;
    nl->prepare_open = 0;
    uv_mutex_lock(&nl->mu);
    int empty = nl->list == NULL;
    uv_mutex_unlock(&nl->mu);
    free_if_done(nl, empty);
}

void ob_nats_loop_quiet(ob_nats_loop *nl) {
    nl->on_read = NULL;
    if (!nl->prepare_closing) {
        nl->prepare_closing = 1;
        uv_close((uv_handle_t *)&nl->prepare, prepare_closed);
    }
}

void ob_nats_loop_free(ob_nats_loop *nl) {
    nl->on_read = NULL;
    ob_nats_loop_sync(nl);
    nl->freeing = 1;
    if (nl->prepare_closing) {
        uv_mutex_lock(&nl->mu);
        int empty = nl->list == NULL;
        uv_mutex_unlock(&nl->mu);
        free_if_done(nl, empty);
        return;
    }
    ob_nats_loop_quiet(nl); /* frees nl when the last handle is closed */
}
