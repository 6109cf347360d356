/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench-produce: producers that insert outbox rows, for the enqueue and the
 * mixed scenarios. N processes, one connection each, insert transactions of
 * --per-tx events, either through the C enqueue API (outbox_enqueue /
 * outbox_enqueue_many) or, as the baseline, through a hand-built multi-row
 * INSERT of the same rows (no validation, the same escaping).
 *
 * Every transaction is one autocommit INSERT: the statement that inserts is
 * the statement that commits. With --ts-header H, each row carries the
 * headers object {"H":"<Unix ns>"} read from the clock immediately before
 * that statement is sent, so a consumer of the stream can compute
 * commit -> stored latency (the figure then includes the commit's own
 * duration, which this tool reports as txn_ms).
 *
 *   bench-produce --db URL [--procs N] [--per-tx K] [--rate R] [--duration-ms D]
 *                 [--mode api|raw] [--payload-size B] [--ts-header H] [--table T]
 *                 [--ring NATS_URL] [--warmup-ms W]
 * --ring rings the relay's doorbell (outbox_ring) after every transaction,
 * on one NATS connection per process.
 * --warmup-ms sends at the rate for W ms before the D ms measured, its rows
 * without the --ts-header header (a consumer leaves them out): the relay's
 * start (its first polls) is then not in the latency figures.
 * --rate is the offered load in events/s over all processes (0: as fast as
 * they go). Each process sends on a fixed schedule; a late transaction is
 * sent at once, never skipped. Prints one line:
 *   events=N txns=T seconds=S rate=R txn_ms_p50=.. txn_ms_p99=.. txn_ms_max=.. errors=E
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "common.h"
#include "outbox/producer.h"
#include "outbox/ring.h"
#include "sql.h"

#define DUR_CAP (1u << 20) /* transaction durations kept per process */

typedef struct prod_cfg {
    const char *url, *table, *ts_header, *ring_url;
    int procs, per_tx, raw;
    double rate;
    uint64_t duration_ns, warmup_ns;
    size_t payload_size;
    float *durations; /* procs * DUR_CAP, shared */
} prod_cfg;

typedef struct prod_slot {
    uint64_t events, txns, errors;
    uint64_t end_ns;
    uint32_t ndur;
    char err[200];
} prod_slot;

typedef struct prod_state {
    MYSQL *conn;
    outbox_producer *p;
    outbox_entry *entries;
    char *payloads; /* per_tx * (payload_size + 1) */
    char (*aggids)[24];
    char headers[160];
    ob_buf sql;
    char *qtable;
} prod_state;

static prod_state st;

static int prod_setup(int i, void *slotp, void *data) {
    (void)i;
    prod_cfg *c = data;
    prod_slot *s = slotp;
    char err[256];
    st.conn = outbox_connect(c->url, err, sizeof(err));
    if (st.conn == NULL) {
        snprintf(s->err, sizeof(s->err), "%.190s", err);
        return -1;
    }
    outbox_producer_options po;
    outbox_producer_options_init(&po);
    po.table = c->table;
    if (outbox_producer_create(&st.p, &po, NULL, 0) != OUTBOX_OK) {
        snprintf(s->err, sizeof(s->err), "bad table name");
        return -1;
    }
    st.entries = calloc((size_t)c->per_tx, sizeof(*st.entries));
    st.payloads = malloc((size_t)c->per_tx * (c->payload_size + 1));
    st.aggids = calloc((size_t)c->per_tx, sizeof(*st.aggids));
    ob_buf q = OB_BUF_INIT;
    ob_sql_quote_table(&q, c->table);
    st.qtable = q.p;
    return st.entries && st.payloads && st.aggids ? 0 : -1;
}

