/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench-jspub: the JetStream-only limit. It loads the pending rows of the
 * outbox table into memory first (untimed), then publishes them with no
 * database in the loop: the same subjects, payloads and headers - Nats-Msg-Id
 * and the CloudEvents set, built by the library's own message code - each
 * with a reply inbox, with at most --window publishes awaiting their ack.
 * Acks are read from a synchronous subscription on the inbox, as the relay
 * reads them on its loop.
 *
 * By default nats.c runs on its own threads (reader, flusher) and the tool
 * waits for acks in natsSubscription_NextMsg. With --event-loop it runs
 * nats.c as the relay does by default: its socket on a libuv loop through
 * the relay's own callbacks (src/nats_loop.c), no flusher, acks read right
 * after each read and messages destroyed in runs of 4096, so the JetStream
 * work alone can be set beside the relay's in the same mode.
 *
 *   bench-jspub --db URL --nats URL --stream S --subject-prefix P
 *               [--window N] [--table T] [--ce-source S] [--event-loop]
 * Creates the stream (file storage, limits retention, 2 min duplicate window,
 * like the relay) when it does not exist. Prints one line:
 *   messages=N seconds=S rate=R acked=A duplicates=D errors=E cpu_us_per_msg=C
 *   csw_per_msg=X threads=T
 * where the CPU (user + system, all threads, nats.c's included) and the
 * context switches (getrusage) are those of the timed publishing only, and
 * threads is the process's thread count during it.
 */
#include <nats/nats.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "buf.h"
#include "common.h"
#include "message.h"
#include "nats_loop.h"
#include "puback.h"
#include "sql.h"

/* The process's threads now (the "Threads:" line of /proc/self/status). */
static int bn_threads(void) {
    char line[128];
    int n = 0;
    FILE *f = fopen("/proc/self/status", "r");
    while (f && fgets(line, sizeof(line), f))
        if (strncmp(line, "Threads:", 8) == 0)
            n = atoi(line + 8);
    if (f)
        fclose(f);
    return n;
}

static void nats_check(natsStatus s, const char *what) {
    if (s != NATS_OK)
        bn_die("%s: %s (%s)", what, natsStatus_GetText(s), nats_GetLastError(NULL));
}

static void ensure_stream(natsConnection *nc, const char *stream, const char *prefix) {
    jsCtx *js = NULL;
    nats_check(natsConnection_JetStream(&js, nc, NULL), "JetStream context");
    jsStreamConfig cfg;
    jsStreamConfig_Init(&cfg);
    char subj[200];
    snprintf(subj, sizeof(subj), "%s.>", prefix);
    const char *subjects[1] = {subj};
    cfg.Name = stream;
    cfg.Subjects = subjects;
    cfg.SubjectsLen = 1;
    cfg.Retention = js_LimitsPolicy;
    cfg.Storage = js_FileStorage;
    cfg.Discard = js_DiscardOld;
    cfg.Duplicates = (int64_t)120000 * 1000000;
    cfg.Replicas = 1;
    jsStreamInfo *si = NULL;
    jsErrCode jerr = 0;
    natsStatus s = js_AddStream(&si, js, &cfg, NULL, &jerr);
    if (s != NATS_OK && jerr != JSStreamNameExistErr)
        bn_die("cannot create stream %s: %s (%d)", stream, natsStatus_GetText(s), (int)jerr);
    jsStreamInfo_Destroy(si);
    jsCtx_Destroy(js);
}

/* The publishing state shared by both modes. */
typedef struct pub {
    natsConnection *nc;
    natsSubscription *sub;
    ob_row *rows;
    size_t n, sent;
    uint64_t acked, dups, errors, inflight;
    long window;
    const char *prefix, *inbox;
    ob_buf subject, scratch, block, cesrc;
    natsMsg *spent[4096];
    int nspent;
    uv_loop_t *loop;
} pub;

static void spend(pub *p, natsMsg *m) {
    if (p->nspent == (int)(sizeof(p->spent) / sizeof(p->spent[0]))) {
        for (int i = 0; i < p->nspent; i++)
            natsMsg_Destroy(p->spent[i]);
        p->nspent = 0;
    }
    p->spent[p->nspent++] = m;
}

/* Publishes up to the window; keep: destroy later in runs (event loop). */
static void publish_more(pub *p, int keep) {
    char err[512], reply[96];
    while (p->sent < p->n && p->inflight < (uint64_t)p->window) {
        ob_row *o = &p->rows[p->sent];
        ob_buf_reset(&p->subject);
        if (ob_message_subject(&p->subject, p->prefix, o, err, sizeof(err)) != 0)
            bn_die("row %zu: %s", p->sent, err);
        snprintf(reply, sizeof(reply), "%s.%zu", p->inbox, p->sent);
        natsMsg *msg = NULL;
        outbox_failure_kind kind;
        ob_message_opts mo = {p->cesrc.p, 0};
        if (ob_message_create(&msg, p->subject.p, reply, o, &mo, &p->scratch, &p->block, &kind, err,
                              sizeof(err)) != 0)
            bn_die("row %zu: %s", p->sent, err);
        nats_check(natsConnection_PublishMsg(p->nc, msg), "publish");
        if (keep)
            spend(p, msg);
        else
            natsMsg_Destroy(msg);
        p->sent++;
        p->inflight++;
    }
}

static void take_ack(pub *p, natsMsg *ack, int keep) {
    ob_puback pa;
    if (natsMsg_IsNoResponders(ack))
        bn_die("no responders: stream does not take '%s.>'", p->prefix);
    if (ob_puback_parse(natsMsg_GetData(ack), (size_t)natsMsg_GetDataLength(ack), &pa) != 0 ||
        !pa.ok)
        p->errors++;
    else if (pa.duplicate)
        p->dups++;
    else
        p->acked++;
    if (keep)
        spend(p, ack);
    else
        natsMsg_Destroy(ack);
    p->inflight--;
}

/* Event loop: after each read, the acks it brought, then more publishes. */
static void on_read(void *data) {
    pub *p = data;
    natsMsg *ack = NULL;
    natsStatus s;
    while ((s = natsSubscription_NextMsg(&ack, p->sub, 0)) == NATS_OK)
        take_ack(p, ack, 1);
    if (s == NATS_NO_RESPONDERS)
        bn_die("no responders: stream does not take '%s.>'", p->prefix);
    publish_more(p, 1);
    if (p->sent == p->n && p->inflight == 0)
        uv_stop(p->loop);
}

static void on_deadline(uv_timer_t *t) {
    pub *p = t->data;
    bn_die("no progress within 10 s (%llu in flight)", (unsigned long long)p->inflight);
}

int main(int argc, char **argv) {
    bn_set_tool("bench-jspub");
    const char *db = NULL, *url = NULL, *stream = "BENCH", *prefix = "bench", *table = "outbox";
    const char *ce_source = "outbox-uvrelay";
    long window = 8192;
    int evloop = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--db") == 0)
            db = bn_need(a, v), i++;
        else if (strcmp(a, "--nats") == 0)
            url = bn_need(a, v), i++;
        else if (strcmp(a, "--stream") == 0)
            stream = bn_need(a, v), i++;
        else if (strcmp(a, "--subject-prefix") == 0)
            prefix = bn_need(a, v), i++;
        else if (strcmp(a, "--table") == 0)
            table = bn_need(a, v), i++;
        else if (strcmp(a, "--ce-source") == 0)
            ce_source = bn_need(a, v), i++;
        else if (strcmp(a, "--window") == 0)
            window = bn_long(a, v, 1, 1000000), i++;
        else if (strcmp(a, "--event-loop") == 0)
            evloop = 1;
        else
            bn_die("unknown argument '%s'", a);
    }
    if (db == NULL || url == NULL)
        bn_die("--db and --nats are required");
    char err[512];
    if (ob_sql_check_table(table, err, sizeof(err)) != 0)
        bn_die("%s", err);

    /* The rows, read the way the relay's fetch reads them, but all at once
     * and without locking. */
    MYSQL *m = bn_db_connect(db, 0);
    ob_buf q = OB_BUF_INIT;
    ob_buf_puts(&q, "SELECT id, aggregate_type, aggregate_id, event_type, payload, headers, "
                    "attempt_count, created_at FROM ");
    ob_sql_quote_table(&q, table);
    ob_buf_puts(&q, " WHERE status = 0 ORDER BY id");
    if (mysql_real_query(m, q.p, (unsigned long)q.len) != 0)
        bn_die("select failed: %s", mysql_error(m));
    MYSQL_RES *res = mysql_store_result(m);
    if (res == NULL)
        bn_die("select failed: %s", mysql_error(m));
    size_t n = (size_t)mysql_num_rows(res);
    ob_row *rows = calloc(n ? n : 1, sizeof(*rows));
    MYSQL_ROW r;
    size_t k = 0;
    while ((r = mysql_fetch_row(res)) != NULL && k < n) {
        unsigned long *len = mysql_fetch_lengths(res);
        ob_row *o = &rows[k++];
        o->id = (const unsigned char *)r[OB_COL_ID];
        o->aggregate_type = r[OB_COL_AGGREGATE_TYPE];
        o->aggregate_type_len = len[OB_COL_AGGREGATE_TYPE];
        o->aggregate_id = r[OB_COL_AGGREGATE_ID];
        o->aggregate_id_len = len[OB_COL_AGGREGATE_ID];
        o->event_type = r[OB_COL_EVENT_TYPE];
        o->event_type_len = len[OB_COL_EVENT_TYPE];
        o->payload = r[OB_COL_PAYLOAD];
        o->payload_len = len[OB_COL_PAYLOAD];
        o->headers = r[OB_COL_HEADERS];
        o->headers_len = len[OB_COL_HEADERS];
        o->attempts = r[OB_COL_ATTEMPTS] ? atoi(r[OB_COL_ATTEMPTS]) : 0;
        o->created_at = r[OB_COL_CREATED_AT];
        o->created_at_len = len[OB_COL_CREATED_AT];
    }

    /* The stream, on a connection of its own (a JetStream request waits
     * for its reply, which on the event loop only the loop could read). */
    natsOptions *no = NULL;
    natsConnection *nc = NULL;
    nats_check(natsOptions_Create(&no), "options");
    nats_check(natsOptions_SetURL(no, url), "url");
    nats_check(natsConnection_Connect(&nc, no), "connect");
    ensure_stream(nc, stream, prefix);
    natsConnection_Destroy(nc);
    nc = NULL;

    /* The connection, set up as the relay sets up its own. */
    uv_loop_t loop;
    ob_nats_loop *nl = NULL;
    pub p;
    memset(&p, 0, sizeof(p));
    nats_check(natsOptions_SetIOBufSize(no, 1024 * 1024), "buffer size");
    nats_check(natsOptions_SetMaxPendingMsgs(no, 65536), "pending limit");
    if (evloop) {
        uv_loop_init(&loop);
        p.loop = &loop;
        nl = ob_nats_loop_new(&loop, on_read, &p);
        if (nl == NULL)
            bn_die("out of memory");
        nats_check(ob_nats_loop_options(nl, no), "event loop");
        nats_check(natsOptions_SetSendAsap(no, true), "send asap");
        nats_check(natsOptions_SetPingInterval(no, 0), "pings");
        nats_check(natsOptions_SetAllowReconnect(no, false), "reconnect");
    }
    nats_check(natsConnection_Connect(&nc, no), "connect");

    char inbox[64];
    natsInbox *ib = NULL;
    nats_check(natsInbox_Create(&ib), "inbox");
    snprintf(inbox, sizeof(inbox), "%s", (const char *)ib);
    natsInbox_Destroy(ib);
    char wild[80];
    snprintf(wild, sizeof(wild), "%s.*", inbox);
    natsSubscription *sub = NULL;
    nats_check(natsConnection_SubscribeSync(&sub, nc, wild), "subscribe");
    nats_check(natsSubscription_SetPendingLimits(sub, -1, -1), "pending limits");
    if (!evloop)
        nats_check(natsConnection_Flush(nc), "flush");

    p.nc = nc;
    p.sub = sub;
    p.rows = rows;
    p.n = n;
    p.window = window;
    p.prefix = prefix;
    p.inbox = inbox;
    ob_ce_encode(&p.cesrc, ce_source, strlen(ce_source));

    struct rusage u0, u1;
    getrusage(RUSAGE_SELF, &u0);
    uint64_t t0 = bn_mono_ns();
    int threads = 0;
    uv_timer_t deadline; /* closed in the loop's last run, below */
    if (evloop) {
        uv_timer_init(&loop, &deadline);
        deadline.data = &p;
        publish_more(&p, 1);
        while (p.sent < p.n || p.inflight > 0) {
            uv_timer_start(&deadline, on_deadline, 10000, 0);
            uv_run(&loop, UV_RUN_ONCE);
        }
        threads = bn_threads();
        uv_close((uv_handle_t *)&deadline, NULL);
    } else {
        while (p.sent < p.n || p.inflight > 0) {
            publish_more(&p, 0);
            natsMsg *ack = NULL;
            natsStatus s = natsSubscription_NextMsg(&ack, sub, 10000);
            if (s == NATS_TIMEOUT)
                bn_die("no ack within 10 s (%llu in flight)", (unsigned long long)p.inflight);
            nats_check(s, "reading acks");
            take_ack(&p, ack, 0);
        }
        threads = bn_threads();
    }
    for (int i = 0; i < p.nspent; i++)
        natsMsg_Destroy(p.spent[i]);
    p.nspent = 0;
    uint64_t t1 = bn_mono_ns();
    getrusage(RUSAGE_SELF, &u1);
    double secs = (double)(t1 - t0) / 1e9;
    double cpu = (double)(u1.ru_utime.tv_sec - u0.ru_utime.tv_sec + u1.ru_stime.tv_sec -
                          u0.ru_stime.tv_sec) *
                     1e6 +
                 (double)(u1.ru_utime.tv_usec - u0.ru_utime.tv_usec + u1.ru_stime.tv_usec -
                          u0.ru_stime.tv_usec);
    long csw = u1.ru_nvcsw - u0.ru_nvcsw + u1.ru_nivcsw - u0.ru_nivcsw;
    printf("messages=%zu seconds=%.3f rate=%.0f acked=%llu duplicates=%llu errors=%llu "
           "cpu_us_per_msg=%.2f csw_per_msg=%.3f threads=%d\n",
           n, secs, secs > 0 ? (double)n / secs : 0, (unsigned long long)p.acked,
           (unsigned long long)p.dups, (unsigned long long)p.errors, n ? cpu / (double)n : 0,
           n ? (double)csw / (double)n : 0, threads);

    natsSubscription_Unsubscribe(sub);
    natsSubscription_Destroy(sub);
    natsConnection_Destroy(nc);
    natsOptions_Destroy(no);
    if (evloop) {
        ob_nats_loop_free(nl);
        uv_run(&loop, UV_RUN_DEFAULT); /* the polls' close callbacks */
        uv_loop_close(&loop);
    }
    nats_CloseAndWait(2000);
    ob_buf_free(&p.subject);
    ob_buf_free(&p.scratch);
    ob_buf_free(&p.block);
    ob_buf_free(&p.cesrc);
    ob_buf_free(&q);
    free(rows);
    mysql_free_result(res);
    mysql_close(m);
    return p.errors ? 1 : 0;
}
