/*
 * Cursor mode's reader (see cursor.h): one connection, one statement at a
 * time, and a pipeline of two batches: the next one is read while the
 * current one is being published.
 *
 *   NEW --start--> CONNECTING --ok--> PROBING (INNODB_TRX and the cursor table)
 *                   | fail --> CONNECT_WAIT --timer--> CONNECTING
 *   PROBING (and the grants) --ok--> FITTING (counter and cursors, cursor_fit.h)
 *   FITTING --ok--> IDLE;  no PROCESS, no cursor table, a grant missing, the
 *      cursors above the table's counter --> HALTED (fatal)
 *   IDLE: picks the next statement (kick), in this order:
 *     a finished batch's writes and cursor ----------> FINISHING --> IDLE
 *     about once a second ----------------------------> FITTING --> IDLE
 *        the cursors above the counter: publishes and writes nothing, FITTING
 *        again each second until they agree (cursor-reset), then LOADING
 *     the server refuses a write: publishes nothing, PROBING every 2 s
 *     the owned buckets changed, nothing in flight --> LOADING (cursors, held aggregates)
 *        a bucket without a cursor row: LOADING --> MARKING (clock, MAX(seq))
 *        --> CHECKING (INNODB_TRX) --not yet--> INIT_WAIT --timer--> CHECKING
 *        --proven--> INITIALISING (status 2 for ordered retries, cursor rows) --> LOADING
 *     status-2 rows may be due, nothing in flight --> LANE_READING --> IDLE
 *     the next batch's read is due ------------------> READING --> IDLE
 *     resolved gaps let the cursor move -------------> ADVANCING --> IDLE
 *     else waits in IDLE for the poll timer, a wake, acks or capacity
 *   any statement --failed--> RETRY_WAIT --timer--> IDLE (lost: CONNECT_WAIT, then PROBING)
 *   HALTED: the relay cannot go on; waiting for the stop
 *   any state --stop--> CLOSING --> CLOSED
 *
 * Reading. Each read is one round trip of two statements: the server's clock
 * (and, while a gap waits for one, the gap check on INNODB_TRX), then the
 * rows with seq above the highest read (top) or inside an open gap, in seq
 * order: seq and bucket of every row (gaps are the table's, not a
 * bucket's), the payload and headers only of the owned buckets. The gap
 * tracker (gaps.h) sees every seq; a row is published when it is new, of an
 * owned bucket, above that bucket's cursor and status 0. A row that commits
 * into an old gap is read when it shows, so nothing is read twice and
 * nothing that later commits is passed.
 *
 * Publishing goes through the worker's publishing code (worker_publish.c,
 * batch.c) on a publishing context that is never started as a worker: rows
 * of one aggregate leave one at a time, each after the previous one's ack;
 * a row of an aggregate held by a status-2 row is not published.
 *
 * Finishing a batch writes only what failed: a row's fault counts an attempt
 * (status 2, or -1 dead at the last attempt) and holds its aggregate; rows
 * held behind it become status 2. In the same round trip the owned buckets'
 * cursors move forward, only while the lease is proven, to the highest seq
 * below which everything is resolved and done: min(first open gap - 1,
 * first row not yet finished - 1, top). The broker's and the database's
 * faults cost no attempt: such rows are published again when the broker is
 * back, and a lost connection reads again from the cursors.
 *
 * The retry lane (between batches) publishes the status-2 rows of the owned
 * buckets whose retry is due, in seq order per aggregate, and writes status
 * 1 (or -1, or another attempt); an aggregate with no status-2 row left is
 * no longer held.
 *
 * A change of the owned buckets waits until nothing is in flight, then
 * loads the cursors again and reads on from the lowest of them, skipping
 * each bucket's rows at or below its own cursor.
 */
#include "cursor.h"

#include <mysqld_error.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cursor_fit.h"
#include "cursor_held.h"
#include "cursor_sql.h"
#include "gaps.h"
#include "lease.h"
#include "worker_int.h"

typedef enum cursor_state {
    CR_NEW,          /* created, not started */
    CR_CONNECTING,   /* waiting for the connection */
    CR_CONNECT_WAIT, /* waiting before connecting again */
    CR_PROBING,      /* waiting for the start-up probe: INNODB_TRX, the cursor table, grants */
    CR_FITTING,      /* waiting for the highest cursor and the table's counter */
    CR_IDLE,         /* connection idle: waiting for the poll timer, a wake, acks or capacity */
    CR_LOADING,      /* waiting for the owned buckets' cursors and held aggregates */
    CR_MARKING,      /* initialising a bucket: waiting for the clock and MAX(seq) */
    CR_CHECKING,     /* initialising: waiting for the INNODB_TRX check */
    CR_INIT_WAIT,    /* initialising: waiting before checking again */
    CR_INITIALISING, /* initialising: waiting for the cursor rows' INSERT */
    CR_READING,      /* waiting for the clock, the gap check and the next rows */
    CR_LANE_READING, /* waiting for the status-2 rows of the retry lane */
    CR_FINISHING,    /* waiting for a batch's failed rows' writes and the cursor UPDATE */
    CR_ADVANCING,    /* waiting for the cursor UPDATE alone */
    CR_RETRY_WAIT,   /* a statement failed: waiting before going on */
    CR_HALTED,       /* the relay cannot go on: waiting for the stop */
    CR_CLOSING,      /* waiting for the timers and the connection to close */
    CR_CLOSED        /* nothing left on the loop */
} cursor_state;

typedef enum cursor_event {
    CE_START,
    CE_DB_OK,     /* the statement (or connect) under way succeeded */
    CE_DB_FAILED, /* it failed */
    CE_TIMER,     /* the state timer fired */
    CE_KICK,      /* something changed: acks, capacity, broker, lease, wake */
    CE_HALT,
    CE_STOP,
    CE_STOP_NOW
} cursor_event;

static const char *const state_names[] = {
    [CR_NEW] = "new",
    [CR_CONNECTING] = "connecting",
    [CR_CONNECT_WAIT] = "connect-wait",
    [CR_PROBING] = "probing",
    [CR_FITTING] = "fitting",
    [CR_IDLE] = "idle",
    [CR_LOADING] = "loading",
    [CR_MARKING] = "marking",
    [CR_CHECKING] = "checking",
    [CR_INIT_WAIT] = "init-wait",
    [CR_INITIALISING] = "initialising",
    [CR_READING] = "reading",
    [CR_LANE_READING] = "lane-reading",
    [CR_FINISHING] = "finishing",
    [CR_ADVANCING] = "advancing",
    [CR_RETRY_WAIT] = "retry-wait",
    [CR_HALTED] = "halted",
    [CR_CLOSING] = "closing",
    [CR_CLOSED] = "closed",
};

/* What a batch's rows need beyond ob_batch: their seq and bucket, and the
 * bytes their fields point to (copied out of the result, which the next
 * statement frees, in one buffer reused from batch to batch). */
typedef struct extras {
    uint64_t *seq;
    uint8_t *bucket;
    ob_buf arena;
} extras;

/* Gap checks at most this often; reads at least this often while a gap
 * waits for one. */
#define CHECK_EVERY_MS 150
#define GAP_POLL_MS 100
/* The retry lane looks at most this often while status-2 rows may be due,
 * and this often when none is: `dead replay` writes status-2 rows that this
 * reader did not make. */
#define LANE_EVERY_MS 250
#define LANE_IDLE_MS 5000
/* Rows came within this: poll at poll_min_ms. */
#define HOT_MS 1000
/* The cursors move at most this often (and with each batch that has a
 * failure to write). */
#define ADVANCE_EVERY_MS 1000
/* Buckets given up: their last cursor is moved for this long (less than a
 * lease round, after which their locks go). */
#define HANDOFF_MS 900
/* A graceful stop watches the open gaps this long at most. */
#define STOP_GAPS_MS 2000
/* A refused grant (a write, PROCESS) is tried again this often. */
#define REFUSED_RETRY_MS 2000