/* The baseline: the same INSERT, built by hand without any checks. */
static int raw_insert(prod_cfg *c, prod_slot *s) {
    ob_buf *b = &st.sql;
    ob_buf_reset(b);
    ob_buf_puts(b, "INSERT INTO ");
    ob_buf_puts(b, st.qtable);
    ob_buf_puts(b, " (id, aggregate_type, aggregate_id, event_type, payload, headers) VALUES ");
    for (int k = 0; k < c->per_tx; k++) {
        const outbox_entry *e = &st.entries[k];
        outbox_id id;
        outbox_id_new(&id);
        ob_buf_puts(b, k ? ",(X'" : "(X'");
        ob_buf_hex(b, id.b, 16);
        ob_buf_puts(b, "','");
        ob_buf_puts(b, e->aggregate_type);
        ob_buf_puts(b, "','");
        ob_buf_puts(b, e->aggregate_id);
        ob_buf_puts(b, "','");
        ob_buf_puts(b, e->event_type);
        ob_buf_puts(b, "','");
        ob_buf_reserve(b, 2 * e->payload_len + 1);
        b->len += mysql_real_escape_string(st.conn, b->p + b->len, e->payload,
                                           (unsigned long)e->payload_len);
        if (e->headers) {
            ob_buf_puts(b, "','");
            size_t hl = strlen(e->headers);
            ob_buf_reserve(b, 2 * hl + 1);
            b->len +=
                mysql_real_escape_string(st.conn, b->p + b->len, e->headers, (unsigned long)hl);
            ob_buf_puts(b, "')");
        } else {
            ob_buf_puts(b, "',NULL)");
        }
    }
    if (mysql_real_query(st.conn, b->p, (unsigned long)b->len) != 0) {
        snprintf(s->err, sizeof(s->err), "%u %s", mysql_errno(st.conn), mysql_error(st.conn));
        return -1;
    }
    return 0;
}

static int prod_work(int i, void *slotp, void *data) {
    prod_cfg *c = data;
    prod_slot *s = slotp;
    float *dur = c->durations + (size_t)i * DUR_CAP;
    uint64_t start = bn_mono_ns(), measured = start + c->warmup_ns, end = measured + c->duration_ns;
    /* Each process offers rate/procs events per second, in transactions of
     * per_tx, staggered so the processes do not send in lockstep. */
    double per_proc = c->rate / c->procs;
    uint64_t interval = per_proc > 0 ? (uint64_t)(1e9 * c->per_tx / per_proc) : 0;
    uint64_t next = start + (interval ? interval * (uint64_t)i / (uint64_t)c->procs : 0);
    uint64_t seq = (uint64_t)i * 1000000000ull;
    natsConnection *nc = NULL;
    if (c->ring_url && natsConnection_ConnectTo(&nc, c->ring_url) != NATS_OK) {
        snprintf(s->err, sizeof(s->err), "cannot connect to NATS for the doorbell");
        return 1;
    }
    for (;;) {
        if (interval) {
            if (next >= end)
                break;
            bn_sleep_until(next);
            next += interval;
        } else if (bn_mono_ns() >= end) {
            break;
        }
        for (int k = 0; k < c->per_tx; k++) {
            outbox_entry *e = &st.entries[k];
            char *pl = st.payloads + (size_t)k * (c->payload_size + 1);
            e->aggregate_type = "order";
            e->event_type = "created";
            snprintf(st.aggids[k], sizeof(st.aggids[k]), "%llu", (unsigned long long)seq);
            e->aggregate_id = st.aggids[k];
            e->payload = pl;
            e->payload_len = bn_payload(pl, c->payload_size, seq++);
            e->headers = c->ts_header && bn_mono_ns() >= measured ? st.headers : NULL;
        }
        if (c->ts_header)
            snprintf(st.headers, sizeof(st.headers), "{\"%s\":\"%llu\"}", c->ts_header,
                     (unsigned long long)bn_wall_ns());
        uint64_t t0 = bn_mono_ns();
        int rc;
        if (c->raw) {
            rc = raw_insert(c, s);
        } else {
            rc = c->per_tx == 1
                     ? outbox_enqueue(st.p, st.conn, st.entries, NULL)
                     : outbox_enqueue_many(st.p, st.conn, st.entries, (size_t)c->per_tx, NULL);
            if (rc != OUTBOX_OK)
                snprintf(s->err, sizeof(s->err), "%.190s", outbox_producer_errmsg(st.p));
        }
        uint64_t t1 = bn_mono_ns();
        if (rc != 0) {
            s->errors++;
            if (s->errors > 10)
                return 1;
            continue;
        }
        if (nc)
            outbox_ring(nc, c->table);
        if (s->ndur < DUR_CAP)
            dur[s->ndur++] = (float)((double)(t1 - t0) / 1e6);
        s->events += (uint64_t)c->per_tx;
        s->txns++;
    }
    s->end_ns = bn_mono_ns();
    if (nc) {
        natsConnection_Flush(nc);
        natsConnection_Destroy(nc);
    }
    outbox_producer_destroy(st.p);
    mysql_close(st.conn);
    return 0;
}

