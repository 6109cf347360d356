/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench-message: the cost of turning a row into a NATS message
 * (ob_message_create, the relay's own code), with a row's headers and
 * without, on the CPU of this process alone. The difference is what the
 * headers cost per row. A machine shared with other work moves the figures:
 * compare two builds by alternating them, and read ratios, not absolutes;
 * `valgrind --tool=callgrind bench-message ROWS` counts instructions, which
 * the load does not move.
 *
 *   bench-message [ROWS [HEADERS_JSON]]
 */
#include <nats/nats.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "message.h"

static double cpu_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* ns of CPU per message over `rows` messages of row r. */
static double run(const ob_row *r, long rows, ob_buf *scratch, ob_buf *block) {
    ob_message_opts o = {NULL, 0};
    outbox_failure_kind kind;
    char err[256];
    double t0 = cpu_s();
    for (long i = 0; i < rows; i++) {
        natsMsg *m = NULL;
        if (ob_message_create(&m, "outbox.order.created", NULL, r, &o, scratch, block, &kind, err,
                              sizeof(err)) != 0) {
            fprintf(stderr, "bench-message: %s\n", err);
            exit(1);
        }
        natsMsg_Destroy(m);
    }
    return (cpu_s() - t0) / (double)rows * 1e9;
}

int main(int argc, char **argv) {
    long rows = argc > 1 ? atol(argv[1]) : 200000;
    const char *headers =
        argc > 2 ? argv[2]
                 : "{\"traceparent\":\"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01\","
                   "\"tenant\":\"acme\",\"source\":\"billing\"}";
    static const unsigned char id[16] = {0x01, 0x9a, 0x6f, 0x1e};
    ob_row r;
    memset(&r, 0, sizeof(r));
    r.id = id;
    r.aggregate_type = "order";
    r.aggregate_type_len = 5;
    r.aggregate_id = "42";
    r.aggregate_id_len = 2;
    r.event_type = "created";
    r.event_type_len = 7;
    r.payload = "{\"n\":1}";
    r.payload_len = 7;
    if (rows <= 0 || nats_Open(-1) != NATS_OK)
        return 2;
    ob_buf scratch = OB_BUF_INIT, block = OB_BUF_INIT;
    r.headers = headers;
    r.headers_len = strlen(headers);
    double with = run(&r, rows, &scratch, &block);
    r.headers = NULL;
    r.headers_len = 0;
    double without = run(&r, rows, &scratch, &block);
    printf("rows=%ld with_headers_ns=%.0f without_ns=%.0f headers_ns=%.0f\n", rows, with, without,
           with - without);
    ob_buf_free(&scratch);
    ob_buf_free(&block);
    nats_Close();
    return 0;
}
