/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The maintenance timers on a running relay's loop:
 *   - the pending sampler fills the stats (count and lag) and logs them;
 *   - the cleanup timer deletes old processed rows while the relay runs;
 *   - the partition timer keeps the lookahead of a partitioned table;
 *   - a maintenance handle that is connected but idle keeps no loop alive,
 *     and reconnects when the server dropped that idle connection;
 *   - the relay stops cleanly with its timers, leaving no handle behind.
 */
#include "check.h"
#include "integ.h"
#include "maint_run.h"

#define DAY 86400000ULL

static const char *STREAM = "IT_TIMERS";

typedef struct watch {
    outbox_relay *relay;
    MYSQL *c;
    const char *sql; /* must return `want` */
    long long want;
    int sampled; /* the relay samples pending rows: wait for a sample of 0 */
    volatile int done;
    volatile int drained;
    volatile int stopped;
} watch;

static void on_drained(outbox_relay *r, void *data) {
    (void)r;
    ((watch *)data)->drained = 1;
}

static void on_stopped(outbox_relay *r, void *data) {
    (void)r;
    ((watch *)data)->stopped = 1;
}

/* Every 50 ms: is the table where the test wants it, and has the sampler
 * seen the drained table? */
static void on_check(uv_timer_t *t) {
    watch *w = t->data;
    outbox_stats s;
    outbox_relay_stats(w->relay, &s);
    if (w->drained && (!w->sampled || s.pending == 0) && ti_int(w->c, "%s", w->sql) == w->want)
        w->done = 1;
}

static void run_relay(uv_loop_t *loop, const char *db, MYSQL *c, outbox_relay_options *o,
                      const char *sql, long long want, outbox_stats *out) {
    watch w;
    memset(&w, 0, sizeof(w));
    w.c = c;
    w.sql = sql;
    w.want = want;
    w.sampled = o->pending_sample_ms != 0;
    o->db_url = ti_db_url(db);
    o->nats_url = ti_env("OUTBOX_TEST_NATS_URL");
    o->stream = STREAM;
    o->subject_prefix = "ittimers";
    o->on_drained = on_drained;
    o->drained_data = &w;
    o->log = tm_log;
    o->log_data = (void *)db;
    char err[256];
    CHECK_EQ(outbox_relay_create(&w.relay, loop, o, err, sizeof(err)), OUTBOX_OK);
    uv_timer_t check;
    uv_timer_init(loop, &check);
    check.data = &w;
    uv_timer_start(&check, on_check, 50, 50);
    CHECK_EQ(outbox_relay_start(w.relay), OUTBOX_OK);
    CHECK_EQ(ti_run_until(loop, &w.done, 30000), 0);
    outbox_relay_stats(w.relay, out);
    uv_close((uv_handle_t *)&check, NULL);
    CHECK_EQ(outbox_relay_stop(w.relay, on_stopped, &w), OUTBOX_OK);
    CHECK_EQ(ti_run_until(loop, &w.stopped, 20000), 0);
    outbox_relay_destroy(w.relay);
}

