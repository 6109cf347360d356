/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The monitoring responder through the public API, on a loop the test owns:
 * a relay drains 2,000 rows while a client on the same loop fetches /readyz
 * and /metrics; the rendered metrics agree with the stats, and a counter of
 * the embedder's (outbox_http_add_counter) is served after them; stopping the
 * responder with a client still connected closes everything, and the loop
 * closes with no handle left.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "integ.h"

typedef struct fetch {
    uv_tcp_t tcp;
    uv_connect_t conn;
    uv_write_t wr;
    const char *request;
    char reply[65536];
    size_t len;
    int done;
} fetch;

static void fetch_closed(uv_handle_t *h) {
    fetch *f = h->data;
    f->done = 1;
}

static void fetch_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
    (void)suggested;
    fetch *f = h->data;
    *buf = uv_buf_init(f->reply + f->len, (unsigned)(sizeof(f->reply) - 1 - f->len));
}

static void fetch_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf) {
    (void)buf;
    fetch *f = s->data;
    if (n > 0) {
        f->len += (size_t)n;
        f->reply[f->len] = '\0';
    } else if (n < 0) {
        uv_close((uv_handle_t *)&f->tcp, fetch_closed);
    }
}

static void fetch_written(uv_write_t *w, int status) {
    CHECK_EQ(status, 0);
    (void)w;
}

static void fetch_connected(uv_connect_t *c, int status) {
    fetch *f = c->data;
    CHECK_EQ(status, 0);
    uv_read_start((uv_stream_t *)&f->tcp, fetch_alloc, fetch_read);
    uv_buf_t b = uv_buf_init((char *)f->request, (unsigned)strlen(f->request));
    uv_write(&f->wr, (uv_stream_t *)&f->tcp, &b, 1, fetch_written);
}

/* Starts a request on the loop; the reply is complete once f->done. */
static void fetch_start(fetch *f, uv_loop_t *loop, int port, const char *request) {
    memset(f, 0, sizeof(*f));
    f->request = request;
    struct sockaddr_in a;
    uv_ip4_addr("127.0.0.1", port, &a);
    uv_tcp_init(loop, &f->tcp);
    f->tcp.data = f->conn.data = f;
    CHECK_EQ(uv_tcp_connect(&f->conn, &f->tcp, (const struct sockaddr *)&a, fetch_connected), 0);
}

typedef struct state {
    int drained, relay_stopped, http_stopped;
} state;

static void on_drained(outbox_relay *r, void *data) {
    (void)r;
    ((state *)data)->drained = 1;
}

static void on_relay_stopped(outbox_relay *r, void *data) {
    (void)r;
    ((state *)data)->relay_stopped = 1;
}

static void on_http_stopped(outbox_http *h, void *data) {
    (void)h;
    ((state *)data)->http_stopped = 1;
}

