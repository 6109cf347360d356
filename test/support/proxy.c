/* SPDX-License-Identifier: Apache-2.0 */
#include "proxy.h"

#include <stdlib.h>
#include <string.h>

typedef struct conn {
    ti_proxy *p;
    uv_tcp_t down, up; /* client side, server side */
    uv_connect_t creq;
    int open;
    int up_ok;
    struct conn *next;
} conn;

typedef struct held {
    uv_write_t req;
    uv_buf_t buf;
    uv_stream_t *to;
    struct held *next;
} held;

struct ti_proxy {
    uv_loop_t *loop;
    uv_tcp_t listener;
    int listening;
    int port;
    struct sockaddr_in upstream;
    int frozen;
    held *queue, *queue_tail;
    conn *conns;
    int closing;
    int open; /* handles still open, when closing */
};

static void maybe_free(ti_proxy *p) {
    if (p->closing && p->open == 0) {
        while (p->queue) {
            held *h = p->queue;
            p->queue = h->next;
            free(h->buf.base);
            free(h);
        }
        free(p);
    }
}

ti_proxy *ti_proxy_new(uv_loop_t *loop, const char *host, int port) {
    ti_proxy *p = calloc(1, sizeof(*p));
    p->loop = loop;
    uv_ip4_addr(host, port, &p->upstream);
    /* Ask the kernel for a free port, then let it go until listen. */
    uv_tcp_t t;
    struct sockaddr_in a;
    uv_ip4_addr("127.0.0.1", 0, &a);
    uv_tcp_init(loop, &t);
    uv_tcp_bind(&t, (const struct sockaddr *)&a, 0);
    struct sockaddr_storage got;
    int len = sizeof(got);
    uv_tcp_getsockname(&t, (struct sockaddr *)&got, &len);
    p->port = ntohs(((struct sockaddr_in *)&got)->sin_port);
    uv_close((uv_handle_t *)&t, NULL);
    uv_run(loop, UV_RUN_NOWAIT);
    return p;
}

int ti_proxy_port(const ti_proxy *p) {
    return p->port;
}

static void conn_handle_closed(uv_handle_t *h) {
    conn *c = h->data;
    if (--c->open == 0) {
        ti_proxy *p = c->p;
        conn **pp = &p->conns;
        while (*pp && *pp != c)
            pp = &(*pp)->next;
        if (*pp)
            *pp = c->next;
        free(c);
        p->open--;
        maybe_free(p);
    }
}

static void conn_close(conn *c) {
    /* Bytes held for this connection go nowhere now. */
    held **hp = &c->p->queue, *last = NULL;
    while (*hp) {
        held *h = *hp;
        if (h->to == (uv_stream_t *)&c->down || h->to == (uv_stream_t *)&c->up) {
            *hp = h->next;
            free(h->buf.base);
            free(h);
        } else {
            last = h;
            hp = &h->next;
        }
    }
    c->p->queue_tail = last;
    if (!uv_is_closing((uv_handle_t *)&c->down))
        uv_close((uv_handle_t *)&c->down, conn_handle_closed);
    if (!uv_is_closing((uv_handle_t *)&c->up))
        uv_close((uv_handle_t *)&c->up, conn_handle_closed);
}

static void on_alloc(uv_handle_t *h, size_t size, uv_buf_t *buf) {
    (void)h;
    buf->base = malloc(size);
    buf->len = size;
}

static void on_written(uv_write_t *req, int status) {
    (void)status;
    held *h = (held *)req;
    free(h->buf.base);
    free(h);
}

static void send_to(ti_proxy *p, uv_stream_t *to, char *data, size_t n) {
    held *h = calloc(1, sizeof(*h));
    h->buf = uv_buf_init(data, (unsigned)n);
    h->to = to;
    if (p->frozen) {
        if (p->queue_tail)
            p->queue_tail->next = h;
        else
            p->queue = h;
        p->queue_tail = h;
        return;
    }
    if (uv_is_closing((uv_handle_t *)to) || uv_write(&h->req, to, &h->buf, 1, on_written) != 0) {
        free(data);
        free(h);
    }
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf) {
    conn *c = s->data;
    if (n < 0) {
        free(buf->base);
        conn_close(c);
        return;
    }
    if (n == 0) {
        free(buf->base);
        return;
    }
    uv_stream_t *to =
        s == (uv_stream_t *)&c->down ? (uv_stream_t *)&c->up : (uv_stream_t *)&c->down;
    send_to(c->p, to, buf->base, (size_t)n);
}

static void on_up_connected(uv_connect_t *req, int status) {
    conn *c = req->data;
    if (status != 0) {
        conn_close(c);
        return;
    }
    c->up_ok = 1;
    uv_read_start((uv_stream_t *)&c->down, on_alloc, on_read);
    uv_read_start((uv_stream_t *)&c->up, on_alloc, on_read);
}

static void on_accept(uv_stream_t *server, int status) {
    ti_proxy *p = server->data;
    if (status != 0)
        return;
    conn *c = calloc(1, sizeof(*c));
    c->p = p;
    uv_tcp_init(p->loop, &c->down);
    uv_tcp_init(p->loop, &c->up);
    c->down.data = c->up.data = c;
    c->open = 2;
    p->open++;
    c->next = p->conns;
    p->conns = c;
    if (uv_accept(server, (uv_stream_t *)&c->down) != 0) {
        conn_close(c);
        return;
    }
    c->creq.data = c;
    if (uv_tcp_connect(&c->creq, &c->up, (const struct sockaddr *)&p->upstream, on_up_connected) !=
        0)
        conn_close(c);
}

int ti_proxy_listen(ti_proxy *p) {
    struct sockaddr_in a;
    uv_ip4_addr("127.0.0.1", p->port, &a);
    uv_tcp_init(p->loop, &p->listener);
    p->listener.data = p;
    p->listening = 1;
    p->open++;
    int rc = uv_tcp_bind(&p->listener, (const struct sockaddr *)&a, 0);
    if (rc == 0)
        rc = uv_listen((uv_stream_t *)&p->listener, 64, on_accept);
    return rc;
}

void ti_proxy_freeze(ti_proxy *p, int frozen) {
    p->frozen = frozen;
    if (frozen)
        return;
    held *h = p->queue;
    p->queue = p->queue_tail = NULL;
    while (h) {
        held *next = h->next;
        h->next = NULL;
        if (uv_is_closing((uv_handle_t *)h->to) ||
            uv_write(&h->req, h->to, &h->buf, 1, on_written) != 0) {
            free(h->buf.base);
            free(h);
        }
        h = next;
    }
}

static void listener_closed(uv_handle_t *h) {
    ti_proxy *p = h->data;
    p->open--;
    maybe_free(p);
}

void ti_proxy_close(ti_proxy *p) {
    p->closing = 1;
    p->frozen = 0;
    if (p->listening)
        uv_close((uv_handle_t *)&p->listener, listener_closed);
    for (conn *c = p->conns; c; c = c->next)
        conn_close(c);
    maybe_free(p);
}
