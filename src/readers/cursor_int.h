/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The cursor reader's private structure, shared by cursor.c (the state
 * machine) and the files of its concerns: cursor_batch.c (the batches being
 * published), cursor_checks.c (the checked assumptions), cursor_read.c (the
 * reads) and cursor_finish.c (finishing a batch). Those are called by
 * cursor.c only, never the other way: they take results and build
 * statements, and cursor.c changes the state and sends. Their duties
 * (cursor_duty) say so by what they return: the statement built and the
 * state to send it in, or a wait.
 */
#ifndef OB_CURSOR_INT_H
#define OB_CURSOR_INT_H

#include <stddef.h>
#include <stdint.h>

#include "buckets.h"
#include "cursor.h"
#include "cursor_fit.h"
#include "cursor_held.h"
#include "db_life.h"
#include "gaps.h"
#include "publish.h"
#include "retry.h"

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
    CE_KICK,      /* something changed (c->kicked says what): a duty may be due */
    CE_HALT,
    CE_STOP,
    CE_STOP_NOW
} cursor_event;

/* What made the reader look for its next duty (kick): kept for the debug
 * line of the duty that takes the turn. */
typedef enum cursor_kick {
    KICK_TIMER,     /* the reader's own timer: a read, a check or a wait due */
    KICK_CAPACITY,  /* the flow control gave capacity back */
    KICK_WAKE,      /* a producer's wake: read now */
    KICK_ACK,       /* an answer to a publish */
    KICK_ACK_LATE,  /* the ack deadline of the oldest publish passed */
    KICK_BROKER,    /* the broker became ready or not */
    KICK_OWNED,     /* the lease's buckets changed */
    KICK_STATEMENT, /* a statement's result was taken */
    KICK_HALT,      /* the relay cannot go on */
    KICK_STOP       /* a graceful stop */
} cursor_kick;

/* Why the cursors are to be loaded again (c->resync, RESYNC_NONE once
 * loaded): the first cause since the last load, for its debug line. */
typedef enum cursor_resync {
    RESYNC_NONE,     /* loaded: the load is due still while the owned buckets differ */
    RESYNC_PROBED,   /* the start-up probe passed (a first load, or after a reconnect) */
    RESYNC_LOST,     /* the connection was lost */
    RESYNC_FAILED,   /* a statement of the load or of a bucket's initialisation failed */
    RESYNC_OWNED,    /* the lease's buckets changed */
    RESYNC_MISFIT,   /* the table and its cursors are at odds */
    RESYNC_FITS,     /* they agree again */
    RESYNC_REFUSED,  /* the server refused a write */
    RESYNC_NO_MEMORY /* a read's rows did not fit in memory */
} cursor_resync;

/* Where each of the pipeline's two batches is. The batch read ahead (next)
 * is EMPTY or READY; the batch being published (pub.batch) is EMPTY,
 * PUBLISHING or ANSWERED (FINISHING writes an ANSWERED one). Only cursor.c
 * changes them, through set_phase(). */
typedef enum batch_phase {
    B_EMPTY,      /* no rows */
    B_READY,      /* next: rows read, waiting for the batch being published to finish */
    B_PUBLISHING, /* rows leave as capacity, the broker and the lease allow; answers awaited */
    B_ANSWERED    /* every row has its answer: the outcome is to be written */
} batch_phase;

/* Where the batch being published came from. */
typedef enum batch_from {
    FROM_READ, /* a read above the cursors: only its failures are written */
    FROM_LANE  /* the retry lane's status-2 rows: its acked rows are written status 1 */
} batch_from;

