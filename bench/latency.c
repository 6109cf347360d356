/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench-latency: a consumer of the stream that measures commit -> stored
 * latency. It reads every message of the stream from the start through an
 * ephemeral pull consumer and, for each message carrying the header H (Unix
 * nanoseconds written by the producer just before its commit), takes
 * JetStream's stored timestamp from the message metadata minus that value.
 *
 *   bench-latency --nats URL --stream S --header H [--subject '>']
 * Prints two lines:
 *   messages=N read=R with_header=K distinct_ids=D
 *   latency_ms p50=.. p95=.. p99=.. max=.. n=K
 */
#include <nats/nats.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv) {
    bn_set_tool("bench-latency");
    const char *url = NULL, *stream = NULL, *header = NULL, *subject = ">";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--nats") == 0)
            url = bn_need(a, v), i++;
        else if (strcmp(a, "--stream") == 0)
            stream = bn_need(a, v), i++;
        else if (strcmp(a, "--header") == 0)
            header = bn_need(a, v), i++;
        else if (strcmp(a, "--subject") == 0)
            subject = bn_need(a, v), i++;
        else
            bn_die("unknown argument '%s'", a);
    }
    if (url == NULL || stream == NULL || header == NULL)
        bn_die("--nats, --stream and --header are required");

    natsConnection *nc = NULL;
    jsCtx *js = NULL;
    jsErrCode jerr = 0;
    natsStatus s = natsConnection_ConnectTo(&nc, url);
    if (s == NATS_OK)
        s = natsConnection_JetStream(&js, nc, NULL);
    if (s != NATS_OK)
        bn_die("cannot connect: %s", natsStatus_GetText(s));
    jsStreamInfo *si = NULL;
    s = js_GetStreamInfo(&si, js, stream, NULL, &jerr);
    if (s != NATS_OK)
        bn_die("no stream %s: %s (%d)", stream, natsStatus_GetText(s), (int)jerr);
    uint64_t total = si->State.Msgs;
    jsStreamInfo_Destroy(si);

    double *lat = calloc(total + 1, sizeof(*lat));
    char **ids = calloc(total + 1, sizeof(*ids));
    size_t got = 0, nlat = 0, nids = 0;
    if (total > 0) {
        natsSubscription *sub = NULL;
        jsSubOptions so;
        jsSubOptions_Init(&so);
        so.Stream = stream;
        so.Config.AckPolicy = js_AckNone;
        so.Config.DeliverPolicy = js_DeliverAll;
        s = js_PullSubscribe(&sub, js, subject, NULL, NULL, &so, &jerr);
        if (s != NATS_OK)
            bn_die("cannot subscribe: %s (%d)", natsStatus_GetText(s), (int)jerr);
        int empty = 0;
        while (got < total && empty < 3) {
            natsMsgList list = {0};
            s = natsSubscription_Fetch(&list, sub, 1000, 2000, &jerr);
            if (s != NATS_OK || list.Count == 0) {
                empty++;
                continue;
            }
            for (int i = 0; i < list.Count && got < total; i++) {
                natsMsg *m = list.Msgs[i];
                const char *t = NULL, *id = NULL;
                jsMsgMetaData *meta = NULL;
                if (natsMsgHeader_Get(m, header, &t) == NATS_OK && t &&
                    natsMsg_GetMetaData(&meta, m) == NATS_OK) {
                    lat[nlat++] = (double)(meta->Timestamp - strtoll(t, NULL, 10)) / 1e6;
                    jsMsgMetaData_Destroy(meta);
                }
                if (natsMsgHeader_Get(m, "Nats-Msg-Id", &id) == NATS_OK && id)
                    ids[nids++] = strdup(id);
                got++;
            }
            natsMsgList_Destroy(&list);
        }
        natsSubscription_Unsubscribe(sub);
        natsSubscription_Destroy(sub);
    }
    qsort(ids, nids, sizeof(*ids), cmp_str);
    size_t distinct = 0;
    for (size_t i = 0; i < nids; i++)
        if (i == 0 || strcmp(ids[i], ids[i - 1]) != 0)
            distinct++;
    printf("messages=%llu read=%zu with_header=%zu distinct_ids=%zu\n", (unsigned long long)total,
           got, nlat, distinct);
    bn_sort(lat, nlat);
    printf("latency_ms p50=%.3f p95=%.3f p99=%.3f max=%.3f n=%zu\n",
           bn_quantile_sorted(lat, nlat, 0.50), bn_quantile_sorted(lat, nlat, 0.95),
           bn_quantile_sorted(lat, nlat, 0.99), nlat ? lat[nlat - 1] : 0, nlat);
    for (size_t i = 0; i < nids; i++)
        free(ids[i]);
    free(ids);
    free(lat);
    jsCtx_Destroy(js);
    natsConnection_Destroy(nc);
    nats_Close();
    return got == total ? 0 : 1;
}
