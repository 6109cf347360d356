/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Cursor mode's reader (see cursor.h): one connection, one statement at a
 * time, and a pipeline of two batches: the next one is read while the
 * current one is being published.
 *
 *   NEW --start--> CONNECTING --ok--> PROBING (INNODB_TRX and the cursor table)
 *                   | fail --> CONNECT_WAIT --timer--> CONNECTING
 *   PROBING (and the grants) --ok--> FITTING (counter and cursors, cursor_fit.h)
 *   FITTING --ok--> IDLE;  no PROCESS, no cursor table, a grant missing, the
 *      cursors above the counter or the witness replaced, no seq trigger --> HALTED
 *   IDLE: one pass over the duties (kick, the table duties[] below) picks
 *     what comes next; among them:
 *     the current batch ANSWERED: its writes, cursor -> FINISHING --> IDLE
 *     about once a second, and while the cursors are above the counter or
 *        the server refuses a write ------------------> FITTING or PROBING --> IDLE
 *     the owned buckets changed, nothing in flight --> LOADING (cursors, held aggregates)
 *        a bucket without a cursor row: LOADING --> MARKING (clock, MAX(seq))
 *        --> CHECKING (INNODB_TRX) --not yet--> INIT_WAIT --timer--> CHECKING
 *        --proven--> INITIALISING (status 2 for ordered retries, cursor rows) --> LOADING
 *     status-2 rows may be due, nothing in flight --> LANE_READING --> IDLE
 *     the next batch's read is due ------------------> READING --> IDLE
 *     resolved gaps let the cursor move -------------> ADVANCING --> IDLE
 *     nothing in flight, failback due (db.h) --------> CONNECT_WAIT, at once
 *     else waits in IDLE for the poll timer, a wake, acks or capacity
 *   any statement --failed--> RETRY_WAIT --timer--> IDLE (lost: CONNECT_WAIT, then PROBING)
 *   HALTED: the relay cannot go on; waiting for the stop
 *   any state --stop--> CLOSING --> CLOSED
 *
 * The pipeline: the batch being published (current) and the batch read
 * ahead (next), each in a phase (batch_phase) that only this file changes:
 *   next:    EMPTY --a read with rows (READING)--> READY
 *            READY --taken in while the current is EMPTY--> EMPTY
 *   current: EMPTY --the next taken in, or the retry lane's rows--> PUBLISHING
 *            PUBLISHING --every row has its answer--> ANSWERED
 *            ANSWERED --rows given back, to publish again--> PUBLISHING
 *            ANSWERED --its outcome written (FINISHING), or none to write--> EMPTY
 *   both --> EMPTY when the cursors are loaded again, the connection is
 *   lost, the reader halts or closes, or the server refuses a write or
 *   disagrees with the cursors.
 *
 * How it reads, publishes, finishes a batch and retries: see cursor.h.
 *
 * This file is the state machine: it sends every statement and makes every
 * change of state. The files of its concerns (cursor_int.h) build the
 * statements and take their results, and are called from here only:
 * cursor_batch.c (the batches being published), cursor_checks.c (the
 * checked assumptions and refused grants), cursor_read.c (the cursors'
 * load, a bucket's initialisation, the reads and the retry lane) and
 * cursor_finish.c (finishing a batch, moving the cursors); each owns its
 * duties, which say what to send, and this file sends it.
 */
#include "cursor.h"

#include <mysqld_error.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "cursor_int.h"
#include "cursor_sql.h"

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

static const char *const phase_names[] = {
    [B_EMPTY] = "empty",
    [B_READY] = "ready",
    [B_PUBLISHING] = "publishing",
    [B_ANSWERED] = "answered",
};

static const char *const kick_names[] = {
    [KICK_TIMER] = "timer", [KICK_CAPACITY] = "capacity",   [KICK_WAKE] = "wake",
    [KICK_ACK] = "ack",     [KICK_ACK_LATE] = "ack-late",   [KICK_BROKER] = "broker",
    [KICK_OWNED] = "owned", [KICK_STATEMENT] = "statement", [KICK_HALT] = "halt",
    [KICK_STOP] = "stop",
};

static void dispatch(ob_cursor *c, cursor_event ev);
static void kick(ob_cursor *c, cursor_kick why);

/* Something changed that may make a duty due (CE_KICK), and what. */
static void poke(ob_cursor *c, cursor_kick why) {
    c->kicked = why;
    dispatch(c, CE_KICK);
}

static void set_state(ob_cursor *c, cursor_state s) {
    if (c->state != s)
        OB_DEBUG(c->env.log, "cursor: %s -> %s", state_names[c->state], state_names[s]);
    c->state = s;
}

const char *ob_cursor_state_name(const ob_cursor *c) {
    return state_names[c->state];
}

/* The one change of a batch's phase: `slot` is &c->cur_phase or
 * &c->next_phase. */
static void set_phase(ob_cursor *c, batch_phase *slot, batch_phase p) {
    if (*slot != p)
        OB_DEBUG(c->env.log, "cursor: %s batch %s -> %s",
                 slot == &c->cur_phase ? "current" : "next", phase_names[*slot], phase_names[p]);
    *slot = p;
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
    return (ob_cursor *)((char *)m - offsetof(ob_cursor, pub.fm));
}

static void on_capacity(ob_flow_member *m) {
    poke(of_member(m), KICK_CAPACITY);
}

static void on_wake(ob_flow_member *m) {
    ob_cursor *c = of_member(m);
    c->read_at = 0;
    poke(c, KICK_WAKE);
}

/* --- publishing ---------------------------------------------------------- */

static void on_ack_timer(uv_timer_t *t) {
    ob_cursor *c = t->data;
    if (c->cur_phase != B_EMPTY)
        ob_pub_ack_deadline(&c->pub);
    poke(c, KICK_ACK_LATE);
}

/* Arms the ack deadline of the oldest publish in flight, unless armed: the
 * oldest only gets younger as acks come, so an armed timer fires early at
 * worst, and is armed again from there. */
static void arm_ack_timer(ob_cursor *c) {
    if (uv_is_active((uv_handle_t *)&c->ack_timer))
        return;
    uint64_t due = ob_pub_ack_due_in(&c->pub);
    if (due == UINT64_MAX)
        uv_timer_stop(&c->ack_timer);
    else
        uv_timer_start(&c->ack_timer, on_ack_timer, due + 1, 0);
}

/* The batches' moves between phases (the diagram at the top): the next
 * batch taken in, both dropped, and pump()'s PUBLISHING -> ANSWERED. */
static void swap_in(ob_cursor *c) {
    ob_cursor_swap_in_next(c);
    c->cur_from = FROM_READ;
    set_phase(c, &c->cur_phase, B_PUBLISHING);
    set_phase(c, &c->next_phase, B_EMPTY);
}

static void drop_batches(ob_cursor *c) {
    ob_cursor_drop_current(c);
    set_phase(c, &c->cur_phase, B_EMPTY);
    set_phase(c, &c->next_phase, B_EMPTY);
}

/* Publishes what may leave and notes when every row has its answer. */
static void pump(ob_cursor *c) {
    if (c->cur_phase != B_PUBLISHING || c->halted)
        return;
    ob_batch *b = &c->pub.batch;
    /* Without the broker or the lease, unsent rows wait (a timer or the
     * broker's return brings the reader back here). */
    if (ob_cursor_has_unsent(b) &&
        (!c->env.broker.ops->ready(c->env.broker.self) || !ob_cursor_may_publish(c)) &&
        b->outstanding == 0)
        return;
    ob_pub_some(&c->pub);
    switch (ob_pub_after_answers(&c->pub)) {
    case OB_AFTER_ACKS:
        arm_ack_timer(c);
        return;
    case OB_AFTER_VERDICT:
        return; /* the broker's verdict comes as an up or down */
    case OB_AFTER_FINISH:
        uv_timer_stop(&c->ack_timer);
        set_phase(c, &c->cur_phase, B_ANSWERED);
        return;
    }
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
        uv_timer_start(&c->timer, on_timer, ob_db_life_backoff(&c->life), 0);
    }
}

