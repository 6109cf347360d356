/*
 * One MariaDB connection's batch cycle, as a state machine:
 *
 *   CONNECTING -> FETCHING -> PUBLISHING -> FINISHING -> FETCHING ...
 *                     |                                    ^
 *                     +-> ENDING (empty) -> SLEEPING ------+
 *                                             |   ^        |
 *                                             v   |        |
 *                                            PROBING ------+  (the idle scout)
 *
 * A batch is one transaction: rows claimed by FETCHING stay locked until
 * FINISHING commits what was acked (or ENDING rolls back what was not).
 * Every change of state goes through set_state(); every database completion
 * arrives in on_db(), which dispatches on the state the worker was in; timers
 * arrive in on_timer(), likewise.
 */
#include "relay_int.h"

#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "message.h"

typedef enum worker_state {
    W_IDLE,        /* created, not started */
    W_CONNECTING,  /* waiting for the database connection */
    W_BACKOFF,     /* waiting before connecting again, or before retrying after an error */
    W_WAIT_BROKER, /* connected; waiting for NATS and the stream to be ready */
    W_FETCHING,    /* waiting for START TRANSACTION; SELECT ... FOR UPDATE SKIP LOCKED */
    W_PUBLISHING,  /* rows claimed; publishing them and waiting for their acks */
    W_FINISHING,   /* waiting for UPDATE ...; COMMIT of the batch */
    W_ENDING,      /* waiting for COMMIT or ROLLBACK of an empty or abandoned batch */
    W_SLEEPING,    /* idle: the scout waits out the poll interval, the others wait to be
                      woken; or waiting before a retry after a statement error */
    W_PROBING,     /* the scout: waiting for SELECT 1 ... LIMIT 1 (is any row due?) */
    W_CLOSING,     /* closing the connection and the timer */
    W_CLOSED       /* nothing left on the loop */
} worker_state;

typedef enum slot_state {
    S_UNSENT,   /* claimed, not yet published */
    S_INFLIGHT, /* published, waiting for the ack */
    S_ACKED,    /* stored by JetStream */
    S_FAILED,   /* the publish failed; see kind and error */
    S_RELEASED, /* given back untouched: outage or shutdown */
    S_WRITTEN   /* failed, and its UPDATE is in the finishing statement */
} slot_state;

typedef struct slot {
    ob_row row;
    uint8_t state;
    uint8_t kind; /* outbox_failure_kind when failed */
    uint8_t dead; /* verdict when failed */
    int code, err_code;
    uint32_t err_off; /* into w->errs */
    uint32_t err_len;
    uint64_t sent_at; /* loop time of the publish */
} slot;

struct ob_worker {
    outbox_relay *r;
    uint32_t index;
    char name[32];
    worker_state state;
    ob_db *db;
    uv_timer_t timer; /* connect backoff, poll sleep, ack deadline */
    int handles_open;

    slot *slots;
    int nrows;
    int next_pub;    /* next slot to publish */
    int outstanding; /* slots in flight */
    uint32_t gen;    /* batch number, part of every reply subject */
    uint32_t epoch;  /* broker epoch when the batch was claimed */
    int waiting_capacity;
    int last_empty;  /* the last fetch found nothing */
    int drain_check; /* the ENDING statement carries a pending-rows probe */
    int stopping;
    int db_up;
    int attempts; /* consecutive connect or statement failures */

    /* per-batch tallies, folded into the relay stats after the commit */
    int n_acked, n_dup, n_retry, n_dead, n_released;

    ob_buf sql; /* the finishing statement */
    ob_buf subject;
    ob_buf scratch;
    ob_buf errs; /* error texts of this batch */
};

static void go_fetch(ob_worker *w);
static void finish_batch(ob_worker *w);
static void on_db(ob_db *db, int ok, void *data);
static void close_worker(ob_worker *w);

static const char *state_name(worker_state s) {
    static const char *names[] = {
        [W_IDLE] = "idle",           [W_CONNECTING] = "connecting",
        [W_BACKOFF] = "backoff",     [W_WAIT_BROKER] = "wait-broker",
        [W_FETCHING] = "fetching",   [W_PUBLISHING] = "publishing",
        [W_FINISHING] = "finishing", [W_ENDING] = "ending",
        [W_SLEEPING] = "sleeping",   [W_PROBING] = "probing",
        [W_CLOSING] = "closing",     [W_CLOSED] = "closed",
    };
    return names[s];
}

