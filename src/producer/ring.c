/* SPDX-License-Identifier: Apache-2.0 */
#include "outbox/ring.h"

#include <stdio.h>

#include "sql.h"

int outbox_ring(natsConnection *nc, const char *table) {
    char err[128], subject[160];
    if (table == NULL)
        table = "outbox";
    if (nc == NULL || ob_sql_check_table(table, err, sizeof(err)) != 0)
        return OUTBOX_EINVAL;
    snprintf(subject, sizeof(subject), "outbox_wake.%s", table);
    return natsConnection_Publish(nc, subject, NULL, 0) == NATS_OK ? OUTBOX_OK : OUTBOX_ENATS;
}