/* --- checked assumptions (cursor_checks.c, cursor_fit.h) ---------------- */

static void fatal(ob_cursor *c, const char *why);

/* The start-up probe: PROCESS, the cursor table, and every grant the
 * reader writes with (the duty "check" sends the grants alone again while
 * the server refuses a write). */
static void send_probe(ob_cursor *c) {
    ob_cursor_probe_sql(c, 0);
    send_sql(c, CR_PROBING);
}

static void send_fit(ob_cursor *c) {
    ob_cursor_next_fit_sql(c);
    send_sql(c, CR_FITTING);
}

/* The counter and the cursors compared: at start a mismatch is fatal (and
 * so under a drain, which could never end); while running the reader
 * publishes and writes nothing until they agree again. */
static void fitted(ob_cursor *c) {
    char why[sizeof(c->misfit_why)];
    int was = c->misfit;
    if (ob_cursor_fit_taken(c, why, sizeof(why))) {
        fatal(c, why);
        return;
    }
    if (c->misfit && !was)
        drop_batches(c); /* publishes and writes nothing until they agree */
    set_state(c, CR_IDLE);
    kick(c, KICK_STATEMENT);
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
        ob_cursor_process_refused(c, no);
        if (was == CR_CHECKING) {
            set_state(c, CR_INIT_WAIT);
            uv_timer_start(&c->timer, on_timer, REFUSED_RETRY_MS, 0);
        } else if (was == CR_PROBING) {
            send_fit(c);
        } else {
            set_state(c, CR_IDLE);
            kick(c, KICK_STATEMENT);
        }
        return 1;
    }
    if (!ob_db_errno_is_refusal(no))
        return 0;
    char why[900];
    if (ob_cursor_refusal(c, no, state_names[c->state], why, sizeof(why))) {
        fatal(c, why);
        return 1;
    }
    drop_batches(c);
    set_state(c, CR_IDLE);
    uv_timer_start(&c->timer, on_timer, REFUSED_RETRY_MS, 0);
    return 1;
}