static void set_state(ob_worker *w, worker_state s) {
    if (w->state != s)
        OB_DEBUG(&w->r->log, "%s: %s -> %s", w->name, state_name(w->state), state_name(s));
    w->state = s;
}

/* --- creation ------------------------------------------------------------ */

ob_worker *ob_worker_new(outbox_relay *r, int index) {
    ob_worker *w = calloc(1, sizeof(*w));
    if (w == NULL)
        return NULL;
    w->r = r;
    w->index = (uint32_t)index;
    snprintf(w->name, sizeof(w->name), "worker %d", index);
    w->slots = calloc((size_t)r->o.batch_size, sizeof(slot));
    if (w->slots == NULL) {
        free(w);
        return NULL;
    }
    w->state = W_IDLE;
    return w;
}

void ob_worker_free(ob_worker *w) {
    if (w == NULL)
        return;
    ob_buf_free(&w->sql);
    ob_buf_free(&w->subject);
    ob_buf_free(&w->scratch);
    ob_buf_free(&w->errs);
    free(w->slots);
    free(w);
}

int ob_worker_busy(const ob_worker *w) {
    return w->state == W_FETCHING || w->state == W_PUBLISHING || w->state == W_FINISHING ||
           w->state == W_ENDING;
}

/* --- connecting ---------------------------------------------------------- */

static uint64_t retry_delay(ob_worker *w) {
    uint64_t d = 250;
    for (int i = 0; i < w->attempts && d < 10000; i++)
        d *= 2;
    if (d > 10000)
        d = 10000;
    return d / 2 + (uint64_t)rand() % (d / 2 + 1);
}

static void on_timer(uv_timer_t *t);

static void connect_db(ob_worker *w) {
    set_state(w, W_CONNECTING);
    if (ob_db_connect(w->db, on_db, w) != 0) {
        set_state(w, W_BACKOFF);
        uv_timer_start(&w->timer, on_timer, retry_delay(w), 0);
    }
}

void ob_worker_start(ob_worker *w) {
    outbox_relay *r = w->r;
    ob_db_config cfg = r->dbcfg;
    w->db = ob_db_new(r->loop, &cfg, &r->log, w->name);
    uv_timer_init(r->loop, &w->timer);
    w->timer.data = w;
    w->handles_open = 2; /* the timer and the db */
    connect_db(w);
}

/* The connection is gone or a statement failed. The server rolls back an
 * open transaction when the connection drops, so the claimed rows are
 * pending again; anything already published is absorbed by Msg-Id dedup. */
static void db_failed(ob_worker *w, const char *during) {
    outbox_relay *r = w->r;
    r->stats.db_errors++;
    unsigned no = ob_db_errno(w->db);
    const char *hint = "";
    if (no == 1146)
        hint = " (create the table: outbox-uvrelay schema | mariadb ...)";
    else if (no == 1054)
        hint = " (the table lacks a column the relay needs: compare with sql/outbox.sql)";
    if (ob_db_lost(w->db)) {
        if (w->db_up) {
            w->db_up = 0;
            r->stats.db_connected--;
            r->stats.db_reconnects++;
        }
        if (w->state == W_CONNECTING)
            OB_WARN(&r->log, "%s: cannot connect to the database: %s; retrying", w->name,
                    ob_db_error(w->db));
        else
            OB_WARN(&r->log, "%s: database connection lost while %s: %s; reconnecting", w->name,
                    during, ob_db_error(w->db));
        if (w->stopping) {
            close_worker(w);
            return;
        }
        w->attempts++;
        set_state(w, W_BACKOFF);
        uv_timer_start(&w->timer, on_timer, retry_delay(w), 0);
        return;
    }
    w->nrows = 0;
    w->drain_check = 0;
    if (no == 1213 || no == 1205) {
        /* A deadlock or lock wait with another session: InnoDB rolled the
         * transaction back. The rows are pending again; go again at once
         * (already-published rows are dropped by Msg-Id dedup). */
        OB_WARN(&r->log, "%s: transaction conflict while %s (%u %s); retrying the batch", w->name,
                during, no, ob_db_error(w->db));
        w->last_empty = 0;
    } else {
        OB_ERROR(&r->log, "%s: database error while %s: %u %s%s", w->name, during, no,
                 ob_db_error(w->db), hint);
        /* Roll back whatever is open, then wait a little before the next try. */
        w->attempts++;
        w->last_empty = 1;
    }
    set_state(w, W_ENDING);
    static const char rb[] = "ROLLBACK";
    if (ob_db_query(w->db, rb, sizeof(rb) - 1, on_db, w) != 0)
        close_worker(w);
}

