/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The worker's batch cycle without servers: a fake connection (fake_db.c)
 * whose every operation the test completes by hand, and a fake publisher
 * that records publishes and answers as the test says.
 */
#include <mysqld_error.h>
#include <uv.h>

#include "check.h"
#include "fake_db.h"
#include "puback.h"
#include "worker.h"

typedef struct fake_pub {
    int ready;
    uint32_t epoch;
    uint64_t last_answer;
    int published;
    uint32_t gen[64], slot[64];
    int fail_slot; /* this slot's publish fails with a bad subject; -1 none */
    int unavailable, suspect, checking, full;
    char refused_why[300];
    int closed;
    int table_empty;
    int64_t max_bytes; /* the stream's, for the verdict on a refusal; 0: no limit */
} fake_pub;

static fake_pub fp;

static int f_ready(const void *d) {
    (void)d;
    return fp.ready;
}
static uint32_t f_epoch(const void *d) {
    (void)d;
    return fp.epoch;
}
static uint64_t f_last_answer(const void *d) {
    (void)d;
    return fp.last_answer;
}
static int f_publish(void *d, uint32_t worker, uint32_t gen, uint32_t slot, const ob_row *row,
                     ob_pub_fail *fail) {
    (void)d;
    (void)worker;
    (void)row;
    if ((int)slot == fp.fail_slot) {
        fail->kind = OUTBOX_FAIL_BAD_SUBJECT;
        fail->code = 0;
        fail->len = (size_t)snprintf(fail->text, sizeof(fail->text), "bad subject");
        return -1;
    }
    fp.gen[fp.published] = gen;
    fp.slot[fp.published] = slot;
    fp.published++;
    return 0;
}
static void f_unavailable(void *d, const char *why) {
    (void)d;
    (void)why;
    fp.unavailable++;
    fp.ready = 0;
    fp.epoch++;
}
static void f_suspect(void *d, const char *why) {
    (void)d;
    (void)why;
    fp.suspect++;
    fp.checking = 1;
}
static int f_settled(const void *d) {
    (void)d;
    return !fp.checking;
}
static void f_refused(void *d, const char *why) {
    (void)d;
    fp.full++;
    snprintf(fp.refused_why, sizeof(fp.refused_why), "%s", why);
}
static uint64_t f_window(const void *d) {
    (void)d;
    return 120000;
}
/* The verdict the relay's broker gives: JetStream's table (puback.c). */
static void f_verdict(const void *d, const ob_ack *a, const ob_row *row, ob_verdict *v) {
    (void)d;
    ob_js_verdict(a, row, fp.max_bytes, v);
}
static const ob_broker_ops fake_broker = {.ready = f_ready,
                                          .epoch = f_epoch,
                                          .last_answer = f_last_answer,
                                          .window_ms = f_window,
                                          .publish = f_publish,
                                          .verdict = f_verdict,
                                          .unavailable = f_unavailable,
                                          .suspect = f_suspect,
                                          .settled = f_settled,
                                          .refused = f_refused};
static void f_closed(void *d, ob_worker *w) {
    (void)d;
    (void)w;
    fp.closed++;
}
static void f_table_empty(void *d, ob_worker *w, const char *later, const char *next_at) {
    (void)d;
    (void)w;
    (void)later;
    (void)next_at;
    fp.table_empty++;
}

/* The rows' verdicts, as the built-in classifier gives them for the cases
 * used here. */
static outbox_verdict classify(const outbox_failure *f, void *data) {
    (void)data;
    return f->kind == OUTBOX_FAIL_BAD_SUBJECT ? OUTBOX_DEAD : OUTBOX_RETRY;
}

static uv_loop_t loop;
static ob_flow flow;
static outbox_stats stats;
static ob_reader_env env;
static ob_log quiet = {NULL, NULL, OUTBOX_LOG_ERROR};

/* A worker made, not started. */
static ob_worker *new_worker(void) {
    memset(&fp, 0, sizeof(fp));
    memset(&stats, 0, sizeof(stats));
    fp.ready = 1;
    fp.fail_slot = -1;
    memset(&env, 0, sizeof(env));
    env.loop = &loop;
    env.log = &quiet;
    env.batch.qtable = "`outbox`";
    env.batch.processing = OUTBOX_KEEP_PROCESSED;
    env.batch.max_attempts = 5;
    env.batch.backoff.base_ms = 1000;
    env.batch.backoff.max_ms = 60000;
    env.batch.classify = classify;
    env.sql_fetch = "START TRANSACTION; SELECT";
    env.sql_fetch_len = strlen(env.sql_fetch);
    env.sql_probe = "SELECT 1";
    env.sql_probe_len = 8;
    env.sql_drain_probe = "COMMIT; SELECT EXISTS";
    env.sql_drain_probe_len = strlen(env.sql_drain_probe);
    env.batch_size = 10;
    env.poll_interval_ms = 20;
    env.ack_timeout_ms = 50;
    env.broker = (ob_broker){&fake_broker, NULL};
    env.owner = (ob_reader_owner){NULL, f_table_empty, NULL, f_closed, NULL, NULL, NULL};
    env.flow = &flow;
    env.stats = &stats;
    ob_flow_init(&flow, 100, 5, 20);
    return ob_worker_new(&env, 0);
}

static ob_worker *make_worker(void) {
    ob_worker *w = new_worker();
    ob_worker_start(w);
    CHECK_EQ(fake_db_pending(fake_db_last()), FAKE_CONNECT);
    fake_db_complete(fake_db_last(), 1, 0, NULL, 0);
    return w;
}

static void add_rows(ob_db *db, int n) {
    for (int i = 0; i < n; i++) {
        char id[16];
        memset(id, 0, sizeof(id));
        id[15] = (char)(i + 1);
        char *cols[8] = {id,   "order", "1", "created",
                         "{}", NULL,    "0", "2026-11-23 00:00:00.000000"};
        unsigned long lens[8] = {16, 5, 1, 7, 2, 0, 1, 26};
        fake_db_add_row(db, 1, cols, lens);
    }
}

static void expect_sql(const char *prefix) {
    ob_db *db = fake_db_last();
    CHECK(db != NULL);
    CHECK_EQ(fake_db_pending(db), FAKE_QUERY);
    if (strncmp(fake_db_sql(db), prefix, strlen(prefix)) != 0)
        CHECK_FAIL_("statement \"%.60s\" does not start with \"%s\"", fake_db_sql(db), prefix);
}