static void sampler_and_cleanup(uv_loop_t *loop) {
    const char *db = "it_maint_timers";
    MYSQL *c = ti_db_fresh(db, NULL);
    uint64_t old = (uint64_t)ti_int(c, "SELECT UNIX_TIMESTAMP()") * 1000 - 10 * DAY;
    ti_exec(c,
            "INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload, status, "
            "created_at, processed_at) SELECT UNHEX(CONCAT(LPAD(HEX(%llu + seq), 12, '0'), "
            "'70008', LPAD(HEX(seq), 15, '0'))), 'old', seq, 'created', '{}', 1, "
            "FROM_UNIXTIME((%llu + seq) / 1000), FROM_UNIXTIME((%llu + seq) / 1000) FROM "
            "seq_1_to_200",
            (unsigned long long)old, (unsigned long long)old, (unsigned long long)old);
    ti_seed(c, "outbox", 100, 50, 128);

    outbox_relay_options o;
    outbox_relay_options_init(&o);
    o.pending_sample_ms = 50;
    o.cleanup_check_ms = 100;
    tm_logbuf[0] = '\0';
    outbox_stats s;
    run_relay(loop, db, c, &o, "SELECT COUNT(*) FROM outbox WHERE aggregate_type = 'old'", 0, &s);
    CHECK_EQ(s.acked, 100);
    CHECK_EQ(s.pending, 0);
    CHECK_EQ(s.oldest_pending_ms, 0);
    CHECK_INT(s.pending_sampled_at_ms, >, 0);
    /* The first sample is logged at info; it saw the 100 pending rows
     * unless the relay was faster. */
    CHECK_CONTAINS(tm_logbuf, "pending: ");
    CHECK_CONTAINS(tm_logbuf, "cleanup: deleted 200 processed and 0 dead row(s)");
    /* The rows the relay just processed are recent: kept. */
    CHECK_EQ(ti_int(c, "SELECT COUNT(*) FROM outbox WHERE status = 1"), 100);
    mysql_close(c);
}

static void partition_timer(uv_loop_t *loop) {
    const char *db = "it_maint_timers_part";
    outbox_schema_options so;
    outbox_schema_options_init(&so);
    so.partitioned = 1;
    so.lookahead = 1;
    MYSQL *c = ti_db_fresh(db, &so);
    ti_seed(c, "outbox", 10, 10, 64);
    outbox_relay_options o;
    outbox_relay_options_init(&o);
    o.partition_check_ms = 100;
    o.maint.partition_lookahead = 4;
    outbox_stats s;
    run_relay(loop, db, c, &o,
              "SELECT COUNT(*) FROM information_schema.PARTITIONS WHERE TABLE_SCHEMA = "
              "'it_maint_timers_part' AND TABLE_NAME = 'outbox'",
              6, &s);
    CHECK_EQ(s.acked, 10);
    CHECK_CONTAINS(tm_logbuf, "partitions: 3 created, 0 dropped, 0 kept");
    mysql_close(c);
}

static void idle_handle(uv_loop_t *loop) {
    outbox_maint_options o;
    tm_options(&o, "it_maint_timers");
    outbox_maint *m = tm_new(loop, &o);
    tm_result t = tm_run(loop, m, OUTBOX_MAINT_SAMPLE);
    CHECK_EQ(t.r.status, OUTBOX_OK);
    CHECK_EQ(t.r.pending, 0);
    /* Connected, idle: nothing keeps the loop running. */
    CHECK_EQ(uv_run(loop, UV_RUN_DEFAULT), 0);
    CHECK_EQ(uv_loop_alive(loop), 0);
    /* The server drops the idle connection (as wait_timeout would): the
     * next job reconnects and succeeds. */
    MYSQL *c = ti_db_connect("it_maint_timers");
    long long id = ti_int(c, "SELECT ID FROM information_schema.PROCESSLIST WHERE DB = "
                             "'it_maint_timers' AND ID <> CONNECTION_ID()");
    CHECK_INT(id, >, 0);
    ti_exec(c, "KILL %lld", id);
    t = tm_run(loop, m, OUTBOX_MAINT_SAMPLE);
    CHECK_EQ(t.r.status, OUTBOX_OK);
    CHECK_EQ(t.r.pending, 0);
    mysql_close(c);
    tm_close(loop, m);
}

int main(void) {
    ti_stream_delete(STREAM);
    uv_loop_t loop;
    uv_loop_init(&loop);
    sampler_and_cleanup(&loop);
    partition_timer(&loop);
    idle_handle(&loop);
    CHECK_EQ(uv_loop_close(&loop), 0);
    long long distinct = 0;
    CHECK_EQ(ti_stream_count(STREAM, &distinct), 110);
    CHECK_EQ(distinct, 110);
    puts("maint_timers: ok");
    return 0;
}