/* --- reading (cursor_read.c) -------------------------------------------- */

static void load(ob_cursor *c) {
    drop_batches(c);
    ob_cursor_load_sql(c);
    send_sql(c, CR_LOADING);
}

static void loaded(ob_cursor *c) {
    if (ob_cursor_take_load(c)) {
        send_sql(c, CR_MARKING);
        return;
    }
    set_state(c, CR_IDLE);
    poke(c, KICK_STATEMENT);
}

static void check_init(ob_cursor *c) {
    ob_buf_reset(&c->sql);
    ob_cursor_sql_check(&c->sql);
    send_sql(c, CR_CHECKING);
}

static void checked_init(ob_cursor *c) {
    if (!ob_cursor_take_check(c)) {
        set_state(c, CR_INIT_WAIT);
        uv_timer_start(&c->timer, on_timer, GAP_POLL_MS, 0);
        return;
    }
    send_sql(c, CR_INITIALISING);
}

static void lane_rows(ob_cursor *c) {
    int go = ob_cursor_take_lane(c);
    set_state(c, CR_IDLE);
    if (go) {
        c->cur_from = FROM_LANE;
        set_phase(c, &c->cur_phase, B_PUBLISHING);
        pump(c);
    }
    poke(c, KICK_STATEMENT);
}

/* --- finishing (cursor_finish.c) ----------------------------------------- */

/* Waits in IDLE for the earliest thing due: a read, the lane, an advance,
 * a hand-over, unsent rows waiting for the broker or the lease. */
static void go_idle(ob_cursor *c, const cursor_pass *p) {
    uint64_t now = p->now, at = c->read_at;
    if (c->active & c->owned)
        at = min_u64(at, c->lane_at);
    if (ob_cursor_live(c) && p->safe > c->written)
        at = min_u64(at, c->advance_at);
    if (c->handoff)
        at = min_u64(at, min_u64(c->handoff_until, c->handoff_at > now ? c->handoff_at : now + 1));
    if (c->cur_phase != B_EMPTY && ob_cursor_has_unsent(&c->pub.batch))
        at = min_u64(at, now + GAP_POLL_MS); /* waiting for the broker or the lease */
    if (c->pub.fm.list != OB_FLOW_IDLE && c->cur_phase == B_EMPTY)
        ob_flow_idle(c->env.flow, &c->pub.fm);
    uv_timer_start(&c->timer, on_timer, at > now ? at - now : 1, 0);
}