static void ack_all(ob_worker *w, int from) {
    for (int i = from; i < fp.published; i++) {
        ob_ack a = {.gen = fp.gen[i],
                    .slot = fp.slot[i],
                    .result = OB_ACKED_STORED,
                    .code = 0,
                    .err_code = 0,
                    .text = NULL,
                    .text_len = 0};
        ob_worker_ack(w, &a);
    }
}

static void close_worker(ob_worker *w) {
    ob_worker_stop(w, 1);
    uv_run(&loop, UV_RUN_DEFAULT);
    CHECK_EQ(fp.closed, 1);
    CHECK_STR(ob_worker_state_name(w), "closed");
    ob_worker_free(w);
}

static void fetch_publish_ack_commit(void) {
    ob_worker *w = make_worker();
    expect_sql("START TRANSACTION");
    add_rows(fake_db_last(), 3);
    fake_db_complete(fake_db_last(), 1, 0, NULL, 0);
    CHECK_EQ(fp.published, 3);
    CHECK_EQ(stats.in_flight, 3);
    CHECK_STR(ob_worker_state_name(w), "publishing");
    ack_all(w, 0);
    expect_sql("UPDATE `outbox` SET status = 1");
    CHECK_CONTAINS(fake_db_sql(fake_db_last()), "COMMIT");
    fake_db_complete(fake_db_last(), 1, 0, NULL, 0);
    CHECK_EQ(stats.acked, 3);
    CHECK_EQ(stats.batches, 1);
    CHECK_EQ(stats.in_flight, 0);
    /* The batch was not full: the table had nothing more due when it was
     * claimed, so the worker polls (fast, rows were just found) instead of
     * fetching again at once. */
    CHECK_STR(ob_worker_state_name(w), "poll-wait");
    close_worker(w);
}

static void a_failed_publish_is_written_with_its_reason(void) {
    ob_worker *w = make_worker();
    fp.fail_slot = 1;
    add_rows(fake_db_last(), 3);
    fake_db_complete(fake_db_last(), 1, 0, NULL, 0);
    CHECK_EQ(fp.published, 2);
    ack_all(w, 0);
    expect_sql("UPDATE `outbox` SET status = 1");
    CHECK_CONTAINS(fake_db_sql(fake_db_last()), "status = -1"); /* a bad subject is dead */
    fake_db_complete(fake_db_last(), 1, 0, NULL, 0);
    CHECK_EQ(stats.acked, 2);
    CHECK_EQ(stats.dead, 1);
    close_worker(w);
}

static void a_lost_connection_reconnects(void) {
    ob_worker *w = make_worker();
    fake_db_complete(fake_db_last(), 0, 2013, "Lost connection", 1);
    CHECK_STR(ob_worker_state_name(w), "connect-wait");
    CHECK_EQ(stats.db_reconnects, 1);
    while (fake_db_pending(fake_db_last()) != FAKE_CONNECT)
        uv_run(&loop, UV_RUN_ONCE);
    fake_db_complete(fake_db_last(), 1, 0, NULL, 0);
    expect_sql("START TRANSACTION");
    close_worker(w);
}

/* Rows in flight when the broker goes away go back untouched, and are
 * counted as left unanswered: the broker may have stored them, and the
 * duplicate window decides whether their next publish is dropped. */
static void a_broker_outage_gives_rows_back_without_attempts(void) {
    ob_worker *w = new_worker();
    ob_unmarked gone = {0, 0};
    env.unanswered = &gone;
    ob_worker_start(w);
    fake_db_complete(fake_db_last(), 1, 0, NULL, 0);
    add_rows(fake_db_last(), 2);
    fake_db_complete(fake_db_last(), 1, 0, NULL, 0);
    CHECK_EQ(fp.published, 2);
    fp.ready = 0;
    fp.epoch++;
    ob_worker_broker(w, 0);
    expect_sql("ROLLBACK");
    CHECK_EQ(stats.released, 2);
    CHECK_EQ(stats.in_flight, 0);
    CHECK_EQ(gone.rows, 2);
    fake_db_complete(fake_db_last(), 1, 0, NULL, 0);
    CHECK_STR(ob_worker_state_name(w), "broker-wait");
    fp.ready = 1;
    ob_worker_broker(w, 1);
    expect_sql("START TRANSACTION");
    close_worker(w);
}

static void a_silent_broker_costs_no_attempts(void) {
    ob_worker *w = make_worker();
    add_rows(fake_db_last(), 2);
    fake_db_complete(fake_db_last(), 1, 0, NULL, 0);
    /* No answer at all past the ack timeout: the rows go back untouched and
     * the link is told. */
    while (fake_db_pending(fake_db_last()) != FAKE_QUERY)
        uv_run(&loop, UV_RUN_ONCE);
    expect_sql("ROLLBACK");
    CHECK_EQ(fp.unavailable, 1);
    CHECK_EQ(stats.failed, 0);
    CHECK_EQ(stats.released, 2);
    close_worker(w);
}

/* Two rows published, the first acked, the second not past the ack timeout
 * while the broker answers others: the link is asked whether the stream
 * answers (a leader election would not), and the worker waits for its
 * verdict. */
static ob_worker *one_row_unanswered(void) {
    ob_worker *w = make_worker();
    add_rows(fake_db_last(), 2);
    fake_db_complete(fake_db_last(), 1, 0, NULL, 0);
    ob_ack a = {.gen = fp.gen[0],
                .slot = fp.slot[0],
                .result = OB_ACKED_STORED,
                .code = 0,
                .err_code = 0,
                .text = NULL,
                .text_len = 0};
    ob_worker_ack(w, &a);
    fp.last_answer = uv_now(&loop) + 1;
    while (fp.suspect == 0)
        uv_run(&loop, UV_RUN_ONCE);
    CHECK_STR(ob_worker_state_name(w), "publishing");
    CHECK_EQ(fake_db_pending(fake_db_last()), FAKE_NONE);
    fp.checking = 0;
    return w;
}

static void an_unanswered_row_of_a_live_broker_fails(void) {
    ob_worker *w = one_row_unanswered();
    ob_worker_broker(w, 1); /* it does: the row's fault */
    expect_sql("UPDATE `outbox` SET status = 1");
    CHECK_CONTAINS(fake_db_sql(fake_db_last()), "attempt_count = attempt_count + 1");
    CHECK_EQ(fp.unavailable, 0);
    fake_db_complete(fake_db_last(), 1, 0, NULL, 0);
    CHECK_EQ(stats.failed, 1);
    close_worker(w);
}

/* No ack while the broker answers others, and the stream does not answer
 * the link's question either (a stream-leader election): no attempt. */
