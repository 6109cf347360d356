/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ring: rings the relay's doorbell through the C API (outbox_ring), the way
 * a producer holding a NATS connection does after its commit.
 *
 *   ring --nats URL [--table T] [--count N]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outbox/ring.h"

int main(int argc, char **argv) {
    const char *url = NULL, *table = NULL;
    int count = 1;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--nats") == 0)
            url = argv[i + 1];
        else if (strcmp(argv[i], "--table") == 0)
            table = argv[i + 1];
        else if (strcmp(argv[i], "--count") == 0)
            count = atoi(argv[i + 1]);
    }
    natsConnection *nc = NULL;
    if (url == NULL || natsConnection_ConnectTo(&nc, url) != NATS_OK) {
        fprintf(stderr, "ring: cannot connect to NATS\n");
        return 2;
    }
    int rc = 0;
    for (int i = 0; i < count && rc == 0; i++)
        rc = outbox_ring(nc, table) == OUTBOX_OK ? 0 : 1;
    if (natsConnection_Flush(nc) != NATS_OK)
        rc = 1;
    natsConnection_Destroy(nc);
    nats_Close();
    return rc;
}
