/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One MariaDB connection's batch cycle, as a state machine. Every input is
 * an event (database answer, timer, ack, broker readiness, capacity, wake,
 * halt, stop, deadline); dispatch() hands it to the handler of the current
 * state, and every change of state goes through set_state().
 *
 *     NEW --start--> CONNECTING --fail--> CONNECT_WAIT --timer--+
 *   +---------------->  | ok                 ^                   |
 *   |                   v                    +-------------------+
 *   |   (next) <--- broker up (BROKER_WAIT) / wake / timer
 *   |     = CLOSING | HALTED | GRANT_PROBING | BROKER_WAIT | LEASE_WAIT | FETCHING
 *   |   LEASE_WAIT --timer--> (next): the owner may not publish yet (the plain
 *   |     mode's first mode check, an ordered lease not proven): no claim
 *   |          |
 *   |       FETCHING --rows--> PUBLISHING --all answered (and, after no responders,
 *   |          |               a server error or no ack, the link's verdict) / broker
 *   |          |               down / deadline--> FINISHING (UPDATE...; COMMIT)
 *   |          | empty                                  |  nothing to write:
 *   |          v                                      |  ROLLING_BACK --> (next)
 *   |     ENDING_EMPTY (COMMIT [; drain probe])       |  a row refused by the database:
 *   |          |                                      |  ISOLATING <-> REFUSING, one row
 *   |          v                                      |  at a time, then ISO_COMMITTING (COMMIT)
 *   |       (idle) <--------- batch not full ---------+
 *   |          |                                      +-- full batch --> (next), waking the others
 *   |          | a wake kept while all were busy --> (next)
 *   |          v
 *   |   scout? POLL_WAIT --timer, rows lately--> (next)
 *   |          |       \--timer, else--> PROBING --rows, or a ring meanwhile--> (next)
 *   |          |                          | none --> (idle)
 *   |          | no: PARKED --wake--> (next)
 *   |
 *   | error edges:
 *   |   connection lost in any statement    --> CONNECT_WAIT (backoff) --> CONNECTING
 *   +-- deadlock / lock wait timeout        --> ROLLING_BACK --> (next) at once
 *       an error every row would meet (a privilege revoked, read-only)
 *                                           --> ABORTING (ROLLBACK) --> REFUSED_WAIT (backoff)
 *                                               --> (next) = GRANT_PROBING (UPDATE ... WHERE
 *                                               1 = 0) --ok--> (next) | --refused--> ABORTING
 *       other statement error               --> ABORTING (ROLLBACK) --> RETRY_WAIT --> (next)
 *
 *   halt: waiting states --> HALTED; busy states reach HALTED at (next).
 *   stop: waiting states --> CLOSING --> CLOSED; busy states close at (next);
 *         stop now: busy states drop the transaction and close at once.
 *
 * A batch is one transaction: rows claimed by FETCHING stay locked until
 * FINISHING commits what was acked (or ROLLING_BACK gives them back).
 */
#include "worker_int.h"

#include "stats.h"

#include <stdlib.h>

static void dispatch(ob_worker *w, worker_event ev, const void *arg);

static const char *const state_names[] = {
    [W_NEW] = "new",
    [W_CONNECTING] = "connecting",
    [W_CONNECT_WAIT] = "connect-wait",
    [W_BROKER_WAIT] = "broker-wait",
    [W_FETCHING] = "fetching",
    [W_PUBLISHING] = "publishing",
    [W_FINISHING] = "finishing",
    [W_ISOLATING] = "isolating",
    [W_REFUSING] = "refusing",
    [W_ISO_COMMITTING] = "iso-committing",
    [W_ENDING_EMPTY] = "ending-empty",
    [W_ROLLING_BACK] = "rolling-back",
    [W_ABORTING] = "aborting",
    [W_RETRY_WAIT] = "retry-wait",
    [W_LEASE_WAIT] = "lease-wait",
    [W_REFUSED_WAIT] = "refused-wait",
    [W_GRANT_PROBING] = "grant-probing",
    [W_POLL_WAIT] = "poll-wait",
    [W_PROBING] = "probing",
    [W_PARKED] = "parked",
    [W_HALTED] = "halted",
    [W_CLOSING] = "closing",
    [W_CLOSED] = "closed",
};

const char *ob_worker_state_name(const ob_worker *w) {
    return state_names[w->state];
}

const char *ob_worker_refusal(const ob_worker *w) {
    return w->refusing ? w->refusal : NULL;
}

static void set_state(ob_worker *w, worker_state s) {
    if (w->state != s)
        OB_DEBUG(w->env->log, "%s: %s -> %s", w->pub.name, state_names[w->state], state_names[s]);
    w->state = s;
}

/* --- callbacks from libuv, the database and the flow control ------------- */

static void on_db(ob_db *db, int ok, void *data) {
    (void)db;
    dispatch(data, ok ? EV_DB_OK : EV_DB_FAILED, NULL);
}

static void on_db_lost(ob_db *db, int ok, void *data) {
    (void)db;
    (void)ok;
    dispatch(data, EV_DB_LOST, NULL);
}

static void on_timer(uv_timer_t *t) {
    dispatch(t->data, EV_TIMER, NULL);
}

static void on_capacity(ob_flow_member *m) {
    dispatch((ob_worker *)((char *)m - offsetof(ob_worker, pub.fm)), EV_CAPACITY, NULL);
}

static void on_wake(ob_flow_member *m) {
    dispatch((ob_worker *)((char *)m - offsetof(ob_worker, pub.fm)), EV_WAKE, NULL);
}

/* --- actions ------------------------------------------------------------- */

static void close_worker(ob_worker *w);

static void start_timer(ob_worker *w, uint64_t ms) {
    uv_timer_start(&w->timer, on_timer, ms, 0);
}

static void db_failed(ob_worker *w, const char *during);

/* Sends a statement and enters the state that waits for it. */
static void query(ob_worker *w, worker_state s, const char *sql, size_t len) {
    set_state(w, s);
    if (ob_db_query(w->db, sql, len, on_db, w) == 0)
        return;
    if (ob_db_lost(w->db) && ob_db_errno(w->db)) {
        db_failed(w, state_names[s]); /* lost while publishing (see lost_idle) */
        return;
    }
    OB_ERROR(w->env->log, "%s: cannot send a statement; closing the connection", w->pub.name);
    ob_worker_note_unmarked(w);
    ob_worker_db_down(w);
    ob_db_reset(w->db);
    set_state(w, W_CONNECT_WAIT);
    start_timer(w, ob_db_life_backoff(&w->life));
}

static void connect_db(ob_worker *w) {
    set_state(w, W_CONNECTING);
    if (w->db == NULL) /* out of memory when the worker started */
        w->db = ob_db_new(w->env->loop, &w->env->db, w->env->log, w->pub.name);
    if (w->db)
        ob_db_watch(w->db, on_db_lost, w);
    if (w->db == NULL || ob_db_connect(w->db, on_db, w) != 0) {
        set_state(w, W_CONNECT_WAIT);
        start_timer(w, ob_db_life_backoff(&w->life));
    }
}

static void fetch(ob_worker *w) {
    size_t len;
    const char *sql = ob_worker_fetch_sql(w, &len);
    if (sql == NULL) {
        set_state(w, W_POLL_WAIT);
        start_timer(w, ob_db_life_backoff(&w->life));
        return;
    }
    query(w, W_FETCHING, sql, len);
}

/* The one place that decides what follows a finished step: close, halt,
 * ask whether the database accepts the writes again, wait for the broker,
 * move back to the first node, or claim the next batch. */
static void next(ob_worker *w) {
    const ob_reader_owner *o = &w->env->owner;
    if (w->stop) {
        close_worker(w);
    } else if (w->halted) {
        set_state(w, W_HALTED);
    } else if (w->refusing) {
        query(w, W_GRANT_PROBING, w->grant_sql.p, w->grant_sql.len);
    } else if (!w->env->broker.ops->ready(w->env->broker.self)) {
        set_state(w, W_BROKER_WAIT);
    } else if (o->may_publish && !o->may_publish(o->data)) {
        /* Rows claimed now would only go back: look again a poll later, and
         * soon at start, when the lease's first look ends within
         * milliseconds and nothing tells this worker (a notify rung
         * meanwhile waited a whole poll interval). */
        set_state(w, W_LEASE_WAIT);
        start_timer(w, w->env->poll_interval_ms < LEASE_LOOK_MS ? w->env->poll_interval_ms
                                                                : LEASE_LOOK_MS);
    } else if ((w->failback = ob_db_failback(w->db)) != 0) { /* to the first node */
        ob_db_life_closed(&w->life);                         /* a move, not a loss */
        connect_db(w);
    } else {
        fetch(w);
    }
}

static void rollback(ob_worker *w, worker_state s) {
    static const char rb[] = "ROLLBACK";
    query(w, s, rb, sizeof(rb) - 1);
}

/* Idle after an empty fetch: one idle worker, the scout, polls with a cheap
 * probe every poll interval; the others park until the scout (or a full
 * batch) wakes them, so an idle relay costs one round trip per interval (a
 * second at rest, see flow.h). */
static void go_idle(ob_worker *w) {
    const ob_reader_env *e = w->env;
    if (w->stop || w->halted || ob_flow_take_wake(e->flow) || ob_db_failback_due(w->db)) {
        next(w); /* a wake came while everyone was busy: fetch at once (or fail back) */
        return;
    }
    /* In the ordered modes each worker reads buckets of its own, which no
     * scout's probe can speak for: every idle worker polls with its fetch. */
    if (ob_flow_idle(e->flow, &w->pub.fm) || e->order) {
        set_state(w, W_POLL_WAIT);
        start_timer(w, ob_flow_poll_delay(e->flow, uv_now(e->loop)));
    } else {
        set_state(w, W_PARKED);
    }
}

/* A database operation failed: act on whose fault it is. */
static void db_failed_act(ob_worker *w, const char *during) {
    switch (ob_worker_classify(w, during)) {
    case OB_FAULT_LOST:
        if (w->stop) {
            close_worker(w);
            return;
        }
        set_state(w, W_CONNECT_WAIT);
        start_timer(w, ob_db_life_backoff(&w->life));
        return;
    case OB_FAULT_CONFLICT:
        rollback(w, W_ROLLING_BACK);
        return;
    case OB_FAULT_REFUSED:
    case OB_FAULT_ERROR:
        rollback(w, W_ABORTING);
        return;
    }
}

/* The owner hears of the failure last: it may halt or stop the worker from
 * its callback, which must find the worker in its new state. */
static void db_failed(ob_worker *w, const char *during) {
    const ob_reader_env *e = w->env;
    unsigned no = ob_db_errno(w->db);
    char msg[512];
    snprintf(msg, sizeof(msg), "%s", ob_db_error(w->db));
    int ever = w->life.settled || (w->env->any_fetched && *w->env->any_fetched);
    db_failed_act(w, during);
    if (e->owner.db_failed)
        e->owner.db_failed(e->owner.data, w, no, msg, ever);
}

/* --- finishing ----------------------------------------------------------- */

/* Every row has its answer (or the batch was cut short): write the outcome. */
static void finish_batch(ob_worker *w) {
    const ob_reader_env *e = w->env;
    ob_batch *b = &w->pub.batch;
    uv_timer_stop(&w->timer);
    ob_flow_leave(e->flow, &w->pub.fm);
    int interrupted =
        e->broker.ops->epoch(e->broker.self) != b->epoch || !e->broker.ops->ready(e->broker.self);
    if (interrupted)
        ob_pub_outage(&w->pub);
    int how = (interrupted ? OB_DECIDE_INTERRUPTED : 0) |
              (e->broker.ops->settled(e->broker.self) ? 0 : OB_DECIDE_UNSETTLED);
    size_t len = ob_batch_finish_sql(b, &e->batch, how);
    if (b->n_dead && b->order)
        ob_pub_log_passed(&w->pub); /* while the rows are still readable */
    w->batch_published_at = uv_now(e->loop);
    if (len == 0) {
        /* Nothing to write: end the transaction, which unlocks the rows. */
        e->stats->released += (uint64_t)ob_batch_take_released(b);
        rollback(w, W_ROLLING_BACK);
        return;
    }
    query(w, W_FINISHING, b->sql.p, len);
}

static void batch_committed(ob_worker *w) {
    const ob_reader_env *e = w->env;
    ob_batch *b = &w->pub.batch;
    e->stats->batches++;
    ob_hist_observe(&e->stats->batch_duration,
                    (double)(uv_now(e->loop) - w->fetch_sent_at) / 1000.0);
    e->stats->acked += (uint64_t)b->n_acked;
    e->stats->duplicates += (uint64_t)b->n_dup;
    e->stats->failed += (uint64_t)b->n_retry;
    e->stats->dead += (uint64_t)b->n_dead;
    e->stats->released += (uint64_t)b->n_released;
    e->stats->held_back += (uint64_t)b->n_held;
    ob_worker_say_dead(w, b->n_dead);
    e->stats->deferred += (uint64_t)b->n_deferred;
}

/* --- publishing (publish.c's; the timer and the finishing are the worker's) */

/* Arms the ack deadline of the oldest publish in flight, unless armed. */
static void arm_ack_deadline(ob_worker *w) {
    if (uv_is_active((uv_handle_t *)&w->timer))
        return;
    uint64_t ms = ob_pub_ack_due_in(&w->pub);
    if (ms != UINT64_MAX)
        start_timer(w, ms);
}

static void publish_some(ob_worker *w) {
    if (ob_pub_some(&w->pub))
        finish_batch(w);
    else
        arm_ack_deadline(w);
}

static void after_answers(ob_worker *w) {
    switch (ob_pub_after_answers(&w->pub)) {
    case OB_AFTER_ACKS:
        arm_ack_deadline(w);
        return;
    case OB_AFTER_VERDICT:
        uv_timer_stop(&w->timer);
        return;
    case OB_AFTER_FINISH:
        finish_batch(w);
        return;
    }
}

static char **next_row(void *cur, unsigned long **lengths) {
    return ob_db_next_row(cur, 1, lengths);
}

/* --- the states ---------------------------------------------------------- */

/* Events every waiting state treats alike. */
static void waiting_common(ob_worker *w, worker_event ev) {
    switch (ev) {
    case EV_HALT:
        uv_timer_stop(&w->timer);
        ob_flow_leave(w->env->flow, &w->pub.fm);
        set_state(w, W_HALTED);
        return;
    case EV_STOP:
    case EV_STOP_NOW:
        close_worker(w);
        return;
    default:
        return;
    }
}

/* The waiting states that one event ends, and what it leads to. */
typedef struct waiting_state {
    worker_event until;
    void (*then)(ob_worker *w);
} waiting_state;

static const waiting_state waiting_states[] = {
    [W_CONNECT_WAIT] = {EV_TIMER, connect_db}, [W_BROKER_WAIT] = {EV_BROKER_UP, next},
    [W_RETRY_WAIT] = {EV_TIMER, next},         [W_LEASE_WAIT] = {EV_TIMER, next},
    [W_REFUSED_WAIT] = {EV_TIMER, next},       [W_PARKED] = {EV_WAKE, next},
};

static void st_waiting(ob_worker *w, worker_event ev) {
    const waiting_state *st = &waiting_states[w->state];
    if (ev == st->until)
        st->then(w);
    else
        waiting_common(w, ev);
}

static void st_connecting(ob_worker *w, worker_event ev) {
    switch (ev) {
    case EV_DB_OK:
        ob_worker_db_up(w);
        next(w);
        return;
    case EV_DB_FAILED:
        db_failed(w, "connecting");
        return;
    case EV_STOP:
    case EV_STOP_NOW:
        close_worker(w); /* drops the connect under way */
        return;
    default:
        return; /* a halt takes effect once connected */
    }
}

/* The statement of the next row to write while isolating, or COMMIT. */
static void isolate_next(ob_worker *w) {
    ob_batch *b = &w->pub.batch;
    w->iso = ob_batch_next_written(b, w->iso + 1);
    if (w->iso < 0) { /* every row written: a failure of the COMMIT is not a row's */
        query(w, W_ISO_COMMITTING, "COMMIT", 6);
        return;
    }
    size_t len = ob_batch_row_sql(b, &w->env->batch, w->iso);
    query(w, W_ISOLATING, b->sql.p, len);
}

/* --- the states that wait for a statement: each has a function for its statement's success and,
 * where a failure means more than db_failed(), one for its failure; an immediate stop drops the
 * statement (the server rolls the transaction back) in all of them. */

static void fetched(ob_worker *w) {
    const ob_reader_env *e = w->env;
    if (w->env->any_fetched)
        *w->env->any_fetched = 1;
    ob_db_life_settle(&w->life);
    int n = ob_batch_load(&w->pub.batch, next_row, w->db, e->broker.ops->epoch(e->broker.self));
    ob_batch_set_binary(&w->pub.batch, ob_db_col_binary(w->db, 1, OB_COL_PAYLOAD));
    int asked = ob_fetch_budget_asked(&w->fb);
    ob_fetch_budget_seen(&w->fb, &w->pub.batch);
    if (n == 0) {
        if (e->owner.drain_wanted && e->owner.drain_wanted(e->owner.data))
            query(w, W_ENDING_EMPTY, e->sql_drain_probe, e->sql_drain_probe_len);
        else
            query(w, W_ENDING_EMPTY, "COMMIT", 6);
        return;
    }
    e->stats->fetched += (uint64_t)n;
    w->drain_said = 0;
    ob_flow_activity(e->flow, uv_now(e->loop));
    set_state(w, W_PUBLISHING);
    if (n >= asked)
        ob_flow_wake_all(e->flow, &w->pub.fm); /* a full batch: there is likely more */
    if (w->stop) {
        ob_pub_give_back(&w->pub, ob_batch_release_open(&w->pub.batch));
        finish_batch(w);
        return;
    }
    publish_some(w);
}

static void committed(ob_worker *w) {
    batch_committed(w);
    /* A batch that was not full emptied what was due when it was claimed:
     * wait for the next poll (fast while rows keep coming) instead of paying
     * for an empty fetch at once. */
    if (w->pub.batch.n < ob_fetch_budget_asked(&w->fb))
        go_idle(w);
    else
        next(w);
}

static void commit_failed(ob_worker *w) {
    if (!ob_worker_row_level(w)) {
        db_failed(w, "committing a batch");
        return;
    }
    /* A failed statement leaves the transaction open with its locks: find
     * the row the server refuses by writing them one by one. */
    w->env->stats->db_errors++;
    OB_WARN(w->env->log,
            "%s: the database refused the batch's update (%u %s); writing its %d row(s) one by "
            "one to find the row at fault",
            w->pub.name, ob_db_errno(w->db), ob_db_error(w->db), w->pub.batch.n);
    w->iso = -1;
    isolate_next(w);
}

static void isolate_failed(ob_worker *w) {
    ob_batch *b = &w->pub.batch;
    if (!ob_worker_row_level(w)) {
        db_failed(w, "writing a batch row by row");
        return;
    }
    size_t len = ob_worker_refused_row_sql(w);
    query(w, W_REFUSING, b->sql.p, len);
}

static void ended_empty(ob_worker *w) {
    ob_worker_drain_row(w);
    go_idle(w);
}

static void aborted(ob_worker *w) {
    if (w->stop || w->halted) {
        next(w);
        return;
    }
    set_state(w, w->refusing ? W_REFUSED_WAIT : W_RETRY_WAIT);
    start_timer(w, ob_db_life_backoff(&w->life));
}

static void grant_probed(ob_worker *w) {
    OB_INFO(w->env->log, "%s: the database accepts the relay's writes again; claiming rows",
            w->pub.name);
    w->refusing = 0;
    w->refusal[0] = '\0';
    ob_db_life_worked(&w->life);
    next(w);
}

static void probed(ob_worker *w) {
    const ob_reader_env *e = w->env;
    int due = ob_db_next_row(w->db, 0, NULL) != NULL, woken = w->woken;
    w->woken = 0;
    if (!due && !woken) {
        go_idle(w);
        return;
    }
    /* Rows are due (or were rung for after the probe read the table): the
     * scout claims them itself, and wakes the others only if its batch
     * comes back full. */
    ob_flow_leave(e->flow, &w->pub.fm);
    if (due)
        ob_flow_activity(e->flow, uv_now(e->loop));
    next(w);
}

static void probe_failed(ob_worker *w) {
    w->woken = 0;
    ob_flow_wake_all(w->env->flow, NULL); /* whoever is parked takes over the polling */
    db_failed(w, "polling");
}

typedef struct statement_state {
    void (*ok)(ob_worker *w);
    void (*failed)(ob_worker *w); /* NULL: db_failed(w, during) */
    const char *during;
} statement_state;

static const statement_state statement_states[] = {
    [W_FETCHING] = {fetched, NULL, "fetching"},
    [W_FINISHING] = {committed, commit_failed, "committing a batch"},
    [W_ISOLATING] = {isolate_next, isolate_failed, "writing a batch row by row"},
    [W_REFUSING] = {isolate_next, NULL, "marking a refused row dead"},
    [W_ISO_COMMITTING] = {committed, NULL, "committing the rows written one by one"},
    [W_GRANT_PROBING] = {grant_probed, NULL, "probing the privileges"},
    [W_ENDING_EMPTY] = {ended_empty, NULL, "ending a transaction"},
    [W_ROLLING_BACK] = {next, NULL, "rolling back"},
    [W_ABORTING] = {aborted, NULL, "rolling back"},
    [W_PROBING] = {probed, probe_failed, "polling"},
};

/* Graceful stops and halts wait for the statement and take effect at
 * (next); other events mean nothing here. */
static void st_statement(ob_worker *w, worker_event ev) {
    const statement_state *st = &statement_states[w->state];
    switch (ev) {
    case EV_DB_OK:
        st->ok(w);
        return;
    case EV_DB_FAILED:
        if (st->failed)
            st->failed(w);
        else
            db_failed(w, st->during);
        return;
    case EV_STOP_NOW:
        close_worker(w);
        return;
    default:
        return;
    }
}

static void st_publishing(ob_worker *w, worker_event ev, const void *arg) {
    switch (ev) {
    case EV_ACK:
        ob_pub_take_ack(&w->pub, arg);
        /* Telling the broker (a refusal, a suspect answer) cannot end the
         * batch under us: its change of readiness comes later, from the
         * loop. The check is a guard, not load-bearing. */
        if (w->state == W_PUBLISHING)
            after_answers(w);
        return;
    case EV_CAPACITY:
        publish_some(w);
        return;
    case EV_BROKER_UP:
        after_answers(w); /* the link's verdict after a suspect failure */
        return;
    case EV_TIMER:
        ob_pub_ack_deadline(&w->pub);
        if (w->state == W_PUBLISHING)
            after_answers(w);
        return;
    case EV_BROKER_DOWN:
    case EV_DEADLINE:
        /* What is not answered goes back untouched; an outage's is counted,
         * as each may be stored already. */
        if (ev == EV_BROKER_DOWN)
            ob_pub_outage(&w->pub);
        ob_pub_give_back(&w->pub, ob_batch_release_open(&w->pub.batch));
        finish_batch(w);
        return;
    case EV_STOP_NOW:
        /* The transaction goes with the connection: every row of the batch
         * is pending again, but an acked one was delivered and is not
         * counted as given back (it is published again, a copy the stream
         * drops within its duplicate window). */
        ob_pub_give_back(&w->pub, ob_batch_release_open(&w->pub.batch));
        w->env->stats->released += (uint64_t)ob_batch_unacked(&w->pub.batch);
        close_worker(w);
        return;
    default:
        return; /* a graceful stop waits for the acks until the deadline */
    }
}

static void st_poll_wait(ob_worker *w, worker_event ev) {
    const ob_reader_env *e = w->env;
    switch (ev) {
    case EV_TIMER:
        /* While a drain is awaited, the scout fetches: the empty fetch is
         * what asks whether rows that other relays hold are still pending.
         * While rows keep coming it fetches too: a probe would find rows
         * and cost a round trip more. Otherwise it probes, and stays the
         * scout while it does. In the ordered modes every worker fetches. */
        if (e->order || (e->owner.drain_wanted && e->owner.drain_wanted(e->owner.data)) ||
            ob_flow_hot(e->flow, uv_now(e->loop))) {
            ob_flow_leave(e->flow, &w->pub.fm);
            next(w);
        } else {
            w->woken = 0;
            query(w, W_PROBING, e->sql_probe, e->sql_probe_len);
        }
        return;
    case EV_WAKE:
        uv_timer_stop(&w->timer);
        next(w);
        return;
    default:
        waiting_common(w, ev);
        return;
    }
}

/* The scout stays on the idle list while it probes, so a ring can reach it
 * here: remembered, it makes the scout fetch even if the probe read the
 * table before the rung rows were committed. */
static void st_probing(ob_worker *w, worker_event ev) {
    if (ev == EV_WAKE)
        w->woken = 1;
    else
        st_statement(w, ev);
}

static void st_halted(ob_worker *w, worker_event ev) {
    if (ev == EV_STOP || ev == EV_STOP_NOW)
        close_worker(w);
}

/* The connection died while no statement ran: the gauge follows at once. A
 * waiting worker connects again; a publishing one finds the loss when it
 * writes its batch's outcome (query()), a halted one stays halted. */
static void lost_idle(ob_worker *w) {
    ob_worker_db_down(w);
    if (w->state == W_PUBLISHING || w->state == W_HALTED)
        return;
    w->env->stats->db_errors++;
    OB_WARN(w->env->log, "%s: database connection lost while %s: %s; reconnecting", w->pub.name,
            state_names[w->state], ob_db_error(w->db));
    uv_timer_stop(&w->timer);
    ob_flow_leave(w->env->flow, &w->pub.fm);
    set_state(w, W_CONNECT_WAIT);
    start_timer(w, ob_db_life_backoff(&w->life));
}

/* Stop and halt are remembered here, before the state sees them, so that
 * busy states pick them up at their next step. */
static void dispatch(ob_worker *w, worker_event ev, const void *arg) {
    if (ev == EV_STOP && w->stop < 1)
        w->stop = 1;
    else if (ev == EV_STOP_NOW)
        w->stop = 2;
    else if (ev == EV_HALT)
        w->halted = 1;
    if (ev == EV_DB_LOST && w->state != W_CLOSING && w->state != W_CLOSED) {
        lost_idle(w);
        return;
    }
    switch (w->state) {
    case W_NEW:
        if (ev == EV_START)
            connect_db(w);
        return;
    case W_CONNECTING:
        st_connecting(w, ev);
        return;
    case W_CONNECT_WAIT:
    case W_BROKER_WAIT:
    case W_RETRY_WAIT:
    case W_LEASE_WAIT:
    case W_REFUSED_WAIT:
    case W_PARKED:
        st_waiting(w, ev);
        return;
    case W_FETCHING:
    case W_FINISHING:
    case W_ISOLATING:
    case W_REFUSING:
    case W_ISO_COMMITTING:
    case W_ENDING_EMPTY:
    case W_ROLLING_BACK:
    case W_ABORTING:
    case W_GRANT_PROBING:
        st_statement(w, ev);
        return;
    case W_PROBING:
        st_probing(w, ev);
        return;
    case W_PUBLISHING:
        st_publishing(w, ev, arg);
        return;
    case W_POLL_WAIT:
        st_poll_wait(w, ev);
        return;
    case W_HALTED:
        st_halted(w, ev);
        return;
    case W_CLOSING:
    case W_CLOSED:
        return;
    }
}

/* --- closing ------------------------------------------------------------- */

static void handle_closed(ob_worker *w) {
    if (--w->handles_open > 0)
        return;
    set_state(w, W_CLOSED);
    if (w->env->owner.on_closed)
        w->env->owner.on_closed(w->env->owner.data, w);
}

static void timer_closed(uv_handle_t *h) {
    handle_closed(h->data);
}

static void db_closed(void *data) {
    handle_closed(data);
}

static void close_worker(ob_worker *w) {
    if (w->state == W_CLOSING || w->state == W_CLOSED)
        return; /* a callback of the owner stopped it already */
    ob_db_life_closed(&w->life);
    ob_flow_leave(w->env->flow, &w->pub.fm);
    set_state(w, W_CLOSING);
    uv_close((uv_handle_t *)&w->timer, timer_closed);
    if (w->db)
        ob_db_close(w->db, db_closed, w);
    else
        handle_closed(w); /* never made: nothing to close, the timer's callback is to come */
    w->db = NULL;
}

/* --- public -------------------------------------------------------------- */

ob_worker *ob_worker_new(const ob_reader_env *env, int index) {
    ob_worker *w = calloc(1, sizeof(*w));
    if (w == NULL)
        return NULL;
    int order = env->order ? env->order | OB_BATCH_CHECK_BEFORE : 0; /* relay_lease.c's fetch */
    if (ob_batch_init(&w->pub.batch, env->batch_size, order) != 0) {
        free(w);
        return NULL;
    }
    ob_fetch_budget_init(&w->fb, env->fetch_bytes, env->batch_size);
    ob_fetch_budget_count(&w->fb, &env->stats->claimed_bytes, &env->stats->claimed_bytes_peak);
    w->env = env;
    char name[32];
    snprintf(name, sizeof(name), "worker %d", index);
    ob_pub_init(&w->pub, env, (uint32_t)index, name, on_capacity, on_wake);
    ob_db_life_init(&w->life, &env->stats->db_connected, &env->stats->db_reconnects);
    w->state = W_NEW;
    w->iso = -1;
    if (ob_worker_grant_sql(w) != 0) {
        ob_worker_free(w);
        return NULL;
    }
    return w;
}

void ob_worker_free(ob_worker *w) {
    if (w == NULL)
        return;
    ob_batch_free(&w->pub.batch);
    ob_fetch_budget_free(&w->fb);
    ob_buf_free(&w->grant_sql);
    free(w);
}

void ob_worker_start(ob_worker *w) {
    if (w->state != W_NEW)
        return;
    w->db = ob_db_new(w->env->loop, &w->env->db, w->env->log, w->pub.name);
    if (w->db == NULL)
        OB_ERROR(w->env->log, "%s: out of memory for the database connection; trying again",
                 w->pub.name);
    uv_timer_init(w->env->loop, &w->timer);
    w->timer.data = w;
    w->handles_open = 2; /* the timer and the connection */
    dispatch(w, EV_START, NULL);
}

void ob_worker_broker(ob_worker *w, int ready) {
    if (ready)
        ob_pub_say_unanswered(&w->pub);
    dispatch(w, ready ? EV_BROKER_UP : EV_BROKER_DOWN, NULL);
}

void ob_worker_ack(ob_worker *w, const ob_ack *ack) {
    dispatch(w, EV_ACK, ack);
}

void ob_worker_halt(ob_worker *w) {
    dispatch(w, EV_HALT, NULL);
}

void ob_worker_stop(ob_worker *w, int now) {
    if (w->state == W_NEW) {
        set_state(w, W_CLOSED); /* never on the loop: nothing to close */
        return;
    }
    dispatch(w, now ? EV_STOP_NOW : EV_STOP, NULL);
}

void ob_worker_deadline(ob_worker *w) {
    dispatch(w, EV_DEADLINE, NULL);
}

int ob_worker_busy(const ob_worker *w) {
    switch (w->state) {
    case W_FETCHING:
    case W_PUBLISHING:
    case W_FINISHING:
    case W_ISOLATING:
    case W_REFUSING:
    case W_ISO_COMMITTING:
    case W_ENDING_EMPTY:
    case W_ROLLING_BACK:
    case W_ABORTING:
        return 1;
    default:
        return 0;
    }
}