/* What the last read found, for a drain. */
typedef enum read_found {
    READ_NONE,  /* no read completed since the cursors were loaded or a batch finished */
    READ_CUT,   /* the read hit its LIMIT: more rows wait */
    READ_FRESH, /* it found new rows (above the highest read or in a gap) */
    READ_QUIET  /* it found nothing new */
} read_found;

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
    ob_reader_env env; /* the relay's, with this reader's may_publish */
    ob_pub pub;        /* publishing context; pub.batch is the batch being published */
    extras cur_x;      /* pub.batch's */
    ob_batch next;     /* read ahead, not yet published */
    extras next_x;
    cursor_state state;
    ob_db *db;
    uv_timer_t timer, ack_timer;
    int handles_open;
    ob_db_life life; /* settled once the probe passed */
    int stop;        /* 0 running, 1 finish what is in flight, 2 now */
    int halted;

    ob_gaps gaps;
    ob_held held;
    uint64_t owned;  /* the lease's buckets */
    uint64_t active; /* the buckets whose cursors are loaded */
    uint64_t floor[OB_BUCKETS];
    cursor_resync resync; /* load the cursors again once nothing is in flight, and why */
    cursor_kick kicked;   /* what made the reader look for its next duty last */
    uint64_t init;        /* buckets being initialised */
    double init_t1;       /* the bound of their MAX(seq): the first check's clock, 0 until then */
    uint64_t init_max;
    uint64_t init_round;  /* on Galera: the members' round begun after the mark */
    uint64_t init_proven; /* every seq <= it proven resolved, for the next load */

    batch_phase cur_phase;  /* pub.batch's */
    batch_from cur_from;    /* pub.batch's, unless EMPTY */
    batch_phase next_phase; /* next's: EMPTY or READY */
    uint64_t dropped;       /* buckets given up since pub.batch began */
    uint64_t next_dropped;  /* buckets given up since next was read (while READY) */
    uint64_t given_up;      /* buckets given up since the cursors were loaded (ob_cursor_live) */
    uint64_t handoff;       /* buckets given up whose last cursor is to be written */
    uint64_t handoff_seq;   /* a bound on it from their rows not published, UINT64_MAX none */
    uint64_t handoff_until, handoff_at, handoff_written;
    uint32_t gen;
    uint64_t written; /* the cursor value last written for the active buckets */
    uint64_t pending; /* the value the statement under way writes, 0 none */

    uint64_t read_at, lane_at, check_at, advance_at, hot_until;
    read_found last_read;
    int lane_clean; /* the last lane read found no status-2 row due within the horizon */
    /* The retry lane's pass (cursor_read.c): its pages in seq order, each
     * above the last seq of the previous full one (lane_from, 0 at the
     * pass's start), over the buckets lane_mask; lane_carry, the
     * aggregates with a status-2 row below lane_from that a later page's
     * row must not pass; lane_lost, the carry missed one (out of memory):
     * the pass starts again. */
    uint64_t lane_from, lane_mask;
    ob_held lane_carry;
    int lane_lost;
    int check_sent;      /* the read under way carries the gap check */
    uint64_t stop_until; /* a graceful stop watches the open gaps until then */
    int fin_acked, fin_dead, fin_retry, fin_held; /* tallies of the statement under way */
    ob_buf sql;
    char lock[64];

    /* Checked assumptions (cursor_fit.h) and refused grants. */
    uint64_t fit_at;     /* loop time of the next comparison of counter and cursors */
    int fitted;          /* the first comparison passed */
    int misfit;          /* the last one found the table and its cursors at odds */
    int stamped;         /* the table has a stamp (cursor_fit.h): cursor moves make none */
    int probe_full;      /* the last probe was the start-up one, not the grants alone */
    int bucket_index;    /* the table has OB_CURSOR_BUCKET_INDEX (cursor_sql.h) */
    int index_said;      /* its absence was said */
    int refusing;        /* the server refuses a write: nothing is published */
    uint64_t refuse_at;  /* loop time of the next probe of the grants */
    int no_process;      /* INNODB_TRX refused: no gap closes, the cursors stay */
    uint64_t process_at; /* loop time of the next gap check that tries it again */
    char misfit_why[700], refused_why[400], process_why[300];
};

/* The names cursor_fit.h's statements use. */
static inline ob_cursor_fit_names ob_cursor_names(const ob_cursor *c) {
    ob_cursor_fit_names t = {c->cfg.table, c->cfg.qtable, c->cfg.ctable, c->cfg.trust_seq};
    return t;
}

static inline uint64_t min_u64(uint64_t a, uint64_t b) {
    return a < b ? a : b;
}

/* The buckets whose rows a read publishes and whose cursors move with the
 * regular advance (a finish's and a stop's last too): owned, loaded, and not
 * given up since the load. A bucket given up and taken back before the next
 * load may have rows of the batch it left unacked (released, failed and not
 * written) above its cursor, and another owner may have moved that cursor:
 * until that load reads it again from its cursor, its cursor moves only by
 * its hand-over, which stays below those rows, and no row of it read
 * meanwhile leaves ahead of them. */
static inline uint64_t ob_cursor_live(const ob_cursor *c) {
    return c->active & c->owned & ~c->given_up;
}

/* The cursors are to be loaded again, once nothing is in flight (the load
 * duty, cursor_read.c): the one way to ask for it, naming why. */
static inline void ob_cursor_resync(ob_cursor *c, cursor_resync why) {
    if (c->resync == RESYNC_NONE)
        c->resync = why;
}

/* --- the duties (kick, cursor.c) ---------------------------------------- */

/* One pass over the duties: the loop's time and the safe point
 * (ob_cursor_safe_point(c, 1)), taken once at its start; and what the duty
 * that takes the turn asks of cursor.c. */
typedef struct cursor_pass {
    uint64_t now;
    uint64_t safe;
    cursor_state send; /* DUTY_SEND: the state in which c->sql is sent */
    int drop;          /* DUTY_SEND: the batches are dropped first */
    uint64_t wait_ms;  /* DUTY_WAIT: the wait in IDLE */
} cursor_pass;

