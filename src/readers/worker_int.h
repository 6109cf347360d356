/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The worker's private structure, shared by worker.c (the state machine)
 * and worker_db.c (the connection's side). Publishing a batch and taking
 * its answers is the publishing context's (publish.h), which the worker
 * embeds.
 */
#ifndef OB_WORKER_INT_H
#define OB_WORKER_INT_H

#include "fetch_budget.h"
#include "db_life.h"
#include "publish.h"
#include "worker.h"

typedef enum worker_state {
    W_NEW,            /* created, not started */
    W_CONNECTING,     /* waiting for the database connection */
    W_CONNECT_WAIT,   /* waiting before connecting again */
    W_BROKER_WAIT,    /* connected; waiting for NATS and the stream to be ready */
    W_FETCHING,       /* waiting for START TRANSACTION; SELECT ... FOR UPDATE SKIP LOCKED */
    W_PUBLISHING,     /* rows claimed; publishing them (capacity permitting), waiting for acks */
    W_FINISHING,      /* waiting for UPDATE ...; COMMIT of the batch */
    W_ISOLATING,      /* the finishing statement failed on a row: writing the rows one by one */
    W_REFUSING,       /* waiting for the statement that marks a refused row dead */
    W_ISO_COMMITTING, /* every row written one by one: waiting for their COMMIT */
    W_ENDING_EMPTY,   /* waiting for COMMIT [; SELECT EXISTS pending] after an empty fetch */
    W_ROLLING_BACK,   /* waiting for ROLLBACK of a batch with nothing to write, or of a conflict */
    W_ABORTING,       /* waiting for ROLLBACK after a statement error */
    W_RETRY_WAIT,     /* waiting before fetching again after a statement error */
    W_REFUSED_WAIT,   /* the database refuses what every row needs (a privilege): waiting */
    W_LEASE_WAIT,     /* the owner may not publish yet: waiting a poll interval, claiming nothing */
    W_GRANT_PROBING,  /* waiting for UPDATE ... WHERE 1 = 0: does it accept the writes again? */
    W_POLL_WAIT,      /* the scout: waiting out the poll interval */
    W_PROBING,        /* the scout: waiting for SELECT 1 ... LIMIT 1 (is any row due?) */
    W_PARKED,         /* idle: waiting to be woken by the scout or a full batch */
    W_HALTED,         /* the relay cannot go on: connection kept, waiting for the stop */
    W_CLOSING,        /* waiting for the timer and the connection to close */
    W_CLOSED          /* nothing left on the loop */
} worker_state;

typedef enum worker_event {
    EV_START,
    EV_DB_OK,       /* the statement (or connect) in progress succeeded */
    EV_DB_FAILED,   /* it failed; see ob_db_errno / ob_db_lost */
    EV_DB_LOST,     /* the connection died while no statement ran (ob_db_watch) */
    EV_TIMER,       /* the worker's timer fired */
    EV_BROKER_UP,   /* the broker became ready */
    EV_BROKER_DOWN, /* the broker stopped being ready */
    EV_ACK,         /* arg: const ob_ack * */
    EV_CAPACITY,    /* in-flight capacity is available again */
    EV_WAKE,        /* more rows are likely */
    EV_HALT,        /* the relay cannot go on */
    EV_STOP,        /* graceful stop */
    EV_STOP_NOW,    /* immediate stop */
    EV_DEADLINE     /* the shutdown deadline passed */
} worker_event;

struct ob_worker {
    const ob_reader_env *env;
    ob_pub pub; /* the batch, its flow membership, its name and publisher number */
    worker_state state;
    ob_db *db;
    uv_timer_t timer; /* connect backoff, poll and retry waits, ack deadline */
    int handles_open;
    ob_db_life life; /* failures: of connects and statements; settled once a fetch completed */
    int stop;        /* 0 running, 1 stop after what is under way, 2 stop now */
    int halted;
    ob_fetch_budget fb; /* the LIMIT of the next fetch, from the byte budget */
    uint64_t batch_published_at;
    uint64_t fetch_sent_at;    /* loop time the batch's fetch was sent */
    int woken;                 /* a wake came while the scout's probe was under way */
    int iso;                   /* the slot being written while isolating */
    int drain_said;            /* the rows a drain waits for were logged since the last rows came */
    int failback;              /* this connect goes back to the first node: ob_db_failback's */
    int refusing;              /* the database refuses what every row needs; claim nothing */
    char refusal[400];         /* why, while refusing */
    uint64_t conflict_said;    /* loop time of the last conflict line said, 0 never */
    unsigned conflicts_unsaid; /* conflicts retried since, not said */
    uint64_t dead_said;        /* loop time of the last "marked dead" line, 0 never */
    uint64_t dead_unsaid;      /* rows marked dead since, not said */
    ob_buf grant_sql; /* the statement that writes nothing but needs every write privilege */
};

/* worker_db.c, called by worker.c only (never the other way): the
 * connection's side; worker.c changes the state. */

/* n rows of the batch just committed were marked dead: said at most once
 * a minute per worker, with the count since the last line (the poison rows
 * of a busy table would otherwise fill the log one line each). */
void ob_worker_say_dead(ob_worker *w, int n);

/* Whose fault a failed database operation is. */
typedef enum ob_fault {
    OB_FAULT_LOST,     /* the connection is gone: connect again */
    OB_FAULT_REFUSED,  /* what every row needs is refused (w->refusing set): roll back */
    OB_FAULT_CONFLICT, /* a deadlock or lock wait timeout: roll back and go again */
    OB_FAULT_ERROR     /* any other error: roll back and wait */
} ob_fault;
/* Says the failure of what ran `during` and counts it. */
ob_fault ob_worker_classify(ob_worker *w, const char *during);
/* A statement's failure that may be one row's: not a lost connection, a
 * conflict, or an error that every row would meet. */
int ob_worker_row_level(ob_worker *w);
/* The connection is gone: the gauge of connections up follows. */
void ob_worker_db_down(ob_worker *w);
/* The connection is up: said, counted, and the rows a lost one left
 * unmarked warned of when past the stream's duplicate window. */
void ob_worker_db_up(ob_worker *w);
/* The batch's published rows will not be marked: counted for the warning
 * on reconnect. */
void ob_worker_note_unmarked(ob_worker *w);
/* The fetch statement (its length in *len), noting when it is sent; NULL
 * without memory for it (said). */
const char *ob_worker_fetch_sql(ob_worker *w, size_t *len);
/* The drain probe's row after an empty fetch: the table is empty (the
 * owner hears), or how many rows a drain waits for is said once. */
void ob_worker_drain_row(ob_worker *w);
/* The row being isolated is refused: said, and the statement that marks it
 * dead built into w->pub.batch.sql; returns its length. */
size_t ob_worker_refused_row_sql(ob_worker *w);
/* w->grant_sql: writes nothing, yet needs every privilege the finishing
 * statements need. Returns 0, or -1 out of memory. */
int ob_worker_grant_sql(ob_worker *w);

/* A worker without the lease's leave looks again at least this often. */
#define LEASE_LOOK_MS 100

#endif
