/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench-notify: the in-process doorbell. One program, one libuv loop: the
 * relay (the library, as an embedder runs it) and a producer that inserts
 * one event per transaction on a non-blocking MariaDB connection at a fixed
 * rate and calls outbox_relay_notify() after each commit. The events carry
 * the header H = Unix ns read just before the INSERT is sent, for
 * bench-latency.
 *
 *   bench-notify --db URL --nats URL --stream S --prefix P --rate R
 *                --duration-ms D [--ts-header H] [--connections N]
 * Prints: events=N seconds=S rate=R acked=A cpu_us_per_msg=C txn_ms_p50=..
 *         txn_ms_p99=..
 * (CPU is the whole process's: relay and producer. txn_ms is the producer's
 * own INSERT, which commits: part of every latency the stream shows.)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "buf.h"
#include "common.h"
#include "db.h"
#include "outbox/outbox.h"
#include "url.h"

typedef struct bench {
    uv_loop_t *loop;
    outbox_relay *relay;
    ob_db *db;
    ob_db_config cfg;
    ob_db_url url;
    uv_timer_t tick, watch;
    const char *header;
    uint64_t produced, wanted, owed, start_ms, end_ms, rate;
    uint64_t sent_ns; /* when the INSERT under way was sent */
    double *txn_ms;   /* each INSERT's duration, up to txn_cap of them */
    size_t txn_n, txn_cap;
    int busy, stopping;
    ob_buf sql;
} bench;

static void send_one(bench *b);

static void on_insert(ob_db *db, int ok, void *data) {
    (void)db;
    bench *b = data;
    b->busy = 0;
    if (!ok)
        bn_die("insert failed: %s", ob_db_error(b->db));
    if (b->txn_n < b->txn_cap)
        b->txn_ms[b->txn_n++] = (double)(bn_mono_ns() - b->sent_ns) / 1e6;
    b->produced++;
    outbox_relay_notify(b->relay);
    if (b->owed > 0) {
        b->owed--;
        send_one(b);
    }
}

static void send_one(bench *b) {
    outbox_id id;
    outbox_id_new(&id);
    ob_buf_reset(&b->sql);
    ob_buf_puts(&b->sql, "INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, "
                         "payload, headers) VALUES (X'");
    ob_buf_hex(&b->sql, id.b, 16);
    ob_buf_printf(&b->sql, "','order','%llu','created','{\"n\":%llu}','{\"%s\":\"%llu\"}')",
                  (unsigned long long)b->produced, (unsigned long long)b->produced, b->header,
                  (unsigned long long)bn_wall_ns());
    b->busy = 1;
    b->sent_ns = bn_mono_ns();
    if (ob_db_query(b->db, b->sql.p, b->sql.len, on_insert, b) != 0)
        bn_die("cannot send an insert");
}

/* Every millisecond: what the schedule owes by now is sent, one after the
 * other (one connection), never skipped. */
static void on_tick(uv_timer_t *t) {
    bench *b = t->data;
    uint64_t now = uv_now(b->loop);
    if (now >= b->end_ms)
        now = b->end_ms;
    uint64_t due = (now - b->start_ms) * b->rate / 1000;
    if (due > b->wanted) {
        b->owed += due - b->wanted;
        b->wanted = due;
    }
    if (!b->busy && b->owed > 0) {
        b->owed--;
        send_one(b);
    }
    if (now >= b->end_ms)
        uv_timer_stop(t);
}

static void on_connected(ob_db *db, int ok, void *data) {
    (void)db;
    bench *b = data;
    if (!ok)
        bn_die("cannot connect: %s", ob_db_error(b->db));
}

static void on_stopped(outbox_relay *r, void *data) {
    (void)r;
    bench *b = data;
    uv_close((uv_handle_t *)&b->tick, NULL);
    uv_close((uv_handle_t *)&b->watch, NULL);
    ob_db_close(b->db, NULL, NULL);
}

static void on_watch(uv_timer_t *t) {
    bench *b = t->data;
    outbox_stats st;
    outbox_relay_stats(b->relay, &st);
    int done = uv_now(b->loop) >= b->end_ms && !b->busy && b->owed == 0 && st.acked >= b->produced;
    if ((done || uv_now(b->loop) >= b->end_ms + 30000) && !b->stopping) {
        b->stopping = 1;
        outbox_relay_stop(b->relay, on_stopped, b);
    }
}