int main(int argc, char **argv) {
    bn_set_tool("bench-produce");
    prod_cfg c;
    memset(&c, 0, sizeof(c));
    c.table = "outbox";
    c.procs = 1;
    c.per_tx = 1;
    c.duration_ns = 5000000000ull;
    c.payload_size = 512;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--db") == 0)
            c.url = bn_need(a, v), i++;
        else if (strcmp(a, "--procs") == 0)
            c.procs = (int)bn_long(a, v, 1, 256), i++;
        else if (strcmp(a, "--per-tx") == 0)
            c.per_tx = (int)bn_long(a, v, 1, 10000), i++;
        else if (strcmp(a, "--rate") == 0)
            c.rate = (double)bn_long(a, v, 0, 10000000), i++;
        else if (strcmp(a, "--warmup-ms") == 0)
            c.warmup_ns = (uint64_t)bn_long(a, v, 0, 3600000) * 1000000u, i++;
        else if (strcmp(a, "--duration-ms") == 0)
            c.duration_ns = (uint64_t)bn_long(a, v, 1, 3600000) * 1000000u, i++;
        else if (strcmp(a, "--payload-size") == 0)
            c.payload_size = (size_t)bn_long(a, v, 28, 16 * 1024 * 1024), i++;
        else if (strcmp(a, "--ts-header") == 0)
            c.ts_header = bn_need(a, v), i++;
        else if (strcmp(a, "--table") == 0)
            c.table = bn_need(a, v), i++;
        else if (strcmp(a, "--ring") == 0)
            c.ring_url = bn_need(a, v), i++;
        else if (strcmp(a, "--mode") == 0) {
            const char *m = bn_need(a, v);
            i++;
            if (strcmp(m, "raw") == 0)
                c.raw = 1;
            else if (strcmp(m, "api") != 0)
                bn_die("--mode is api or raw");
        } else
            bn_die("unknown argument '%s'", a);
    }
    if (c.url == NULL)
        bn_die("--db is required");
    char err[256];
    if (ob_sql_check_table(c.table, err, sizeof(err)) != 0)
        bn_die("%s", err);
    c.durations = bn_shared_alloc((size_t)c.procs * DUR_CAP * sizeof(float));

    bn_fork f = {c.procs, sizeof(prod_slot), prod_setup, prod_work, &c, NULL, 0};
    int failed = bn_fork_join(&f);
    uint64_t events = 0, txns = 0, errors = 0, end = f.go_ns;
    size_t nd = 0;
    for (int i = 0; i < c.procs; i++) {
        prod_slot *s = bn_fork_slot(&f, i);
        if (s->err[0])
            fprintf(stderr, "bench-produce: process %d: %s\n", i, s->err);
        events += s->events;
        txns += s->txns;
        errors += s->errors;
        nd += s->ndur;
        if (s->end_ns > end)
            end = s->end_ns;
    }
    double *all = malloc((nd ? nd : 1) * sizeof(*all));
    size_t k = 0;
    for (int i = 0; i < c.procs; i++) {
        prod_slot *s = bn_fork_slot(&f, i);
        for (uint32_t j = 0; j < s->ndur; j++)
            all[k++] = c.durations[(size_t)i * DUR_CAP + j];
    }
    bn_sort(all, nd);
    double secs = (double)(end - f.go_ns) / 1e9;
    printf("events=%llu txns=%llu seconds=%.3f rate=%.0f txn_ms_p50=%.3f txn_ms_p99=%.3f "
           "txn_ms_max=%.3f errors=%llu\n",
           (unsigned long long)events, (unsigned long long)txns, secs,
           secs > 0 ? (double)events / secs : 0, bn_quantile_sorted(all, nd, 0.50),
           bn_quantile_sorted(all, nd, 0.99), nd ? all[nd - 1] : 0, (unsigned long long)errors);
    free(all);
    return failed || errors ? 1 : 0;
}
