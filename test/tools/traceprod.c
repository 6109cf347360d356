/* SPDX-License-Identifier: Apache-2.0 */
/*
 * traceprod: writes events through the C producer API with a W3C trace, in
 * one autocommitted INSERT, for the trace test.
 *
 *   traceprod DB_URL TRACEPARENT TRACESTATE|- N [HEADERS]
 *
 * N events of aggregate "trace" (ids api-1 ... api-N), event "created",
 * each with the headers object HEADERS if given; N = 1 uses
 * outbox_enqueue_traced(), more use outbox_enqueue_many_traced(). Prints the
 * ids, one a line, and exits 0; exits 3 with "refused: <message>" when the
 * producer refuses the call, 2 on other errors.
 */
#include <outbox/outbox.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_EVENTS 100

int main(int argc, char **argv) {
    if (argc < 5 || argc > 6) {
        fprintf(stderr, "usage: traceprod DB_URL TRACEPARENT TRACESTATE|- N [HEADERS]\n");
        return 2;
    }
    const char *tp = argv[2];
    const char *ts = strcmp(argv[3], "-") == 0 ? NULL : argv[3];
    int n = atoi(argv[4]);
    if (n < 1 || n > MAX_EVENTS) {
        fprintf(stderr, "traceprod: N is 1 to %d\n", MAX_EVENTS);
        return 2;
    }
    char err[512];
    MYSQL *conn = outbox_connect(argv[1], err, sizeof(err));
    if (conn == NULL) {
        fprintf(stderr, "traceprod: %s\n", err);
        return 2;
    }
    outbox_producer *p;
    if (outbox_producer_create(&p, NULL, err, sizeof(err)) != OUTBOX_OK) {
        fprintf(stderr, "traceprod: %s\n", err);
        mysql_close(conn);
        return 2;
    }
    outbox_entry e[MAX_EVENTS];
    char aid[MAX_EVENTS][16], payload[MAX_EVENTS][32];
    outbox_id ids[MAX_EVENTS];
    for (int i = 0; i < n; i++) {
        snprintf(aid[i], sizeof(aid[i]), "api-%d", i + 1);
        snprintf(payload[i], sizeof(payload[i]), "{\"n\":%d}", i + 1);
        memset(&e[i], 0, sizeof(e[i]));
        e[i].aggregate_type = "trace";
        e[i].aggregate_id = aid[i];
        e[i].event_type = "created";
        e[i].payload = payload[i];
        e[i].headers = argc == 6 ? argv[5] : NULL;
    }
    int rc = n == 1 ? outbox_enqueue_traced(p, conn, &e[0], tp, ts, &ids[0])
                    : outbox_enqueue_many_traced(p, conn, e, (size_t)n, tp, ts, ids);
    int status = 0;
    if (rc != OUTBOX_OK) {
        printf("refused: %s\n", outbox_producer_errmsg(p));
        status = rc == OUTBOX_EDB ? 2 : 3;
    } else {
        for (int i = 0; i < n; i++) {
            char text[OUTBOX_ID_TEXT_LEN + 1];
            outbox_id_to_text(&ids[i], text);
            puts(text);
        }
    }
    outbox_producer_destroy(p);
    mysql_close(conn);
    return status;
}