struct ob_cursor {
    ob_cursor_config cfg;
    ob_cursor_owner own;
    ob_worker_env env; /* the relay's, with this reader's may_publish */
    ob_worker pw;      /* publishing context; pw.batch is the batch being published */
    extras cur_x;      /* pw.batch's */
    ob_batch next;     /* read ahead, not yet published */
    extras next_x;
    cursor_state state;
    ob_db *db;
    uv_timer_t timer, ack_timer;
    int handles_open;
    ob_retry retry;
    int failures;
    unsigned last_err;
    int settled; /* the probe passed once */
    int db_up;
    int stop; /* 0 running, 1 finish what is in flight, 2 now */
    int halted;
    int on_idle_list;

    ob_gaps gaps;
    ob_held held;
    uint64_t owned;  /* the lease's buckets */
    uint64_t active; /* the buckets whose cursors are loaded */
    uint64_t floor[OB_BUCKETS];
    int resync;     /* load the cursors again once nothing is in flight */
    uint64_t init;  /* buckets being initialised */
    double init_t1; /* the bound of their MAX(seq): the first check's clock, 0 until then */
    uint64_t init_max;
    uint64_t init_proven; /* every seq <= it proven resolved, for the next load */

    int cur_active;       /* pw.batch holds rows not yet finished */
    uint64_t dropped;     /* buckets given up since pw.batch began */
    uint64_t handoff;     /* buckets given up whose last cursor is to be written */
    uint64_t handoff_seq; /* a bound on it from their rows not published, UINT64_MAX none */
    uint64_t handoff_until, handoff_at, handoff_written;
    int cur_lane;    /* pw.batch is a retry-lane batch */
    int want_finish; /* every row of pw.batch has its answer */
    int next_ready;  /* next holds rows */
    uint32_t gen;
    uint64_t written; /* the cursor value last written for the active buckets */
    uint64_t pending; /* the value the statement under way writes, 0 none */

    uint64_t read_at, lane_at, check_at, advance_at, hot_until;
    int last_cut;        /* the last read hit its LIMIT */
    int last_fresh;      /* new rows in the last read */
    int lane_clean;      /* the last lane read found no status-2 row due within the horizon */
    int read_since;      /* a read completed since the last finish */
    int check_sent;      /* the read under way carries the gap check */
    uint64_t stop_until; /* a graceful stop watches the open gaps until then */
    int fin_acked, fin_dead, fin_retry, fin_held; /* tallies of the statement under way */
    ob_buf sql;
    char lock[64];

    /* Checked assumptions (cursor_fit.h) and refused grants. */
    uint64_t fit_at;     /* loop time of the next comparison of counter and cursors */
    int fitted;          /* the first comparison passed */
    int misfit;          /* the last one found a cursor at or above the counter */
    int refusing;        /* the server refuses a write: nothing is published */
    uint64_t refuse_at;  /* loop time of the next probe of the grants */
    int no_process;      /* INNODB_TRX refused: no gap closes, the cursors stay */
    uint64_t process_at; /* loop time of the next gap check that tries it again */
    char misfit_why[700], refused_why[400], process_why[300];
};

static void dispatch(ob_cursor *c, cursor_event ev);
static void kick(ob_cursor *c);
static void finished(ob_cursor *c);
static void go_idle(ob_cursor *c, uint64_t now);

static void set_state(ob_cursor *c, cursor_state s) {
    if (c->state != s)
        OB_DEBUG(c->env.log, "cursor: %s -> %s", state_names[c->state], state_names[s]);
    c->state = s;
}

const char *ob_cursor_state_name(const ob_cursor *c) {
    return state_names[c->state];
}

/* --- callbacks ----------------------------------------------------------- */

static void on_db(ob_db *db, int ok, void *data) {
    (void)db;
    dispatch(data, ok ? CE_DB_OK : CE_DB_FAILED);
}

static void on_timer(uv_timer_t *t) {
    dispatch(t->data, CE_TIMER);
}

static ob_cursor *of_member(ob_flow_member *m) {
    return (ob_cursor *)((char *)m - offsetof(ob_cursor, pw) - offsetof(ob_worker, fm));
}

static void on_capacity(ob_flow_member *m) {
    dispatch(of_member(m), CE_KICK);
}

static void on_wake(ob_flow_member *m) {
    ob_cursor *c = of_member(m);
    c->on_idle_list = 0;
    c->read_at = 0;
    dispatch(c, CE_KICK);
}

static int may_publish(void *data) {
    ob_cursor *c = data;
    return !c->halted && c->stop < 2 && !c->misfit && !c->refusing &&
           c->own.lease_valid(c->own.data);
}

/* --- batches ------------------------------------------------------------- */

static int extras_init(extras *x, int cap) {
    x->seq = calloc((size_t)cap, sizeof(*x->seq));
    x->bucket = calloc((size_t)cap, sizeof(*x->bucket));
    return x->seq && x->bucket ? 0 : -1;
}

static void extras_free(extras *x) {
    free(x->seq);
    free(x->bucket);
    ob_buf_free(&x->arena);
}

/* Copies the fields of the batch's rows out of the result. Returns 0, or
 * -1 out of memory. */
static int keep_rows(ob_batch *b, extras *x) {
    size_t total = 0;
    for (int i = 0; i < b->n; i++) {
        const ob_row *r = &b->slots[i].row;
        total += r->aggregate_type_len + r->aggregate_id_len + r->event_type_len + r->payload_len +
                 r->headers_len + r->created_at_len + 6;
    }
    ob_buf_reset(&x->arena);
    if (ob_buf_reserve(&x->arena, total + 1) != 0)
        return -1;
    for (int i = 0; i < b->n; i++) {
        ob_row *r = &b->slots[i].row;
        const char **f[] = {&r->aggregate_type, &r->aggregate_id, &r->event_type,
                            &r->payload,        &r->headers,      &r->created_at};
        size_t *l[] = {&r->aggregate_type_len, &r->aggregate_id_len, &r->event_type_len,
                       &r->payload_len,        &r->headers_len,      &r->created_at_len};
        for (int k = 0; k < 6; k++) {
            if (*f[k] == NULL)
                continue;
            char *at = x->arena.p ? x->arena.p + x->arena.len : NULL;
            ob_buf_append(&x->arena, *f[k], *l[k]);
            ob_buf_putc(&x->arena, '\0');
            *f[k] = at;
        }
    }
    return x->arena.oom ? -1 : 0;
}

/* Rows of held aggregates are not published: they are written status 2
 * (and the rows after them in the batch with them). */
static void mark_held(ob_cursor *c) {
    ob_batch *b = &c->pw.batch;
    if (c->held.n == 0)
        return;
    for (int i = 0; i < b->n; i++) {
        ob_slot *s = &b->slots[i];
        if (s->state == OB_SLOT_UNSENT &&
            ob_held_has(&c->held, s->row.aggregate_type, s->row.aggregate_type_len,
                        s->row.aggregate_id, s->row.aggregate_id_len))
            s->state = OB_SLOT_HELD;
    }
    ob_batch_touched(b);
}

static void swap_in_next(ob_cursor *c) {
    ob_batch tb = c->pw.batch;
    c->pw.batch = c->next;
    c->next = tb;
    extras tx = c->cur_x;
    c->cur_x = c->next_x;
    c->next_x = tx;
    c->next_ready = 0;
    c->next.n = 0;
    c->cur_active = 1;
    c->dropped = 0;
    c->cur_lane = 0;
    c->want_finish = 0;
    c->pw.batch.epoch = c->env.pub.epoch(c->env.pub.data);
    mark_held(c);
}

/* Gives back what the batch being published holds and forgets it. */
static void drop_current(ob_cursor *c) {
    if (c->cur_active) {
        int n = ob_batch_release_open(&c->pw.batch);
        ob_worker_give_back(&c->pw, n);
        c->env.stats->released += (uint64_t)n;
    }
    ob_flow_leave(c->env.flow, &c->pw.fm);
    c->on_idle_list = 0;
    uv_timer_stop(&c->ack_timer);
    c->cur_active = c->want_finish = 0;
    c->pw.batch.n = 0;
    c->next_ready = 0;
    c->next.n = 0;
}

static uint64_t min_u64(uint64_t a, uint64_t b) {
    return a < b ? a : b;
}

/* The highest seq below which every row of the active buckets is resolved
 * and done, but for the current batch when `with_cur` is 0 (its writes go
 * in the same round trip). */
