/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Issue 12, point 10, through the library: an embedder's relay meets a
 * permanent database error at start-up (login refused, unknown database,
 * missing table), with several connections failing at once. on_fatal is
 * called once with the cause, the embedder stops the relay from inside the
 * callback (the usual pattern), the stop callback runs within 30 s, and the
 * loop closes with no handle left. Nothing may crash: the binary's own
 * start-up check no longer reaches this path, so it is tested here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "integ.h"

typedef struct ctx {
    int fatal_seen, stopped;
    char why[600];
} ctx;

static void on_stopped(outbox_relay *r, void *data) {
    (void)r;
    ((ctx *)data)->stopped = 1;
}

static void on_fatal(outbox_relay *r, const char *why, void *data) {
    ctx *c = data;
    fprintf(stderr, "    on_fatal: %s\n", why);
    if (c->fatal_seen++ == 0) {
        snprintf(c->why, sizeof(c->why), "%s", why);
        CHECK_EQ(outbox_relay_stop(r, on_stopped, c), OUTBOX_OK);
    }
}

static void run_case(const char *name, const char *db_url, const char *table, const char *want) {
    uv_loop_t loop;
    uv_loop_init(&loop);
    ctx c;
    memset(&c, 0, sizeof(c));
    outbox_relay_options o;
    ti_relay_options(&o, "it_fault_fatal", "IT_FAULT_FATAL", "itffatal");
    o.db_url = db_url;
    if (table)
        o.table = table;
    o.connections = 4;
    o.on_fatal = on_fatal;
    o.fatal_data = &c;
    outbox_relay *r;
    char err[512];
    CHECK_EQ(outbox_relay_create(&r, &loop, &o, err, sizeof(err)), OUTBOX_OK);
    CHECK_EQ(outbox_relay_start(r), OUTBOX_OK);
    int rc = ti_run_until(&loop, &c.stopped, 30000);
    if (rc != 0)
        CHECK_FAIL_("%s: the relay did not stop within 30 s (on_fatal called %d times)", name,
                    c.fatal_seen);
    CHECK_EQ(c.fatal_seen, 1);
    if (strstr(c.why, want) == NULL)
        CHECK_FAIL_("%s: the fatal reason '%s' does not name '%s'", name, c.why, want);
    outbox_stats st;
    outbox_relay_stats(r, &st);
    CHECK_EQ(st.published, 0);
    CHECK_EQ(outbox_relay_destroy(r), OUTBOX_OK);
    uv_run(&loop, UV_RUN_DEFAULT);
    CHECK_EQ(uv_loop_close(&loop), 0);
    printf("ok: %s: fatal once, stopped, loop closed: %s\n", name, c.why);
}

int main(void) {
    MYSQL *m = ti_db_fresh("it_fault_fatal", NULL);
    ti_seed(m, "outbox", 10, 10, 64);
    mysql_close(m);
    const char *port = ti_env("OUTBOX_TEST_DB_PORT");
    char url[256];
    snprintf(url, sizeof(url), "mysql://outbox:wrong@127.0.0.1:%s/it_fault_fatal", port);
    run_case("login refused", url, NULL, "Access denied");
    snprintf(url, sizeof(url), "mysql://outbox:outbox@127.0.0.1:%s/it_fault_no_such_db", port);
    run_case("unknown database", url, NULL, "Unknown database");
    run_case("missing table", ti_db_url("it_fault_fatal"), "no_such_table", "doesn't exist");
    return 0;
}
