/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A libuv service that writes an order and its event in one transaction on
 * its own loop, and runs the relay on the same loop: the write goes through
 * the library's non-blocking connection (outbox_conn), so the loop never
 * waits on the database, and after each commit the service notifies the
 * relay, which publishes the event at once instead of at its next poll.
 *
 *   example-service DB_URL NATS_URL [ORDERS]
 * The database needs the outbox table and this one:
 *   CREATE TABLE orders (id BIGINT AUTO_INCREMENT PRIMARY KEY,
 *                        customer VARCHAR(64) NOT NULL, total_cents INT NOT NULL);
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <outbox/outbox.h>
#include <uv.h>

typedef struct service {
    uv_loop_t loop;
    uv_timer_t tick;
    outbox_conn *conn;
    outbox_relay *relay;
    outbox_producer *producer;
    char sql[4096];
    int written, wanted, busy, stopping, failed;
} service;

static void stop_all(service *s);

static void on_relay_stopped(outbox_relay *r, void *data) {
    (void)r;
    (void)data;
}

static void on_conn_stopped(outbox_conn *c, void *data) {
    (void)c;
    (void)data;
}

static void on_committed(outbox_conn *c, int status, void *data) {
    service *s = data;
    s->busy = 0;
    if (status != OUTBOX_OK) {
        fprintf(stderr, "example-service: the transaction failed: %s\n", outbox_conn_errmsg(c));
        s->failed = 1;
        stop_all(s);
        return;
    }
    s->written++;
    outbox_relay_notify(s->relay); /* the event is committed: publish it now */
}

/* One order and its event, in one transaction, in one round trip. */
static void write_order(service *s) {
    char payload[128];
    int n = s->written + 1;
    snprintf(payload, sizeof(payload), "{\"customer\":\"c-%d\",\"total_cents\":%d}", n, 100 * n);
    outbox_entry e = {.aggregate_type = "order",
                      .aggregate_id = "pending",
                      .event_type = "created",
                      .payload = payload};
    char agg[32];
    snprintf(agg, sizeof(agg), "service-%d", n);
    e.aggregate_id = agg;
    const char *insert;
    size_t len;
    if (outbox_producer_build(s->producer, outbox_conn_mysql(s->conn), &e, 1, NULL, &insert,
                              &len) != OUTBOX_OK) {
        fprintf(stderr, "example-service: %s\n", outbox_producer_errmsg(s->producer));
        s->failed = 1;
        stop_all(s);
        return;
    }
    int w = snprintf(s->sql, sizeof(s->sql),
                     "START TRANSACTION; INSERT INTO orders (customer, total_cents) VALUES "
                     "('c-%d', %d); %.*s; COMMIT",
                     n, 100 * n, (int)len, insert);
    s->busy = 1;
    if (outbox_conn_query(s->conn, s->sql, (size_t)w, on_committed, s) != OUTBOX_OK) {
        fprintf(stderr, "example-service: %s\n", outbox_conn_errmsg(s->conn));
        s->failed = 1;
        stop_all(s);
    }
}

static void on_tick(uv_timer_t *t) {
    service *s = t->data;
    outbox_stats st;
    outbox_relay_stats(s->relay, &st);
    if (s->written >= s->wanted) {
        if (st.acked >= (uint64_t)s->wanted)
            stop_all(s);
        return;
    }
    if (!s->busy && outbox_conn_mysql(s->conn))
        write_order(s);
}

static void stop_all(service *s) {
    if (s->stopping)
        return;
    s->stopping = 1;
    uv_close((uv_handle_t *)&s->tick, NULL);
    outbox_relay_stop(s->relay, on_relay_stopped, s);
    outbox_conn_stop(s->conn, on_conn_stopped, s);
}

static void on_connected(outbox_conn *c, int status, void *data) {
    service *s = data;
    if (status != OUTBOX_OK) {
        fprintf(stderr, "example-service: cannot connect: %s\n", outbox_conn_errmsg(c));
        s->failed = 1;
        stop_all(s);
    }
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: example-service DB_URL NATS_URL [ORDERS]\n");
        return 2;
    }
    service s;
    memset(&s, 0, sizeof(s));
    s.wanted = argc > 3 ? atoi(argv[3]) : 50;
    uv_loop_init(&s.loop);
    char err[256];
    outbox_relay_options o;
    outbox_relay_options_init(&o);
    o.db_url = argv[1];
    o.nats_url = argv[2];
    o.poll_interval_ms = 10000; /* the notify, not the poll, delivers the events */
    o.log = outbox_log_stderr;
    o.log_level = OUTBOX_LOG_WARN;
    if (outbox_producer_create(&s.producer, NULL, err, sizeof(err)) != OUTBOX_OK ||
        outbox_conn_create(&s.conn, &s.loop, argv[1], err, sizeof(err)) != OUTBOX_OK ||
        outbox_relay_create(&s.relay, &s.loop, &o, err, sizeof(err)) != OUTBOX_OK) {
        fprintf(stderr, "example-service: %s\n", err);
        return 2;
    }
    outbox_conn_start(s.conn, on_connected, &s);
    outbox_relay_start(s.relay);
    uv_timer_init(&s.loop, &s.tick);
    s.tick.data = &s;
    uv_timer_start(&s.tick, on_tick, 200, 20);
    uv_run(&s.loop, UV_RUN_DEFAULT);
    outbox_stats st;
    outbox_relay_stats(s.relay, &st);
    printf("orders written: %d, events published: %llu\n", s.written, (unsigned long long)st.acked);
    outbox_relay_destroy(s.relay);
    outbox_conn_destroy(s.conn);
    outbox_producer_destroy(s.producer);
    int closed = uv_loop_close(&s.loop) == 0;
    return s.failed || !closed || st.acked < (uint64_t)s.written ? 1 : 0;
}
