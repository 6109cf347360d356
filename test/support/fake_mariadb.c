/* SPDX-License-Identifier: Apache-2.0 */
/* The scripted MariaDB server (fake_mariadb.h). */
#include "fake_mariadb.h"

#include <stdlib.h>
#include <string.h>

#define CAPS                                                                                       \
    (0x1u | 0x4u | 0x8u | 0x200u | 0x2000u | 0x8000u | 0x10000u | 0x20000u | 0x40000u | 0x80000u)

typedef struct conn {
    uv_tcp_t h;
    fake_peer *p;
    unsigned char in[8192];
    size_t n;
    int logged_in;
} conn;

struct fake_peer {
    uv_tcp_t listener;
    conn *c; /* the open connection, or NULL */
    int port;
    int open; /* handles not closed yet */
    int closing;
    fake_peer_mode mode;
    int accepted, logins, queries, quits;
};

typedef struct out {
    uv_write_t req;
    uv_buf_t buf;
} out;

static void written(uv_write_t *req, int status) {
    (void)status;
    out *o = (out *)req;
    free(o->buf.base);
    free(o);
}

/* One packet: 3 bytes of length, the sequence number, the payload. */
static void send_packet(conn *c, unsigned char seq, const unsigned char *body, size_t len) {
    out *o = malloc(sizeof(*o));
    char *b = malloc(len + 4);
    if (o == NULL || b == NULL) {
        free(o);
        free(b);
        return;
    }
    b[0] = (char)(len & 0xff);
    b[1] = (char)(len >> 8 & 0xff);
    b[2] = (char)(len >> 16 & 0xff);
    b[3] = (char)seq;
    memcpy(b + 4, body, len);
    o->buf = uv_buf_init(b, (unsigned)(len + 4));
    if (uv_write(&o->req, (uv_stream_t *)&c->h, &o->buf, 1, written) != 0)
        written(&o->req, -1);
}

static void put16(unsigned char *b, unsigned v) {
    b[0] = (unsigned char)(v & 0xff);
    b[1] = (unsigned char)(v >> 8 & 0xff);
}

static void send_handshake(conn *c) {
    unsigned char b[128];
    size_t n = 0;
    const char *version = "5.5.5-10.11.99-MariaDB-fake";
    b[n++] = 10;
    memcpy(b + n, version, strlen(version) + 1);
    n += strlen(version) + 1;
    unsigned char id[4] = {42, 0, 0, 0};
    memcpy(b + n, id, 4);
    n += 4;
    memcpy(b + n, "abcdefgh", 8); /* the scramble's first part */
    n += 8;
    b[n++] = 0;
    put16(b + n, CAPS & 0xffff);
    n += 2;
    b[n++] = 45; /* utf8mb4_general_ci */
    put16(b + n, 2);
    n += 2;
    put16(b + n, CAPS >> 16);
    n += 2;
    b[n++] = 21;
    memset(b + n, 0, 10);
    n += 10;
    memcpy(b + n, "ijklmnopqrst", 13); /* the rest of it, and its NUL */
    n += 13;
    const char *plugin = "mysql_native_password";
    memcpy(b + n, plugin, strlen(plugin) + 1);
    n += strlen(plugin) + 1;
    send_packet(c, 0, b, n);
}

static void send_ok(conn *c, unsigned char seq) {
    unsigned char ok[7] = {0, 0, 0, 2, 0, 0, 0};
    send_packet(c, seq, ok, sizeof(ok));
}

static void send_eof(conn *c, unsigned char seq) {
    unsigned char eof[5] = {0xfe, 0, 0, 2, 0};
    send_packet(c, seq, eof, sizeof(eof));
}

/* A result of one VARCHAR column, `x`, and one row holding `value`. */
static void send_row(conn *c, const char *value, size_t len) {
    unsigned char one = 1, def[64], row[256];
    size_t n = 0;
    send_packet(c, 1, &one, 1);
    const char *strs[6] = {"def", "", "", "", "x", ""};
    for (int i = 0; i < 6; i++) {
        size_t l = strlen(strs[i]);
        def[n++] = (unsigned char)l;
        memcpy(def + n, strs[i], l);
        n += l;
    }
    def[n++] = 0x0c;
    put16(def + n, 45);
    n += 2;
    unsigned char size[4] = {0, 1, 0, 0};
    memcpy(def + n, size, 4);
    n += 4;
    def[n++] = 0xfd; /* VAR_STRING */
    put16(def + n, 0);
    n += 2;
    def[n++] = 0;
    put16(def + n, 0);
    n += 2;
    send_packet(c, 2, def, n);
    send_eof(c, 3);
    if (len > 250)
        len = 250;
    row[0] = (unsigned char)len;
    memcpy(row + 1, value, len);
    send_packet(c, 4, row, len + 1);
    send_eof(c, 5);
}

static void conn_closed(uv_handle_t *h) {
    conn *c = h->data;
    fake_peer *p = c->p;
    free(c);
    if (--p->open == 0 && p->closing)
        free(p);
}