static void an_unanswered_row_during_an_election_costs_nothing(void) {
    ob_worker *w = one_row_unanswered();
    ob_unmarked gone = {0, 0};
    env.unanswered = &gone;
    fp.ready = 0; /* the stream did not answer: the link pauses */
    fp.epoch++;
    ob_worker_broker(w, 0);
    CHECK_EQ(gone.rows, 1); /* it may be stored: counted for the duplicate window */
    expect_sql("UPDATE `outbox` SET status = 1"); /* the acked row only */
    if (strstr(fake_db_sql(fake_db_last()), "attempt_count") != NULL)
        CHECK_FAIL_("an election counted an attempt: %s", fake_db_sql(fake_db_last()));
    fake_db_complete(fake_db_last(), 1, 0, NULL, 0);
    CHECK_EQ(stats.failed, 0);
    CHECK_EQ(stats.released, 1);
    CHECK_EQ(stats.in_flight, 0);
    close_worker(w);
}

static int slept;
static void on_slept(uv_timer_t *t) {
    (void)t;
    slept = 1;
}

/* Runs the loop for `ms` (at least). */
static void run_for(uint64_t ms) {
    uv_timer_t t;
    uv_timer_init(&loop, &t);
    slept = 0;
    uv_timer_start(&t, on_slept, ms, 0);
    while (!slept)
        uv_run(&loop, UV_RUN_ONCE);
    uv_close((uv_handle_t *)&t, NULL);
    uv_run(&loop, UV_RUN_NOWAIT);
}

/* The deadline armed for the first publish fires after it was acked, while
 * the second (sent later, when the first's ack freed the room) is still
 * within its ack timeout: the broker's last answer came a little before the
 * second left, yet nothing expired, so it is not declared unavailable; it is
 * when the second's own deadline passes unanswered. */
static void an_early_deadline_with_nothing_expired_declares_nothing(void) {
    ob_worker *w = new_worker();
    env.ack_timeout_ms = 200;
    ob_flow_init(&flow, 1, 5, 20); /* room for one publish at a time */
    ob_worker_start(w);
    fake_db_complete(fake_db_last(), 1, 0, NULL, 0);
    add_rows(fake_db_last(), 2);
    fake_db_complete(fake_db_last(), 1, 0, NULL, 0);
    CHECK_EQ(fp.published, 1);
    uint64_t t0 = uv_now(&loop);
    run_for(150);
    fp.last_answer = uv_now(&loop) - 1; /* the broker's answer, just before the ack came */
    ob_ack a = {.gen = fp.gen[0], .slot = fp.slot[0], .result = OB_ACKED_STORED};
    ob_worker_ack(w, &a); /* its room goes to the second */
    while (fp.published < 2)
        uv_run(&loop, UV_RUN_ONCE);
    uint64_t t1 = uv_now(&loop);
    CHECK(t1 > fp.last_answer);
    run_for(t0 + 250 > t1 ? t0 + 250 - t1 : 1); /* the first's deadline passes */
    if (uv_now(&loop) < t1 + 200) {             /* unless the machine stalled past the second's */
        CHECK_EQ(fp.unavailable, 0);
        CHECK_STR(ob_worker_state_name(w), "publishing");
        CHECK_EQ(fake_db_pending(fake_db_last()), FAKE_NONE);
    }
    while (fake_db_pending(fake_db_last()) != FAKE_QUERY)
        uv_run(&loop, UV_RUN_ONCE);
    CHECK(uv_now(&loop) >= t1 + 200);
    CHECK_EQ(fp.unavailable, 1);                  /* silent since the second left */
    expect_sql("UPDATE `outbox` SET status = 1"); /* the acked row; the other goes back */
    fake_db_complete(fake_db_last(), 1, 0, NULL, 0);
    CHECK_EQ(stats.failed, 0);
    CHECK_EQ(stats.released, 1);
    close_worker(w);
}

static void a_graceful_stop_ends_the_batch_then_closes(void) {
    ob_worker *w = make_worker();
    ob_worker_stop(w, 0);
    add_rows(fake_db_last(), 2);
    fake_db_complete(fake_db_last(), 1, 0, NULL, 0);
    CHECK_EQ(fp.published, 0); /* nothing new leaves once stopping */
    expect_sql("ROLLBACK");
    fake_db_complete(fake_db_last(), 1, 0, NULL, 0);
    uv_run(&loop, UV_RUN_DEFAULT);
    CHECK_EQ(fp.closed, 1);
    ob_worker_free(w);
}

/* The relay reaches its readers through reader.h's table only: the
 * worker's table runs the worker's batch cycle, from the start to the free. */
static void the_reader_table_drives_the_worker(void) {
    ob_reader rd = {&ob_worker_reader_ops, new_worker()};
    rd.ops->start(rd.self);
    CHECK_EQ(fake_db_pending(fake_db_last()), FAKE_CONNECT);
    fake_db_complete(fake_db_last(), 1, 0, NULL, 0);
    expect_sql("START TRANSACTION");
    CHECK_EQ(rd.ops->busy(rd.self), 1);
    add_rows(fake_db_last(), 2);
    fake_db_complete(fake_db_last(), 1, 0, NULL, 0);
    CHECK_EQ(fp.published, 2);
    rd.ops->broker(rd.self, 1);
    for (int i = 0; i < fp.published; i++) {
        ob_ack a = {.gen = fp.gen[i], .slot = fp.slot[i], .result = OB_ACKED_STORED};
        rd.ops->ack(rd.self, &a);
    }
    expect_sql("UPDATE `outbox` SET status = 1");
    fake_db_complete(fake_db_last(), 1, 0, NULL, 0);
    CHECK_EQ(stats.acked, 2);
    CHECK_EQ(rd.ops->busy(rd.self), 0);
    CHECK(rd.ops->refusal(rd.self) == NULL);
    rd.ops->halt(rd.self);
    CHECK_STR(ob_worker_state_name(rd.self), "halted");
    rd.ops->stop(rd.self, 0);
    uv_run(&loop, UV_RUN_DEFAULT);
    CHECK_EQ(fp.closed, 1);
    rd.ops->free(rd.self);
}

static void a_deadlock_retries_at_once(void) {
    ob_worker *w = make_worker();
    fake_db_complete(fake_db_last(), 0, ER_LOCK_DEADLOCK, "Deadlock found", 0);
    expect_sql("ROLLBACK");
    fake_db_complete(fake_db_last(), 1, 0, NULL, 0);
    expect_sql("START TRANSACTION");
    close_worker(w);
}