/* --- fetching ------------------------------------------------------------ */

static void go_fetch(ob_worker *w) {
    outbox_relay *r = w->r;
    if (w->stopping || r->state != R_RUNNING || r->fatal) {
        close_worker(w);
        return;
    }
    if (!ob_link_ready(r->link)) {
        set_state(w, W_WAIT_BROKER);
        return;
    }
    set_state(w, W_FETCHING);
    if (ob_db_query(w->db, r->sql_fetch, r->sql_fetch_len, on_db, w) != 0)
        close_worker(w);
}

static void load_rows(ob_worker *w, MYSQL_RES *res) {
    int n = 0;
    MYSQL_ROW row;
    while ((row = mysql_fetch_row(res)) != NULL && n < w->r->o.batch_size) {
        unsigned long *len = mysql_fetch_lengths(res);
        slot *s = &w->slots[n];
        memset(s, 0, sizeof(*s));
        if (row[OB_COL_ID] == NULL || len[OB_COL_ID] != 16)
            continue; /* cannot be addressed again; never happens with the schema */
        s->row.id = (const unsigned char *)row[OB_COL_ID];
        s->row.aggregate_type = row[OB_COL_AGGREGATE_TYPE] ? row[OB_COL_AGGREGATE_TYPE] : "";
        s->row.aggregate_type_len = len[OB_COL_AGGREGATE_TYPE];
        s->row.aggregate_id = row[OB_COL_AGGREGATE_ID] ? row[OB_COL_AGGREGATE_ID] : "";
        s->row.aggregate_id_len = len[OB_COL_AGGREGATE_ID];
        s->row.event_type = row[OB_COL_EVENT_TYPE] ? row[OB_COL_EVENT_TYPE] : "";
        s->row.event_type_len = len[OB_COL_EVENT_TYPE];
        s->row.payload = row[OB_COL_PAYLOAD] ? row[OB_COL_PAYLOAD] : "";
        s->row.payload_len = len[OB_COL_PAYLOAD];
        s->row.headers = row[OB_COL_HEADERS];
        s->row.headers_len = len[OB_COL_HEADERS];
        s->row.attempts = row[OB_COL_ATTEMPTS] ? atoi(row[OB_COL_ATTEMPTS]) : 0;
        s->row.created_at = row[OB_COL_CREATED_AT];
        s->row.created_at_len = len[OB_COL_CREATED_AT];
        s->state = S_UNSENT;
        n++;
    }
    w->nrows = n;
}

/* --- publishing ---------------------------------------------------------- */

static void slot_fail(ob_worker *w, slot *s, outbox_failure_kind kind, int code, int err_code,
                      const char *msg, size_t len) {
    if (s->state == S_INFLIGHT) {
        w->outstanding--;
        w->r->in_flight--;
    }
    s->state = S_FAILED;
    s->kind = (uint8_t)kind;
    s->code = code;
    s->err_code = err_code;
    if (len > OB_LAST_ERROR_MAX * 4)
        len = OB_LAST_ERROR_MAX * 4;
    s->err_off = (uint32_t)w->errs.len;
    s->err_len = (uint32_t)len;
    ob_buf_append(&w->errs, msg, len);
}

static void slot_release(ob_worker *w, slot *s) {
    if (s->state == S_INFLIGHT) {
        w->outstanding--;
        w->r->in_flight--;
    }
    s->state = S_RELEASED;
}