static void drop(fake_peer *p) {
    conn *c = p->c;
    if (c == NULL)
        return;
    p->c = NULL;
    uv_close((uv_handle_t *)&c->h, conn_closed);
}

static void on_query(conn *c, const unsigned char *q, size_t len) {
    fake_peer *p = c->p;
    p->queries++;
    if (p->mode == PEER_STALL)
        return;
    if (p->mode == PEER_CLOSE) {
        drop(p);
        return;
    }
    if (len > 7 && memcmp(q, "SELECT ", 7) == 0)
        send_row(c, (const char *)q + 7, len - 7);
    else
        send_ok(c, 1);
}

/* Each whole packet received: the login first, then commands. */
static void on_packets(conn *c) {
    size_t at = 0;
    while (c->n - at >= 4) {
        size_t len = c->in[at] | (size_t)c->in[at + 1] << 8 | (size_t)c->in[at + 2] << 16;
        if (c->n - at - 4 < len)
            break;
        const unsigned char *body = c->in + at + 4;
        unsigned char seq = c->in[at + 3];
        at += 4 + len;
        if (!c->logged_in) {
            c->logged_in = 1;
            c->p->logins++;
            send_ok(c, (unsigned char)(seq + 1));
        } else if (len > 0 && body[0] == 0x03) {
            on_query(c, body + 1, len - 1);
        } else if (len > 0 && body[0] == 0x01) {
            c->p->quits++;
            drop(c->p);
            return;
        } else {
            send_ok(c, 1);
        }
        if (c->p->c != c)
            return; /* dropped */
    }
    memmove(c->in, c->in + at, c->n - at);
    c->n -= at;
}

static void alloc_cb(uv_handle_t *h, size_t hint, uv_buf_t *buf) {
    (void)hint;
    conn *c = h->data;
    buf->base = (char *)c->in + c->n;
    buf->len = sizeof(c->in) - c->n;
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf) {
    (void)buf;
    conn *c = s->data;
    if (nread < 0) {
        if (c->p->c == c)
            drop(c->p);
        return;
    }
    c->n += (size_t)nread;
    on_packets(c);
}

static void on_connection(uv_stream_t *server, int status) {
    fake_peer *p = server->data;
    if (status < 0)
        return;
    conn *c = calloc(1, sizeof(*c));
    if (c == NULL)
        return;
    c->p = p;
    uv_tcp_init(server->loop, &c->h);
    c->h.data = c;
    p->open++;
    if (uv_accept(server, (uv_stream_t *)&c->h) != 0) {
        uv_close((uv_handle_t *)&c->h, conn_closed);
        return;
    }
    drop(p); /* one connection at a time: a new one replaces the old */
    p->c = c;
    p->accepted++;
    if (p->mode != PEER_STALL)
        send_handshake(c);
    uv_read_start((uv_stream_t *)&c->h, alloc_cb, on_read);
}

fake_peer *fake_peer_new(uv_loop_t *loop) {
    fake_peer *p = calloc(1, sizeof(*p));
    if (p == NULL)
        return NULL;
    struct sockaddr_in a;
    struct sockaddr_storage got;
    int len = sizeof(got);
    uv_ip4_addr("127.0.0.1", 0, &a);
    uv_tcp_init(loop, &p->listener);
    p->listener.data = p;
    p->open = 1;
    if (uv_tcp_bind(&p->listener, (const struct sockaddr *)&a, 0) != 0 ||
        uv_listen((uv_stream_t *)&p->listener, 4, on_connection) != 0 ||
        uv_tcp_getsockname(&p->listener, (struct sockaddr *)&got, &len) != 0) {
        fake_peer_close(p);
        return NULL;
    }
    p->port = ntohs(((struct sockaddr_in *)&got)->sin_port);
    return p;
}

int fake_peer_port(const fake_peer *p) {
    return p->port;
}

void fake_peer_mode_set(fake_peer *p, fake_peer_mode m) {
    p->mode = m;
}

int fake_peer_accepted(const fake_peer *p) {
    return p->accepted;
}

int fake_peer_logins(const fake_peer *p) {
    return p->logins;
}

int fake_peer_queries(const fake_peer *p) {
    return p->queries;
}

int fake_peer_quits(const fake_peer *p) {
    return p->quits;
}

int fake_peer_connected(const fake_peer *p) {
    return p->c != NULL;
}

void fake_peer_drop(fake_peer *p) {
    drop(p);
}

int fake_peer_owns(const fake_peer *p, const uv_handle_t *h) {
    return h == (const uv_handle_t *)&p->listener || (p->c && h == (const uv_handle_t *)&p->c->h);
}

static void listener_closed(uv_handle_t *h) {
    fake_peer *p = h->data;
    if (--p->open == 0)
        free(p);
}

void fake_peer_close(fake_peer *p) {
    p->closing = 1;
    drop(p);
    uv_close((uv_handle_t *)&p->listener, listener_closed);
}