static uint64_t safe_point(const ob_cursor *c, int with_cur) {
    uint64_t s = ob_gaps_done(&c->gaps);
    if (c->next_ready && c->next.n > 0)
        s = min_u64(s, c->next_x.seq[0] - 1);
    if (with_cur && c->cur_active && !c->cur_lane && c->pw.batch.n > 0)
        s = min_u64(s, c->cur_x.seq[0] - 1);
    return s;
}

/* --- publishing ---------------------------------------------------------- */

static void on_ack_timer(uv_timer_t *t) {
    ob_cursor *c = t->data;
    if (c->cur_active)
        ob_worker_ack_deadline(&c->pw);
    dispatch(c, CE_KICK);
}

/* Arms the ack deadline of the oldest publish in flight, unless armed: the
 * oldest only gets younger as acks come, so an armed timer fires early at
 * worst, and is armed again from there. */
static void arm_ack_timer(ob_cursor *c) {
    if (uv_is_active((uv_handle_t *)&c->ack_timer))
        return;
    uint64_t due = ob_worker_ack_due_in(&c->pw);
    if (due == UINT64_MAX)
        uv_timer_stop(&c->ack_timer);
    else
        uv_timer_start(&c->ack_timer, on_ack_timer, due + 1, 0);
}

static int has_unsent(const ob_batch *b) {
    for (int i = b->next_pub; i < b->n; i++)
        if (b->slots[i].state == OB_SLOT_UNSENT)
            return 1;
    return 0;
}

/* Publishes what may leave and notes when every row has its answer. */
static void pump(ob_cursor *c) {
    if (!c->cur_active || c->want_finish || c->halted)
        return;
    ob_batch *b = &c->pw.batch;
    /* Without the broker or the lease, unsent rows wait (a timer or the
     * broker's return brings the reader back here). */
    if (has_unsent(b) && (!c->env.pub.ready(c->env.pub.data) || !may_publish(c)) &&
        b->outstanding == 0)
        return;
    ob_worker_publish_some(&c->pw);
    switch (ob_worker_after_answers(&c->pw)) {
    case OB_AFTER_ACKS:
        arm_ack_timer(c);
        return;
    case OB_AFTER_VERDICT:
        return; /* the broker's verdict comes as an up or down */
    case OB_AFTER_FINISH:
        uv_timer_stop(&c->ack_timer);
        c->want_finish = 1;
        return;
    }
}

/* Rows given back (an outage, the lease unsure) are published again: they
 * go back to unsent, with the rows held behind them. */
/* Row i of the batch being published belongs to a bucket owned since the
 * batch began: a bucket given up and taken again meanwhile is read again
 * from its cursor, not published from this batch. */
static int owns(const ob_cursor *c, int i) {
    return (c->owned & ~c->dropped) >> c->cur_x.bucket[i] & 1;
}

static int requeue(ob_cursor *c) {
    ob_batch *b = &c->pw.batch;
    int n = 0;
    for (int i = 0; i < b->n; i++)
        n += b->slots[i].state == OB_SLOT_RELEASED && owns(c, i);
    if (n == 0)
        return 0;
    /* A bucket given up meanwhile keeps its rows released: its new owner
     * reads them again from the cursor, which never passed them. */
    for (int i = 0; i < b->n; i++) {
        ob_slot *s = &b->slots[i];
        if ((s->state == OB_SLOT_RELEASED || s->state == OB_SLOT_HELD) && owns(c, i))
            s->state = OB_SLOT_UNSENT;
    }
    b->next_pub = 0;
    b->n_held = 0;
    ob_batch_touched(b);
    b->epoch = c->env.pub.epoch(c->env.pub.data);
    mark_held(c);
    c->env.stats->released += (uint64_t)n;
    c->want_finish = 0;
    return n;
}

/* --- statements ---------------------------------------------------------- */

static void send_sql(ob_cursor *c, cursor_state s) {
    set_state(c, s);
    if (c->sql.oom || ob_db_query(c->db, c->sql.p, c->sql.len, on_db, c) != 0) {
        OB_WARN(c->env.log, "cursor: cannot send a statement (%s); trying again",
                c->sql.oom ? "out of memory" : "connection busy");
        ob_buf_reset(&c->sql);
        c->sql.oom = 0;
        set_state(c, CR_RETRY_WAIT);
        uv_timer_start(&c->timer, on_timer, 1000, 0);
    }
}

static void connect_db(ob_cursor *c) {
    set_state(c, CR_CONNECTING);
    if (ob_db_connect(c->db, on_db, c) != 0) {
        set_state(c, CR_CONNECT_WAIT);
        uv_timer_start(&c->timer, on_timer, ob_retry_delay(&c->retry, ++c->failures), 0);
    }
}

/* --- checked assumptions (cursor_fit.h) --------------------------------- */

static void fatal(ob_cursor *c, const char *why);

/* The start-up probe, sent again while the server refuses a write: PROCESS,
 * the cursor table, and every grant the reader writes with. */
static void send_probe(ob_cursor *c, int grants_only) {
    ob_buf_reset(&c->sql);
    if (!grants_only) {
        ob_cursor_sql_probe(&c->sql, c->cfg.ctable);
        ob_buf_puts(&c->sql, "; ");
    }
    ob_cursor_grants_sql(&c->sql, c->cfg.qtable, c->cfg.ctable);
    send_sql(c, CR_PROBING);
}

static void send_fit(ob_cursor *c) {
    c->fit_at = uv_now(c->env.loop) + OB_CURSOR_FIT_EVERY_MS;
    ob_buf_reset(&c->sql);
    ob_cursor_fit_sql(&c->sql, c->cfg.table, c->cfg.ctable);
    send_sql(c, CR_FITTING);
}

/* The counter and the cursors compared: at start a mismatch is fatal (and
 * so under a drain, which could never end); while running the reader
 * publishes and writes nothing until they agree again. */
static void fitted(ob_cursor *c) {
    char why[sizeof(c->misfit_why)];
    int bad = ob_cursor_fit_result(c->db, c->active && !c->misfit ? c->gaps.top : 0, c->cfg.table,
                                   why, sizeof(why));
    if (bad && (!c->fitted || c->own.drain_wanted(c->own.data))) {
        fatal(c, why);
        return;
    }
    c->fitted = 1;
    if (bad && !c->misfit) {
        OB_ERROR(c->env.log, "cursor: %s; publishing nothing and moving no cursor until then", why);
        snprintf(c->misfit_why, sizeof(c->misfit_why), "%s", why);
        c->misfit = 1;
        drop_current(c);
        c->active = 0;
        c->handoff = 0;
        c->resync = 1;
    } else if (!bad && c->misfit) {
        OB_INFO(c->env.log,
                "cursor: the cursors of table %s are below its counter again: "
                "reading from them",
                c->cfg.table);
        c->misfit = 0;
        c->resync = 1;
    }
    c->env.stats->cursor_mismatch = c->misfit;
    set_state(c, CR_IDLE);
    kick(c);
}

/* While the cursors disagree with the table, or the server refuses a
 * write, the reader only checks again, on its own pace; and every second
 * it compares the counter with the cursors. Returns 1 when it took the
 * turn (a statement sent, or a wait). */
static int checks_first(ob_cursor *c, uint64_t now) {
    if (c->misfit || c->refusing) {
        uint64_t at = c->misfit ? c->fit_at : c->refuse_at;
        if (now < at) {
            uv_timer_start(&c->timer, on_timer, at - now, 0);
            return 1;
        }
        if (c->misfit)
            send_fit(c);
        else
            send_probe(c, 1);
        return 1;
    }
    if (now < c->fit_at)
        return 0;
    send_fit(c);
    return 1;
}

/* The probe passed again: every grant is back. */
static void grants_back(ob_cursor *c) {
    if (!c->refusing)
        return;
    OB_INFO(c->env.log, "cursor: the database accepts the reader's writes again");
    c->refusing = 0;
}

static void process_back(ob_cursor *c) {
    if (!c->no_process)
        return;
    OB_INFO(c->env.log, "cursor: information_schema.INNODB_TRX can be read again: the open "
                        "gaps close and the cursors move");
    c->no_process = 0;
}

/* INNODB_TRX refused on a running reader (PROCESS revoked, seen after a
 * reconnect): rows are still published, but no gap can be proven closed and
 * the cursors stay below the first one; said once, at error level. */
