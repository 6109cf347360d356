/* SPDX-License-Identifier: Apache-2.0 */
/* The cursor reader's test harness (see cursor_harness.h). */
#include "cursor_harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "puback.h"

/* --- the fake publisher -------------------------------------------------- */

fake_pub fp;

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
static uint64_t seq_of_id(const unsigned char *id) {
    uint64_t s = 0;
    for (int i = 8; i < 16; i++)
        s = s << 8 | id[i];
    return s;
}
static int f_publish(void *d, uint32_t worker, uint32_t gen, uint32_t slot, const ob_row *row,
                     ob_pub_fail *fail) {
    (void)d;
    CHECK_EQ(worker, 3); /* the reader's publisher number, cfg.index */
    uint64_t seq = seq_of_id(row->id);
    if (seq == fp.fail_seq) {
        fail->kind = OUTBOX_FAIL_BAD_SUBJECT;
        fail->code = 0;
        fail->len = (size_t)snprintf(fail->text, sizeof(fail->text), "bad subject");
        return -1;
    }
    CHECK(fp.published < MAXPUB);
    fp.gen[fp.published] = gen;
    fp.slot[fp.published] = slot;
    fp.seq[fp.published] = seq;
    fp.published++;
    return 0;
}
static void f_unavailable(void *d, const char *why) {
    (void)d;
    (void)why;
    fp.ready = 0;
    fp.epoch++;
}
static void f_suspect(void *d, const char *why) {
    (void)d;
    (void)why;
    fp.checking = 1;
}
static int f_settled(const void *d) {
    (void)d;
    return !fp.checking;
}
static void f_refused(void *d, const char *why) {
    (void)d;
    (void)why;
}
static uint64_t f_window(const void *d) {
    (void)d;
    return 120000;
}
/* The verdict the relay's broker gives: JetStream's table (puback.c). */
static void f_verdict(const void *d, const ob_ack *a, const ob_row *row, ob_verdict *v) {
    (void)d;
    ob_js_verdict(a, row, 0, v);
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

static outbox_verdict classify(const outbox_failure *f, void *data) {
    (void)f;
    (void)data;
    return OUTBOX_RETRY;
}

/* --- the fake owner ------------------------------------------------------ */

fake_owner own;

static int o_lease_valid(void *d) {
    (void)d;
    return own.lease_valid;
}
static unsigned long o_lease_session(void *d) {
    (void)d;
    return 0; /* no fencing lock: the load is two result sets */
}
static int o_drain_wanted(void *d) {
    (void)d;
    return own.drain_wanted;
}
static void o_drained(void *d) {
    (void)d;
    own.drained++;
}
static void o_fatal(void *d, const char *why) {
    (void)d;
    own.fatal++;
    snprintf(own.why, sizeof(own.why), "%s", why);
}
static void o_closed(void *d) {
    (void)d;
    own.closed++;
}

/* --- the reader under test ----------------------------------------------- */

uv_loop_t loop;
static ob_flow flow;
outbox_stats stats;
static ob_reader_env env;
void (*env_tweak)(ob_reader_env *e);
char logged[4096];

/* Keeps the reader's lines (info and above), the latest last. */
static void keep_line(outbox_log_level level, const char *msg, void *data) {
    (void)level;
    (void)data;
    size_t n = strlen(logged);
    snprintf(logged + n, sizeof(logged) - n, "%s\n", msg);
}
static ob_log quiet = {keep_line, NULL, OUTBOX_LOG_INFO};
ob_reader rd;
double srv = 1700000000.0;  /* the server's clock, moved by the test */
uint64_t counter = 1000000; /* the table's AUTO_INCREMENT, for the fit */
const char *lane_soon_past = "0";
uint64_t adv[64];      /* cursor values written, in order */
uint64_t adv_mask[64]; /* and the buckets each was written for */
int nadv;

const ob_reader *make_reader(void) {
    memset(&fp, 0, sizeof(fp));
    memset(&own, 0, sizeof(own));
    memset(&stats, 0, sizeof(stats));
    logged[0] = '\0';
    lane_soon_past = "0";
    fp.ready = 1;
    own.lease_valid = 1;
    nadv = 0;
    counter = 1000000;
    tab_reset();
    memset(&env, 0, sizeof(env));
    env.loop = &loop;
    env.log = &quiet;
    env.batch.qtable = "`outbox`";
    env.batch.processing = OUTBOX_KEEP_PROCESSED;
    env.batch.max_attempts = 5;
    env.batch.backoff.base_ms = 1000;
    env.batch.backoff.max_ms = 60000;
    env.batch.classify = classify;
    env.batch_size = 10;
    env.poll_interval_ms = 20;
    env.ack_timeout_ms = 60000;
    env.broker = (ob_broker){&fake_broker, NULL};
    env.flow = &flow;
    env.stats = &stats;
    ob_flow_init(&flow, 100, 5, 20);
    if (env_tweak)
        env_tweak(&env);
    env_tweak = NULL;
    static ob_cursor_config cc;
    cc = (ob_cursor_config){.env = &env,
                            .qtable = "`outbox`",
                            .ctable = "`outbox_cursor`",
                            .table = "outbox",
                            .lock_base = "lk",
                            .db_user = "relay",
                            .poll_min_ms = 1,
                            .horizon_ms = 4000,
                            .index = 3};
    ob_cursor_owner co = {
        o_lease_valid, o_lease_session, o_drain_wanted, o_drained, o_fatal, o_closed, NULL};
    ob_cursor *c = ob_cursor_new(&cc, &co);
    CHECK(c != NULL);
    rd = (ob_reader){&ob_cursor_reader_ops, c};
    return &rd;
}

void close_reader(void) {
    rd.ops->stop(rd.self, 1);
    uv_run(&loop, UV_RUN_DEFAULT);
    CHECK_EQ(own.closed, 1);
    rd.ops->free(rd.self);
}

/* A turn of the loop never sleeps past a few ms: a timer of the reader's
 * that fires in it may send a statement, which the test must see before
 * the loop sleeps until a far timer (the ack deadline) fires. The tick
 * repeats, so that it is still armed when it fired in the same pass as the
 * reader's timer, and runs only during a turn. */
static uv_timer_t tick;
static int tick_up;

static void on_tick(uv_timer_t *t) {
    (void)t;
}

void turn(void) {
    if (!tick_up) {
        uv_timer_init(&loop, &tick);
        tick_up = 1;
    }
    uv_timer_start(&tick, on_tick, 5, 5);
    uv_run(&loop, UV_RUN_ONCE);
    uv_timer_stop(&tick);
    uv_update_time(&loop);
}

void harness_end(void) {
    if (tick_up)
        uv_close((uv_handle_t *)&tick, NULL);
    tick_up = 0;
    uv_run(&loop, UV_RUN_DEFAULT);
}

/* --- statements ---------------------------------------------------------- */

const char *const stmt_names[] = {"probe", "grants", "fit",  "load",    "mark",  "check",
                                  "init",  "read",   "lane", "advance", "finish"};

int starts(const char *s, const char *p) {
    return strncmp(s, p, strlen(p)) == 0;
}

stmt kind_of(const char *sql) {
    if (starts(sql, "SELECT COUNT(*) FROM information_schema.INNODB_TRX"))
        return S_PROBE;
    if (starts(sql, "UPDATE `outbox` SET status = status WHERE 1 = 0"))
        return S_GRANTS;
    if (starts(sql, "SELECT MAX(seq) FROM `outbox_cursor`"))
        return S_FIT;
    if (strstr(sql, "SELECT bucket, seq FROM `outbox_cursor`"))
        return S_LOAD;
    if (starts(sql, "SELECT UNIX_TIMESTAMP(NOW(6)), (SELECT IFNULL(MAX(seq)"))
        return S_MARK;
    if (starts(sql, "SELECT UNIX_TIMESTAMP(NOW(6)), ") && strstr(sql, "; SELECT id,"))
        return S_READ;
    if (starts(sql, "SELECT UNIX_TIMESTAMP(NOW(6)), "))
        return S_CHECK;
    if (starts(sql, "UPDATE `outbox` SET status = 2 WHERE bucket IN"))
        return S_INIT;
    if (starts(sql, "SELECT id, aggregate_type") && strstr(sql, "WHERE status = 2"))
        return S_LANE;
    if (starts(sql, "UPDATE `outbox_cursor` SET seq = ") ||
        starts(sql, "UPDATE `outbox_cursor` AS c_ JOIN "))
        return S_ADVANCE; /* on Galera, fenced by the presence row */
    return S_FINISH;
}

static uint64_t mask_of(const char *list) {
    uint64_t m = 0;
    const char *p = list;
    while (*p && *p != ')') {
        char *end;
        long k = strtol(p, &end, 10);
        if (end == p)
            break;
        m |= 1ULL << k;
        p = *end == ',' ? end + 1 : end;
    }
    return m;
}

/* Notes every cursor UPDATE in the statement of the form `head`: its value
 * and buckets. */
static void note_writes(const char *sql, const char *head, const char *set) {
    const char *p = sql;
    while ((p = strstr(p, head)) != NULL) {
        p = strstr(p, set);
        CHECK(p != NULL);
        p += strlen(set);
        CHECK(nadv < 64);
        adv[nadv] = strtoull(p, NULL, 10);
        const char *in = strstr(p, "bucket IN (");
        CHECK(in != NULL);
        adv_mask[nadv] = mask_of(in + strlen("bucket IN ("));
        nadv++;
    }
}

/* Notes every cursor UPDATE in the statement, the Galera one included. */
static void note_cursor_writes(const char *sql) {
    note_writes(sql, "UPDATE `outbox_cursor` SET seq = ", "SET seq = ");
    note_writes(sql, "UPDATE `outbox_cursor` AS c_ JOIN ", "SET c_.seq = ");
}

uint64_t max_written(void) {
    uint64_t m = 0;
    for (int i = 0; i < nadv; i++)
        if (adv[i] > m)
            m = adv[i];
    return m;
}

ob_db *db(void) {
    return fake_db_last();
}

void ok(void) {
    fake_db_complete(db(), 1, 0, NULL, 0);
}

void ok_read(void) {
    ok();
    while (db() != NULL && fake_db_pending(db()) == FAKE_QUERY &&
           kind_of(fake_db_sql(db())) == S_FIT)
        answer_fit(0);
}

/* One row of a result with n text columns (NULL for SQL NULL). */
void row_n(int res, int n, char *const *cols) {
    unsigned long lens[16];
    for (int i = 0; i < n; i++)
        lens[i] = cols[i] ? strlen(cols[i]) : 0;
    fake_db_add_row_n(db(), res, n, cols, lens);
}

/* An outbox row as the read (lane = 0) or the lane (lane = 1) returns it;
 * the id carries the seq. `last` is the read's status ("0", "2") or the
 * lane's "due only after the horizon" ("0", "1"); `waiting` the lane's
 * "not due yet". */
void outbox_row(int res, uint64_t seq, int bucket, const char *agg, const char *last,
                const char *waiting) {
    char id[16], s[24], b[8];
    memset(id, 0, sizeof(id));
    id[0] = 1;
    for (int i = 0; i < 8; i++)
        id[15 - i] = (char)(seq >> (8 * i) & 0xff);
    snprintf(s, sizeof(s), "%llu", (unsigned long long)seq);
    snprintf(b, sizeof(b), "%d", bucket);
    char *cols[13] = {id,
                      "order",
                      (char *)agg,
                      "created",
                      "{}",
                      NULL,
                      "0",
                      "2026-11-23 00:00:00.000000",
                      (char *)waiting,
                      s,
                      b,
                      (char *)last,
                      (char *)lane_soon_past};
    int n = waiting ? 13 : 12;
    unsigned long lens[13];
    for (int i = 0; i < n; i++)
        lens[i] = cols[i] ? strlen(cols[i]) : 0;
    lens[0] = 16;
    fake_db_add_row_n(db(), res, n, cols, lens);
}

/* 1 when the read under way carries the gap check. */
int read_checks(void) {
    const char *sql = fake_db_sql(db());
    const char *trx = strstr(sql, "INNODB_TRX");
    return trx != NULL && trx < strstr(sql, "; SELECT id,");
}

/* The read's first result: the clock, the oldest other transaction when
 * the statement carries the gap check (`oldest`, NULL: none), MAX(seq) when
 * asked for (`max`). */
void read_clock(const char *oldest, uint64_t max) {
    char t[40], m[24];
    srv += 0.1;
    snprintf(t, sizeof(t), "%.6f", srv);
    snprintf(m, sizeof(m), "%llu", (unsigned long long)max);
    int check = read_checks();
    int mark = strstr(fake_db_sql(db()), "(SELECT MAX(seq) FROM") != NULL;
    char *cols[3] = {t, check ? (char *)oldest : NULL, mark ? m : NULL};
    row_n(0, 3, cols);
}

void answer_fit(uint64_t top) {
    char t[24], n[24];
    snprintf(t, sizeof(t), "%llu", (unsigned long long)top);
    snprintf(n, sizeof(n), "%llu", (unsigned long long)counter);
    char *c0[1] = {top ? t : NULL};
    char *c1[1] = {n};
    char *c3[2] = {"outbox_seq", "SET NEW.seq = NULL"};
    row_n(0, 1, c0);
    row_n(1, 1, c1);
    fake_db_no_result(db(), 2); /* no stamp: the table has none yet */
    row_n(3, 2, c3);            /* the trigger that sets seq */
    ok();
}

/* Runs the loop until a statement is pending and returns its kind; fit
 * statements (about once a second) are answered as fitting on the way
 * when `auto_fit`. */
stmt next_stmt_(int auto_fit, int line) {
    uint64_t until = uv_now(&loop) + 10000;
    for (;;) {
        if (db() != NULL && fake_db_pending(db()) == FAKE_QUERY) {
            stmt k = kind_of(fake_db_sql(db()));
            if (k == S_FIT && auto_fit) {
                answer_fit(0);
                continue;
            }
            if (k == S_ADVANCE || k == S_FINISH)
                note_cursor_writes(fake_db_sql(db()));
            return k;
        }
        if (db() != NULL && fake_db_pending(db()) == FAKE_CONNECT)
            return (stmt)-1;
        if (uv_now(&loop) > until)
            CHECK_FAIL_("line %d: no statement came (state %s)", line,
                        ob_cursor_state_name(rd.self));
        turn();
    }
}

void expect_(stmt k, int line) {
    stmt got = next_stmt_(1, line);
    if (got != k)
        CHECK_FAIL_("line %d: expected a %s statement, got \"%.200s\"", line, stmt_names[k],
                    (int)got >= 0 ? fake_db_sql(db()) : "(connect)");
}

/* Answers the statement under way with an empty result: an empty read (no
 * other transaction, no new row), an empty lane, a write. */
void answer_empty(void) {
    if (kind_of(fake_db_sql(db())) == S_READ)
        read_clock(NULL, 0);
    ok();
}

/* Drives the start-up: connect, probe, fit, then the owned buckets (each
 * bucket of `owned` with its cursor at `floor`) and their load. Leaves the
 * first lane read pending. */
void start_lane(uint64_t owned, uint64_t floor) {
    CHECK(owned != 0);
    rd.ops->start(rd.self);
    CHECK_EQ(fake_db_pending(db()), FAKE_CONNECT);
    ob_cursor_owned(rd.self, owned); /* the lease's first round */
    connect_and_load(owned, floor);
}

void connect_and_load(uint64_t owned, uint64_t floor) {
    ok();
    expect(S_PROBE);
    ok();
    CHECK_EQ(next_stmt_(0, __LINE__), S_FIT);
    answer_fit(floor);
    expect(S_LOAD);
    char want[64];
    snprintf(want, sizeof(want), "bucket IN (%s", owned & 1 ? "0" : "1");
    if (strstr(fake_db_sql(db()), want) == NULL)
        CHECK_FAIL_("the load \"%s\" lacks \"%s\"", fake_db_sql(db()), want);
    for (int k = 0; k < 64; k++) {
        if (!(owned >> k & 1))
            continue;
        char b[8], s[24];
        snprintf(b, sizeof(b), "%d", k);
        snprintf(s, sizeof(s), "%llu", (unsigned long long)floor);
        char *cols[2] = {b, s};
        row_n(0, 2, cols);
    }
    ok(); /* no held aggregate: result 1 is empty */
    expect(S_LANE);
}

/* The same, the first lane read empty. Leaves the first read pending. */
void start_reading(uint64_t owned, uint64_t floor) {
    start_lane(owned, floor);
    ok();
    expect(S_READ);
    char where[48];
    snprintf(where, sizeof(where), "WHERE seq > %llu", (unsigned long long)floor);
    CHECK(strstr(fake_db_sql(db()), where) != NULL);
}

void ack_from(int from) {
    for (int i = from; i < fp.published; i++) {
        ob_ack a = {.worker = 3, .gen = fp.gen[i], .slot = fp.slot[i], .result = OB_ACKED_STORED};
        rd.ops->ack(rd.self, &a);
    }
}

/* Answers statements (empty reads and lanes, writes) until one of kind k
 * is pending; returns it pending. Fails past a few seconds. */
void serve_until_(stmt k, int line) {
    for (int n = 0; n < 5000; n++) {
        stmt got = next_stmt_(1, line);
        if (got == k)
            return;
        if (got != S_READ && got != S_LANE && got != S_ADVANCE)
            CHECK_FAIL_("line %d: waiting for a %s statement, got \"%.200s\"", line, stmt_names[k],
                        fake_db_sql(db()));
        answer_empty();
    }
    CHECK_FAIL_("line %d: no %s statement came", line, stmt_names[k]);
}

/* --- a model of the table ------------------------------------------------ */

/* The outbox table as the reads see it (contiguous seqs, no gap), and which
 * of its rows are done: acked by the broker, or written status 2 by the
 * reader (the lane's). A cursor may pass a row only once it is done. */
tab_row tab[TABROWS];
int ntab;
static int nacked, nchecked;

void tab_reset(void) {
    ntab = nacked = nchecked = 0;
}

void tab_add(uint64_t seq, int bucket, const char *agg) {
    CHECK(ntab < TABROWS);
    tab[ntab].seq = seq;
    tab[ntab].bucket = bucket;
    tab[ntab].agg = agg;
    tab[ntab].done = 0;
    ntab++;
}

int tab_at(uint64_t seq) {
    for (int r = 0; r < ntab; r++)
        if (tab[r].seq == seq)
            return r;
    CHECK_FAIL_("seq %llu is not in the table", (unsigned long long)seq);
    return -1;
}

/* The broker stores every row published so far: done. */
void ack_new(void) {
    for (; nacked < fp.published; nacked++) {
        ob_ack a = {
            .worker = 3, .gen = fp.gen[nacked], .slot = fp.slot[nacked], .result = OB_ACKED_STORED};
        tab[tab_at(fp.seq[nacked])].done = 1;
        rd.ops->ack(rd.self, &a);
    }
}

/* Bucket k's cursor as the table holds it: the highest value written for
 * it (the UPDATE moves a cursor only up), or `floor`. */
uint64_t cursor_of(int k, uint64_t floor) {
    uint64_t s = floor;
    for (int i = 0; i < nadv; i++)
        if ((adv_mask[i] >> k & 1) && adv[i] > s)
            s = adv[i];
    return s;
}

/* No cursor write sent since the last look passes a row of its buckets
 * that is not done: the row would be lost. */
void check_cursor_writes(void) {
    for (; nchecked < nadv; nchecked++)
        for (int r = 0; r < ntab; r++)
            if ((adv_mask[nchecked] >> tab[r].bucket & 1) && tab[r].seq <= adv[nchecked] &&
                !tab[r].done)
                CHECK_FAIL_("cursor %llu written for buckets %#llx passes seq %llu (bucket %d), "
                            "never acked",
                            (unsigned long long)adv[nchecked],
                            (unsigned long long)adv_mask[nchecked], (unsigned long long)tab[r].seq,
                            tab[r].bucket);
}

/* Every publish of an aggregate's row came after a publish of each of its
 * rows below it. */
void check_order(void) {
    for (int i = 0; i < fp.published; i++) {
        const char *agg = tab[tab_at(fp.seq[i])].agg;
        for (int r = 0; r < ntab; r++) {
            if (strcmp(tab[r].agg, agg) != 0 || tab[r].seq >= fp.seq[i])
                continue;
            int before = 0;
            for (int j = 0; j < i; j++)
                before |= fp.seq[j] == tab[r].seq;
            if (!before)
                CHECK_FAIL_("seq %llu of aggregate %s published before seq %llu",
                            (unsigned long long)fp.seq[i], agg, (unsigned long long)tab[r].seq);
        }
    }
}

/* Answers the pending statement from the table: a read with its rows above
 * the read's top (none in a stop's read of the gaps), a load with each
 * bucket's cursor as written (cursor_of), the rest empty. Returns its kind. */
stmt serve_one(uint64_t floor) {
    stmt k = next_stmt();
    check_cursor_writes();
    if (k == S_READ) {
        const char *w = strstr(fake_db_sql(db()), "WHERE seq > ");
        uint64_t top = w ? strtoull(w + strlen("WHERE seq > "), NULL, 10) : UINT64_MAX;
        read_clock(NULL, 0);
        for (int r = 0; r < ntab; r++)
            if (tab[r].seq > top)
                outbox_row(1, tab[r].seq, tab[r].bucket, tab[r].agg, "0", NULL);
        ok_read();
    } else if (k == S_LOAD) {
        const char *in = strstr(fake_db_sql(db()), "bucket IN (");
        CHECK(in != NULL);
        for (const char *p = in + strlen("bucket IN ("); *p && *p != ')';) {
            char *end;
            long b = strtol(p, &end, 10);
            CHECK(end != p);
            char bs[8], ss[24];
            snprintf(bs, sizeof(bs), "%ld", b);
            snprintf(ss, sizeof(ss), "%llu", (unsigned long long)cursor_of((int)b, floor));
            char *cols[2] = {bs, ss};
            row_n(0, 2, cols);
            p = *end == ',' ? end + 1 : end;
        }
        ok();
    } else {
        answer_empty();
    }
    return k;
}

/* Serves the reader, the broker storing every row as it leaves, until
 * every row of `mask`'s buckets is done; each cursor write is checked. */
void serve_until_done(uint64_t floor, uint64_t mask) {
    for (int n = 0; n < 5000; n++) {
        int left = 0;
        for (int r = 0; r < ntab; r++)
            left += (mask >> tab[r].bucket & 1) && !tab[r].done;
        if (left == 0)
            break;
        serve_one(floor);
        ack_new();
    }
    for (int r = 0; r < ntab; r++)
        if ((mask >> tab[r].bucket & 1) && !tab[r].done)
            CHECK_FAIL_("seq %llu was never published again", (unsigned long long)tab[r].seq);
    check_order();
}