static int conflict_warnings;

static void count_conflict_warnings(outbox_log_level level, const char *msg, void *data) {
    (void)data;
    if (level == OUTBOX_LOG_WARN && strstr(msg, "transaction conflict"))
        conflict_warnings++;
}

/* A run of conflicts (ordered workers waiting on each other's locks,
 * certification on Galera) is said once, not once per batch retried. */
static void a_run_of_conflicts_is_said_once(void) {
    ob_worker *w = make_worker(); /* (its setup makes the log quiet) */
    ob_log counting = {count_conflict_warnings, NULL, OUTBOX_LOG_WARN};
    env.log = &counting;
    conflict_warnings = 0;
    for (int i = 0; i < 3; i++) {
        fake_db_complete(fake_db_last(), 0, i % 2 ? ER_LOCK_WAIT_TIMEOUT : ER_LOCK_DEADLOCK,
                         "Deadlock found", 0);
        expect_sql("ROLLBACK");
        fake_db_complete(fake_db_last(), 1, 0, NULL, 0);
        expect_sql("START TRANSACTION");
    }
    CHECK_EQ(conflict_warnings, 1);
    close_worker(w);
    env.log = &quiet;
}

static int dead_warnings;

static void count_dead_warnings(outbox_log_level level, const char *msg, void *data) {
    (void)data;
    if (level == OUTBOX_LOG_WARN && strstr(msg, "marked dead"))
        dead_warnings++;
}

/* Poison rows that die one per batch are said once a minute with a count,
 * not one line each. */
static void rows_marked_dead_are_said_once_a_minute(void) {
    ob_worker *w = make_worker();
    ob_log counting = {count_dead_warnings, NULL, OUTBOX_LOG_WARN};
    env.log = &counting;
    dead_warnings = 0;
    fp.fail_slot = 0;
    for (int i = 0; i < 3; i++) {
        while (fake_db_pending(fake_db_last()) != FAKE_QUERY) /* the next poll */
            uv_run(&loop, UV_RUN_ONCE);
        expect_sql("START TRANSACTION");
        int from = fp.published;
        add_rows(fake_db_last(), 2);
        fake_db_complete(fake_db_last(), 1, 0, NULL, 0);
        ack_all(w, from);
        expect_sql("UPDATE `outbox` SET status = 1");
        CHECK_CONTAINS(fake_db_sql(fake_db_last()), "status = -1");
        fake_db_complete(fake_db_last(), 1, 0, NULL, 0);
    }
    CHECK_EQ(stats.dead, 3);
    CHECK_EQ(dead_warnings, 1);
    close_worker(w);
    env.log = &quiet;
}

static void a_halt_parks_the_worker_until_the_stop(void) {
    ob_worker *w = make_worker();
    ob_worker_halt(w);
    fake_db_complete(fake_db_last(), 1, 0, NULL, 0); /* an empty fetch */
    expect_sql("COMMIT");
    fake_db_complete(fake_db_last(), 1, 0, NULL, 0);
    CHECK_STR(ob_worker_state_name(w), "halted");
    ob_worker_stop(w, 0);
    uv_run(&loop, UV_RUN_DEFAULT);
    CHECK_EQ(fp.closed, 1);
    ob_worker_free(w);
}