static void finished(ob_cursor *c) {
    ob_cursor_finished(c);
    set_phase(c, &c->cur_phase, B_EMPTY);
    set_state(c, CR_IDLE);
}

/* Writes what the finished batch needs: failed rows (an attempt, status 2
 * or -1), rows held behind them (status 2), a lane batch's acked rows
 * (status 1); and moves the cursors. */
static duty_out finish_run(ob_cursor *c, cursor_pass *p) {
    switch (ob_cursor_finish_sql(c)) {
    case OB_FIN_AGAIN:
        set_phase(c, &c->cur_phase, B_PUBLISHING);
        go_idle(c, p);
        break;
    case OB_FIN_WAIT:
        go_idle(c, p);
        break;
    case OB_FIN_DONE:
        finished(c);
        kick(c, KICK_STATEMENT);
        break;
    case OB_FIN_SEND:
        send_sql(c, CR_FINISHING);
        break;
    }
    return DUTY_DONE;
}

/* --- the duties: choosing the next statement ---------------------------- */

static void close_all(ob_cursor *c);

/* A graceful stop, step by step (stop_step, cursor_finish.c). */
static duty_out stop_run(ob_cursor *c, cursor_pass *p) {
    switch (ob_cursor_stop_step(c, p)) {
    case STOP_IN_FLIGHT:
        break;
    case STOP_TAKE_IN:
        swap_in(c);
        pump(c);
        if (c->cur_phase == B_ANSWERED)
            finish_run(c, p);
        break;
    case STOP_WATCH: /* the read duty's read, or a wait for it */
        if (p->now >= c->read_at)
            return ob_cursor_read_run(c, p);
        p->wait_ms = c->read_at - p->now;
        return DUTY_WAIT;
    case STOP_LAST_WORD: /* then close, whatever it gets */
        c->stop = 2;
        return ob_cursor_advance_run(c, p);
    case STOP_CLOSE:
        close_all(c);
        break;
    }
    return DUTY_DONE;
}

/* cursor.c's own duties: the life cycle and the pipeline's phases. */

static int halt_due(const ob_cursor *c, const cursor_pass *p) {
    (void)p;
    return c->halted;
}

static duty_out halt_run(ob_cursor *c, cursor_pass *p) {
    (void)p;
    drop_batches(c);
    set_state(c, CR_HALTED);
    return DUTY_DONE;
}

/* Publishes what may leave (pump looks whether the batch is publishing):
 * never takes the turn. */
static duty_out publish_run(ob_cursor *c, cursor_pass *p) {
    (void)p;
    pump(c);
    return DUTY_NEXT;
}

static int finish_due(const ob_cursor *c, const cursor_pass *p) {
    (void)p;
    return c->cur_phase == B_ANSWERED;
}

static int stop_due(const ob_cursor *c, const cursor_pass *p) {
    (void)p;
    return c->stop != 0;
}

static int take_in_due(const ob_cursor *c, const cursor_pass *p) {
    (void)p;
    return c->cur_phase == B_EMPTY && c->next_phase == B_READY;
}

/* The batch read ahead is published; the turn goes on unless answered at once. */
static duty_out take_in_run(ob_cursor *c, cursor_pass *p) {
    swap_in(c);
    pump(c);
    if (c->cur_phase != B_ANSWERED)
        return DUTY_NEXT;
    finish_run(c, p);
    return DUTY_DONE;
}