int main(int argc, char **argv) {
    bn_set_tool("bench-notify");
    const char *db = NULL, *nats = NULL, *stream = NULL, *prefix = NULL;
    long rate = 200, duration = 5000, conns = 2;
    bench b;
    memset(&b, 0, sizeof(b));
    b.header = "bench-ns";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--db") == 0)
            db = bn_need(a, v), i++;
        else if (strcmp(a, "--nats") == 0)
            nats = bn_need(a, v), i++;
        else if (strcmp(a, "--stream") == 0)
            stream = bn_need(a, v), i++;
        else if (strcmp(a, "--prefix") == 0)
            prefix = bn_need(a, v), i++;
        else if (strcmp(a, "--rate") == 0)
            rate = bn_long(a, v, 1, 100000), i++;
        else if (strcmp(a, "--duration-ms") == 0)
            duration = bn_long(a, v, 1, 3600000), i++;
        else if (strcmp(a, "--connections") == 0)
            conns = bn_long(a, v, 1, 256), i++;
        else if (strcmp(a, "--ts-header") == 0)
            b.header = bn_need(a, v), i++;
        else
            bn_die("unknown argument '%s'", a);
    }
    if (!db || !nats || !stream || !prefix)
        bn_die("--db, --nats, --stream and --prefix are required");
    uv_loop_t loop;
    uv_loop_init(&loop);
    b.loop = &loop;
    char err[256];
    if (ob_db_url_parse(db, &b.url, err, sizeof(err)) != 0)
        bn_die("%s", err);
    ob_db_url_to_config(&b.url, &b.cfg);
    b.cfg.connect_timeout_s = 10;
    b.db = ob_db_new(&loop, &b.cfg, NULL, "producer");
    ob_db_connect(b.db, on_connected, &b);

    outbox_relay_options o;
    outbox_relay_options_init(&o);
    o.db_url = db;
    o.nats_url = nats;
    o.stream = stream;
    o.subject_prefix = prefix;
    o.connections = (int)conns;
    o.wake_subject = "";
    if (outbox_relay_create(&b.relay, &loop, &o, err, sizeof(err)) != OUTBOX_OK)
        bn_die("%s", err);
    outbox_relay_start(b.relay);

    uv_timer_init(&loop, &b.tick);
    uv_timer_init(&loop, &b.watch);
    b.tick.data = b.watch.data = &b;
    b.rate = (uint64_t)rate;
    b.txn_cap = (size_t)rate * (size_t)duration / 1000 + 16;
    b.txn_ms = calloc(b.txn_cap, sizeof(*b.txn_ms));
    if (b.txn_ms == NULL)
        bn_die("out of memory");
    b.start_ms = uv_now(&loop) + 1000; /* let the relay connect first */
    b.end_ms = b.start_ms + (uint64_t)duration;
    uv_timer_start(&b.tick, on_tick, 1000, 1);
    uv_timer_start(&b.watch, on_watch, 100, 100);
    uv_run(&loop, UV_RUN_DEFAULT);
    outbox_stats st;
    outbox_relay_stats(b.relay, &st);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
                 ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) / 1e6;
    bn_sort(b.txn_ms, b.txn_n);
    printf("events=%llu seconds=%.3f rate=%.0f acked=%llu cpu_us_per_msg=%.1f txn_ms_p50=%.3f "
           "txn_ms_p99=%.3f\n",
           (unsigned long long)b.produced, (double)duration / 1000.0,
           (double)b.produced * 1000.0 / (double)duration, (unsigned long long)st.acked,
           b.produced ? cpu * 1e6 / (double)b.produced : 0.0,
           bn_quantile_sorted(b.txn_ms, b.txn_n, 0.50),
           bn_quantile_sorted(b.txn_ms, b.txn_n, 0.99));
    free(b.txn_ms);
    outbox_relay_destroy(b.relay);
    ob_buf_free(&b.sql);
    ob_db_url_free(&b.url);
    uv_loop_close(&loop);
    return st.acked >= b.produced ? 0 : 1;
}
