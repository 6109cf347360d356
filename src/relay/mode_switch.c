/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The conversion of buckets from cursor mode to the ordered modes (see
 * mode_switch.h for what it does and why it is safe to stop anywhere).
 *
 * The state machine; every change goes through set_state():
 *
 *   IDLE --want--> CONNECTING --ok--> PROBING --buckets with a cursor row--> CHUNK
 *    ^                                   | none: ready                     |  full chunk: again
 *    |                                   v                                 v
 *    +------------- nothing left <-------+<------ ready <-------------- FINISHING
 *
 *   any failure --> RETRY_WAIT --timer--> CONNECTING or PROBING (from the probe again)
 *   a permanent error (a missing privilege) before a bucket was ever converted --> FAILED:
 *   reported as fatal, nothing more is done (db_life.h)
 *   close (any state) --> CLOSED; the switch is freed once its handles are.
 */
#include "mode_switch.h"

#include <mysqld_error.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "lease.h"
#include "db_life.h"
#include "schema.h"

typedef enum sw_state {
    SW_IDLE,       /* nothing to do; no connection */
    SW_CONNECTING, /* waiting for the connection */
    SW_PROBING,    /* waiting for the table's cursor rows */
    SW_CHUNK,      /* waiting for a chunk of status 0 -> 1 of the bucket `cur` */
    SW_FINISHING,  /* waiting for the transaction that ends the bucket's cursor mode */
    SW_RETRY_WAIT, /* waiting for the timer after a failure */
    SW_FAILED,     /* refused for good; reported through `fatal` */
    SW_CLOSED      /* closing: waiting for the connection and the timer to close */
} sw_state;

struct ob_cursor_switch {
    sw_state state;
    ob_cursor_switch_config c;
    ob_cursor_switch_callbacks cb;
    char *qtable;
    char *table;
    char *ctable; /* the cursor table beside the table (ob_cursor_table_name) */
    ob_db *db;
    uv_timer_t timer;
    int timer_made;
    int open;           /* handles not yet closed (the connection, the timer) */
    ob_db_life life;    /* not in the gauge of connections up: it reads no rows to publish */
    uint64_t todo;      /* wanted, not probed yet */
    uint64_t convert;   /* probed: have a cursor row, not converted yet */
    uint64_t done;      /* reported ready */
    int64_t cursor[64]; /* the probed cursors of `convert` */
    int cur;            /* the bucket being converted */
    uint64_t moved;     /* its rows turned from 0 to 1 so far */
    ob_buf sql;
};