static void process_refused(ob_cursor *c, unsigned no) {
    c->process_at = uv_now(c->env.loop) + REFUSED_RETRY_MS;
    c->env.stats->db_errors++;
    if (c->no_process)
        return;
    c->no_process = 1;
    snprintf(c->process_why, sizeof(c->process_why),
             "no PROCESS privilege: the cursors cannot move (GRANT PROCESS ON *.* TO "
             "'%s'@'<host>')",
             c->cfg.db_user ? c->cfg.db_user : "user");
    OB_ERROR(c->env.log,
             "cursor: the server refuses to show information_schema.INNODB_TRX (%u %s): "
             "without the PROCESS privilege no seq gap can be proven closed, so the cursors "
             "stay below the first open gap while rows are still published: GRANT PROCESS ON "
             "*.* TO '%s'@'<host>'",
             no, ob_db_error(c->db), c->cfg.db_user ? c->cfg.db_user : "user");
}

/* The server refused a statement of a running reader for a reason that a
 * retry at once cannot cure (a grant revoked, a read-only server). Like the
 * workers: nothing is published or written until a probe that needs every
 * grant passes; a drain, which could not end, stops the relay. Returns 1
 * when handled. */
static int refused(ob_cursor *c, unsigned no) {
    if (no == ER_SPECIFIC_ACCESS_DENIED_ERROR &&
        (c->state == CR_READING || c->state == CR_CHECKING || c->state == CR_PROBING) &&
        !c->own.drain_wanted(c->own.data)) {
        cursor_state was = c->state;
        process_refused(c, no);
        if (was == CR_CHECKING) {
            set_state(c, CR_INIT_WAIT);
            uv_timer_start(&c->timer, on_timer, REFUSED_RETRY_MS, 0);
        } else if (was == CR_PROBING) {
            send_fit(c);
        } else {
            set_state(c, CR_IDLE);
            kick(c);
        }
        return 1;
    }
    if (!ob_db_errno_is_refusal(no))
        return 0;
    char grants[400];
    ob_cursor_grants_text(grants, sizeof(grants), c->cfg.table,
                          c->cfg.db_user ? c->cfg.db_user : "user");
    if (!c->fitted || c->own.drain_wanted(c->own.data)) {
        char why[900];
        snprintf(why, sizeof(why),
                 "cursor: the database refuses the reader's %s statement: %u %s; "
                 "cursor mode needs: %s",
                 state_names[c->state], no, ob_db_error(c->db), grants);
        fatal(c, why);
        return 1;
    }
    if (!c->refusing)
        OB_ERROR(c->env.log,
                 "cursor: the database refuses the reader's %s statement: %u %s; publishing "
                 "nothing until it accepts the writes again (cursor mode needs: %s)",
                 state_names[c->state], no, ob_db_error(c->db), grants);
    snprintf(c->refused_why, sizeof(c->refused_why),
             "the database refuses the relay's writes: %u %s", no, ob_db_error(c->db));
    c->refusing = 1;
    c->refuse_at = uv_now(c->env.loop) + REFUSED_RETRY_MS;
    c->env.stats->db_errors++;
    drop_current(c);
    c->pending = 0;
    c->active = 0;
    c->handoff = 0;
    c->resync = 1;
    set_state(c, CR_IDLE);
    uv_timer_start(&c->timer, on_timer, REFUSED_RETRY_MS, 0);
    return 1;
}

const char *ob_cursor_paused(const ob_cursor *c) {
    if (c->misfit)
        return c->misfit_why;
    if (c->refusing)
        return c->refused_why;
    return c->no_process ? c->process_why : NULL;
}

static void load(ob_cursor *c) {
    drop_current(c);
    ob_buf_reset(&c->sql);
    unsigned long session = c->own.lease_session(c->own.data);
    const char *lock = NULL;
    if (session) {
        ob_lease_worker_lock(c->lock, c->cfg.lock_base, session, (int)c->cfg.index);
        lock = c->lock;
    }
    ob_cursor_sql_load(&c->sql, c->cfg.qtable, c->cfg.ctable, c->cfg.table, c->owned, lock);
    send_sql(c, CR_LOADING);
}

static void loaded(ob_cursor *c) {
    int first = 0;
    while (ob_db_result(c->db, first) == NULL && first < 2)
        first++; /* the fencing lock's DO has no result set */
    uint64_t found = 0;
    char **row;
    while ((row = ob_db_next_row(c->db, first, NULL)) != NULL) {
        int k = row[0] ? atoi(row[0]) : -1;
        if (k < 0 || k >= OB_BUCKETS || row[1] == NULL)
            continue;
        c->floor[k] = strtoull(row[1], NULL, 10);
        found |= 1ULL << k;
    }
    ob_held_clear(&c->held);
    unsigned long *len;
    while ((row = ob_db_next_row(c->db, first + 1, &len)) != NULL)
        if (row[0] && row[1])
            ob_held_add(&c->held, row[0], len[0], row[1], len[1]);
    uint64_t missing = c->owned & ~found;
    if (missing) {
        c->init = missing;
        ob_buf_reset(&c->sql);
        ob_cursor_sql_mark(&c->sql, c->cfg.qtable);
        send_sql(c, CR_MARKING);
        return;
    }
    c->active = c->owned;
    c->resync = 0;
    uint64_t top = UINT64_MAX;
    for (int k = 0; k < OB_BUCKETS; k++)
        if (c->active >> k & 1)
            top = min_u64(top, c->floor[k]);
    if (top == UINT64_MAX)
        top = 0;
    ob_gaps_init(&c->gaps, top);
    ob_gaps_proven(&c->gaps, c->init_proven); /* seqs its check proved: resolved on sight */
    c->init_proven = 0;
    c->written = top;
    c->read_at = c->lane_at = 0;
    c->lane_clean = 0;
    c->read_since = 0;
    if (c->active)
        OB_INFO(c->env.log, "cursor: reading %d bucket(s) from seq %llu (%zu aggregate(s) held)",
                ob_bucket_count(c->active), (unsigned long long)top, c->held.n);
    set_state(c, CR_IDLE);
    dispatch(c, CE_KICK);
}

static void check_init(ob_cursor *c) {
    ob_buf_reset(&c->sql);
    ob_cursor_sql_check(&c->sql);
    send_sql(c, CR_CHECKING);
}

static void marked(ob_cursor *c) {
    char **row = ob_db_next_row(c->db, 0, NULL);
    /* NOW(6) is the statement's start, and a transaction may take a seq
     * below the MAX between the two: the bound is the next statement's. */
    c->init_t1 = 0;
    c->init_max = row && row[1] ? strtoull(row[1], NULL, 10) : 0;
    check_init(c);
}

/* Every seq <= init_max is resolved once no transaction that started at or
 * before the mark is alive (see gaps.h): the cursor rows can be made. */
static void checked_init(ob_cursor *c) {
    char **row = ob_db_next_row(c->db, 0, NULL);
    double tc = row && row[0] ? strtod(row[0], NULL) : 0;
    double oldest = row && row[1] ? strtod(row[1], NULL) : -1;
    process_back(c);
    if (c->init_t1 == 0)
        c->init_t1 = tc;
    if (!ob_gaps_proves(c->init_t1, tc, oldest)) {
        set_state(c, CR_INIT_WAIT);
        uv_timer_start(&c->timer, on_timer, GAP_POLL_MS, 0);
        return;
    }
    ob_buf_reset(&c->sql);
    ob_cursor_sql_init(&c->sql, c->cfg.qtable, c->cfg.ctable, c->cfg.table, c->init, c->init_max);
    send_sql(c, CR_INITIALISING);
}

static void initialised(ob_cursor *c) {
    OB_INFO(c->env.log, "cursor: %d bucket(s) without a cursor start at or below seq %llu",
            ob_bucket_count(c->init), (unsigned long long)c->init_max);
    c->init = 0;
    c->init_proven = c->init_max;
    load(c);
}

/* Row cursors over a read's result for ob_batch_load: they feed the gap
 * tracker every seq and hand over the rows to publish. */
