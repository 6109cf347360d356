/*
 * bench-jspub: the JetStream-only limit. It loads the pending rows of the
 * outbox table into memory first (untimed), then publishes them with no
 * database in the loop: the same subjects, payloads and headers - Nats-Msg-Id
 * and the CloudEvents set, built by the library's own message code - each
 * with a reply inbox, with at most --window publishes awaiting their ack.
 * Acks are read from a synchronous subscription on the inbox, as the relay
 * reads them on its loop.
 *
 *   bench-jspub --db URL --nats URL --stream S --subject-prefix P
 *               [--window N] [--table T] [--ce-source S]
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

int main(int argc, char **argv) {
    bn_set_tool("bench-jspub");
    const char *db = NULL, *url = NULL, *stream = "BENCH", *prefix = "bench", *table = "outbox";
    const char *ce_source = "outbox-uvrelay";
    long window = 8192;
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

    /* The connection, set up as the relay sets up its own. */
    natsOptions *no = NULL;
    natsConnection *nc = NULL;
    nats_check(natsOptions_Create(&no), "options");
    nats_check(natsOptions_SetURL(no, url), "url");
    nats_check(natsOptions_SetIOBufSize(no, 1024 * 1024), "buffer size");
    nats_check(natsOptions_SetMaxPendingMsgs(no, 65536), "pending limit");
    nats_check(natsConnection_Connect(&nc, no), "connect");
    ensure_stream(nc, stream, prefix);

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
    nats_check(natsConnection_Flush(nc), "flush");

    ob_buf subject = OB_BUF_INIT, scratch = OB_BUF_INIT, cesrc = OB_BUF_INIT;
    ob_ce_encode(&cesrc, ce_source, strlen(ce_source));
    uint64_t acked = 0, dups = 0, errors = 0, inflight = 0;
    size_t sent = 0;
    char reply[96];

    struct rusage u0, u1;
    getrusage(RUSAGE_SELF, &u0);
    uint64_t t0 = bn_mono_ns();
    while (sent < n || inflight > 0) {
        while (sent < n && inflight < (uint64_t)window) {
            ob_row *o = &rows[sent];
            ob_buf_reset(&subject);
            if (ob_message_subject(&subject, prefix, o, err, sizeof(err)) != 0)
                bn_die("row %zu: %s", sent, err);
            snprintf(reply, sizeof(reply), "%s.%zu", inbox, sent);
            natsMsg *msg = NULL;
            nats_check(natsMsg_Create(&msg, subject.p, reply, o->payload, (int)o->payload_len),
                       "message");
            outbox_failure_kind kind;
            if (ob_message_headers(msg, o, cesrc.p, &scratch, &kind, err, sizeof(err)) != 0)
                bn_die("row %zu: %s", sent, err);
            nats_check(natsConnection_PublishMsg(nc, msg), "publish");
            natsMsg_Destroy(msg);
            sent++;
            inflight++;
        }
        natsMsg *ack = NULL;
        natsStatus s = natsSubscription_NextMsg(&ack, sub, 10000);
        if (s == NATS_TIMEOUT)
            bn_die("no ack within 10 s (%llu in flight)", (unsigned long long)inflight);
        nats_check(s, "reading acks");
        ob_puback pa;
        if (natsMsg_IsNoResponders(ack))
            bn_die("no responders: stream %s does not take '%s.>'", stream, prefix);
        if (ob_puback_parse(natsMsg_GetData(ack), (size_t)natsMsg_GetDataLength(ack), &pa) != 0 ||
            !pa.ok)
            errors++;
        else if (pa.duplicate)
            dups++;
        else
            acked++;
        natsMsg_Destroy(ack);
        inflight--;
    }
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
           n, secs, secs > 0 ? (double)n / secs : 0, (unsigned long long)acked,
           (unsigned long long)dups, (unsigned long long)errors, n ? cpu / (double)n : 0,
           n ? (double)csw / (double)n : 0, bn_threads());

    natsSubscription_Unsubscribe(sub);
    natsSubscription_Destroy(sub);
    natsConnection_Destroy(nc);
    natsOptions_Destroy(no);
    nats_CloseAndWait(2000);
    ob_buf_free(&subject);
    ob_buf_free(&scratch);
    ob_buf_free(&cesrc);
    ob_buf_free(&q);
    free(rows);
    mysql_free_result(res);
    mysql_close(m);
    return errors ? 1 : 0;
}
