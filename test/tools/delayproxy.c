/* SPDX-License-Identifier: Apache-2.0 */
/*
 * delayproxy: a TCP proxy on loopback that holds every chunk of data, in
 * both directions, for a fixed time before passing it on: a server that is
 * a round trip of 2 x DELAY away, for tests.
 *   delayproxy LISTEN_PORT TARGET_PORT DELAY_MS
 * Prints "ready" once it listens. Runs until killed.
 * SIGUSR1 cuts every connection off without closing it (a network
 * partition): data in both directions is held, nothing is forwarded, no
 * connection ends. SIGUSR2 heals it: what was held goes on, in order.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

static uv_loop_t *loop;
static struct sockaddr_in target;
static uint64_t delay_ms;

typedef struct side side;
typedef struct pair {
    uv_tcp_t a, b; /* a: the client, b: the server */
    int open;      /* handles not closed yet */
    int closing;
} pair;

/* A chunk on its way: sent when its timer fires. */
typedef struct chunk {
    struct chunk *next_held; /* while cut off */
    uv_timer_t t;
    uv_write_t w;
    uv_stream_t *to;
    pair *p;
    uv_buf_t buf; /* len 0: end of stream */
} chunk;

static void pair_closed(uv_handle_t *h) {
    pair *p = h->data;
    if (--p->open == 0)
        free(p);
}

static void pair_close(pair *p) {
    if (p->closing)
        return;
    p->closing = 1;
    uv_close((uv_handle_t *)&p->a, pair_closed);
    uv_close((uv_handle_t *)&p->b, pair_closed);
}

static void chunk_free(uv_handle_t *h) {
    chunk *c = h->data;
    free(c->buf.base);
    free(c);
}

static void written(uv_write_t *w, int status) {
    chunk *c = w->data;
    if (status < 0)
        pair_close(c->p);
    uv_close((uv_handle_t *)&c->t, chunk_free);
}

static void due(uv_timer_t *t) {
    chunk *c = t->data;
    if (c->p->closing) {
        uv_close((uv_handle_t *)&c->t, chunk_free);
        return;
    }
    if (c->buf.len == 0) {
        pair_close(c->p);
        uv_close((uv_handle_t *)&c->t, chunk_free);
        return;
    }
    c->w.data = c;
    if (uv_write(&c->w, c->to, &c->buf, 1, written) != 0) {
        pair_close(c->p);
        uv_close((uv_handle_t *)&c->t, chunk_free);
    }
}

static void alloc_cb(uv_handle_t *h, size_t size, uv_buf_t *buf) {
    (void)h;
    buf->base = malloc(size);
    buf->len = buf->base ? size : 0;
}

static int cut;
static chunk *held, **held_tail = &held;

static void on_signal(uv_signal_t *s, int signum) {
    (void)s;
    cut = signum == SIGUSR1;
    if (cut)
        return;
    for (chunk *c = held; c; c = c->next_held)
        uv_timer_start(&c->t, due, delay_ms, 0);
    held = NULL;
    held_tail = &held;
}

static void on_read(uv_stream_t *from, ssize_t n, const uv_buf_t *buf) {
    pair *p = from->data;
    if (n == 0) {
        free(buf->base);
        return;
    }
    chunk *c = calloc(1, sizeof(*c));
    c->p = p;
    c->to = from == (uv_stream_t *)&p->a ? (uv_stream_t *)&p->b : (uv_stream_t *)&p->a;
    c->buf = uv_buf_init(buf->base, n > 0 ? (unsigned)n : 0);
    if (n < 0) {
        free(buf->base);
        c->buf.base = NULL;
    }
    uv_timer_init(loop, &c->t);
    c->t.data = c;
    if (cut) {
        *held_tail = c;
        held_tail = &c->next_held;
        return;
    }
    uv_timer_start(&c->t, due, delay_ms, 0);
}

static void on_server_connect(uv_connect_t *req, int status) {
    pair *p = req->data;
    free(req);
    if (status < 0) {
        pair_close(p);
        return;
    }
    uv_read_start((uv_stream_t *)&p->a, alloc_cb, on_read);
    uv_read_start((uv_stream_t *)&p->b, alloc_cb, on_read);
}

static void on_client(uv_stream_t *server, int status) {
    if (status < 0)
        return;
    pair *p = calloc(1, sizeof(*p));
    uv_tcp_init(loop, &p->a);
    uv_tcp_init(loop, &p->b);
    p->a.data = p->b.data = p;
    p->open = 2;
    if (uv_accept(server, (uv_stream_t *)&p->a) != 0) {
        pair_close(p);
        return;
    }
    uv_connect_t *req = malloc(sizeof(*req));
    req->data = p;
    if (uv_tcp_connect(req, &p->b, (const struct sockaddr *)&target, on_server_connect) != 0) {
        free(req);
        pair_close(p);
    }
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: delayproxy LISTEN_PORT TARGET_PORT DELAY_MS\n");
        return 2;
    }
    loop = uv_default_loop();
    delay_ms = strtoull(argv[3], NULL, 10);
    struct sockaddr_in addr;
    uv_ip4_addr("127.0.0.1", atoi(argv[1]), &addr);
    uv_ip4_addr("127.0.0.1", atoi(argv[2]), &target);
    uv_tcp_t server;
    uv_tcp_init(loop, &server);
    if (uv_tcp_bind(&server, (const struct sockaddr *)&addr, 0) != 0 ||
        uv_listen((uv_stream_t *)&server, 64, on_client) != 0) {
        fprintf(stderr, "delayproxy: cannot listen on %s\n", argv[1]);
        return 1;
    }
    uv_signal_t cut_on, cut_off;
    uv_signal_init(loop, &cut_on);
    uv_signal_init(loop, &cut_off);
    uv_signal_start(&cut_on, on_signal, SIGUSR1);
    uv_signal_start(&cut_off, on_signal, SIGUSR2);
    printf("ready\n");
    fflush(stdout);
    return uv_run(loop, UV_RUN_DEFAULT);
}