typedef struct read_cur {
    ob_cursor *c;
    extras *x;
    int lane;
    int n;         /* rows handed over */
    int seen;      /* rows of the result */
    int fresh;     /* new rows (above top or in a gap) */
    int soon;      /* lane: rows due within the horizon */
    uint64_t last; /* the last seq seen */
} read_cur;

static char **read_next(void *p, unsigned long **lengths) {
    read_cur *rc = p;
    ob_cursor *c = rc->c;
    char **row;
    unsigned long *len;
    while ((row = ob_db_next_row(c->db, rc->lane ? 0 : 1, &len)) != NULL) {
        rc->seen++;
        if (row[OB_CCOL_SEQ] == NULL || row[OB_CCOL_BUCKET] == NULL)
            continue;
        uint64_t seq = strtoull(row[OB_CCOL_SEQ], NULL, 10);
        int k = atoi(row[OB_CCOL_BUCKET]);
        rc->last = seq;
        if (rc->lane) {
            rc->soon += row[OB_CCOL_STATUS] == NULL || strcmp(row[OB_CCOL_STATUS], "1") != 0;
        } else {
            if (!ob_gaps_take(&c->gaps, seq))
                continue;
            rc->fresh++;
            if (k >= 0 && k < OB_BUCKETS && (c->handoff >> k & 1))
                c->handoff_seq = min_u64(c->handoff_seq, seq - 1); /* not published */
            if (k < 0 || k >= OB_BUCKETS || !((c->active & c->owned) >> k & 1) ||
                seq <= c->floor[k] || row[OB_CCOL_STATUS] == NULL ||
                strcmp(row[OB_CCOL_STATUS], "0") != 0)
                continue;
        }
        if (row[OB_COL_ID] == NULL || len[OB_COL_ID] != 16 || k < 0 || k >= OB_BUCKETS)
            continue;
        rc->x->seq[rc->n] = seq;
        rc->x->bucket[rc->n] = (uint8_t)k;
        rc->n++;
        *lengths = len;
        return row;
    }
    return NULL;
}

static void read_rows(ob_cursor *c) {
    uint64_t now = uv_now(c->env.loop);
    int check = ob_gaps_checkable(&c->gaps) && now >= c->check_at &&
                (!c->no_process || now >= c->process_at);
    if (check)
        c->check_at = now + CHECK_EVERY_MS;
    c->check_sent = check;
    ob_buf_reset(&c->sql);
    ob_cursor_sql_read(&c->sql, c->cfg.qtable, &c->gaps, c->active, c->env.batch_size, check,
                       c->stop != 0);
    send_sql(c, CR_READING);
}

static void got_rows(ob_cursor *c) {
    uint64_t now = uv_now(c->env.loop);
    char **row = ob_db_next_row(c->db, 0, NULL);
    if (row && row[0])
        ob_gaps_stamp(&c->gaps, strtod(row[0], NULL));
    /* With a check, the second column is the oldest other transaction's
     * start, NULL when there is none. */
    if (row && row[0] && c->check_sent)
        ob_gaps_check(&c->gaps, strtod(row[0], NULL), row[1] ? strtod(row[1], NULL) : -1);
    if (c->check_sent)
        process_back(c);
    /* The third, when asked for, is MAX(seq): a mark for the next check. */
    if (row && row[0] && row[2])
        ob_gaps_mark(&c->gaps, strtoull(row[2], NULL, 10));
    read_cur rc = {c, &c->next_x, 0, 0, 0, 0, 0, 0};
    int n = ob_batch_load(&c->next, read_next, &rc, c->env.pub.epoch(c->env.pub.data));
    ob_batch_set_binary(&c->next, ob_db_col_binary(c->db, 1, OB_COL_PAYLOAD));
    c->next.gen = ++c->gen;
    ob_gaps_read_end(&c->gaps, rc.seen >= c->env.batch_size ? rc.last : UINT64_MAX);
    c->env.stats->cursor_gap_age_s = ob_gaps_age(&c->gaps);
    c->last_cut = rc.seen >= c->env.batch_size;
    c->last_fresh = rc.fresh;
    c->read_since = 1;
    if (c->gaps.oom || (n > 0 && keep_rows(&c->next, &c->next_x) != 0)) {
        OB_WARN(c->env.log, "cursor: out of memory for a batch; reading again from the cursors");
        c->gaps.oom = 0;
        c->next.n = 0;
        c->resync = 1;
    } else if (n > 0) {
        c->next_ready = 1;
        c->env.stats->fetched += (uint64_t)n;
    }
    if (c->last_cut)
        c->read_at = now;
    else if (rc.fresh > 0 || now < c->hot_until)
        c->read_at = now + c->cfg.poll_min_ms;
    else
        c->read_at = now + c->env.poll_interval_ms;
    if (rc.fresh > 0)
        c->hot_until = now + HOT_MS;
    if (c->gaps.n > 0)
        c->read_at = min_u64(c->read_at, now + GAP_POLL_MS);
    set_state(c, CR_IDLE);
    dispatch(c, CE_KICK);
}

/* --- the retry lane ------------------------------------------------------ */

/* Status-2 rows were written: the lane looks again at its busy pace. */
static void lane_dirty(ob_cursor *c) {
    c->lane_clean = 0;
    c->lane_at = min_u64(c->lane_at, uv_now(c->env.loop) + LANE_EVERY_MS);
}

static void lane_read(ob_cursor *c) {
    c->lane_at = uv_now(c->env.loop) + LANE_EVERY_MS;
    ob_buf_reset(&c->sql);
    ob_cursor_sql_lane(&c->sql, c->cfg.qtable, c->active & c->owned, c->env.batch_size,
                       c->cfg.horizon_ms);
    send_sql(c, CR_LANE_READING);
}

static void lane_rows(ob_cursor *c) {
    read_cur rc = {c, &c->cur_x, 1, 0, 0, 0, 0, 0};
    ob_batch *b = &c->pw.batch;
    int n = ob_batch_load(b, read_next, &rc, c->env.pub.epoch(c->env.pub.data));
    ob_batch_set_binary(b, ob_db_col_binary(c->db, 0, OB_COL_PAYLOAD));
    b->gen = ++c->gen;
    /* Read whole, the result names every aggregate still held. */
    if (rc.seen < c->env.batch_size) {
        ob_held_clear(&c->held);
        for (int i = 0; i < n; i++)
            ob_held_add(&c->held, b->slots[i].row.aggregate_type,
                        b->slots[i].row.aggregate_type_len, b->slots[i].row.aggregate_id,
                        b->slots[i].row.aggregate_id_len);
    }
    c->lane_clean = rc.soon == 0;
    if (c->lane_clean && c->held.n == 0)
        c->lane_at = uv_now(c->env.loop) + LANE_IDLE_MS;
    int due = 0;
    for (int i = 0; i < n; i++)
        due += b->slots[i].state == OB_SLOT_UNSENT;
    if (due == 0 || keep_rows(b, &c->cur_x) != 0) {
        b->n = 0;
        set_state(c, CR_IDLE);
        dispatch(c, CE_KICK);
        return;
    }
    c->cur_active = 1;
    c->dropped = 0;
    c->cur_lane = 1;
    c->want_finish = 0;
    set_state(c, CR_IDLE);
    pump(c);
    dispatch(c, CE_KICK);
}

/* --- finishing ----------------------------------------------------------- */

static void hold_aggregate(ob_cursor *c, const ob_row *r) {
    if (ob_held_add(&c->held, r->aggregate_type, r->aggregate_type_len, r->aggregate_id,
                    r->aggregate_id_len) != 0)
        OB_WARN(c->env.log, "cursor: out of memory for a held aggregate");
}

/* 1 when the finished batch has rows to write in buckets this reader owns:
 * failed rows, rows held behind them, a lane batch's acked rows. */
static int owned_writes(const ob_cursor *c) {
    const ob_batch *b = &c->pw.batch;
    for (int i = 0; i < b->n; i++) {
        int st = b->slots[i].state;
        if ((st == OB_SLOT_FAILED || st == OB_SLOT_HELD || (c->cur_lane && st == OB_SLOT_ACKED)) &&
            owns(c, i))
            return 1;
    }
    return 0;
}

/* Writes what the finished batch needs: failed rows (an attempt, status 2
 * or -1), rows held behind them (status 2), a lane batch's acked rows
 * (status 1); and moves the cursors. */
