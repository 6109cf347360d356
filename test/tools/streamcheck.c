/* SPDX-License-Identifier: Apache-2.0 */
/*
 * streamcheck: reads a JetStream stream from the start and reports what it
 * holds. Tests and the benchmark use it to assert on stream contents.
 *
 *   streamcheck --nats URL --stream S [--subject outbox.>] [options]
 *     --expect-ids FILE   compare Nats-Msg-Id values with the ids in FILE
 *                         (one canonical UUID per line); exit 1 on mismatch
 *     --dump N            print the first N messages (subject, headers, data)
 *     --times FILE        write each message's stream time (ms since the
 *                         epoch), one a line, in stream order
 *     --info              print the stream's duplicate window, replicas,
 *                         subjects and leader (--info-only: nothing else)
 *     --check-order H     messages of one aggregate (same subject and ce-subject)
 *                         must carry increasing integers in header H, in stream
 *                         order; prints order_violations=N, exit 1 if N > 0
 *     --check-fifo H      header H must increase over the whole stream
 *     --delete            delete the stream
 *     --create SUBJECT    create the stream on SUBJECT (file storage), with
 *                         --max-msg-size N, --dup-window-ms N, --max-msgs N,
 *                         --max-bytes N,
 *                         --discard-new, --max-msgs-per-subject N,
 *                         --discard-new-per-subject and --replicas N if given
 *     --purge             remove every message of the stream
 *     --set-subjects SUBJECT  the stream's subjects become SUBJECT alone, its
 *                         other settings kept (a $JS.API.STREAM.UPDATE request)
 *     --set-max-msgs-per-subject N  the stream's max_msgs_per_subject becomes
 *                         N, its other settings kept (the same request)
 *     --leader            print the server name of the stream's leader
 *     --tls-ca FILE, --nkey FILE, --token-file FILE
 *                         TLS and credentials, as the relay takes them
 *     --publish N         publish N messages with distinct Nats-Msg-Id values
 *                         to --subject (a literal subject here), each
 *                         --copies K times (1), of --size B bytes (16); a
 *                         copy round waits --gap-ms MS first (0), so that it
 *                         can outlast a short duplicate window. Prints the
 *                         ids, one a line. For the tool's own test.
 * Prints "messages=N distinct=M duplicates=D" and exits 0, 1 on mismatch,
 * 2 on error. It uses nats.c's blocking JetStream API: it is a test tool.
 */
#include <nats/nats.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nats_security.h"

typedef struct opts {
    const char *url, *stream, *subject, *expect, *create, *order, *fifo, *set_subjects, *times;
    int dump, info, del, leader, purge, discard_new, discard_new_per_subject;
    long long max_msg_size, dup_window_ms, replicas, max_msgs, max_msgs_per_subject, max_bytes;
    long long publish, copies, size, gap_ms;
    long long set_per_subject; /* 0: not asked */
    ob_nats_security sec;
} opts;

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static char **read_ids(const char *path, size_t *n) {
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return NULL;
    size_t cap = 1024;
    char **v = malloc(cap * sizeof(*v));
    char line[128];
    *n = 0;
    while (fgets(line, sizeof(line), f)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (line[0] == '\0')
            continue;
        if (*n == cap)
            v = realloc(v, (cap *= 2) * sizeof(*v));
        v[(*n)++] = strdup(line);
    }
    fclose(f);
    return v;
}

/* Order checks: the last value seen per aggregate key. */
#define ORDER_SLOTS 65536
typedef struct order_slot {
    char *key;
    long long last;
} order_slot;
static order_slot order_tab[ORDER_SLOTS];
static long long order_violations, order_checked, fifo_last = -1, fifo_violations;

static long long header_int(natsMsg *m, const char *h) {
    const char *v = NULL;
    if (natsMsgHeader_Get(m, h, &v) != NATS_OK || v == NULL)
        return -1;
    return atoll(v);
}

