/*
 * The worker's private structure, shared by worker.c (the state machine)
 * and worker_publish.c (publishing a batch and taking its answers).
 */
#ifndef OB_WORKER_INT_H
#define OB_WORKER_INT_H

#include "fetch_budget.h"
#include "db_life.h"
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
    const ob_worker_env *env;
    uint32_t index;
    char name[32];
    worker_state state;
    ob_db *db;
    uv_timer_t timer; /* connect backoff, poll and retry waits, ack deadline */
    int handles_open;
    ob_flow_member fm;
    ob_db_life life; /* failures: of connects and statements; settled once a fetch completed */
    int stop;        /* 0 running, 1 stop after what is under way, 2 stop now */
    int halted;
    ob_batch batch;
    ob_fetch_budget fb; /* the LIMIT of the next fetch, from the byte budget */
    uint64_t batch_published_at;
    uint64_t fetch_sent_at; /* loop time the batch's fetch was sent */
    int woken;              /* a wake came while the scout's probe was under way */
    int iso;                /* the slot being written while isolating */
    ob_pub_fail pf;
    int drain_said;    /* the rows a drain waits for were logged since the last rows came */
    int refusing;      /* the database refuses what every row needs; claim nothing */
    char refusal[400]; /* why, while refusing */
    ob_buf grant_sql;  /* the statement that writes nothing but needs every write privilege */
};

/* worker_publish.c, called by worker.c only (never the other way): it
 * publishes and takes answers; worker.c owns the timer and the finishing. */

/* Gives back in-flight capacity for n publishes. */
void ob_worker_give_back(ob_worker *w, int n);
/* Publishes as many unsent rows as the capacity allows; returns 1 once
 * every row has its answer (the batch is to be finished). */
int ob_worker_publish_some(ob_worker *w);
/* ms until the ack deadline of the oldest publish in flight, UINT64_MAX
 * when none is. */
uint64_t ob_worker_ack_due_in(const ob_worker *w);
void ob_worker_take_ack(ob_worker *w, const ob_ack *a);
void ob_worker_ack_deadline(ob_worker *w);
/* What follows answers (or the link's verdict). */
typedef enum ob_after {
    OB_AFTER_ACKS,    /* rows still in flight or unsent: keep the ack deadline armed */
    OB_AFTER_VERDICT, /* all answered, a failure may be the broker's: wait for the link */
    OB_AFTER_FINISH   /* all answered: write the outcome */
} ob_after;
ob_after ob_worker_after_answers(ob_worker *w);
/* Ordered: names each row of the batch being finished that goes dead, which
 * the later events of its aggregate then pass. */
void ob_worker_log_passed(ob_worker *w);

/* worker_db.c, called by worker.c only (never the other way): the
 * connection's side; worker.c changes the state. */

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
 * dead built into w->batch.sql; returns its length. */
size_t ob_worker_refused_row_sql(ob_worker *w);
/* w->grant_sql: writes nothing, yet needs every privilege the finishing
 * statements need. Returns 0, or -1 out of memory. */
int ob_worker_grant_sql(ob_worker *w);

#endif