/* The session is gone (lost, counted; or moved): reconnect, reload the cursors. */
static void db_gone(ob_cursor *c, int lost) {
    if (lost)
        ob_db_life_down(&c->life);
    else
        ob_db_life_closed(&c->life);
    drop_batches(c);
    c->active = 0;
    c->handoff = 0;
    c->handoff_seq = UINT64_MAX;
    ob_cursor_resync(c, RESYNC_LOST);
    c->pending = 0;
    ob_db_reset(c->db);
    set_state(c, CR_CONNECT_WAIT);
    uv_timer_start(&c->timer, on_timer, lost ? ob_db_life_backoff(&c->life) : 0, 0);
}

/* Back to the first node (ob_db_failback), between batches, after the advance. */
static int failback_due(const ob_cursor *c, const cursor_pass *p) {
    (void)p;
    return c->cur_phase == B_EMPTY && c->next_phase == B_EMPTY && ob_db_failback_due(c->db);
}

static duty_out failback_run(ob_cursor *c, cursor_pass *p) {
    (void)p;
    ob_db_failback(c->db);
    db_gone(c, 0);
    return DUTY_DONE;
}

static duty_out idle_run(ob_cursor *c, cursor_pass *p) {
    (void)c;
    (void)p;
    return DUTY_IDLE;
}

/* What the reader does in IDLE, in this order (libuv's phases): each duty
 * due runs, the first that takes the turn ends the pass. */
static const cursor_duty duties[] = {
    {"halt", halt_due, halt_run},
    {"publish", NULL, publish_run},
    {"finish", finish_due, finish_run},
    {"stop", stop_due, stop_run},
    {"wake", NULL, ob_cursor_wake_run},
    {"check", ob_cursor_check_due, ob_cursor_check_run},
    {"hand-over", ob_cursor_hand_over_due, ob_cursor_hand_over_run},
    {"load", ob_cursor_load_due, ob_cursor_load_run},
    {"unowned", ob_cursor_unowned_due, ob_cursor_unowned_run},
    {"take-in", take_in_due, take_in_run},
    {"lane", ob_cursor_lane_due, ob_cursor_lane_run},
    {"advance", ob_cursor_advance_due, ob_cursor_advance_run},
    {"failback", failback_due, failback_run},
    {"read", ob_cursor_read_due, ob_cursor_read_run},
    {"drained", ob_cursor_drained_due, ob_cursor_drained_run},
    {"idle", NULL, idle_run},
};

const char *ob_cursor_duty_name(size_t i) {
    return i < sizeof(duties) / sizeof(duties[0]) ? duties[i].name : NULL;
}

/* One pass over the duties; `why` says what brought the reader here. */
static void kick(ob_cursor *c, cursor_kick why) {
    if (c->state != CR_IDLE)
        return;
    uv_timer_stop(&c->timer);
    cursor_pass p = {uv_now(c->env.loop), ob_cursor_safe_point(c, 1), CR_IDLE, 0, 0};
    for (size_t i = 0; i < sizeof(duties) / sizeof(duties[0]); i++) {
        const cursor_duty *d = &duties[i];
        duty_out out = !d->due || d->due(c, &p) ? d->run(c, &p) : DUTY_NEXT;
        if (out == DUTY_NEXT)
            continue;
        if (out == DUTY_SEND) { /* a statement: as often as the states change */
            OB_DEBUG(c->env.log, "cursor: duty %s (kicked by %s)", d->name, kick_names[why]);
            if (p.drop)
                drop_batches(c);
            send_sql(c, p.send);
        } else if (out == DUTY_WAIT)
            uv_timer_start(&c->timer, on_timer, p.wait_ms, 0);
        else if (out == DUTY_IDLE)
            go_idle(c, &p);
        return;
    }
}

/* --- failures ------------------------------------------------------------ */

/* The connection died while no statement ran (ob_db_watch): found now. */
static void on_db_lost(ob_db *db, int ok, void *data) {
    ob_cursor *c = data;
    (void)ok;
    if (c->state != CR_IDLE && c->state != CR_INIT_WAIT && c->state != CR_RETRY_WAIT)
        return;
    OB_WARN(c->env.log, "cursor: database connection lost (%s); reconnecting", ob_db_error(db));
    db_gone(c, 1);
}

