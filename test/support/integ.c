/* SPDX-License-Identifier: Apache-2.0 */
#include "integ.h"

#include <nats/nats.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

const char *ti_env(const char *name) {
    const char *v = getenv(name);
    if (v == NULL || *v == '\0') {
        fprintf(stderr, "%s is not set: run this test through ctest (servers fixture)\n", name);
        exit(77);
    }
    return v;
}

static MYSQL *connect_to(const char *db) {
    MYSQL *m = mysql_init(NULL);
    CHECK(m != NULL);
    unsigned port = (unsigned)atoi(ti_env("OUTBOX_TEST_DB_PORT"));
    if (mysql_real_connect(m, ti_env("OUTBOX_TEST_DB_HOST"), ti_env("OUTBOX_TEST_DB_USER"),
                           ti_env("OUTBOX_TEST_DB_PASSWORD"), db, port, NULL,
                           CLIENT_MULTI_STATEMENTS) == NULL)
        CHECK_FAIL_("connect to database '%s': %s", db ? db : "", mysql_error(m));
    mysql_set_character_set(m, "utf8mb4");
    return m;
}

MYSQL *ti_db_connect(const char *db) {
    return connect_to(db);
}

static void vexec(MYSQL *m, const char *fmt, va_list ap) {
    char *sql = NULL;
    if (vasprintf(&sql, fmt, ap) < 0)
        CHECK_FAIL_("out of memory");
    if (mysql_query(m, sql) != 0)
        CHECK_FAIL_("SQL failed: %s\n  %s", mysql_error(m), sql);
    do {
        MYSQL_RES *r = mysql_store_result(m);
        if (r)
            mysql_free_result(r);
    } while (mysql_next_result(m) == 0);
    free(sql);
}

void ti_exec(MYSQL *m, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vexec(m, fmt, ap);
    va_end(ap);
}

long long ti_int(MYSQL *m, const char *fmt, ...) {
    char *sql = NULL;
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&sql, fmt, ap) < 0)
        CHECK_FAIL_("out of memory");
    va_end(ap);
    if (mysql_query(m, sql) != 0)
        CHECK_FAIL_("SQL failed: %s\n  %s", mysql_error(m), sql);
    MYSQL_RES *r = mysql_store_result(m);
    MYSQL_ROW row = r ? mysql_fetch_row(r) : NULL;
    long long v = row && row[0] ? strtoll(row[0], NULL, 10) : -1;
    if (r)
        mysql_free_result(r);
    free(sql);
    return v;
}

MYSQL *ti_db_fresh(const char *db, const outbox_schema_options *o) {
    MYSQL *m = connect_to(NULL);
    ti_exec(m, "DROP DATABASE IF EXISTS `%s`; CREATE DATABASE `%s`", db, db);
    mysql_close(m);
    m = connect_to(db);
    outbox_schema_options d;
    if (o == NULL) {
        outbox_schema_options_init(&d);
        o = &d;
    }
    char *ddl = NULL;
    char err[256];
    CHECK_EQ(outbox_schema_ddl(o, &ddl, err, sizeof(err)), OUTBOX_OK);
    ti_exec(m, "%s", ddl);
    free(ddl);
    return m;
}

const char *ti_db_url(const char *db) {
    static char url[512];
    snprintf(url, sizeof(url), "%s%s", ti_env("OUTBOX_TEST_DB_URL"), db);
    return url;
}

void ti_seed(MYSQL *m, const char *table, int n, int per_tx, int payload_bytes) {
    outbox_producer_options po;
    outbox_producer_options_init(&po);
    po.table = table;
    outbox_producer *p = NULL;
    CHECK_EQ(outbox_producer_create(&p, &po, NULL, 0), OUTBOX_OK);
    char *payload = malloc((size_t)payload_bytes + 64);
    outbox_entry *e = calloc((size_t)per_tx, sizeof(*e));
    char(*aid)[32] = calloc((size_t)per_tx, sizeof(*aid));
    int pad = payload_bytes > 20 ? payload_bytes - 20 : 1;
    for (int done = 0; done < n;) {
        int k = n - done < per_tx ? n - done : per_tx;
        ti_exec(m, "START TRANSACTION");
        for (int i = 0; i < k; i++) {
            snprintf(aid[i], sizeof(aid[i]), "a%d", done + i);
            e[i].aggregate_type = "order";
            e[i].aggregate_id = aid[i];
            e[i].event_type = "created";
            e[i].payload = payload;
        }
        snprintf(payload, (size_t)payload_bytes + 64, "{\"n\":%d,\"pad\":\"%0*d\"}", done, pad, 0);
        if (outbox_enqueue_many(p, m, e, (size_t)k, NULL) != OUTBOX_OK)
            CHECK_FAIL_("enqueue: %s", outbox_producer_errmsg(p));
        ti_exec(m, "COMMIT");
        done += k;
    }
    free(aid);
    free(e);
    free(payload);
    outbox_producer_destroy(p);
}