static void an_empty_fetch_makes_the_worker_the_scout(void) {
    ob_worker *w = make_worker();
    fake_db_complete(fake_db_last(), 1, 0, NULL, 0);
    expect_sql("COMMIT");
    fake_db_complete(fake_db_last(), 1, 0, NULL, 0);
    CHECK_STR(ob_worker_state_name(w), "poll-wait");
    while (fake_db_pending(fake_db_last()) != FAKE_QUERY)
        uv_run(&loop, UV_RUN_ONCE);
    expect_sql("SELECT 1");
    char *cols[8] = {"1", NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    unsigned long lens[8] = {1, 0, 0, 0, 0, 0, 0, 0};
    fake_db_add_row(fake_db_last(), 0, cols, lens);
    fake_db_complete(fake_db_last(), 1, 0, NULL, 0);
    expect_sql("START TRANSACTION");
    close_worker(w);
}

static void a_row_the_database_refuses_is_isolated(void) {
    ob_worker *w = make_worker();
    add_rows(fake_db_last(), 3);
    fake_db_complete(fake_db_last(), 1, 0, NULL, 0);
    ack_all(w, 0);
    expect_sql("UPDATE `outbox` SET status = 1");
    /* The batch's update fails on one row's CHECK constraint. */
    fake_db_complete(fake_db_last(), 0, 4025, "CONSTRAINT `payload` failed", 0);
    CHECK_STR(ob_worker_state_name(w), "isolating");
    expect_sql("UPDATE `outbox` SET status = 1"); /* row 1 alone */
    fake_db_complete(fake_db_last(), 1, 0, NULL, 0);
    fake_db_complete(fake_db_last(), 0, 4025, "CONSTRAINT `payload` failed", 0); /* row 2 */
    expect_sql("SET STATEMENT check_constraint_checks = 0 FOR UPDATE");
    CHECK_CONTAINS(fake_db_sql(fake_db_last()), "status = -1");
    fake_db_complete(fake_db_last(), 1, 0, NULL, 0);
    expect_sql("UPDATE `outbox` SET status = 1"); /* row 3 */
    fake_db_complete(fake_db_last(), 1, 0, NULL, 0);
    expect_sql("COMMIT");
    CHECK_STR(ob_worker_state_name(w), "iso-committing");
    fake_db_complete(fake_db_last(), 1, 0, NULL, 0);
    CHECK_EQ(stats.acked, 2);
    CHECK_EQ(stats.dead, 1);
    CHECK_STR(ob_worker_state_name(w), "poll-wait");
    close_worker(w);
}

/* --max-attempts 1: a batch cut short (its deadline) while the link's check
 * after "no responders" is under way gives the row back untouched, not dead;
 * once the check says the stream answers, the next "no responders" is
 * charged, to dead. */
static void no_responders_at_the_last_attempt_waits_for_the_check(void) {
    ob_worker *w = make_worker();
    env.batch.max_attempts = 1;
    add_rows(fake_db_last(), 2);
    fake_db_complete(fake_db_last(), 1, 0, NULL, 0);
    ob_ack nr = {.gen = fp.gen[0], .slot = fp.slot[0], .result = OB_ACKED_NO_RESPONDERS};
    ob_ack ok = {.gen = fp.gen[1], .slot = fp.slot[1], .result = OB_ACKED_STORED};
    ob_worker_ack(w, &nr);
    ob_worker_ack(w, &ok);
    CHECK_EQ(fp.suspect, 1);
    ob_worker_deadline(w); /* the check has not answered */
    expect_sql("UPDATE `outbox` SET status = 1");
    if (strstr(fake_db_sql(fake_db_last()), "attempt_count") != NULL)
        CHECK_FAIL_("an unsettled check counted an attempt: %s", fake_db_sql(fake_db_last()));
    fake_db_complete(fake_db_last(), 1, 0, NULL, 0);
    CHECK_EQ(stats.dead, 0);
    CHECK_EQ(stats.released, 1);
    close_worker(w);

    w = make_worker();
    env.batch.max_attempts = 1;
    add_rows(fake_db_last(), 1);
    fake_db_complete(fake_db_last(), 1, 0, NULL, 0);
    nr.gen = fp.gen[0];
    ob_worker_ack(w, &nr);
    fp.checking = 0; /* the stream answers: the row's fault */
    ob_worker_broker(w, 1);
    expect_sql("UPDATE `outbox` SET");
    CHECK_CONTAINS(fake_db_sql(fake_db_last()), "attempt_count = attempt_count + 1");
    fake_db_complete(fake_db_last(), 1, 0, NULL, 0);
    CHECK_EQ(stats.dead, 1);
    close_worker(w);
    env.batch.max_attempts = 5;
}

static void no_responders_waits_for_the_links_verdict(void) {
    /* The stream answers: the row's subject has no stream; it is failed
     * with an attempt, and the other row is committed. */
    ob_worker *w = make_worker();
    add_rows(fake_db_last(), 2);
    fake_db_complete(fake_db_last(), 1, 0, NULL, 0);
    ob_ack nr = {.gen = fp.gen[0],
                 .slot = fp.slot[0],
                 .result = OB_ACKED_NO_RESPONDERS,
                 .code = 0,
                 .err_code = 0,
                 .text = NULL,
                 .text_len = 0};
    ob_ack ok = {.gen = fp.gen[1],
                 .slot = fp.slot[1],
                 .result = OB_ACKED_STORED,
                 .code = 0,
                 .err_code = 0,
                 .text = NULL,
                 .text_len = 0};
    ob_worker_ack(w, &nr);
    ob_worker_ack(w, &ok);
    CHECK_EQ(fp.suspect, 1);
    CHECK_STR(ob_worker_state_name(w), "publishing"); /* waiting for the verdict */
    fp.checking = 0;
    ob_worker_broker(w, 1);
    expect_sql("UPDATE `outbox` SET status = 1");
    CHECK_CONTAINS(fake_db_sql(fake_db_last()), "attempt_count = attempt_count + 1");
    fake_db_complete(fake_db_last(), 1, 0, NULL, 0);
    CHECK_EQ(stats.failed, 1);
    close_worker(w);

    /* JetStream does not answer: an outage, the rows go back untouched. */
    w = make_worker();
    add_rows(fake_db_last(), 2);
    fake_db_complete(fake_db_last(), 1, 0, NULL, 0);
    nr.gen = ok.gen = fp.gen[0];
    ob_worker_ack(w, &nr);
    ob_worker_ack(w, &ok);
    fp.checking = 0;
    fp.ready = 0;
    fp.epoch++;
    ob_worker_broker(w, 0);
    expect_sql("UPDATE `outbox` SET status = 1"); /* the stored row is still committed */
    if (strstr(fake_db_sql(fake_db_last()), "attempt_count") != NULL)
        CHECK_FAIL_("an outage counted an attempt: %s", fake_db_sql(fake_db_last()));
    fake_db_complete(fake_db_last(), 1, 0, NULL, 0);
    CHECK_EQ(stats.failed, 0);
    CHECK_EQ(stats.released, 1);
    close_worker(w);
}

static void a_full_stream_costs_no_attempts(void) {
    ob_worker *w = make_worker();
    add_rows(fake_db_last(), 1);
    fake_db_complete(fake_db_last(), 1, 0, NULL, 0);
    static const char full[] = "maximum messages exceeded";
    ob_ack a = {.gen = fp.gen[0],
                .slot = fp.slot[0],
                .result = OB_ACKED_ERROR,
                .code = 503,
                .err_code = 10077,
                .text = full,
                .text_len = sizeof(full) - 1};
    ob_worker_ack(w, &a);
    CHECK_EQ(fp.full, 1);
    expect_sql("ROLLBACK");
    CHECK_EQ(stats.released, 1);
    close_worker(w);
}

/* A payload larger than the stream's max_bytes never fits: the row's fault. */
static void a_payload_larger_than_the_stream_is_the_rows_fault(void) {
    ob_worker *w = make_worker();
    fp.max_bytes = 1;
    add_rows(fake_db_last(), 1);
    fake_db_complete(fake_db_last(), 1, 0, NULL, 0);
    static const char full[] = "maximum bytes exceeded";
    ob_ack a = {.gen = fp.gen[0],
                .slot = fp.slot[0],
                .result = OB_ACKED_ERROR,
                .code = 503,
                .err_code = 10077,
                .text = full,
                .text_len = sizeof(full) - 1};
    ob_worker_ack(w, &a);
    CHECK_EQ(fp.full, 0);
    CHECK_EQ(fp.suspect, 0);
    expect_sql("UPDATE `outbox` SET");
    CHECK_CONTAINS(fake_db_sql(fake_db_last()), "attempt_count = attempt_count + 1");
    close_worker(w);
}

/* Refusals every row would meet (resources, limits, no leader): released
 * without an attempt, the link told why, nothing left in flight. */
static void broker_refusals_cost_no_attempts(void) {
    static const struct {
        int code, err_code;
        const char *text, *why;
    } cases[] = {
        {503, 10023, "insufficient resources", "insufficient resources"},
        {400, 10002, "resource limits exceeded for account", "resource limits"},
        {500, 10028, "insufficient memory resources available", "memory"},
        {500, 10047, "insufficient storage resources available", "storage"},
        {503, 10077, "maximum bytes exceeded", "max_bytes"},
        {500, 10009, "JetStream cluster can not handle request", "no leader"},
        {503, 0, "JetStream stream 'A > S' has high message lag", "503"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        ob_worker *w = make_worker();
        add_rows(fake_db_last(), 2);
        fake_db_complete(fake_db_last(), 1, 0, NULL, 0);
        ob_ack a = {.gen = fp.gen[0],
                    .slot = fp.slot[0],
                    .result = OB_ACKED_ERROR,
                    .code = cases[i].code,
                    .err_code = cases[i].err_code,
                    .text = cases[i].text,
                    .text_len = strlen(cases[i].text)};
        ob_worker_ack(w, &a);
        CHECK_EQ(fp.full, 1);
        CHECK_CONTAINS(fp.refused_why, cases[i].why);
        CHECK_EQ(fp.suspect, 0);
        fp.ready = 0; /* the link pauses */
        fp.epoch++;
        ob_worker_broker(w, 0);
        expect_sql("ROLLBACK");
        CHECK_EQ(stats.released, 2);
        CHECK_EQ(stats.failed, 0);
        CHECK_EQ(stats.in_flight, 0);
        close_worker(w);
    }
}

/* A row whose headers, not its payload, make it larger than the stream's
 * max_bytes never fits either. */
static void headers_larger_than_the_stream_are_the_rows_fault(void) {
    ob_worker *w = make_worker();
    fp.max_bytes = 100;
    char id[16] = {0};
    id[15] = 1;
    char headers[200];
    memset(headers, 'h', sizeof(headers));
    char *cols[8] = {id, "order", "1", "created", "{}", headers, "0", "2026-11-23 00:00:00"};
    unsigned long lens[8] = {16, 5, 1, 7, 2, sizeof(headers), 1, 19};
    fake_db_add_row(fake_db_last(), 1, cols, lens);
    fake_db_complete(fake_db_last(), 1, 0, NULL, 0);
    static const char full[] = "maximum bytes exceeded";
    ob_ack a = {.gen = fp.gen[0],
                .slot = fp.slot[0],
                .result = OB_ACKED_ERROR,
                .code = 503,
                .err_code = 10077,
                .text = full,
                .text_len = sizeof(full) - 1};
    ob_worker_ack(w, &a);
    CHECK_EQ(fp.full, 0);
    expect_sql("UPDATE `outbox` SET attempt_count = attempt_count + 1");
    fake_db_complete(fake_db_last(), 1, 0, NULL, 0);
    CHECK_EQ(stats.failed, 1);
    close_worker(w);
}

/* A privilege taken away: every row would meet it. The worker claims
 * nothing and publishes nothing until a statement that writes nothing
 * passes again. */
static void a_revoked_privilege_stops_claiming_until_granted(void) {
    ob_worker *w = make_worker();
    add_rows(fake_db_last(), 3);
    fake_db_complete(fake_db_last(), 1, 0, NULL, 0);
    ack_all(w, 0);
    expect_sql("UPDATE `outbox` SET status = 1");
    fake_db_complete(fake_db_last(), 0, ER_TABLEACCESS_DENIED_ERROR,
                     "UPDATE command denied to user 'relay'@'localhost' for table `outbox`", 0);
    expect_sql("ROLLBACK"); /* not written row by row: no row is at fault */
    CHECK(ob_worker_refusal(w) != NULL);
    CHECK_CONTAINS(ob_worker_refusal(w), "1142");
    fake_db_complete(fake_db_last(), 1, 0, NULL, 0);
    CHECK_STR(ob_worker_state_name(w), "refused-wait");
    int published = fp.published;
    for (int round = 0; round < 3; round++) {
        while (fake_db_pending(fake_db_last()) != FAKE_QUERY)
            uv_run(&loop, UV_RUN_ONCE);
        expect_sql("UPDATE `outbox` SET status = status");
        CHECK_CONTAINS(fake_db_sql(fake_db_last()), "WHERE 1 = 0");
        CHECK_STR(ob_worker_state_name(w), "grant-probing");
        fake_db_complete(fake_db_last(), 0, ER_TABLEACCESS_DENIED_ERROR, "UPDATE command denied",
                         0);
        expect_sql("ROLLBACK");
        fake_db_complete(fake_db_last(), 1, 0, NULL, 0);
        CHECK_STR(ob_worker_state_name(w), "refused-wait");
    }
    CHECK_EQ(fp.published, published); /* nothing published again meanwhile */
    /* The errors every row would meet, and some that are one row's. */
    static const unsigned alike[] = {ER_TABLEACCESS_DENIED_ERROR,  ER_COLUMNACCESS_DENIED_ERROR,
                                     ER_OPTION_PREVENTS_STATEMENT, ER_READ_ONLY_MODE,
                                     ER_RECORD_FILE_FULL,          ER_NO_SUCH_TABLE};
    for (size_t i = 0; i < sizeof(alike) / sizeof(alike[0]); i++)
        CHECK(ob_db_errno_is_refusal(alike[i]));
    CHECK(!ob_db_errno_is_refusal(4025)); /* a CHECK constraint the row fails */
    CHECK(!ob_db_errno_is_refusal(ER_LOCK_DEADLOCK));
    CHECK(!ob_db_errno_is_refusal(ER_DUP_ENTRY));
    CHECK_EQ(stats.failed, 0);
    CHECK_EQ(stats.dead, 0);
    while (fake_db_pending(fake_db_last()) != FAKE_QUERY)
        uv_run(&loop, UV_RUN_ONCE);
    fake_db_complete(fake_db_last(), 1, 0, NULL, 0); /* granted again */
    CHECK(ob_worker_refusal(w) == NULL);
    expect_sql("START TRANSACTION");
    close_worker(w);
}

/* The in-flight gauge counts what left and came back, across every path:
 * a publish refused before it left, an error, an expiry, an outage. */
static void the_in_flight_gauge_stays_in_range(void) {
    ob_worker *w = make_worker();
    fp.fail_slot = 0; /* refused before it leaves (a bad subject, bad headers) */
    add_rows(fake_db_last(), 4);
    fake_db_complete(fake_db_last(), 1, 0, NULL, 0);
    CHECK_EQ(stats.in_flight, 3);
    static const char big[] = "message size exceeds maximum allowed";
    ob_ack e = {.gen = fp.gen[0],
                .slot = fp.slot[0],
                .result = OB_ACKED_ERROR,
                .code = 400,
                .err_code = 10054,
                .text = big,
                .text_len = sizeof(big) - 1};
    ob_worker_ack(w, &e);
    CHECK_EQ(stats.in_flight, 2);
    ob_worker_ack(w, &e); /* the same answer again changes nothing */
    CHECK_EQ(stats.in_flight, 2);
    fp.ready = 0;
    fp.epoch++;
    ob_worker_broker(w, 0);
    CHECK_EQ(stats.in_flight, 0);
    expect_sql("UPDATE `outbox` SET attempt_count");
    fake_db_complete(fake_db_last(), 1, 0, NULL, 0);
    CHECK_EQ(stats.in_flight, 0);
    close_worker(w);
    CHECK_EQ(stats.in_flight, 0);

    w = make_worker();
    fp.fail_slot = 1;
    add_rows(fake_db_last(), 3);
    fake_db_complete(fake_db_last(), 1, 0, NULL, 0);
    CHECK_EQ(stats.in_flight, 2);
    while (fake_db_pending(fake_db_last()) != FAKE_QUERY) /* expiry of a silent broker */
        uv_run(&loop, UV_RUN_ONCE);
    CHECK_EQ(stats.in_flight, 0);
    close_worker(w);
    CHECK_EQ(stats.in_flight, 0);
}

/* A statement that cannot be sent drops the connection: the gauge of
 * connections up follows. */
static void a_send_failure_counts_the_connection_down(void) {
    ob_worker *w = make_worker();
    CHECK_EQ(stats.db_connected, 1);
    fake_db_complete(fake_db_last(), 1, 0, NULL, 0); /* an empty fetch */
    fake_db_fail_next_query();
    fake_db_complete(fake_db_last(), 1, 0, NULL, 0); /* COMMIT; then the probe cannot be sent */
    while (strcmp(ob_worker_state_name(w), "connect-wait") != 0)
        uv_run(&loop, UV_RUN_ONCE);
    CHECK_EQ(stats.db_connected, 0);
    while (fake_db_pending(fake_db_last()) != FAKE_CONNECT)
        uv_run(&loop, UV_RUN_ONCE);
    fake_db_complete(fake_db_last(), 1, 0, NULL, 0);
    CHECK_EQ(stats.db_connected, 1);
    close_worker(w);
    CHECK_EQ(stats.db_connected, 0);
}

/* The server closes the connection of a worker waiting between polls (the
 * idle watch tells it): the gauge drops at once, not at the next statement,
 * and the worker connects again. */
static void an_idle_connection_lost_is_made_again(void) {
    ob_worker *w = make_worker();
    fake_db_complete(fake_db_last(), 1, 0, NULL, 0); /* an empty fetch */
    fake_db_complete(fake_db_last(), 1, 0, NULL, 0); /* its COMMIT */
    CHECK_STR(ob_worker_state_name(w), "poll-wait");
    CHECK_EQ(stats.db_connected, 1);
    fake_db_lose_idle(fake_db_last(), "the server closed the connection while it was idle");
    CHECK_STR(ob_worker_state_name(w), "connect-wait");
    CHECK_EQ(stats.db_connected, 0);
    CHECK_EQ(stats.db_reconnects, 1);
    while (fake_db_pending(fake_db_last()) != FAKE_CONNECT)
        uv_run(&loop, UV_RUN_ONCE);
    fake_db_complete(fake_db_last(), 1, 0, NULL, 0);
    CHECK_EQ(stats.db_connected, 1);
    expect_sql("START TRANSACTION");
    close_worker(w);
}

/* Lost while the batch is being published: the gauge drops at once; the
 * batch's outcome cannot be written, the rows go back with the server's
 * rollback, and the worker connects again (the loss counted once). */
static void a_connection_lost_while_publishing_is_counted_once(void) {
    ob_worker *w = make_worker();
    add_rows(fake_db_last(), 3);
    fake_db_complete(fake_db_last(), 1, 0, NULL, 0);
    CHECK_STR(ob_worker_state_name(w), "publishing");
    fake_db_lose_idle(fake_db_last(), "the server closed the connection while it was idle");
    CHECK_STR(ob_worker_state_name(w), "publishing");
    CHECK_EQ(stats.db_connected, 0);
    ack_all(w, 0);
    CHECK_STR(ob_worker_state_name(w), "connect-wait");
    CHECK_EQ(stats.db_reconnects, 1);
    CHECK_EQ(stats.acked, 0);
    close_worker(w);
}

static int lease_valid;
static int f_may_publish(void *d) {
    (void)d;
    return lease_valid;
}

/* The owner's lease runs out in the middle of a batch (one publish in
 * flight at a time): nothing more leaves; the acked row is written, the
 * unsent ones go back untouched, without an attempt. */
static void an_expired_lease_publishes_nothing_more(void) {
    ob_worker *w = make_worker();
    env.owner.may_publish = f_may_publish;
    lease_valid = 1;
    ob_flow_init(&flow, 1, 5, 20);
    add_rows(fake_db_last(), 3);
    fake_db_complete(fake_db_last(), 1, 0, NULL, 0);
    CHECK_EQ(fp.published, 1);
    lease_valid = 0;
    ack_all(w, 0);
    CHECK_EQ(fp.published, 1);
    expect_sql("UPDATE `outbox` SET status = 1");
    fake_db_complete(fake_db_last(), 1, 0, NULL, 0);
    CHECK_EQ(stats.acked, 1);
    CHECK_EQ(stats.released, 2);
    CHECK_EQ(stats.failed, 0);
    CHECK_EQ(stats.in_flight, 0);
    close_worker(w);
    ob_flow_init(&flow, 100, 5, 20);
}

/* The owner may not publish yet (the plain mode before its first mode
 * check): the worker claims nothing, rather than claiming a batch and
 * giving it back again and again, and fetches once it may. */
static void no_claim_before_the_owner_may_publish(void) {
    ob_worker *w = new_worker();
    env.owner.may_publish = f_may_publish;
    lease_valid = 0;
    ob_worker_start(w);
    fake_db_complete(fake_db_last(), 1, 0, NULL, 0);
    CHECK_STR(ob_worker_state_name(w), "lease-wait");
    CHECK_EQ(fake_db_pending(fake_db_last()), FAKE_NONE);
    for (int i = 0; i < 3; i++) /* a few polls: still nothing claimed */
        uv_run(&loop, UV_RUN_ONCE);
    CHECK_STR(ob_worker_state_name(w), "lease-wait");
    CHECK_EQ(stats.released, 0);
    lease_valid = 1;
    while (fake_db_pending(fake_db_last()) != FAKE_QUERY)
        uv_run(&loop, UV_RUN_ONCE);
    expect_sql("START TRANSACTION");
    close_worker(w);
}

/* No memory for the connection at start: the worker tries again later
 * and closes cleanly meanwhile. */
static void no_memory_for_the_connection_is_retried(void) {
    memset(&fp, 0, sizeof(fp));
    fp.ready = 1;
    fake_db_fail_next_new();
    ob_worker *w = ob_worker_new(&env, 0);
    fake_db_fail_next_new(); /* the first try in connect_db fails too */
    ob_worker_start(w);
    CHECK_STR(ob_worker_state_name(w), "connect-wait");
    while (fake_db_last() == NULL || fake_db_pending(fake_db_last()) != FAKE_CONNECT)
        uv_run(&loop, UV_RUN_ONCE);
    fake_db_complete(fake_db_last(), 1, 0, NULL, 0);
    expect_sql("START TRANSACTION");
    close_worker(w);

    fake_db_fail_next_new();
    fake_db_fail_next_new();
    memset(&fp, 0, sizeof(fp));
    w = ob_worker_new(&env, 0);
    ob_worker_start(w);
    close_worker(w); /* closes without a connection */
}

static int connect_warnings;

static void count_connect_warnings(outbox_log_level level, const char *msg, void *data) {
    (void)data;
    if (level == OUTBOX_LOG_WARN && strstr(msg, "cannot connect to the database"))
        connect_warnings++;
}

static void fail_the_next_connect(unsigned err) {
    while (fake_db_last() == NULL || fake_db_pending(fake_db_last()) != FAKE_CONNECT)
        uv_run(&loop, UV_RUN_ONCE);
    fake_db_complete(fake_db_last(), 0, err, "Can't connect", 1);
}

/* A lasting outage is said once per error, not at every try (db_life.h);
 * after a fetch answered, it is said again. */
static void a_lasting_outage_is_said_once(void) {
    ob_worker *w = new_worker();
    ob_log counting = {count_connect_warnings, NULL, OUTBOX_LOG_WARN};
    env.log = &counting;
    connect_warnings = 0;
    ob_worker_start(w);
    fail_the_next_connect(2003);
    fail_the_next_connect(2003);
    CHECK_EQ(connect_warnings, 1);
    fail_the_next_connect(2002); /* another cause: said */
    CHECK_EQ(connect_warnings, 2);
    while (fake_db_pending(fake_db_last()) != FAKE_CONNECT)
        uv_run(&loop, UV_RUN_ONCE);
    fake_db_complete(fake_db_last(), 1, 0, NULL, 0);
    CHECK_EQ(stats.db_connected, 1);
    CHECK_EQ(stats.db_reconnects, 0); /* never up before: nothing was lost */
    expect_sql("START TRANSACTION");
    fake_db_complete(fake_db_last(), 1, 0, NULL, 0); /* the fetch answered, empty */
    fake_db_complete(fake_db_last(), 1, 0, NULL, 0); /* its COMMIT */
    CHECK_STR(ob_worker_state_name(w), "poll-wait");
    fake_db_lose_idle(fake_db_last(), "the server closed the connection");
    CHECK_EQ(stats.db_reconnects, 1);
    fail_the_next_connect(2002);
    CHECK_EQ(connect_warnings, 3);
    close_worker(w);
    env.log = &quiet;
}

static void a_ring_while_busy_is_kept_for_the_next_idle_worker(void) {
    ob_worker *w = make_worker();
    ob_flow_ring(&flow);                             /* nobody idle: the wake is kept */
    fake_db_complete(fake_db_last(), 1, 0, NULL, 0); /* an empty fetch */
    expect_sql("COMMIT");
    fake_db_complete(fake_db_last(), 1, 0, NULL, 0);
    expect_sql("START TRANSACTION"); /* fetches at once instead of polling */
    fake_db_complete(fake_db_last(), 1, 0, NULL, 0);
    fake_db_complete(fake_db_last(), 1, 0, NULL, 0);
    CHECK_STR(ob_worker_state_name(w), "poll-wait");
    ob_flow_ring(&flow); /* an idle scout is woken */
    expect_sql("START TRANSACTION");
    close_worker(w);
}

/* The scout stays on the idle list while it probes: a ring then must not be
 * lost when the probe read the table before the rung row was committed. */
static void a_ring_during_the_probe_makes_the_scout_fetch(void) {
    ob_worker *w = make_worker();
    fake_db_complete(fake_db_last(), 1, 0, NULL, 0); /* an empty fetch */
    fake_db_complete(fake_db_last(), 1, 0, NULL, 0); /* its COMMIT */
    CHECK_STR(ob_worker_state_name(w), "poll-wait");
    while (fake_db_pending(fake_db_last()) != FAKE_QUERY)
        uv_run(&loop, UV_RUN_ONCE);
    expect_sql("SELECT 1");
    ob_flow_ring(&flow);
    CHECK_STR(ob_worker_state_name(w), "probing");
    fake_db_complete(fake_db_last(), 1, 0, NULL, 0); /* the probe found nothing */
    expect_sql("START TRANSACTION");
    CHECK_STR(ob_worker_state_name(w), "fetching");
    close_worker(w);
}

int main(void) {
    uv_loop_init(&loop);
    fetch_publish_ack_commit();
    a_failed_publish_is_written_with_its_reason();
    a_lost_connection_reconnects();
    a_broker_outage_gives_rows_back_without_attempts();
    a_silent_broker_costs_no_attempts();
    an_unanswered_row_of_a_live_broker_fails();
    an_unanswered_row_during_an_election_costs_nothing();
    an_early_deadline_with_nothing_expired_declares_nothing();
    a_graceful_stop_ends_the_batch_then_closes();
    the_reader_table_drives_the_worker();
    a_deadlock_retries_at_once();
    rows_marked_dead_are_said_once_a_minute();
    a_run_of_conflicts_is_said_once();
    a_halt_parks_the_worker_until_the_stop();
    an_empty_fetch_makes_the_worker_the_scout();
    a_row_the_database_refuses_is_isolated();
    no_responders_waits_for_the_links_verdict();
    no_responders_at_the_last_attempt_waits_for_the_check();
    a_full_stream_costs_no_attempts();
    a_payload_larger_than_the_stream_is_the_rows_fault();
    a_ring_while_busy_is_kept_for_the_next_idle_worker();
    a_ring_during_the_probe_makes_the_scout_fetch();
    broker_refusals_cost_no_attempts();
    headers_larger_than_the_stream_are_the_rows_fault();
    a_revoked_privilege_stops_claiming_until_granted();
    the_in_flight_gauge_stays_in_range();
    a_send_failure_counts_the_connection_down();
    an_idle_connection_lost_is_made_again();
    an_expired_lease_publishes_nothing_more();
    no_claim_before_the_owner_may_publish();
    a_connection_lost_while_publishing_is_counted_once();
    no_memory_for_the_connection_is_retried();
    a_lasting_outage_is_said_once();
    CHECK_EQ(uv_loop_close(&loop), 0);
    printf("ok\n");
    return 0;
}