static void fatal(ob_cursor *c, const char *why) {
    set_state(c, CR_HALTED);
    c->halted = 1;
    c->own.fatal(c->own.data, why);
}

static void probe_failed(ob_cursor *c, unsigned no) {
    char why[700];
    ob_cursor_probe_why(c, no, why, sizeof(why));
    fatal(c, why);
}

static void db_failed(ob_cursor *c) {
    unsigned no = ob_db_errno(c->db);
    if (ob_db_lost(c->db) || c->state == CR_CONNECTING) {
        if (c->state == CR_CONNECTING && ob_db_life_verdict(&c->life, no) == OB_DB_FATAL) {
            char why[512];
            snprintf(why, sizeof(why), "database: %u %s%s", no, ob_db_error(c->db),
                     ob_db_error_hint(no));
            fatal(c, why);
            return;
        }
        if (ob_db_life_say(&c->life, no))
            OB_WARN(c->env.log, "cursor: database connection %s (%u %s); reconnecting",
                    c->state == CR_CONNECTING ? "failed" : "lost", no, ob_db_error(c->db));
        db_gone(c, 1);
        return;
    }
    if ((c->state == CR_PROBING && ob_db_life_verdict(&c->life, no) == OB_DB_FATAL) ||
        (c->state == CR_FITTING && no == ER_BAD_FIELD_ERROR)) {
        probe_failed(c, no);
        return;
    }
    if (refused(c, no))
        return;
    if (ob_db_life_say(&c->life, no))
        OB_WARN(c->env.log, "cursor: %s failed: %u %s; trying again", state_names[c->state], no,
                ob_db_error(c->db));
    c->env.stats->db_errors++;
    c->pending = 0;
    if (c->state == CR_LOADING || c->state == CR_MARKING || c->state == CR_CHECKING ||
        c->state == CR_INITIALISING)
        ob_cursor_resync(c, RESYNC_FAILED);
    /* A batch being finished stays ANSWERED: it is written again. */
    set_state(c, CR_RETRY_WAIT);
    uv_timer_start(&c->timer, on_timer, ob_db_life_backoff(&c->life), 0);
}

/* --- the states ---------------------------------------------------------- */

static void db_ok(ob_cursor *c) {
    if (c->state != CR_CONNECTING)
        ob_db_life_worked(&c->life);
    switch (c->state) {
    case CR_CONNECTING:
        ob_db_life_up(&c->life);
        send_probe(c);
        return;
    case CR_PROBING:
        ob_db_life_settle(&c->life);
        ob_cursor_resync(c, RESYNC_PROBED);
        ob_cursor_probe_taken(c);
        send_fit(c);
        return;
    case CR_FITTING:
        fitted(c);
        return;
    case CR_LOADING:
        loaded(c);
        return;
    case CR_MARKING:
        ob_cursor_take_mark(c);
        check_init(c);
        return;
    case CR_CHECKING:
        checked_init(c);
        return;
    case CR_INITIALISING:
        ob_cursor_take_init(c);
        load(c);
        return;
    case CR_READING:
        if (ob_cursor_take_rows(c))
            set_phase(c, &c->next_phase, B_READY);
        set_state(c, CR_IDLE);
        poke(c, KICK_STATEMENT);
        return;
    case CR_LANE_READING:
        lane_rows(c);
        return;
    case CR_FINISHING:
        finished(c);
        kick(c, KICK_STATEMENT);
        return;
    case CR_ADVANCING:
        if (c->pending)
            c->written = c->pending;
        c->pending = 0;
        set_state(c, CR_IDLE);
        kick(c, KICK_STATEMENT);
        return;
    default:
        return;
    }
}

/* Waiting for the connect, the probe or a statement. Acks and capacity go
 * on meanwhile; a halt or a graceful stop waits for the statement (kick
 * takes it), but the connect and the probe, which may never end, close. */
static void st_statement(ob_cursor *c, cursor_event ev) {
    if (ev == CE_DB_OK)
        db_ok(c);
    else if (ev == CE_DB_FAILED)
        db_failed(c);
    else if (ev == CE_KICK)
        pump(c);
    else if (ev == CE_STOP_NOW ||
             (ev == CE_STOP && (c->state == CR_CONNECTING || c->state == CR_PROBING)))
        close_all(c);
}