long long ti_stream_count(const char *stream, long long *distinct) {
    char cmd[1024];
    snprintf(cmd, sizeof(cmd), "%s --nats '%s' --stream '%s' --subject '>'",
             ti_env("OUTBOX_TEST_STREAMCHECK"), ti_env("OUTBOX_TEST_NATS_URL"), stream);
    FILE *f = popen(cmd, "r");
    CHECK(f != NULL);
    char line[512];
    long long msgs = -1, dist = -1;
    while (fgets(line, sizeof(line), f)) {
        long long a, b, c, d;
        if (sscanf(line, "messages=%lld read=%lld distinct=%lld duplicates=%lld", &a, &b, &c, &d) ==
            4) {
            msgs = a;
            dist = c;
        }
    }
    pclose(f);
    if (distinct)
        *distinct = dist;
    return msgs;
}

void ti_stream_delete(const char *stream) {
    char cmd[1024];
    snprintf(cmd, sizeof(cmd), "%s --nats '%s' --stream '%s' --delete",
             ti_env("OUTBOX_TEST_STREAMCHECK"), ti_env("OUTBOX_TEST_NATS_URL"), stream);
    CHECK_EQ(system(cmd), 0);
}

void ti_relay_options(outbox_relay_options *o, const char *db, const char *stream,
                      const char *prefix) {
    outbox_relay_options_init(o);
    o->db_url = ti_db_url(db);
    o->nats_url = ti_env("OUTBOX_TEST_NATS_URL");
    o->stream = stream;
    o->subject_prefix = prefix;
    o->log = ti_log;
    o->log_level = OUTBOX_LOG_WARN;
}

static void on_deadline(uv_timer_t *t) {
    *(int *)t->data = 1;
}

int ti_run_until(uv_loop_t *loop, volatile int *done, uint64_t timeout_ms) {
    uv_timer_t t;
    int expired = 0;
    uv_timer_init(loop, &t);
    t.data = &expired;
    uv_timer_start(&t, on_deadline, timeout_ms, 0);
    while (!*done && !expired)
        uv_run(loop, UV_RUN_ONCE);
    uv_close((uv_handle_t *)&t, NULL);
    uv_run(loop, UV_RUN_NOWAIT);
    return *done ? 0 : -1;
}

void ti_set_flag(outbox_relay *r, void *data) {
    (void)r;
    *(volatile int *)data = 1;
}

outbox_stats ti_relay_drain(const outbox_relay_options *o, uint64_t timeout_ms) {
    volatile int drained = 0, stopped = 0;
    uv_loop_t loop;
    uv_loop_init(&loop);
    outbox_relay_options ro = *o;
    ro.on_drained = ti_set_flag;
    ro.drained_data = (void *)&drained;
    outbox_relay *r = NULL;
    char err[256];
    if (outbox_relay_create(&r, &loop, &ro, err, sizeof(err)) != OUTBOX_OK)
        CHECK_FAIL_("outbox_relay_create: %s", err);
    CHECK_EQ(outbox_relay_start(r), OUTBOX_OK);
    CHECK_EQ(ti_run_until(&loop, &drained, timeout_ms), 0);
    outbox_stats s;
    outbox_relay_stats(r, &s);
    CHECK_EQ(outbox_relay_stop(r, ti_set_flag, (void *)&stopped), OUTBOX_OK);
    CHECK_EQ(ti_run_until(&loop, &stopped, 20000), 0);
    outbox_relay_destroy(r);
    CHECK_EQ(uv_loop_close(&loop), 0);
    return s;
}

void ti_log(outbox_log_level level, const char *msg, void *data) {
    fprintf(stderr, "[%s] %s %s\n", data ? (const char *)data : "relay",
            outbox_log_level_name(level), msg);
}