static void publish_one(ob_worker *w, int i) {
    outbox_relay *r = w->r;
    slot *s = &w->slots[i];
    char err[512];
    outbox_failure_kind kind = OUTBOX_FAIL_PUBLISH_ERROR;

    ob_buf_reset(&w->subject);
    if (ob_message_subject(&w->subject, r->o.subject_prefix, &s->row, err, sizeof(err)) != 0) {
        slot_fail(w, s, OUTBOX_FAIL_BAD_SUBJECT, 0, 0, err, strlen(err));
        return;
    }
    char reply[96];
    size_t rl = ob_link_reply(r->link, w->index, w->gen, (uint32_t)i, reply);
    reply[rl] = '\0';

    natsMsg *msg = NULL;
    natsStatus st =
        natsMsg_Create(&msg, w->subject.p, reply, s->row.payload, (int)s->row.payload_len);
    if (st != NATS_OK) {
        slot_fail(w, s, OUTBOX_FAIL_PUBLISH_ERROR, st, 0, natsStatus_GetText(st),
                  strlen(natsStatus_GetText(st)));
        return;
    }
    if (ob_message_headers(msg, &s->row, r->o.cloudevents ? r->ce_source : NULL, &w->scratch, &kind,
                           err, sizeof(err)) != 0) {
        natsMsg_Destroy(msg);
        slot_fail(w, s, kind, 0, 0, err, strlen(err));
        return;
    }
    st = natsConnection_PublishMsg(ob_link_conn(r->link), msg);
    natsMsg_Destroy(msg);
    switch (st) {
    case NATS_OK:
        s->state = S_INFLIGHT;
        s->sent_at = uv_now(r->loop);
        w->outstanding++;
        r->in_flight++;
        r->stats.published++;
        return;
    case NATS_MAX_PAYLOAD: {
        int n = snprintf(err, sizeof(err),
                         "message of %zu payload bytes exceeds the server's max_payload",
                         s->row.payload_len);
        slot_fail(w, s, OUTBOX_FAIL_MAX_PAYLOAD, st, 0, err, (size_t)n);
        return;
    }
    case NATS_CONNECTION_CLOSED:
    case NATS_CONNECTION_DISCONNECTED:
    case NATS_NOT_YET_CONNECTED:
    case NATS_INSUFFICIENT_BUFFER:
    case NATS_IO_ERROR:
    case NATS_STALE_CONNECTION: {
        const char *t = natsStatus_GetText(st);
        slot_fail(w, s, OUTBOX_FAIL_DISCONNECTED, st, 0, t, strlen(t));
        return;
    }
    default: {
        const char *t = natsStatus_GetText(st);
        slot_fail(w, s, OUTBOX_FAIL_PUBLISH_ERROR, st, 0, t, strlen(t));
        return;
    }
    }
}

static void arm_ack_deadline(ob_worker *w) {
    uint64_t oldest = UINT64_MAX;
    for (int i = 0; i < w->next_pub; i++)
        if (w->slots[i].state == S_INFLIGHT && w->slots[i].sent_at < oldest)
            oldest = w->slots[i].sent_at;
    if (oldest == UINT64_MAX)
        return;
    uint64_t now = uv_now(w->r->loop), due = oldest + w->r->o.ack_timeout_ms;
    uv_timer_start(&w->timer, on_timer, due > now ? due - now : 0, 0);
}

static int batch_complete(const ob_worker *w) {
    return w->next_pub >= w->nrows && w->outstanding == 0;
}

/* Publishes as many unsent rows as max_in_flight allows. */
static void publish_some(ob_worker *w) {
    outbox_relay *r = w->r;
    int had_timer = w->outstanding > 0;
    while (w->next_pub < w->nrows) {
        if (!ob_link_ready(r->link)) {
            /* The broker went away: what is left goes back untouched. */
            while (w->next_pub < w->nrows)
                slot_release(w, &w->slots[w->next_pub++]);
            break;
        }
        if (r->in_flight >= r->o.max_in_flight) {
            if (!w->waiting_capacity) {
                w->waiting_capacity = 1;
                r->waiting_capacity++;
            }
            break;
        }
        publish_one(w, w->next_pub++);
    }
    if (w->next_pub >= w->nrows && w->waiting_capacity) {
        w->waiting_capacity = 0;
        r->waiting_capacity--;
    }
    if (batch_complete(w)) {
        uv_timer_stop(&w->timer);
        finish_batch(w);
        return;
    }
    if (!had_timer)
        arm_ack_deadline(w);
}

void ob_worker_capacity(ob_worker *w) {
    if (w->state == W_PUBLISHING && w->waiting_capacity)
        publish_some(w);
}