static void finish(ob_cursor *c) {
    ob_batch *b = &c->pw.batch;
    const ob_worker_env *e = &c->env;
    int interrupted = e->pub.epoch(e->pub.data) != b->epoch;
    ob_batch_decide(b, &e->batch, interrupted);
    if (requeue(c) > 0) {
        go_idle(c, uv_now(e->loop));
        return; /* published again once the broker and the lease allow */
    }
    /* Rows are written only under a proven lease: an owner frozen or cut
     * off past it writes nothing on rows another relay may own by now. The
     * batch waits until the lease is proven again, or until its buckets are
     * given up (their new owner reads them again from cursors that never
     * passed them). A stop waits too, until its deadline drops the batch:
     * its rows stay above the cursors, to be read again. */
    if (!may_publish(c) && owned_writes(c)) {
        go_idle(c, uv_now(e->loop));
        return;
    }
    ob_worker_log_passed(&c->pw);
    ob_buf_reset(&c->sql);
    c->fin_acked = c->fin_dead = c->fin_retry = c->fin_held = 0;
    int nacked = 0, nheld = 0;
    for (int i = 0; i < b->n; i++) {
        ob_slot *s = &b->slots[i];
        if (s->state == OB_SLOT_ACKED) {
            c->fin_acked++;
            if (c->cur_lane) {
                if (nacked == 0)
                    ob_sql_processed_head(&c->sql, c->cfg.qtable, e->batch.processing);
                ob_sql_add_id(&c->sql, s->row.id, nacked++ == 0);
            }
        }
    }
    if (nacked)
        ob_sql_end_ids(&c->sql);
    for (int i = 0; i < b->n; i++) {
        ob_slot *s = &b->slots[i];
        if (s->state != OB_SLOT_FAILED || !owns(c, i))
            continue; /* a bucket given up: its new owner decides */
        ob_cursor_sql_fail_head(&c->sql, c->cfg.qtable, b->errs.p + s->err_off, s->err_len, s->dead,
                                e->batch.max_attempts, &e->batch.backoff);
        ob_sql_add_id(&c->sql, s->row.id, 1);
        ob_sql_end_ids(&c->sql);
        if (s->dead || s->row.attempts + 1 >= e->batch.max_attempts) {
            c->fin_dead++;
        } else {
            c->fin_retry++;
            hold_aggregate(c, &s->row);
            lane_dirty(c);
        }
    }
    for (int i = 0; i < b->n && !c->cur_lane; i++) {
        ob_slot *s = &b->slots[i];
        if (s->state != OB_SLOT_HELD || !owns(c, i))
            continue;
        if (nheld == 0)
            ob_cursor_sql_hold_head(&c->sql, c->cfg.qtable);
        ob_sql_add_id(&c->sql, s->row.id, nheld++ == 0);
        hold_aggregate(c, &s->row);
        lane_dirty(c);
    }
    if (nheld)
        ob_sql_end_ids(&c->sql);
    c->fin_held = nheld;
    c->pending = 0;
    if (c->handoff && !c->cur_lane) {
        /* The buckets given up: their rows of this batch that were not
         * acked stay above their last cursor. */
        uint64_t hs = UINT64_MAX;
        for (int i = 0; i < b->n; i++)
            if ((c->handoff >> c->cur_x.bucket[i] & 1) && b->slots[i].state != OB_SLOT_ACKED)
                hs = min_u64(hs, c->cur_x.seq[i] - 1);
        c->handoff_seq = min_u64(c->handoff_seq, hs);
    }
    if (c->sql.len == 0) {
        /* Nothing to write (the usual case): the batch is done, and the
         * cursor moves with the next advance while the next batch leaves. */
        finished(c);
        kick(c);
        return;
    }
    if (!c->cur_lane && (c->active & c->owned) && may_publish(c)) {
        uint64_t safe = safe_point(c, 0);
        if (safe > c->written) {
            ob_cursor_sql_advance(&c->sql, c->cfg.ctable, c->cfg.table, c->active & c->owned, safe);
            c->pending = safe;
        }
    }
    if (c->sql.p[c->sql.len - 1] == ';')
        c->sql.len--;
    c->sql.p[c->sql.len] = '\0';
    send_sql(c, CR_FINISHING);
}

static void finished(ob_cursor *c) {
    outbox_stats *st = c->env.stats;
    ob_flow_leave(c->env.flow, &c->pw.fm);
    c->on_idle_list = 0;
    st->acked += (uint64_t)c->fin_acked;
    st->duplicates += (uint64_t)c->pw.batch.n_dup;
    st->dead += (uint64_t)c->fin_dead;
    st->failed += (uint64_t)c->fin_retry;
    st->held_back += (uint64_t)c->fin_held;
    if (c->fin_acked || c->fin_dead || c->fin_retry)
        st->batches++;
    if (c->pending)
        c->written = c->pending;
    c->pending = 0;
    c->cur_active = c->want_finish = c->cur_lane = 0;
    c->pw.batch.n = 0;
    c->read_since = 0;
    set_state(c, CR_IDLE);
}

/* The last cursor of the buckets given up: the lease keeps their locks one
 * more round, during which the reader goes on (publishing none of their
 * rows) and moves their cursors as far as the gaps it sees close allow, so
 * that their new owner publishes little again. Returns 1 when a statement
 * was sent. */
static int hand_over(ob_cursor *c, uint64_t now) {
    if (now >= c->handoff_until || !c->own.lease_valid(c->own.data)) {
        c->handoff = 0;
        c->handoff_seq = UINT64_MAX;
        return 0;
    }
    uint64_t seq = min_u64(c->handoff_seq, safe_point(c, 1));
    if (seq <= c->handoff_written || now < c->handoff_at || c->cur_active)
        return 0;
    c->handoff_written = seq;
    c->handoff_at = now + GAP_POLL_MS;
    ob_buf_reset(&c->sql);
    ob_cursor_sql_advance(&c->sql, c->cfg.ctable, c->cfg.table, c->handoff, seq);
    c->pending = 0; /* not the owned buckets' cursor */
    send_sql(c, CR_ADVANCING);
    return 1;
}

static void advance(ob_cursor *c, uint64_t safe) {
    /* Each cursor UPDATE is a commit the reader's connection waits for:
     * once a second, but promptly while a drain waits for the cursors. */
    c->advance_at =
        uv_now(c->env.loop) + (c->own.drain_wanted(c->own.data) ? GAP_POLL_MS : ADVANCE_EVERY_MS);
    ob_buf_reset(&c->sql);
    ob_cursor_sql_advance(&c->sql, c->cfg.ctable, c->cfg.table, c->active & c->owned, safe);
    c->pending = safe;
    send_sql(c, CR_ADVANCING);
}

/* --- choosing the next statement ----------------------------------------- */

static void close_all(ob_cursor *c);

static int drained(const ob_cursor *c) {
    return c->owned && c->active == c->owned && !c->resync && !c->init && !c->cur_active &&
           !c->next_ready && c->read_since && !c->last_cut && c->last_fresh == 0 &&
           c->gaps.n == 0 && c->written >= c->gaps.top && c->lane_clean;
}

static void go_idle(ob_cursor *c, uint64_t now) {
    uint64_t at = c->read_at;
    if (c->active & c->owned)
        at = min_u64(at, c->lane_at);
    if (safe_point(c, 1) > c->written)
        at = min_u64(at, c->advance_at);
    if (c->handoff)
        at = min_u64(at, min_u64(c->handoff_until, c->handoff_at > now ? c->handoff_at : now + 1));
    if (c->cur_active && has_unsent(&c->pw.batch))
        at = min_u64(at, now + GAP_POLL_MS); /* waiting for the broker or the lease */
    if (!c->on_idle_list && !c->cur_active) {
        ob_flow_idle(c->env.flow, &c->pw.fm);
        c->on_idle_list = 1;
    }
    uv_timer_start(&c->timer, on_timer, at > now ? at - now : 1, 0);
}

/* A graceful stop: the batches read are published, the gaps still open
 * are watched (reading them alone) for a while, so that the last cursor
 * write leaves as little as possible to publish again; then it closes. */