/* What a duty's turn came to. */
typedef enum duty_out {
    DUTY_NEXT, /* nothing that ends the pass: the next duty's turn */
    DUTY_SEND, /* c->sql holds a statement: cursor.c sends it in p->send */
    DUTY_WAIT, /* wait in IDLE p->wait_ms for the next pass */
    DUTY_IDLE, /* wait in IDLE for the earliest thing due (cursor.c's go_idle) */
    DUTY_DONE  /* the duty changed the state itself (cursor.c's own duties) */
} duty_out;

/* A duty: what the reader may do in IDLE, tried in the order of the table
 * (cursor.c's duties[]), each file owning its own. `due` looks (NULL:
 * always due), `run` acts. */
typedef struct cursor_duty {
    const char *name;
    int (*due)(const ob_cursor *c, const cursor_pass *p);
    duty_out (*run)(ob_cursor *c, cursor_pass *p);
} cursor_duty;

/* cursor_batch.c: the batches being published. */

/* Not halted, stopped now, paused, or without a proven lease. */
int ob_cursor_publishable(const ob_cursor *c);
/* The same as the reader's may_publish (its env's owner.may_publish).
 * data: the ob_cursor. */
int ob_cursor_may_publish(void *data);
/* The duty "wake" (always due): the flow's idle list left, a producer's
 * wake taken. */
duty_out ob_cursor_wake_run(ob_cursor *c, cursor_pass *p);
/* The two batches (cap rows each) and their extras. Returns 0, or -1 out
 * of memory (ob_cursor_batches_free frees what was made). */
int ob_cursor_batches_init(ob_cursor *c, int cap);
void ob_cursor_batches_free(ob_cursor *c);
/* Copies the fields of the batch's rows out of the result. Returns 0, or
 * -1 out of memory. */
int ob_cursor_keep_rows(ob_batch *b, extras *x);
/* The batch read ahead becomes the batch being published (cursor.c moves
 * their phases). */
void ob_cursor_swap_in_next(ob_cursor *c);
/* Gives back what the batch being published holds and forgets both
 * batches' rows (cursor.c empties their phases). */
void ob_cursor_drop_current(ob_cursor *c);
/* The highest seq below which every row of the active buckets is resolved
 * and done, but for the current batch when `with_cur` is 0. */
uint64_t ob_cursor_safe_point(const ob_cursor *c, int with_cur);
int ob_cursor_has_unsent(const ob_batch *b);
/* Row i of the batch being published belongs to a bucket owned since the
 * batch began. */
int ob_cursor_owns(const ob_cursor *c, int i);
/* Rows given back are published again. Returns how many (the batch is
 * PUBLISHING again when any). */
int ob_cursor_requeue(ob_cursor *c);
/* The lease's buckets changed (owned differs): the buckets given up are
 * handed over, their unsent rows released, the cursors loaded again. */
void ob_cursor_new_owned(ob_cursor *c, uint64_t owned);

/* cursor_checks.c: the checked assumptions. */

/* c->sql: the start-up probe (PROCESS, the cursor table) and every grant
 * the reader writes with; the grants alone while a write is refused. */
void ob_cursor_probe_sql(ob_cursor *c, int grants_only);
/* c->sql: the comparison of the table's counter and the cursors, the next
 * one due a second later. */
void ob_cursor_next_fit_sql(ob_cursor *c);

/* The probe passed: what it found of the table's indexes is taken, and
 * every grant is back. */
void ob_cursor_probe_taken(ob_cursor *c);
/* A gap check passed: INNODB_TRX can be read again. */
void ob_cursor_process_back(ob_cursor *c);
/* INNODB_TRX refused (error no) on a running reader: said once. */
void ob_cursor_process_refused(ob_cursor *c, unsigned no);
/* The comparison of counter and cursors taken. Returns 1 when fatal, with
 * why (n bytes). A new mismatch sets misfit: cursor.c drops the batches. */
int ob_cursor_fit_taken(ob_cursor *c, char *why, size_t n);
/* A write refused (error no, a refusal) during the statement named
 * `during`. Returns 1 when fatal, with why; else the reader refuses to
 * publish until the probe passes (cursor.c drops the batches). */
int ob_cursor_refusal(ob_cursor *c, unsigned no, const char *during, char *why, size_t n);
/* Why the start-up probe's failure (error no) stops the relay. */
void ob_cursor_probe_why(const ob_cursor *c, unsigned no, char *why, size_t n);
/* The duty "check": while the cursors disagree with the table, or the
 * server refuses a write, only the check again, on its own pace; and every
 * second (and before anything else, at start) the comparison of counter
 * and cursors. */
int ob_cursor_check_due(const ob_cursor *c, const cursor_pass *p);
duty_out ob_cursor_check_run(ob_cursor *c, cursor_pass *p);