void ob_worker_ack(ob_worker *w, const ob_ack *a) {
    outbox_relay *r = w->r;
    if (w->state != W_PUBLISHING || a->gen != w->gen || a->slot >= (uint32_t)w->nrows)
        return; /* a late ack for an earlier batch: that batch already ended */
    slot *s = &w->slots[a->slot];
    if (s->state != S_INFLIGHT)
        return;
    char t[OB_LAST_ERROR_MAX];
    int n;
    switch (a->kind) {
    case OB_ACK_STORED:
    case OB_ACK_DUPLICATE:
        s->state = S_ACKED;
        w->outstanding--;
        r->in_flight--;
        w->n_dup += a->kind == OB_ACK_DUPLICATE;
        break;
    case OB_ACK_NO_RESPONDERS: {
        static const char nr[] = "no responders: no stream is listening on the subject";
        slot_fail(w, s, OUTBOX_FAIL_NO_RESPONDERS, 503, 0, nr, sizeof(nr) - 1);
        ob_link_unavailable(r->link, "no responders");
        break;
    }
    case OB_ACK_ERROR:
        n = snprintf(t, sizeof(t), "JetStream error %d/%d: %.*s", a->code, a->err_code,
                     (int)(a->text_len > 900 ? 900 : a->text_len), a->text);
        slot_fail(w, s, OUTBOX_FAIL_STREAM_ERROR, a->code, a->err_code, t, (size_t)n);
        if (a->code == 503)
            ob_link_unavailable(r->link, "JetStream answered 503");
        break;
    case OB_ACK_GARBLED:
        n = snprintf(t, sizeof(t), "unexpected reply from JetStream: %.*s",
                     (int)(a->text_len > 200 ? 200 : a->text_len), a->text);
        slot_fail(w, s, OUTBOX_FAIL_STREAM_ERROR, 0, 0, t, (size_t)n);
        break;
    }
    if (r->waiting_capacity > 0)
        ob_relay_capacity_freed(r);
    if (w->state == W_PUBLISHING && batch_complete(w)) {
        uv_timer_stop(&w->timer);
        finish_batch(w);
    }
}

static void ack_deadline(ob_worker *w) {
    uint64_t now = uv_now(w->r->loop);
    static const char t[] = "no ack from JetStream within the ack timeout";
    for (int i = 0; i < w->next_pub; i++) {
        slot *s = &w->slots[i];
        if (s->state == S_INFLIGHT && s->sent_at + w->r->o.ack_timeout_ms <= now)
            slot_fail(w, s, OUTBOX_FAIL_ACK_TIMEOUT, 0, 0, t, sizeof(t) - 1);
    }
    if (w->r->waiting_capacity > 0)
        ob_relay_capacity_freed(w->r);
    if (w->state != W_PUBLISHING)
        return;
    if (batch_complete(w))
        finish_batch(w);
    else
        arm_ack_deadline(w);
}

/* Gives back every row still unsent or in flight; used on broker loss and at
 * the shutdown deadline. */
static void release_open_slots(ob_worker *w) {
    for (int i = 0; i < w->nrows; i++) {
        slot *s = &w->slots[i];
        if (s->state == S_INFLIGHT || s->state == S_UNSENT)
            slot_release(w, s);
    }
    w->next_pub = w->nrows;
    if (w->waiting_capacity) {
        w->waiting_capacity = 0;
        w->r->waiting_capacity--;
    }
}

void ob_worker_broker(ob_worker *w, int ready) {
    if (ready) {
        if (w->state == W_WAIT_BROKER)
            go_fetch(w);
        return;
    }
    if (w->state == W_PUBLISHING) {
        uv_timer_stop(&w->timer);
        release_open_slots(w);
        if (w->r->waiting_capacity > 0)
            ob_relay_capacity_freed(w->r);
        finish_batch(w);
    }
}

/* --- finishing ----------------------------------------------------------- */

static outbox_verdict classify(ob_worker *w, slot *s) {
    outbox_relay *r = w->r;
    outbox_id id;
    memcpy(id.b, s->row.id, 16);
    char msg[OB_LAST_ERROR_MAX + 1];
    size_t n = s->err_len > OB_LAST_ERROR_MAX ? OB_LAST_ERROR_MAX : s->err_len;
    memcpy(msg, w->errs.p + s->err_off, n);
    msg[n] = '\0';
    outbox_failure f = {(outbox_failure_kind)s->kind, s->code, s->err_code, msg, &id,
                        s->row.attempts + 1};
    outbox_classify_fn fn = r->o.classify ? r->o.classify : outbox_classify_default;
    return fn(&f, r->o.classify_data);
}

