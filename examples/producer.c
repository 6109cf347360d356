/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A producer: each order row and its "order created" event are written in
 * one transaction, so the event exists exactly when the order does.
 *
 *   example-producer mysql://user:pass@host:port/db [ORDERS] [ORDERS_PER_TX]
 */
#include <stdio.h>
#include <stdlib.h>

#include <outbox/outbox.h>

static int exec(MYSQL *m, const char *sql) {
    if (mysql_query(m, sql) != 0) {
        fprintf(stderr, "example-producer: %s: %s\n", sql, mysql_error(m));
        return -1;
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: example-producer DB_URL [ORDERS] [ORDERS_PER_TX]\n");
        return 2;
    }
    int orders = argc > 2 ? atoi(argv[2]) : 10;
    int per_tx = argc > 3 ? atoi(argv[3]) : 1;
    if (orders < 1 || per_tx < 1) {
        fprintf(stderr, "example-producer: ORDERS and ORDERS_PER_TX must be positive\n");
        return 2;
    }
    char err[512];
    MYSQL *m = outbox_connect(argv[1], err, sizeof(err));
    if (m == NULL) {
        fprintf(stderr, "example-producer: %s\n", err);
        return 1;
    }
    if (exec(m, "CREATE TABLE IF NOT EXISTS orders (id BIGINT AUTO_INCREMENT PRIMARY KEY, "
                "customer VARCHAR(64) NOT NULL, total_cents INT NOT NULL)") != 0)
        return 1;

    outbox_producer *p = NULL;
    if (outbox_producer_create(&p, NULL, NULL, 0) != OUTBOX_OK) {
        fprintf(stderr, "example-producer: cannot create the producer\n");
        return 1;
    }
    for (int done = 0; done < orders;) {
        if (exec(m, "START TRANSACTION") != 0)
            return 1;
        int n = orders - done < per_tx ? orders - done : per_tx;
        for (int i = 0; i < n; i++) {
            int total = 1000 + (done + i) % 9000;
            char sql[160], aggregate_id[32], payload[160];
            snprintf(sql, sizeof(sql),
                     "INSERT INTO orders (customer, total_cents) VALUES ('customer-%d', %d)",
                     (done + i) % 100, total);
            if (exec(m, sql) != 0)
                return 1;
            snprintf(aggregate_id, sizeof(aggregate_id), "%llu",
                     (unsigned long long)mysql_insert_id(m));
            snprintf(payload, sizeof(payload),
                     "{\"order_id\":%s,\"customer\":\"customer-%d\",\"total_cents\":%d}",
                     aggregate_id, (done + i) % 100, total);
            outbox_entry e = {0};
            e.aggregate_type = "order";
            e.aggregate_id = aggregate_id;
            e.event_type = "created";
            e.payload = payload;
            e.headers = "{\"producer\":\"example-producer\"}";
            outbox_id id;
            if (outbox_enqueue(p, m, &e, &id) != OUTBOX_OK) {
                fprintf(stderr, "example-producer: %s\n", outbox_producer_errmsg(p));
                exec(m, "ROLLBACK");
                return 1;
            }
        }
        if (exec(m, "COMMIT") != 0)
            return 1;
        done += n;
    }
    printf("example-producer: wrote %d orders and %d events\n", orders, orders);
    outbox_producer_destroy(p);
    mysql_close(m);
    return 0;
}