static void stopping(ob_cursor *c, uint64_t now) {
    if (c->cur_active)
        return; /* the batch in flight finishes first */
    if (c->stop == 1 && c->next_ready && (c->active & c->owned) && may_publish(c)) {
        swap_in_next(c);
        pump(c);
        if (c->want_finish)
            finish(c);
        return;
    }
    if (c->stop_until == 0)
        c->stop_until = now + STOP_GAPS_MS;
    if (c->stop == 1 && c->gaps.n > 0 && !c->next_ready && now < c->stop_until &&
        (c->active & c->owned) && may_publish(c)) {
        if (now >= c->read_at) {
            read_rows(c);
            return;
        }
        uv_timer_start(&c->timer, on_timer, c->read_at - now, 0);
        return;
    }
    uint64_t safe = safe_point(c, 1);
    if (c->stop == 1 && safe > c->written && (c->active & c->owned) && may_publish(c)) {
        c->stop = 2; /* the last word: then close, whatever it gets */
        advance(c, safe);
        return;
    }
    close_all(c);
}

static void kick(ob_cursor *c) {
    if (c->state != CR_IDLE)
        return;
    uv_timer_stop(&c->timer);
    if (c->halted) {
        drop_current(c);
        set_state(c, CR_HALTED);
        return;
    }
    uint64_t now = uv_now(c->env.loop);
    pump(c);
    if (c->want_finish) {
        finish(c);
        return;
    }
    if (c->stop) {
        stopping(c, now);
        return;
    }
    if (c->on_idle_list) {
        ob_flow_leave(c->env.flow, &c->pw.fm);
        c->on_idle_list = 0;
    }
    if (ob_flow_take_wake(c->env.flow))
        c->read_at = 0;
    if (checks_first(c, now))
        return;
    if (c->handoff && hand_over(c, now))
        return;
    if ((c->resync || c->owned != c->active) && !c->cur_active && !c->handoff) {
        load(c);
        return;
    }
    if (!c->active) {
        c->read_at = now + c->env.poll_interval_ms;
        go_idle(c, now);
        return;
    }
    if (!c->cur_active && c->next_ready) {
        swap_in_next(c);
        pump(c);
        if (c->want_finish) {
            finish(c);
            return;
        }
    }
    if (!c->cur_active && (c->active & c->owned) && now >= c->lane_at) {
        lane_read(c);
        return;
    }
    uint64_t safe = safe_point(c, 1);
    if (safe > c->written && now >= c->advance_at && (c->active & c->owned) && may_publish(c)) {
        advance(c, safe);
        return;
    }
    if (!c->next_ready && now >= c->read_at) {
        read_rows(c);
        return;
    }
    if (drained(c) && c->own.drain_wanted(c->own.data)) {
        c->own.drained(c->own.data);
        if (c->state != CR_IDLE)
            return;
    }
    go_idle(c, now);
}

/* --- failures ------------------------------------------------------------ */

static void db_lost(ob_cursor *c) {
    if (c->db_up) {
        c->db_up = 0;
        c->env.stats->db_connected--;
        c->env.stats->db_reconnects++;
    }
    drop_current(c);
    c->active = 0;
    c->handoff = 0;
    c->handoff_seq = UINT64_MAX;
    c->resync = 1;
    c->pending = 0;
    ob_db_reset(c->db);
    set_state(c, CR_CONNECT_WAIT);
    uv_timer_start(&c->timer, on_timer, ob_retry_delay(&c->retry, ++c->failures), 0);
}

/* The connection died while no statement ran (ob_db_watch): found now,
 * not at the next read. */
static void on_db_lost(ob_db *db, int ok, void *data) {
    ob_cursor *c = data;
    (void)ok;
    if (c->state != CR_IDLE && c->state != CR_INIT_WAIT && c->state != CR_RETRY_WAIT)
        return;
    OB_WARN(c->env.log, "cursor: database connection lost (%s); reconnecting", ob_db_error(db));
    db_lost(c);
}

static void fatal(ob_cursor *c, const char *why) {
    set_state(c, CR_HALTED);
    c->halted = 1;
    c->own.fatal(c->own.data, why);
}

static void probe_failed(ob_cursor *c, unsigned no) {
    char why[700];
    if (no == ER_SPECIFIC_ACCESS_DENIED_ERROR ||
        ((no == ER_DBACCESS_DENIED_ERROR || no == ER_TABLEACCESS_DENIED_ERROR) &&
         strstr(ob_db_error(c->db), "INNODB_TRX") != NULL)) {
        snprintf(why, sizeof(why),
                 "--cursor needs the PROCESS privilege to read information_schema.INNODB_TRX "
                 "(%u %s): GRANT PROCESS ON *.* TO '%s'@'<host>'",
                 no, ob_db_error(c->db), c->cfg.db_user ? c->cfg.db_user : "user");
    } else if (no == ER_TABLEACCESS_DENIED_ERROR || no == ER_COLUMNACCESS_DENIED_ERROR) {
        char grants[400];
        ob_cursor_grants_text(grants, sizeof(grants), c->cfg.table,
                              c->cfg.db_user ? c->cfg.db_user : "user");
        snprintf(why, sizeof(why), "--cursor: the database refuses a grant it needs (%u %s): %s",
                 no, ob_db_error(c->db), grants);
    } else if (no == ER_NO_SUCH_TABLE) {
        snprintf(why, sizeof(why),
                 "--cursor needs the cursor table %s (%u %s); create it with: outbox-uvrelay "
                 "schema --migrate --table %s | mariadb <database>",
                 c->cfg.ctable, no, ob_db_error(c->db), c->cfg.table);
    } else {
        snprintf(why, sizeof(why), "--cursor's start-up check failed: %u %s%s", no,
                 ob_db_error(c->db), ob_db_error_hint(no));
    }
    fatal(c, why);
}

static void db_failed(ob_cursor *c) {
    unsigned no = ob_db_errno(c->db);
    if (ob_db_lost(c->db) || c->state == CR_CONNECTING) {
        if (c->state == CR_CONNECTING && !c->settled && ob_db_errno_is_permanent(no)) {
            char why[512];
            snprintf(why, sizeof(why), "database: %u %s%s", no, ob_db_error(c->db),
                     ob_db_error_hint(no));
            fatal(c, why);
            return;
        }
        if (no != c->last_err)
            OB_WARN(c->env.log, "cursor: database connection %s (%u %s); reconnecting",
                    c->state == CR_CONNECTING ? "failed" : "lost", no, ob_db_error(c->db));
        c->last_err = no;
        db_lost(c);
        return;
    }
    if (c->state == CR_PROBING && !c->settled && ob_db_errno_is_permanent(no)) {
        probe_failed(c, no);
        return;
    }
    if (refused(c, no))
        return;
    if (no != c->last_err)
        OB_WARN(c->env.log, "cursor: %s failed: %u %s; trying again", state_names[c->state], no,
                ob_db_error(c->db));
    c->last_err = no;
    c->env.stats->db_errors++;
    c->pending = 0;
    if (c->state == CR_LOADING || c->state == CR_MARKING || c->state == CR_CHECKING ||
        c->state == CR_INITIALISING)
        c->resync = 1;
    if (c->state == CR_FINISHING)
        c->want_finish = 1; /* written again */
    set_state(c, CR_RETRY_WAIT);
    uv_timer_start(&c->timer, on_timer, ob_retry_delay(&c->retry, ++c->failures), 0);
}

/* --- the states ---------------------------------------------------------- */

static void db_ok(ob_cursor *c) {
    if (c->state != CR_CONNECTING)
        c->failures = 0;
    c->last_err = 0;
    switch (c->state) {
    case CR_CONNECTING:
        c->db_up = 1;
        c->env.stats->db_connected++;
        send_probe(c, 0);
        return;
    case CR_PROBING:
        c->settled = 1;
        c->failures = 0;
        c->resync = 1;
        grants_back(c);
        send_fit(c);
        return;
    case CR_FITTING:
        fitted(c);
        return;
    case CR_LOADING:
        loaded(c);
        return;
    case CR_MARKING:
        marked(c);
        return;
    case CR_CHECKING:
        checked_init(c);
        return;
    case CR_INITIALISING:
        initialised(c);
        return;
    case CR_READING:
        got_rows(c);
        return;
    case CR_LANE_READING:
        lane_rows(c);
        return;
    case CR_FINISHING:
        finished(c);
        kick(c);
        return;
    case CR_ADVANCING:
        if (c->pending)
            c->written = c->pending;
        c->pending = 0;
        set_state(c, CR_IDLE);
        kick(c);
        return;
    default:
        return;
    }
}