/* Appends one statement for every failed slot sharing this one's error text
 * and verdict, marking them done. */
static void add_fail_group(ob_worker *w, int first) {
    outbox_relay *r = w->r;
    slot *a = &w->slots[first];
    const char *text = w->errs.p + a->err_off;
    ob_sql_fail_head(&w->sql, r->qtable, text, a->err_len, a->dead, r->o.max_attempts, &r->backoff);
    int n = 0;
    for (int i = first; i < w->nrows; i++) {
        slot *s = &w->slots[i];
        if (s->state != S_FAILED || s->dead != a->dead || s->err_len != a->err_len ||
            memcmp(w->errs.p + s->err_off, text, a->err_len) != 0)
            continue;
        ob_sql_add_id(&w->sql, s->row.id, n++ == 0);
        /* Counted as dead when this attempt reaches max_attempts. */
        if (s->dead || s->row.attempts + 1 >= r->o.max_attempts)
            w->n_dead++;
        else
            w->n_retry++;
        s->state = S_WRITTEN;
    }
    ob_sql_end_ids(&w->sql);
}

static void finish_batch(ob_worker *w) {
    outbox_relay *r = w->r;
    int interrupted = ob_link_epoch(r->link) != w->epoch || !ob_link_ready(r->link);

    /* Decide each failure: dead now, retried with an attempt counted, or -
     * when the broker was lost during the batch - given back untouched, so
     * an outage burns no attempts. */
    for (int i = 0; i < w->nrows; i++) {
        slot *s = &w->slots[i];
        if (s->state != S_FAILED)
            continue;
        s->dead = classify(w, s) == OUTBOX_DEAD;
        if (!s->dead && (interrupted || s->kind == OUTBOX_FAIL_DISCONNECTED))
            s->state = S_RELEASED;
    }

    ob_buf_reset(&w->sql);
    w->n_acked = 0;
    w->n_released = 0;
    for (int i = 0; i < w->nrows; i++) {
        slot *s = &w->slots[i];
        if (s->state == S_ACKED) {
            if (w->n_acked == 0)
                ob_sql_processed_head(&w->sql, r->qtable, r->o.processing);
            ob_sql_add_id(&w->sql, s->row.id, w->n_acked == 0);
            w->n_acked++;
        } else if (s->state == S_RELEASED) {
            w->n_released++;
        }
    }
    if (w->n_acked)
        ob_sql_end_ids(&w->sql);
    for (int i = 0; i < w->nrows; i++)
        if (w->slots[i].state == S_FAILED)
            add_fail_group(w, i);

    if (w->sql.oom) {
        OB_ERROR(&r->log, "%s: out of memory building the batch statement; rolling back", w->name);
        ob_buf_reset(&w->sql);
        w->n_acked = w->n_retry = w->n_dead = 0;
        w->n_released = w->nrows;
    }
    if (w->sql.len == 0) {
        /* Nothing to write: end the transaction, which unlocks the rows. */
        r->stats.released += (uint64_t)w->n_released;
        w->n_released = 0;
        w->drain_check = 0;
        set_state(w, W_ENDING);
        static const char rb[] = "ROLLBACK";
        if (ob_db_query(w->db, rb, sizeof(rb) - 1, on_db, w) != 0)
            close_worker(w);
        return;
    }
    ob_buf_puts(&w->sql, "COMMIT");
    set_state(w, W_FINISHING);
    if (ob_db_query(w->db, w->sql.p, w->sql.len, on_db, w) != 0)
        close_worker(w);
}

static void batch_committed(ob_worker *w) {
    outbox_relay *r = w->r;
    r->stats.batches++;
    r->stats.acked += (uint64_t)w->n_acked;
    r->stats.duplicates += (uint64_t)w->n_dup;
    r->stats.failed += (uint64_t)w->n_retry;
    r->stats.dead += (uint64_t)w->n_dead;
    r->stats.released += (uint64_t)w->n_released;
    if (w->n_dead)
        OB_WARN(&r->log, "%s: %d row(s) marked dead; see last_error (outbox-uvrelay dead list)",
                w->name, w->n_dead);
}