static const char *state_name(sw_state s) {
    static const char *names[] = {"IDLE",      "CONNECTING", "PROBING", "CHUNK",
                                  "FINISHING", "RETRY_WAIT", "FAILED",  "CLOSED"};
    return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

static void set_state(ob_cursor_switch *s, sw_state st) {
    OB_DEBUG(s->c.log, "cursor switch: %s -> %s", state_name(s->state), state_name(st));
    s->state = st;
}

ob_cursor_switch *ob_cursor_switch_new(const ob_cursor_switch_config *c,
                                       const ob_cursor_switch_callbacks *cb) {
    ob_cursor_switch *s = calloc(1, sizeof(*s));
    if (s == NULL)
        return NULL;
    s->c = *c;
    s->cb = *cb;
    ob_buf ct = OB_BUF_INIT;
    ob_cursor_table_name(&ct, c->table);
    s->qtable = strdup(c->qtable);
    s->table = strdup(c->table);
    s->ctable = ct.p;
    if (s->qtable == NULL || s->table == NULL || s->ctable == NULL) {
        free(s->qtable);
        free(s->table);
        free(s->ctable);
        free(s);
        return NULL;
    }
    s->state = SW_IDLE;
    ob_db_life_init(&s->life, NULL, NULL);
    return s;
}

static void on_db(ob_db *db, int ok, void *data);
static void dispatch(ob_cursor_switch *s, int ok);

/* "'<table>'": the name passed the relay's table check, no quote is in it. */
static void put_name(ob_cursor_switch *s) {
    ob_buf_printf(&s->sql, "'%s'", s->table);
}

static void send_sql(ob_cursor_switch *s, sw_state st) {
    set_state(s, st);
    if (s->sql.oom || ob_db_query(s->db, s->sql.p, s->sql.len, on_db, s) != 0)
        dispatch(s, 0);
}

static void probe(ob_cursor_switch *s) {
    ob_buf_reset(&s->sql);
    ob_buf_printf(&s->sql, "SELECT bucket, seq FROM %s WHERE table_name = ", s->ctable);
    put_name(s);
    send_sql(s, SW_PROBING);
}

static void start_work(ob_cursor_switch *s) {
    if (s->db == NULL)
        s->db = ob_db_new(s->c.loop, &s->c.db, s->c.log, "cursor switch");
    if (s->db == NULL) {
        dispatch(s, 0);
        return;
    }
    if (ob_db_is_idle(s->db)) {
        probe(s);
        return;
    }
    ob_db_reset(s->db);
    set_state(s, SW_CONNECTING);
    if (ob_db_connect(s->db, on_db, s) != 0)
        dispatch(s, 0);
}

static void db_closed(void *data) {
    ob_cursor_switch *s = data;
    if (--s->open == 0 && s->state == SW_CLOSED) {
        void (*closed)(void *) = s->cb.closed;
        void *d = s->cb.data;
        ob_buf_free(&s->sql);
        free(s->qtable);
        free(s->table);
        free(s->ctable);
        free(s);
        closed(d);
    }
}

static void timer_closed(uv_handle_t *h) {
    db_closed(h->data);
}

/* Nothing left: the connection goes until there is work again. */
static void go_idle(ob_cursor_switch *s) {
    set_state(s, SW_IDLE);
    ob_db_life_worked(&s->life);
    ob_db_life_closed(&s->life);
    if (s->db) {
        ob_db *db = s->db;
        s->db = NULL;
        s->open++;
        ob_db_close(db, db_closed, s);
    }
}

static void report(ob_cursor_switch *s, uint64_t buckets) {
    buckets &= ~s->done;
    if (buckets == 0)
        return;
    s->done |= buckets;
    s->cb.ready(s->cb.data, buckets);
}

/* The bucket's cursor row, as a condition. */
static void where_cursor(ob_cursor_switch *s) {
    ob_buf_puts(&s->sql, "table_name = ");
    put_name(s);
    ob_buf_printf(&s->sql, " AND bucket = %d", s->cur);
}

/* One chunk, in a transaction that reads the cursor row with a shared lock:
 * another relay's conversion of the same bucket may have ended since the
 * probe, turning status 2 into 0 below the cursor, and a chunk that went by
 * the probed cursor would then mark those rows processed unpublished. With
 * the row gone, the chunk changes nothing. */
static void chunk(ob_cursor_switch *s) {
    ob_buf *b = &s->sql;
    ob_buf_reset(b);
    ob_buf_printf(b, "START TRANSACTION; SELECT seq FROM %s WHERE ", s->ctable);
    where_cursor(s);
    ob_buf_printf(b,
                  " LOCK IN SHARE MODE; UPDATE %s SET status = 1, processed_at = NOW(6) WHERE "
                  "bucket = %d AND status = 0 AND seq <= (SELECT seq FROM %s WHERE ",
                  s->qtable, s->cur, s->ctable);
    where_cursor(s);
    ob_buf_printf(b, ") ORDER BY seq LIMIT %d; COMMIT", OB_CURSOR_SWITCH_CHUNK);
    send_sql(s, SW_CHUNK);
}

static void finish(ob_cursor_switch *s) {
    ob_buf *b = &s->sql;
    ob_buf_reset(b);
    ob_buf_printf(b, "START TRANSACTION; SELECT seq FROM %s WHERE ", s->ctable);
    where_cursor(s);
    ob_buf_puts(b, " FOR UPDATE; ");
    ob_buf_printf(b,
                  "UPDATE %s SET status = 1, processed_at = NOW(6) WHERE bucket = %d AND "
                  "status = 0 AND seq <= (SELECT seq FROM %s WHERE ",
                  s->qtable, s->cur, s->ctable);
    where_cursor(s);
    ob_buf_printf(b,
                  "); UPDATE %s SET status = 0 WHERE bucket = %d AND status = 2 AND EXISTS "
                  "(SELECT 1 FROM %s WHERE ",
                  s->qtable, s->cur, s->ctable);
    where_cursor(s);
    ob_buf_printf(b, "); DELETE FROM %s WHERE ", s->ctable);
    where_cursor(s);
    ob_buf_puts(b, "; COMMIT");
    send_sql(s, SW_FINISHING);
}

/* The next bucket to convert, or the next probe, or idle. */
static void next(ob_cursor_switch *s) {
    if (s->convert) {
        for (s->cur = 0; !(s->convert >> s->cur & 1); s->cur++)
            ;
        s->moved = 0;
        OB_INFO(s->c.log,
                "cursor switch: bucket %d of %s has a cursor (seq %lld): converting its rows "
                "to the ordered modes before reading it",
                s->cur, s->table, (long long)s->cursor[s->cur]);
        chunk(s);
    } else if (s->todo) {
        probe(s);
    } else {
        go_idle(s);
    }
}

static void after_probe(ob_cursor_switch *s, int ok) {
    uint64_t probed = s->todo;
    s->todo = 0;
    if (!ok) { /* only a missing cursor table comes here: no bucket is in cursor mode */
        report(s, probed);
        next(s);
        return;
    }
    uint64_t with = 0;
    char **row;
    while ((row = ob_db_next_row(s->db, 0, NULL)) != NULL) {
        int k = row[0] ? atoi(row[0]) : -1;
        if (k < 0 || k >= OB_BUCKETS || row[1] == NULL || !(probed >> k & 1))
            continue;
        with |= 1ULL << k;
        s->cursor[k] = strtoll(row[1], NULL, 10);
    }
    s->convert |= with;
    report(s, probed & ~with);
    next(s);
}

static void on_timer(uv_timer_t *t) {
    ob_cursor_switch *s = t->data;
    if (s->state == SW_RETRY_WAIT)
        start_work(s);
}

/* A failure: the work starts over from the probe after a delay, on a new
 * connection when this one is gone or may hold a transaction. */
static void failed(ob_cursor_switch *s, const char *during) {
    unsigned no = s->db ? ob_db_errno(s->db) : 0;
    const char *err = s->db ? ob_db_error(s->db) : "out of memory";
    if (s->db && ob_db_life_verdict(&s->life, no) == OB_DB_FATAL) {
        char why[700];
        snprintf(why, sizeof(why), "cannot convert bucket %d of %s from cursor mode (%s): %s%s",
                 s->cur, s->table, during, err, ob_db_error_hint(no));
        set_state(s, SW_FAILED);
        s->cb.fatal(s->cb.data, why);
        return;
    }
    uint64_t delay = ob_db_life_backoff(&s->life);
    if (ob_db_life_say(&s->life, no)) /* a lasting error is said once */
        OB_WARN(s->c.log, "cursor switch: %s failed: %s; trying again in %llu ms", during, err,
                (unsigned long long)delay);
    ob_db_life_down(&s->life);
    if (s->db)
        ob_db_reset(s->db); /* a transaction may be open: the server rolls it back */
    s->todo |= s->convert;
    s->convert = 0;
    if (!s->timer_made) {
        uv_timer_init(s->c.loop, &s->timer);
        s->timer.data = s;
        s->timer_made = 1;
        s->open++;
    }
    set_state(s, SW_RETRY_WAIT);
    uv_timer_start(&s->timer, on_timer, delay, 0);
}

static void dispatch(ob_cursor_switch *s, int ok) {
    switch (s->state) {
    case SW_CONNECTING:
        if (!ok) {
            failed(s, "connecting to the database");
            return;
        }
        ob_db_life_up(&s->life);
        probe(s);
        return;
    case SW_PROBING:
        if (!ok && !(s->db && ob_db_errno(s->db) == ER_NO_SUCH_TABLE))
            failed(s, "reading the cursor table");
        else
            after_probe(s, ok);
        return;
    case SW_CHUNK:
        if (!ok) {
            failed(s, "converting status 0 rows at or below the cursor");
            return;
        }
        s->moved += ob_db_affected(s->db, 2);
        if (ob_db_affected(s->db, 2) >= OB_CURSOR_SWITCH_CHUNK)
            chunk(s);
        else
            finish(s);
        return;
    case SW_FINISHING:
        if (!ok) {
            failed(s, "ending the bucket's cursor mode");
            return;
        }
        s->convert &= ~(1ULL << s->cur);
        ob_db_life_settle(&s->life); /* every statement of a conversion passed */
        if (ob_db_next_row(s->db, 1, NULL) == NULL) {
            /* Another relay that owned the bucket meanwhile converted it. */
            OB_DEBUG(s->c.log, "cursor switch: bucket %d of %s was converted by another relay",
                     s->cur, s->table);
            report(s, 1ULL << s->cur);
            next(s);
            return;
        }
        s->moved += ob_db_affected(s->db, 2);
        OB_INFO(s->c.log,
                "cursor switch: bucket %d of %s left cursor mode: %llu delivered row(s) marked "
                "processed, %llu waiting row(s) pending again",
                s->cur, s->table, (unsigned long long)s->moved,
                (unsigned long long)ob_db_affected(s->db, 3));
        report(s, 1ULL << s->cur);
        next(s);
        return;
    case SW_IDLE:
    case SW_RETRY_WAIT:
    case SW_FAILED:
    case SW_CLOSED:
        return;
    }
}

static void on_db(ob_db *db, int ok, void *data) {
    (void)db;
    dispatch(data, ok);
}

void ob_cursor_switch_want(ob_cursor_switch *s, uint64_t buckets) {
    buckets &= ~s->done & ~s->convert;
    if (buckets == 0 || s->state == SW_CLOSED || s->state == SW_FAILED)
        return;
    s->todo |= buckets;
    if (s->state == SW_IDLE)
        start_work(s);
}

void ob_cursor_switch_close(ob_cursor_switch *s) {
    if (s->state == SW_CLOSED)
        return;
    set_state(s, SW_CLOSED);
    s->open++; /* held until every handle below is asked to close */
    if (s->timer_made) {
        uv_timer_stop(&s->timer);
        uv_close((uv_handle_t *)&s->timer, timer_closed);
    }
    if (s->db) {
        ob_db *db = s->db;
        s->db = NULL;
        s->open++;
        ob_db_close(db, db_closed, s);
    }
    db_closed(s);
}