int main(void) {
    const char *db = "it_http_embed";
    MYSQL *m = ti_db_fresh(db, NULL);
    ti_stream_delete("IT_HTTP_EMBED");
    ti_seed(m, "outbox", 2000, 100, 256);

    uv_loop_t loop;
    uv_loop_init(&loop);
    state st = {0, 0, 0};
    outbox_relay_options o;
    ti_relay_options(&o, db, "IT_HTTP_EMBED", "ithttpembed");
    o.on_drained = on_drained;
    o.drained_data = &st;
    outbox_relay *r;
    char err[256];
    CHECK_EQ(outbox_relay_create(&r, &loop, &o, err, sizeof(err)), OUTBOX_OK);

    outbox_http_options ho;
    outbox_http_options_init(&ho);
    ho.listen = "127.0.0.1:0";
    ho.request_timeout_ms = 60000;
    outbox_http *h;
    CHECK_EQ(outbox_http_create(&h, &loop, &ho, err, sizeof(err)), OUTBOX_OK);
    CHECK_EQ(outbox_http_add_relay(h, r, "orders"), OUTBOX_OK);
    /* The embedder's own counter, read at each scrape. */
    uint64_t mine = 0;
    CHECK_EQ(outbox_http_add_counter(h, "app lines", "Lines.", &mine), OUTBOX_EINVAL);
    CHECK_EQ(outbox_http_add_counter(h, "app_lines_total", "Two\nlines.", &mine), OUTBOX_EINVAL);
    CHECK_EQ(outbox_http_add_counter(h, "app_lines_total", "Lines.", NULL), OUTBOX_EINVAL);
    CHECK_EQ(outbox_http_add_counter(h, "app_lines_total", "Lines.", &mine), OUTBOX_OK);
    CHECK_EQ(outbox_http_port(h), -1);
    CHECK_EQ(outbox_http_start(h, err, sizeof(err)), OUTBOX_OK);
    int port = outbox_http_port(h);
    CHECK(port > 0);
    CHECK_EQ(outbox_http_add_relay(h, r, "late"), OUTBOX_ESTATE);
    CHECK_EQ(outbox_http_add_counter(h, "late_total", "Late.", &mine), OUTBOX_ESTATE);
    mine = 42;

    /* A second responder on the taken port: its start fails, and it can be
     * destroyed at once, without a turn of the loop. */
    char taken[32];
    snprintf(taken, sizeof(taken), "127.0.0.1:%d", port);
    ho.listen = taken;
    outbox_http *h2;
    CHECK_EQ(outbox_http_create(&h2, &loop, &ho, err, sizeof(err)), OUTBOX_OK);
    CHECK_EQ(outbox_http_start(h2, err, sizeof(err)), OUTBOX_EINVAL);
    CHECK_CONTAINS(err, "cannot listen on");
    CHECK_EQ(outbox_http_port(h2), -1);
    CHECK_EQ(outbox_http_destroy(h2), OUTBOX_OK);

    /* Before the relay starts, nothing is up. */
    fetch f;
    fetch_start(&f, &loop, port, "GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n");
    CHECK_EQ(ti_run_until(&loop, &f.done, 10000), 0);
    CHECK(strncmp(f.reply, "HTTP/1.1 503 ", 13) == 0);
    CHECK_CONTAINS(f.reply, "orders: database and NATS not ready");

    CHECK_EQ(outbox_relay_start(r), OUTBOX_OK);
    CHECK_EQ(ti_run_until(&loop, &st.drained, 60000), 0);

    fetch_start(&f, &loop, port, "GET /readyz HTTP/1.0\r\n\r\n");
    CHECK_EQ(ti_run_until(&loop, &f.done, 10000), 0);
    CHECK(strncmp(f.reply, "HTTP/1.1 200 ", 13) == 0);

    fetch_start(&f, &loop, port, "GET /metrics HTTP/1.1\r\n\r\n");
    CHECK_EQ(ti_run_until(&loop, &f.done, 10000), 0);
    CHECK_CONTAINS(f.reply, "Content-Type: text/plain; version=0.0.4");
    CHECK_CONTAINS(f.reply, "\r\n\r\n# HELP outbox_relay_published_total ");
    CHECK_CONTAINS(f.reply, "# HELP app_lines_total Lines.\n# TYPE app_lines_total counter\n"
                            "app_lines_total 42\n");
    CHECK_CONTAINS(f.reply,
                   "outbox_relay_published_total{table=\"orders\",result=\"stored\"} 2000\n");

    /* The embedder's own rendering says the same. */
    outbox_relay *const relays[] = {r};
    const char *const tables[] = {"orders"};
    size_t need = outbox_metrics_render(NULL, 0, relays, tables, 1);
    char *text = malloc(need + 1);
    CHECK_EQ(outbox_metrics_render(text, need + 1, relays, tables, 1), need);
    CHECK_CONTAINS(text, "outbox_relay_published_total{table=\"orders\",result=\"stored\"} 2000\n");
    CHECK_CONTAINS(text, "outbox_relay_up{table=\"orders\",dependency=\"nats\"} 1\n");
    free(text);

    /* A client in the middle of its request when the responder stops. */
    fetch_start(&f, &loop, port, "GET /metrics HTTP/1.1\r\n");
    uv_run(&loop, UV_RUN_NOWAIT);
    uv_run(&loop, UV_RUN_NOWAIT);
    CHECK_EQ(outbox_http_stop(h, on_http_stopped, &st), OUTBOX_OK);
    CHECK_EQ(outbox_http_stop(h, on_http_stopped, &st), OUTBOX_ESTATE);
    CHECK_EQ(outbox_relay_stop(r, on_relay_stopped, &st), OUTBOX_OK);
    uv_run(&loop, UV_RUN_DEFAULT);
    CHECK_EQ(st.http_stopped, 1);
    CHECK_EQ(st.relay_stopped, 1);
    CHECK_EQ(f.done, 1);
    outbox_http_destroy(h);
    outbox_relay_destroy(r);
    CHECK_EQ(uv_loop_close(&loop), 0);

    long long distinct = 0;
    CHECK_EQ(ti_stream_count("IT_HTTP_EMBED", &distinct), 2000);
    CHECK_EQ(distinct, 2000);
    mysql_close(m);
    puts("http_embed: ok");
    return 0;
}