/* --- the loop of batches ------------------------------------------------- */

static void end_query(ob_worker *w, int drain) {
    outbox_relay *r = w->r;
    ob_buf_reset(&w->sql);
    ob_buf_puts(&w->sql, "COMMIT");
    w->drain_check = drain;
    if (drain) {
        ob_buf_puts(&w->sql, "; SELECT EXISTS(SELECT 1 FROM ");
        ob_buf_puts(&w->sql, r->qtable);
        ob_buf_puts(&w->sql, " WHERE status = 0)");
    }
    set_state(w, W_ENDING);
    if (ob_db_query(w->db, w->sql.p, w->sql.len, on_db, w) != 0)
        close_worker(w);
}

static void after_batch(ob_worker *w) {
    outbox_relay *r = w->r;
    w->attempts = 0;
    if (w->stopping || r->state != R_RUNNING) {
        close_worker(w);
        return;
    }
    if (w->nrows >= r->o.batch_size)
        ob_relay_wake_all(r, w); /* a full batch: there is likely more */
    go_fetch(w);
}

/* Idle after an empty fetch. One idle worker, the scout, polls with a cheap
 * probe every poll interval; the others sleep until the scout (or a full
 * batch) wakes them, so an idle relay costs one round trip per interval. */
static void go_idle(ob_worker *w) {
    outbox_relay *r = w->r;
    set_state(w, W_SLEEPING);
    if (r->scout == NULL || r->scout == w) {
        r->scout = w;
        uv_timer_start(&w->timer, on_timer, r->o.poll_interval_ms, 0);
    }
}

/* Gives up the scout's role without having found work: another idle worker
 * must take it over, so they all look once more. */
static void leave_scout(ob_worker *w) {
    if (w->r->scout != w)
        return;
    w->r->scout = NULL;
    ob_relay_wake_all(w->r, w);
}

static void probe(ob_worker *w) {
    outbox_relay *r = w->r;
    if (w->stopping || r->state != R_RUNNING) {
        close_worker(w);
        return;
    }
    set_state(w, W_PROBING);
    if (ob_db_query(w->db, r->sql_probe, r->sql_probe_len, on_db, w) != 0)
        close_worker(w);
}

static void on_db(ob_db *db, int ok, void *data) {
    (void)db;
    ob_worker *w = data;
    outbox_relay *r = w->r;
    switch (w->state) {
    case W_CONNECTING:
        if (!ok) {
            db_failed(w, "connecting");
            return;
        }
        w->db_up = 1;
        w->attempts = 0;
        r->stats.db_connected++;
        OB_INFO(&r->log, "%s: connected to the database (session %lu)", w->name,
                ob_db_thread_id(w->db));
        go_fetch(w);
        return;

    case W_FETCHING: {
        if (!ok) {
            db_failed(w, "fetching");
            return;
        }
        MYSQL_RES *res = ob_db_result(w->db, 1);
        if (res)
            load_rows(w, res);
        else
            w->nrows = 0;
        if (w->nrows == 0) {
            w->last_empty = 1;
            end_query(w, r->o.on_drained != NULL && !r->drained);
            return;
        }
        w->last_empty = 0;
        r->stats.fetched += (uint64_t)w->nrows;
        w->gen++;
        w->epoch = ob_link_epoch(r->link);
        w->next_pub = 0;
        w->outstanding = 0;
        w->n_acked = w->n_dup = w->n_retry = w->n_dead = w->n_released = 0;
        ob_buf_reset(&w->errs);
        set_state(w, W_PUBLISHING);
        if (w->stopping) {
            release_open_slots(w);
            finish_batch(w);
            return;
        }
        publish_some(w);
        return;
    }

    case W_FINISHING:
        if (!ok) {
            db_failed(w, "committing a batch");
            return;
        }
        batch_committed(w);
        after_batch(w);
        return;

    case W_ENDING:
        if (!ok) {
            db_failed(w, "ending a transaction");
            return;
        }
        if (w->drain_check) {
            MYSQL_RES *res = ob_db_result(w->db, 1);
            MYSQL_ROW row = res ? mysql_fetch_row(res) : NULL;
            if (row && row[0] && strcmp(row[0], "0") == 0)
                ob_relay_maybe_drained(r, w);
            w->drain_check = 0;
        }
        if (w->stopping || r->state != R_RUNNING) {
            close_worker(w);
            return;
        }
        if (w->attempts > 0) {
            set_state(w, W_SLEEPING);
            uv_timer_start(&w->timer, on_timer, retry_delay(w), 0);
            return;
        }
        if (w->last_empty) {
            go_idle(w);
            return;
        }
        go_fetch(w);
        return;

    case W_PROBING: {
        if (!ok) {
            leave_scout(w);
            db_failed(w, "polling");
            return;
        }
        MYSQL_RES *res = ob_db_result(w->db, 0);
        if (res == NULL || mysql_num_rows(res) == 0) {
            go_idle(w);
            return;
        }
        r->scout = NULL;
        ob_relay_wake_all(r, w);
        go_fetch(w);
        return;
    }

    default:
        return;
    }
}