static void on_timer_event(ob_cursor *c) {
    switch (c->state) {
    case CR_CONNECT_WAIT:
        connect_db(c);
        return;
    case CR_INIT_WAIT:
        check_init(c);
        return;
    case CR_RETRY_WAIT:
        set_state(c, CR_IDLE);
        kick(c);
        return;
    case CR_IDLE:
        kick(c);
        return;
    default:
        return;
    }
}

static void dispatch(ob_cursor *c, cursor_event ev) {
    switch (ev) {
    case CE_START:
        if (c->state == CR_NEW)
            connect_db(c);
        return;
    case CE_DB_OK:
        db_ok(c);
        return;
    case CE_DB_FAILED:
        if (c->state != CR_CLOSING && c->state != CR_CLOSED && c->state != CR_HALTED)
            db_failed(c);
        return;
    case CE_TIMER:
        on_timer_event(c);
        return;
    case CE_KICK:
        if (c->state == CR_IDLE)
            kick(c);
        else if (c->state != CR_CLOSING && c->state != CR_CLOSED && c->state != CR_NEW)
            pump(c); /* acks and capacity go on while a statement runs */
        return;
    case CE_HALT:
        c->halted = 1;
        if (c->state == CR_IDLE || c->state == CR_RETRY_WAIT || c->state == CR_INIT_WAIT ||
            c->state == CR_CONNECT_WAIT) {
            set_state(c, CR_IDLE);
            kick(c);
        }
        return;
    case CE_STOP:
        if (c->stop == 0)
            c->stop = 1;
        if (c->state == CR_NEW || c->state == CR_HALTED || c->state == CR_CONNECT_WAIT ||
            c->state == CR_RETRY_WAIT || c->state == CR_INIT_WAIT || c->state == CR_CONNECTING ||
            c->state == CR_PROBING)
            close_all(c);
        else if (c->state == CR_IDLE)
            kick(c);
        return;
    case CE_STOP_NOW:
        c->stop = 2;
        if (c->state != CR_CLOSING && c->state != CR_CLOSED)
            close_all(c);
        return;
    }
}

/* --- life cycle ---------------------------------------------------------- */

ob_cursor *ob_cursor_new(const ob_cursor_config *cfg, const ob_cursor_owner *owner) {
    ob_cursor *c = calloc(1, sizeof(*c));
    if (c == NULL)
        return NULL;
    c->cfg = *cfg;
    c->own = *owner;
    c->env = *cfg->env;
    c->env.owner.may_publish = may_publish;
    c->env.owner.data = c;
    c->env.order = OB_ORDER_AGGREGATE;
    c->handoff_seq = UINT64_MAX;
    c->pw.env = &c->env;
    c->pw.index = cfg->index;
    snprintf(c->pw.name, sizeof(c->pw.name), "cursor");
    c->pw.fm.on_capacity = on_capacity;
    c->pw.fm.on_wake = on_wake;
    int cap = c->env.batch_size;
    ob_retry_init(&c->retry, 250, 5000);
    if (ob_batch_init(&c->pw.batch, cap, OB_ORDER_AGGREGATE) != 0 ||
        ob_batch_init(&c->next, cap, OB_ORDER_AGGREGATE) != 0 || extras_init(&c->cur_x, cap) ||
        extras_init(&c->next_x, cap)) {
        ob_cursor_free(c);
        return NULL;
    }
    return c;
}

void ob_cursor_free(ob_cursor *c) {
    if (c == NULL)
        return;
    ob_batch_free(&c->pw.batch);
    ob_batch_free(&c->next);
    extras_free(&c->cur_x);
    extras_free(&c->next_x);
    ob_gaps_free(&c->gaps);
    ob_held_free(&c->held);
    ob_buf_free(&c->sql);
    free(c);
}

void ob_cursor_start(ob_cursor *c) {
    uv_timer_init(c->env.loop, &c->timer);
    uv_timer_init(c->env.loop, &c->ack_timer);
    c->timer.data = c->ack_timer.data = c;
    c->handles_open = 2;
    c->db = ob_db_new(c->env.loop, &c->env.db, c->env.log, "cursor");
    if (c->db == NULL) {
        fatal(c, "out of memory for the cursor reader's connection");
        return;
    }
    c->handles_open++;
    ob_db_watch(c->db, on_db_lost, c);
    dispatch(c, CE_START);
}

static void handle_closed(ob_cursor *c) {
    if (--c->handles_open > 0)
        return;
    set_state(c, CR_CLOSED);
    c->own.closed(c->own.data);
}

static void timer_closed(uv_handle_t *h) {
    handle_closed(h->data);
}

static void db_closed(void *data) {
    handle_closed(data);
}

static void close_all(ob_cursor *c) {
    if (c->state == CR_CLOSING || c->state == CR_CLOSED)
        return;
    drop_current(c);
    if (c->db_up) {
        c->db_up = 0;
        c->env.stats->db_connected--;
    }
    set_state(c, CR_CLOSING);
    uv_close((uv_handle_t *)&c->timer, timer_closed);
    uv_close((uv_handle_t *)&c->ack_timer, timer_closed);
    if (c->db)
        ob_db_close(c->db, db_closed, c);
    c->db = NULL;
}

void ob_cursor_owned(ob_cursor *c, uint64_t owned) {
    if (owned == c->owned)
        return;
    c->dropped |= c->owned & ~owned;
    if (c->owned & ~owned & c->active) {
        c->handoff |= c->owned & ~owned & c->active;
        c->handoff_until = uv_now(c->env.loop) + HANDOFF_MS;
        c->handoff_written = 0;
    }
    c->owned = owned;
    /* The unsent rows of a bucket given up stay unsent: its new owner
     * publishes them. */
    for (int i = 0; c->cur_active && i < c->pw.batch.n; i++)
        if (c->pw.batch.slots[i].state == OB_SLOT_UNSENT && !owns(c, i))
            ob_batch_release(&c->pw.batch, i);
    c->resync = 1;
    dispatch(c, CE_KICK);
}

void ob_cursor_ack(ob_cursor *c, const ob_ack *a) {
    if (!c->cur_active)
        return;
    ob_worker_take_ack(&c->pw, a);
    dispatch(c, CE_KICK);
}

void ob_cursor_broker(ob_cursor *c, int ready) {
    (void)ready;
    dispatch(c, CE_KICK);
}

void ob_cursor_halt(ob_cursor *c) {
    dispatch(c, CE_HALT);
}

void ob_cursor_stop(ob_cursor *c, int now) {
    dispatch(c, now ? CE_STOP_NOW : CE_STOP);
}

void ob_cursor_deadline(ob_cursor *c) {
    dispatch(c, CE_STOP_NOW);
}

/* --- the reader interface (reader.h) -------------------------------------- */

static void reader_start(void *self) {
    ob_cursor_start(self);
}

static void reader_stop(void *self, int now) {
    ob_cursor_stop(self, now);
}

static void reader_halt(void *self) {
    ob_cursor_halt(self);
}

static void reader_ack(void *self, const ob_ack *ack) {
    ob_cursor_ack(self, ack);
}

static void reader_broker(void *self, int ready) {
    ob_cursor_broker(self, ready);
}

static void reader_deadline(void *self) {
    ob_cursor_deadline(self);
}

/* The cursor reader tells its owner of its drain itself (drained) and is
 * the relay's only reader: no drain waits for its batch. */
static int reader_busy(const void *self) {
    (void)self;
    return 0;
}

static const char *reader_refusal(const void *self) {
    return ob_cursor_paused(self);
}

static void reader_free(void *self) {
    ob_cursor_free(self);
}

const ob_reader_ops ob_cursor_reader_ops = {
    .start = reader_start,
    .stop = reader_stop,
    .halt = reader_halt,
    .ack = reader_ack,
    .broker = reader_broker,
    .deadline = reader_deadline,
    .busy = reader_busy,
    .refusal = reader_refusal,
    .free = reader_free,
};
