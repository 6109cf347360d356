/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A whole relay (outbox_relay_create) on a test's loop, against the fake
 * broker (fake_broker.c, in place of the link) and fake connections
 * (fake_db.c): the test answers every statement by hand. Shared by the
 * relay's tests (test_relay.c, test_relay_cursor.c). Header-only (static inline):
 * each test includes it once.
 */
#ifndef OB_TEST_RELAY_HARNESS_H
#define OB_TEST_RELAY_HARNESS_H

#include <string.h>
#include <uv.h>

#include "check.h"
#include "loop_until.h"
#include "fake_broker.h"
#include "fake_db.h"
#include "relay_int.h"

static uv_loop_t loop;

/* What the relay told the test. */
static struct seen {
    int fatals, stops, drains;
    char why[512];
    char log[16384]; /* every line at INFO and above */
} seen;

static inline void on_fatal(outbox_relay *r, const char *why, void *data) {
    (void)r;
    (void)data;
    seen.fatals++;
    snprintf(seen.why, sizeof(seen.why), "%s", why);
}

static inline void on_stopped(outbox_relay *r, void *data) {
    (void)r;
    (void)data;
    seen.stops++;
}

static inline void on_log(outbox_log_level level, const char *msg, void *data) {
    (void)level;
    (void)data;
    size_t n = strlen(seen.log);
    if (n + 2 < sizeof(seen.log))
        snprintf(seen.log + n, sizeof(seen.log) - n, "%s\n", msg);
}

/* How many times `needle` was logged. */
static inline int logged(const char *needle) {
    int n = 0;
    for (const char *p = seen.log; (p = strstr(p, needle)) != NULL; p += strlen(needle))
        n++;
    return n;
}

#define RUN_UNTIL(cond) LOOP_UNTIL(&loop, cond)

static inline int has_pending(const char *name, fake_op op) {
    ob_db *db = fake_db_named(name);
    return db != NULL && fake_db_pending(db) == op;
}

/* The connection `name` once it has `op` pending. */
static inline ob_db *pending(const char *name, fake_op op) {
    RUN_UNTIL(has_pending(name, op));
    return fake_db_named(name);
}

static inline void answer(const char *name, fake_op op) {
    fake_db_complete(pending(name, op), 1, 0, NULL, 0);
}

static inline void add_pair(ob_db *db, int result, const char *a, const char *b) {
    char *cols[8] = {(char *)a, (char *)b};
    unsigned long lens[8] = {a ? strlen(a) : 0, b ? strlen(b) : 0};
    fake_db_add_row(db, result, cols, lens);
}

/* `n` rows in the fetch statement's result. */
static inline void add_rows(ob_db *db, int n) {
    static int next_id;
    for (int i = 0; i < n; i++) {
        char id[16];
        memset(id, 0, sizeof(id));
        id[14] = (char)(++next_id >> 8);
        id[15] = (char)next_id;
        char *cols[8] = {id,   "order", "1", "created",
                         "{}", NULL,    "0", "2026-11-23 00:00:00.000000"};
        unsigned long lens[8] = {16, 5, 1, 7, 2, 0, 1, 26};
        fake_db_add_row(db, 1, cols, lens);
    }
}

/* The cluster watch's answer: a single server (no row), or a Galera node
 * named by the rows given as name/value pairs, NULL-terminated. */
static inline void answer_watch(const char *const *pairs) {
    ob_db *db = pending("cluster", FAKE_QUERY);
    for (int i = 0; pairs && pairs[i]; i += 2)
        add_pair(db, 0, pairs[i], pairs[i + 1]);
    fake_db_complete(db, 1, 0, NULL, 0);
}

/* The plain lease's first look: connected, the cluster probe (a single
 * server), the mode check finding no relay of another mode. */
static inline void answer_plain_lease(void) {
    answer("lease", FAKE_CONNECT);
    answer("lease", FAKE_QUERY);
    ob_db *db = pending("lease", FAKE_QUERY);
    char *one[8] = {"1"}, *modes[8] = {"1", "0", "0"};
    unsigned long l1[8] = {1}, l3[8] = {1, 1, 1};
    fake_db_add_row(db, 1, one, l1);
    fake_db_add_row(db, 2, modes, l3);
    fake_db_complete(db, 1, 0, NULL, 0);
}

static inline outbox_relay_options options(int connections) {
    outbox_relay_options o;
    outbox_relay_options_init(&o);
    o.db_url = "mysql://relay:secret@127.0.0.1:3306/db";
    o.nats_url = "nats://127.0.0.1:4222";
    o.table = "outbox";
    o.connections = connections;
    o.poll_interval_ms = 20;
    o.poll_min_ms = 5;
    o.ack_timeout_ms = 60000; /* the test answers; no publish expires */
    o.shutdown_timeout_ms = 200;
    o.on_fatal = on_fatal;
    o.log = on_log;
    o.log_level = OUTBOX_LOG_INFO;
    return o;
}

static inline outbox_relay *make(const outbox_relay_options *o) {
    memset(&seen, 0, sizeof(seen));
    outbox_relay *r = NULL;
    char err[512];
    int rc = outbox_relay_create(&r, &loop, o, err, sizeof(err));
    if (rc != OUTBOX_OK)
        CHECK_FAIL_("create: %s", err);
    CHECK_EQ(outbox_relay_start(r), OUTBOX_OK);
    CHECK(fake_broker_started(fake_broker_last()));
    return r;
}

static inline outbox_stats stats_of(const outbox_relay *r) {
    outbox_stats s;
    outbox_relay_stats(r, &s);
    return s;
}

static inline const char *reader_state(const outbox_relay *r, int i) {
    return r->o.cursor ? ob_cursor_state_name(r->readers[i].self)
                       : ob_worker_state_name(r->readers[i].self);
}

/* Once the relay was told to stop: answers whatever statement a closing
 * part still sends (a rollback, a lock's release) until the stop callback
 * ran, then destroys the relay. Every connection and the broker are
 * closed, and no handle is left. */
static inline void finish_stop(outbox_relay *r, int closed_before) {
    static const char *const names[] = {"worker 0", "worker 1", "worker 2",     "lease",
                                        "cluster",  "cursor",   "cursor switch"};
    uint64_t until = uv_hrtime() + 5000000000ull;
    while (seen.stops == 0 && uv_hrtime() < until) {
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
            if (has_pending(names[i], FAKE_QUERY))
                fake_db_complete(fake_db_named(names[i]), 1, 0, NULL, 0);
        uv_run(&loop, UV_RUN_NOWAIT);
        uv_sleep(1);
    }
    CHECK_EQ(seen.stops, 1);
    CHECK_EQ(fake_broker_closed_count(), closed_before + 1);
    CHECK_EQ(outbox_relay_destroy(r), OUTBOX_OK);
    CHECK_EQ(fake_db_open_count(), 0);
    CHECK_EQ(uv_loop_close(&loop), 0);
    CHECK_EQ(uv_loop_init(&loop), 0);
}

/* Stops the relay gracefully and sees it to its end (finish_stop). */
static inline void stop_and_destroy(outbox_relay *r) {
    int closed = fake_broker_closed_count();
    CHECK_EQ(outbox_relay_stop(r, on_stopped, NULL), OUTBOX_OK);
    finish_stop(r, closed);
}

#endif