/* cursor_read.c: the reads; each builds c->sql or takes c->db's result. */

void ob_cursor_load_sql(ob_cursor *c);
/* Returns 1 when buckets lack a cursor row (c->sql marks them). */
int ob_cursor_take_load(ob_cursor *c);
void ob_cursor_take_mark(ob_cursor *c);
/* Returns 1 when the initialisation is proven (c->sql makes the rows). */
int ob_cursor_take_check(ob_cursor *c);
void ob_cursor_take_init(ob_cursor *c);
void ob_cursor_read_sql(ob_cursor *c);
/* Returns 1 when the rows read make the next batch (READY). */
int ob_cursor_take_rows(ob_cursor *c);
/* Status-2 rows were written: the lane looks again at its busy pace. */
void ob_cursor_lane_dirty(ob_cursor *c);
/* A row (of seq `seq`) was written status 2: while a lane pass is under
 * way and the row is below its page, its later pages hold the aggregate's
 * rows. */
void ob_cursor_lane_hold(ob_cursor *c, const ob_row *r, uint64_t seq);
/* The lane's pass starts again from the lowest seq (the buckets changed,
 * the held aggregates were loaded again). */
void ob_cursor_lane_restart(ob_cursor *c);
void ob_cursor_lane_sql(ob_cursor *c);
/* Returns 1 when the lane's rows make the batch being published. */
int ob_cursor_take_lane(ob_cursor *c);
/* Everything of the owned buckets is read, published and written, and no
 * gap is open: what a drain waits for. */
int ob_cursor_drained(const ob_cursor *c);
/* The duties of the reads: "load" (the cursors again, once nothing is in
 * flight), "unowned" (no bucket loaded: the poll's pace), "lane" (the retry
 * lane, between batches), "read" (the next batch) and "drained" (the
 * owner told). */
int ob_cursor_load_due(const ob_cursor *c, const cursor_pass *p);
duty_out ob_cursor_load_run(ob_cursor *c, cursor_pass *p);
int ob_cursor_unowned_due(const ob_cursor *c, const cursor_pass *p);
duty_out ob_cursor_unowned_run(ob_cursor *c, cursor_pass *p);
int ob_cursor_lane_due(const ob_cursor *c, const cursor_pass *p);
duty_out ob_cursor_lane_run(ob_cursor *c, cursor_pass *p);
int ob_cursor_read_due(const ob_cursor *c, const cursor_pass *p);
duty_out ob_cursor_read_run(ob_cursor *c, cursor_pass *p);
int ob_cursor_drained_due(const ob_cursor *c, const cursor_pass *p);
duty_out ob_cursor_drained_run(ob_cursor *c, cursor_pass *p);

/* cursor_finish.c: finishing a batch. */

typedef enum ob_fin {
    OB_FIN_AGAIN, /* rows given back: published again (PUBLISHING) once the broker and the lease
                     allow */
    OB_FIN_WAIT,  /* rows to write without a proven lease: wait for it (still ANSWERED) */
    OB_FIN_DONE,  /* nothing to write: the batch is done */
    OB_FIN_SEND   /* c->sql writes the batch's outcome (and moves the cursors) */
} ob_fin;
ob_fin ob_cursor_finish_sql(ob_cursor *c);
/* The batch's statement was written (or needed none): the tallies
 * (cursor.c empties its phase). */
void ob_cursor_finished(ob_cursor *c);
/* c->sql moves the active buckets' cursors to safe. */
void ob_cursor_advance_sql(ob_cursor *c, uint64_t safe);
/* A graceful stop's steps, in order: the batch in flight finishes, the
 * batch read ahead is published, the gaps still open are watched (reading
 * them alone) for a while, so that the last cursor write leaves as little
 * as possible to publish again; then it closes. */
typedef enum stop_step {
    STOP_IN_FLIGHT, /* the batch being published finishes first */
    STOP_TAKE_IN,   /* the batch read ahead is taken in and published */
    STOP_WATCH,     /* the open gaps are read until stop_until */
    STOP_LAST_WORD, /* the last cursor write (to p->safe): then close, whatever it gets */
    STOP_CLOSE      /* nothing left to do */
} stop_step;
stop_step ob_cursor_stop_step(ob_cursor *c, const cursor_pass *p);
/* The duties of the cursor moves: "hand-over" (the last cursor of the
 * buckets given up, while the lease keeps their locks) and "advance" (the
 * regular move of the live buckets' cursors). */
int ob_cursor_hand_over_due(const ob_cursor *c, const cursor_pass *p);
duty_out ob_cursor_hand_over_run(ob_cursor *c, cursor_pass *p);
int ob_cursor_advance_due(const ob_cursor *c, const cursor_pass *p);
duty_out ob_cursor_advance_run(ob_cursor *c, cursor_pass *p);

#endif