static void on_timer(uv_timer_t *t) {
    ob_worker *w = t->data;
    switch (w->state) {
    case W_BACKOFF:
        if (w->stopping)
            close_worker(w);
        else
            connect_db(w);
        return;
    case W_SLEEPING:
        /* While a drain is awaited, the scout fetches: the empty fetch is
         * what checks for pending rows that other relays still hold. */
        if (w->r->scout == w && w->attempts == 0 && (!w->r->o.on_drained || w->r->drained))
            probe(w);
        else
            go_fetch(w);
        return;
    case W_PUBLISHING:
        ack_deadline(w);
        return;
    default:
        return;
    }
}

void ob_worker_wake(ob_worker *w) {
    if (w->state == W_SLEEPING && w->attempts == 0) {
        uv_timer_stop(&w->timer);
        if (w->r->scout == w)
            w->r->scout = NULL;
        go_fetch(w);
    }
}

/* --- stopping ------------------------------------------------------------ */

static void handle_closed(ob_worker *w) {
    if (--w->handles_open == 0) {
        set_state(w, W_CLOSED);
        ob_relay_child_closed(w->r);
    }
}

static void timer_closed(uv_handle_t *h) {
    handle_closed(h->data);
}

static void db_closed(void *data) {
    handle_closed(data);
}

static void close_worker(ob_worker *w) {
    if (w->state == W_CLOSING || w->state == W_CLOSED)
        return;
    if (w->db_up) {
        w->db_up = 0;
        w->r->stats.db_connected--;
    }
    if (w->waiting_capacity) {
        w->waiting_capacity = 0;
        w->r->waiting_capacity--;
    }
    if (w->r->scout == w)
        w->r->scout = NULL; /* stopping: the others are closing too */
    set_state(w, W_CLOSING);
    uv_timer_stop(&w->timer);
    uv_close((uv_handle_t *)&w->timer, timer_closed);
    ob_db_close(w->db, db_closed, w);
    w->db = NULL;
}

void ob_worker_stop(ob_worker *w, int hard) {
    w->stopping = 1;
    switch (w->state) {
    case W_IDLE:
        set_state(w, W_CLOSED);
        ob_relay_child_closed(w->r);
        return;
    case W_BACKOFF:
    case W_WAIT_BROKER:
    case W_SLEEPING:
    case W_CONNECTING:
        close_worker(w);
        return;
    case W_PUBLISHING:
        if (hard) {
            /* Drop the transaction: the server rolls it back and the rows
             * are delivered again later, absorbed by Msg-Id dedup. */
            release_open_slots(w);
            w->r->stats.released += (uint64_t)w->nrows;
            close_worker(w);
        }
        /* Otherwise keep waiting for acks until the shutdown deadline. */
        return;
    case W_FETCHING:
    case W_FINISHING:
    case W_ENDING:
    case W_PROBING:
        if (hard)
            close_worker(w); /* ob_db_close drops the connection mid-statement */
        return;
    case W_CLOSING:
    case W_CLOSED:
        return;
    }
}

void ob_worker_shutdown_deadline(ob_worker *w) {
    if (w->state != W_PUBLISHING)
        return;
    uv_timer_stop(&w->timer);
    release_open_slots(w);
    finish_batch(w);
}