static void check_order(natsMsg *m, const opts *o) {
    if (o->fifo) {
        long long v = header_int(m, o->fifo);
        if (v <= fifo_last && fifo_violations++ < 5)
            printf("fifo: %s=%lld after %lld\n", o->fifo, v, fifo_last);
        if (v > fifo_last)
            fifo_last = v;
    }
    if (o->order == NULL)
        return;
    const char *cs = NULL;
    natsMsgHeader_Get(m, "ce-subject", &cs);
    char key[512];
    snprintf(key, sizeof(key), "%s|%s", natsMsg_GetSubject(m), cs ? cs : "");
    unsigned long h = 5381;
    for (const char *p = key; *p; p++)
        h = h * 33 + (unsigned char)*p;
    order_slot *sl = &order_tab[h % ORDER_SLOTS];
    while (sl->key && strcmp(sl->key, key) != 0)
        sl = &order_tab[(size_t)(sl - order_tab + 1) % ORDER_SLOTS];
    long long v = header_int(m, o->order);
    order_checked++;
    if (sl->key == NULL) {
        sl->key = strdup(key);
        sl->last = v;
        return;
    }
    if (v <= sl->last && order_violations++ < 5)
        printf("order: %s %s=%lld after %lld\n", key, o->order, v, sl->last);
    if (v > sl->last)
        sl->last = v;
}

static int publish(jsCtx *js, const opts *o) {
    char *data = calloc(1, (size_t)o->size + 1);
    if (data == NULL)
        return 2;
    memset(data, 'x', (size_t)o->size);
    int rc = 0;
    for (long long c = 0; c < o->copies && rc == 0; c++) {
        if (c > 0 && o->gap_ms > 0)
            nats_Sleep(o->gap_ms);
        for (long long i = 0; i < o->publish; i++) {
            char id[64];
            snprintf(id, sizeof(id), "00000000-0000-7000-8000-%012lld", i);
            if (c == 0)
                printf("%s\n", id);
            jsPubOptions po;
            jsPubOptions_Init(&po);
            po.MsgId = id;
            jsPubAck *pa = NULL;
            jsErrCode jerr = 0;
            natsStatus s = js_Publish(&pa, js, o->subject, data, (int)o->size, &po, &jerr);
            if (s != NATS_OK) {
                fprintf(stderr, "streamcheck: publish failed: %s (%d)\n", natsStatus_GetText(s),
                        jerr);
                rc = 2;
                break;
            }
            jsPubAck_Destroy(pa);
        }
    }
    free(data);
    return rc;
}

/* The stream's configuration as it is, with `subject` (unless NULL) as its
 * only subject and `per_subject` (unless 0) as its max_msgs_per_subject. */
static int update_stream(jsCtx *js, const char *stream, const char *subject,
                         long long per_subject) {
    jsErrCode jerr = 0;
    jsStreamInfo *si = NULL, *ui = NULL;
    natsStatus s = js_GetStreamInfo(&si, js, stream, NULL, &jerr);
    if (s != NATS_OK) {
        fprintf(stderr, "streamcheck: no stream %s: %s (%d)\n", stream, natsStatus_GetText(s),
                jerr);
        return 2;
    }
    const char **was = si->Config->Subjects;
    int was_len = si->Config->SubjectsLen;
    const char *subjects[1] = {subject};
    if (subject) {
        si->Config->Subjects = subjects;
        si->Config->SubjectsLen = 1;
    }
    if (per_subject)
        si->Config->MaxMsgsPerSubject = per_subject;
    s = js_UpdateStream(&ui, js, si->Config, NULL, &jerr);
    si->Config->Subjects = was;
    si->Config->SubjectsLen = was_len;
    jsStreamInfo_Destroy(si);
    jsStreamInfo_Destroy(ui);
    if (s != NATS_OK) {
        fprintf(stderr, "streamcheck: update failed: %s (%d)\n", natsStatus_GetText(s), jerr);
        return 2;
    }
    return 0;
}

static void write_time(FILE *f, natsMsg *m) {
    jsMsgMetaData *meta = NULL;
    if (natsMsg_GetMetaData(&meta, m) != NATS_OK)
        return;
    fprintf(f, "%lld\n", (long long)(meta->Timestamp / 1000000));
    jsMsgMetaData_Destroy(meta);
}

static void dump_msg(natsMsg *m) {
    const char **keys = NULL;
    int nkeys = 0;
    printf("subject: %s\n", natsMsg_GetSubject(m));
    if (natsMsgHeader_Keys(m, &keys, &nkeys) == NATS_OK) {
        for (int i = 0; i < nkeys; i++) {
            const char *v = NULL;
            natsMsgHeader_Get(m, keys[i], &v);
            printf("header %s: %s\n", keys[i], v ? v : "");
        }
        free((void *)keys);
    }
    printf("data: %.*s\n---\n", natsMsg_GetDataLength(m), natsMsg_GetData(m));
}