/* Waiting for the timer alone (CONNECT_WAIT, INIT_WAIT, RETRY_WAIT), which
 * is each state's own; a halt goes through IDLE, a stop closes. */
static void st_waiting(ob_cursor *c, cursor_event ev) {
    if (ev == CE_TIMER && c->state == CR_CONNECT_WAIT)
        connect_db(c);
    else if (ev == CE_TIMER && c->state == CR_INIT_WAIT)
        check_init(c);
    else if (ev == CE_TIMER || ev == CE_HALT) { /* RETRY_WAIT's timer, or a halt */
        set_state(c, CR_IDLE);
        kick(c, ev == CE_HALT ? KICK_HALT : KICK_TIMER);
    } else if (ev == CE_KICK)
        pump(c);
    else if (ev == CE_STOP || ev == CE_STOP_NOW)
        close_all(c);
}

/* The connection idle: kick picks what comes next, a stop included. */
static void st_idle(ob_cursor *c, cursor_event ev) {
    if (ev == CE_STOP_NOW)
        close_all(c);
    else if (ev == CE_KICK)
        kick(c, c->kicked);
    else if (ev == CE_TIMER || ev == CE_HALT || ev == CE_STOP)
        kick(c, ev == CE_TIMER ? KICK_TIMER : ev == CE_HALT ? KICK_HALT : KICK_STOP);
}

/* Stop and halt are remembered here, before the state sees them, so that
 * a state that waits for its statement takes them at its next kick. */
static void dispatch(ob_cursor *c, cursor_event ev) {
    if (ev == CE_STOP && c->stop == 0)
        c->stop = 1;
    else if (ev == CE_STOP_NOW)
        c->stop = 2;
    else if (ev == CE_HALT)
        c->halted = 1;
    switch (c->state) {
    case CR_NEW:
        if (ev == CE_START)
            connect_db(c);
        else if (ev == CE_STOP || ev == CE_STOP_NOW)
            close_all(c);
        return;
    case CR_CONNECT_WAIT:
    case CR_INIT_WAIT:
    case CR_RETRY_WAIT:
        st_waiting(c, ev);
        return;
    case CR_IDLE:
        st_idle(c, ev);
        return;
    case CR_HALTED:
        if (ev == CE_STOP || ev == CE_STOP_NOW)
            close_all(c);
        return;
    case CR_CLOSING:
    case CR_CLOSED:
        return;
    default: /* CONNECTING, PROBING and every statement's state */
        st_statement(c, ev);
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
    /* The relay's environment, with an owner of the cursor's own: none of
     * the workers' owner callbacks (they would take the cursor for the
     * relay), only the gate of its publishes. */
    c->env = *cfg->env;
    c->env.owner = (ob_reader_owner){.may_publish = ob_cursor_may_publish, .data = c};
    c->env.order = OB_ORDER_AGGREGATE;
    c->handoff_seq = UINT64_MAX;
    ob_pub_init(&c->pub, &c->env, cfg->index, "cursor", on_capacity, on_wake);
    ob_db_life_init(&c->life, &c->env.stats->db_connected, &c->env.stats->db_reconnects);
    if (ob_cursor_batches_init(c, c->env.batch_size) != 0) {
        ob_cursor_free(c);
        return NULL;
    }
    return c;
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
    drop_batches(c);
    ob_db_life_closed(&c->life);
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
    ob_cursor_new_owned(c, owned);
    poke(c, KICK_OWNED);
}

void ob_cursor_ack(ob_cursor *c, const ob_ack *a) {
    if (c->cur_phase == B_EMPTY)
        return;
    ob_pub_take_ack(&c->pub, a);
    poke(c, KICK_ACK);
}

void ob_cursor_broker(ob_cursor *c, int ready) {
    if (ready)
        ob_pub_say_unanswered(&c->pub);
    poke(c, KICK_BROKER);
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