int main(int argc, char **argv) {
    /* See cli/main.c: nats.c's cleanup and OpenSSL's exit handler collide. */
    OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT, NULL);
    opts o;
    memset(&o, 0, sizeof(o));
    o.stream = "OUTBOX";
    o.subject = "outbox.>";
    o.copies = 1;
    o.size = 16;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--nats") == 0 && v)
            o.url = argv[++i];
        else if (strcmp(a, "--stream") == 0 && v)
            o.stream = argv[++i];
        else if (strcmp(a, "--subject") == 0 && v)
            o.subject = argv[++i];
        else if (strcmp(a, "--expect-ids") == 0 && v)
            o.expect = argv[++i];
        else if (strcmp(a, "--times") == 0 && v)
            o.times = argv[++i];
        else if (strcmp(a, "--dump") == 0 && v)
            o.dump = atoi(argv[++i]);
        else if (strcmp(a, "--check-order") == 0 && v)
            o.order = argv[++i];
        else if (strcmp(a, "--check-fifo") == 0 && v)
            o.fifo = argv[++i];
        else if (strcmp(a, "--info") == 0)
            o.info = 1;
        else if (strcmp(a, "--info-only") == 0)
            o.info = 2;
        else if (strcmp(a, "--delete") == 0)
            o.del = 1;
        else if (strcmp(a, "--create") == 0 && v)
            o.create = argv[++i];
        else if (strcmp(a, "--max-msg-size") == 0 && v)
            o.max_msg_size = atoll(argv[++i]);
        else if (strcmp(a, "--dup-window-ms") == 0 && v)
            o.dup_window_ms = atoll(argv[++i]);
        else if (strcmp(a, "--replicas") == 0 && v)
            o.replicas = atoll(argv[++i]);
        else if (strcmp(a, "--leader") == 0)
            o.leader = 1;
        else if (strcmp(a, "--tls-ca") == 0 && v)
            o.sec.tls_ca = argv[++i];
        else if (strcmp(a, "--nkey") == 0 && v)
            o.sec.nkey_file = argv[++i];
        else if (strcmp(a, "--token-file") == 0 && v)
            o.sec.token_file = argv[++i];
        else if (strcmp(a, "--max-msgs") == 0 && v)
            o.max_msgs = atoll(argv[++i]);
        else if (strcmp(a, "--max-bytes") == 0 && v)
            o.max_bytes = atoll(argv[++i]);
        else if (strcmp(a, "--discard-new") == 0)
            o.discard_new = 1;
        else if (strcmp(a, "--max-msgs-per-subject") == 0 && v)
            o.max_msgs_per_subject = atoll(argv[++i]);
        else if (strcmp(a, "--discard-new-per-subject") == 0)
            o.discard_new_per_subject = 1;
        else if (strcmp(a, "--purge") == 0)
            o.purge = 1;
        else if (strcmp(a, "--set-subjects") == 0 && v)
            o.set_subjects = argv[++i];
        else if (strcmp(a, "--set-max-msgs-per-subject") == 0 && v)
            o.set_per_subject = atoll(argv[++i]);
        else if (strcmp(a, "--publish") == 0 && v)
            o.publish = atoll(argv[++i]);
        else if (strcmp(a, "--copies") == 0 && v)
            o.copies = atoll(argv[++i]);
        else if (strcmp(a, "--size") == 0 && v)
            o.size = atoll(argv[++i]);
        else if (strcmp(a, "--gap-ms") == 0 && v)
            o.gap_ms = atoll(argv[++i]);
        else {
            fprintf(stderr, "streamcheck: bad argument '%s'\n", a);
            return 2;
        }
    }
    if (o.url == NULL) {
        fprintf(stderr, "streamcheck: --nats is required\n");
        return 2;
    }
    natsConnection *nc = NULL;
    jsCtx *js = NULL;
    jsErrCode jerr = 0;
    natsOptions *no = NULL;
    char err[512] = "";
    natsStatus s = natsOptions_Create(&no);
    /* A comma-separated list is a cluster. */
    char *urls = strdup(o.url), *servers[16], *save = NULL;
    int nservers = 0;
    for (char *t = strtok_r(urls, ",", &save); t && nservers < 16; t = strtok_r(NULL, ",", &save))
        servers[nservers++] = t;
    if (s == NATS_OK)
        s = natsOptions_SetServers(no, (const char **)servers, nservers);
    if (s == NATS_OK)
        s = natsOptions_SetNoRandomize(no, true);
    o.sec.tls = strncmp(o.url, "tls://", 6) == 0 || o.sec.tls_ca;
    if (s == NATS_OK && ob_nats_security_apply(no, &o.sec, err, sizeof(err)) != 0) {
        fprintf(stderr, "streamcheck: %s\n", err);
        return 2;
    }
    if (s == NATS_OK)
        s = natsConnection_Connect(&nc, no);
    natsOptions_Destroy(no);
    free(urls);
    if (s == NATS_OK)
        s = natsConnection_JetStream(&js, nc, NULL);
    if (s != NATS_OK) {
        fprintf(stderr, "streamcheck: cannot connect: %s\n", natsStatus_GetText(s));
        return 2;
    }
    int rc = 0;
    if (o.del) {
        s = js_DeleteStream(js, o.stream, NULL, &jerr);
        if (s != NATS_OK && jerr != JSStreamNotFoundErr) {
            fprintf(stderr, "streamcheck: delete failed: %s (%d)\n", natsStatus_GetText(s), jerr);
            rc = 2;
        }
        goto out;
    }
    if (o.create) {
        jsStreamConfig cfg;
        jsStreamConfig_Init(&cfg);
        const char *subjects[1] = {o.create};
        cfg.Name = o.stream;
        cfg.Subjects = subjects;
        cfg.SubjectsLen = 1;
        cfg.Storage = js_FileStorage;
        if (o.max_msg_size > 0)
            cfg.MaxMsgSize = (int32_t)o.max_msg_size;
        if (o.dup_window_ms > 0)
            cfg.Duplicates = (int64_t)o.dup_window_ms * 1000000;
        if (o.max_msgs > 0)
            cfg.MaxMsgs = (int64_t)o.max_msgs;
        if (o.max_bytes > 0)
            cfg.MaxBytes = (int64_t)o.max_bytes;
        if (o.discard_new)
            cfg.Discard = js_DiscardNew;
        if (o.max_msgs_per_subject > 0)
            cfg.MaxMsgsPerSubject = (int64_t)o.max_msgs_per_subject;
        if (o.discard_new_per_subject)
            cfg.DiscardNewPerSubject = true;
        if (o.replicas > 0)
            cfg.Replicas = (int64_t)o.replicas;
        jsStreamInfo *ci = NULL;
        s = js_AddStream(&ci, js, &cfg, NULL, &jerr);
        if (s != NATS_OK) {
            fprintf(stderr, "streamcheck: create failed: %s (%d)\n", natsStatus_GetText(s), jerr);
            rc = 2;
        }
        jsStreamInfo_Destroy(ci);
        goto out;
    }
    if (o.set_subjects || o.set_per_subject) {
        rc = update_stream(js, o.stream, o.set_subjects, o.set_per_subject);
        goto out;
    }
    if (o.purge) {
        s = js_PurgeStream(js, o.stream, NULL, &jerr);
        if (s != NATS_OK) {
            fprintf(stderr, "streamcheck: purge failed: %s (%d)\n", natsStatus_GetText(s), jerr);
            rc = 2;
        }
        goto out;
    }
    if (o.publish > 0) {
        rc = publish(js, &o);
        goto out;
    }
    jsStreamInfo *si = NULL;
    s = js_GetStreamInfo(&si, js, o.stream, NULL, &jerr);
    if (s != NATS_OK) {
        fprintf(stderr, "streamcheck: no stream %s: %s (%d)\n", o.stream, natsStatus_GetText(s),
                jerr);
        rc = 2;
        goto out;
    }
    uint64_t total = si->State.Msgs;
    if (o.leader) {
        printf("%s\n", si->Cluster && si->Cluster->Leader ? si->Cluster->Leader : "");
        jsStreamInfo_Destroy(si);
        goto out;
    }
    if (o.info) {
        printf("replicas=%lld duplicate_window_ms=%lld subjects=", (long long)si->Config->Replicas,
               (long long)(si->Config->Duplicates / 1000000));
        for (int i = 0; i < si->Config->SubjectsLen; i++)
            printf("%s%s", i ? "," : "", si->Config->Subjects[i]);
        if (si->Cluster != NULL && si->Cluster->Leader != NULL)
            printf(" leader=%s", si->Cluster->Leader);
        printf("\n");
    }
    jsStreamInfo_Destroy(si);
    if (o.info == 2)
        goto out;

    char **ids = calloc(total + 1, sizeof(*ids));
    size_t got = 0, noid = 0;
    if (total > 0) {
        natsSubscription *sub = NULL;
        jsSubOptions so;
        jsSubOptions_Init(&so);
        so.Stream = o.stream;
        so.Config.AckPolicy = js_AckNone;
        so.Config.DeliverPolicy = js_DeliverAll;
        s = js_PullSubscribe(&sub, js, o.subject, NULL, NULL, &so, &jerr);
        if (s != NATS_OK) {
            fprintf(stderr, "streamcheck: cannot subscribe: %s (%d)\n", natsStatus_GetText(s),
                    jerr);
            free(ids);
            rc = 2;
            goto out;
        }
        /* Large messages exceed nats.c's default pending limits (64 MB) and
         * would be dropped as a slow consumer: lift them, and ask for at
         * most 16 MB per fetch. Stop after 10 s without progress. */
        natsSubscription_SetPendingLimits(sub, -1, -1);
        FILE *times = o.times ? fopen(o.times, "w") : NULL;
        int idle = 0;
        while (got < total && idle < 5) {
            natsMsgList list = {0};
            jsFetchRequest fr;
            jsFetchRequest_Init(&fr);
            /* No more than the messages left: a fetch for more waits for
             * its expiry. */
            fr.Batch = total - got < 1000 ? (int)(total - got) : 1000;
            fr.MaxBytes = 16 * 1024 * 1024;
            fr.Expires = 2000LL * 1000 * 1000;
            s = natsSubscription_FetchRequest(&list, sub, &fr);
            int count = list.Count;
            idle = count > 0 ? 0 : idle + 1;
            for (int i = 0; i < list.Count && got < total; i++) {
                natsMsg *m = list.Msgs[i];
                const char *id = NULL;
                if (natsMsgHeader_Get(m, "Nats-Msg-Id", &id) == NATS_OK && id)
                    ids[got] = strdup(id);
                else
                    noid++;
                if ((int)got < o.dump)
                    dump_msg(m);
                if (times)
                    write_time(times, m);
                check_order(m, &o);
                got++;
            }
            natsMsgList_Destroy(&list);
            if (s != NATS_OK && s != NATS_TIMEOUT && count == 0)
                nats_Sleep(100);
        }
        if (times)
            fclose(times);
        natsSubscription_Unsubscribe(sub);
        natsSubscription_Destroy(sub);
    }
    size_t nids = 0;
    for (size_t i = 0; i < got; i++)
        if (ids[i])
            ids[nids++] = ids[i];
    qsort(ids, nids, sizeof(*ids), cmp_str);
    /* Keep the first of each run of equal ids; compare with the last kept
     * one, never with a copy already freed. */
    size_t distinct = 0;
    for (size_t i = 0; i < nids; i++)
        if (distinct == 0 || strcmp(ids[i], ids[distinct - 1]) != 0)
            ids[distinct++] = ids[i];
        else
            free(ids[i]);
    printf("messages=%llu read=%zu distinct=%zu duplicates=%zu without_id=%zu\n",
           (unsigned long long)total, got, distinct, nids - distinct, noid);
    if (got != total)
        rc = 1;
    if (o.order) {
        printf("order_checked=%lld order_violations=%lld\n", order_checked, order_violations);
        if (order_violations)
            rc = 1;
    }
    if (o.fifo) {
        printf("fifo_violations=%lld\n", fifo_violations);
        if (fifo_violations)
            rc = 1;
    }
    if (o.expect) {
        size_t ne = 0;
        char **exp = read_ids(o.expect, &ne);
        if (exp == NULL) {
            fprintf(stderr, "streamcheck: cannot read %s\n", o.expect);
            for (size_t k = 0; k < distinct; k++)
                free(ids[k]);
            free(ids);
            rc = 2;
            goto out;
        }
        qsort(exp, ne, sizeof(*exp), cmp_str);
        size_t i = 0, j = 0, missing = 0, extra = 0;
        while (i < ne || j < distinct) {
            int c = i == ne ? 1 : j == distinct ? -1 : strcmp(exp[i], ids[j]);
            if (c == 0) {
                i++;
                j++;
            } else if (c < 0) {
                if (missing++ < 5)
                    printf("missing %s\n", exp[i]);
                i++;
            } else {
                if (extra++ < 5)
                    printf("extra %s\n", ids[j]);
                j++;
            }
        }
        printf("expected=%zu missing=%zu extra=%zu\n", ne, missing, extra);
        if (missing || extra || nids != distinct)
            rc = 1;
        for (size_t k = 0; k < ne; k++)
            free(exp[k]);
        free(exp);
    }
    for (size_t i = 0; i < distinct; i++)
        free(ids[i]);
    free(ids);
out:
    jsCtx_Destroy(js);
    natsConnection_Destroy(nc);
    nats_Close();
    return rc;
}
