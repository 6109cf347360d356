/*
 * The relay's private structure, shared by relay.c (life cycle, options,
 * broker events, drain, stop) and worker.c (the batch cycle of one MariaDB
 * connection), and the timers in maint_*.c.
 */
#ifndef OB_RELAY_INT_H
#define OB_RELAY_INT_H

#include <uv.h>

#include "db.h"
#include "link.h"
#include "log.h"
#include "outbox/relay.h"
#include "sql.h"
#include "url.h"

typedef struct ob_worker ob_worker;
typedef struct ob_maint ob_maint;

typedef enum relay_state {
    R_CREATED,  /* options checked; nothing on the loop yet */
    R_RUNNING,  /* handles on the loop, claiming rows */
    R_STOPPING, /* no new claims; waiting for batches to end and handles to close */
    R_STOPPED   /* every handle closed; only destroy is left */
} relay_state;

struct outbox_relay {
    uv_loop_t *loop;
    relay_state state;
    outbox_relay_options o; /* strings owned */
    ob_log log;
    char errmsg[512];

    ob_db_url db;       /* parsed db_url, password override applied */
    ob_db_config dbcfg; /* points into db */
    char *qtable;       /* `schema`.`table` */
    char *ce_source;    /* percent-encoded */
    ob_backoff backoff;
    char *sql_fetch; /* the fetch statement, built once */
    size_t sql_fetch_len;
    char *sql_probe; /* the idle probe, built once */
    size_t sql_probe_len;

    ob_link *link;
    ob_worker **workers;
    int nworkers;
    ob_maint *maint;

    uint32_t in_flight;   /* publishes awaiting an ack, all workers */
    int waiting_capacity; /* workers stalled on max_in_flight */
    ob_worker *scout;     /* the one idle worker that polls; the others sleep */
    int drained;          /* on_drained was called */
    int fatal;
    outbox_stats stats;

    int hard_stop;
    int open_children; /* workers, link, maintenance and timers still closing */
    uv_timer_t shutdown_timer;
    outbox_relay_stop_cb stop_cb;
    void *stop_data;
};

/* worker.c */
ob_worker *ob_worker_new(outbox_relay *r, int index);
void ob_worker_start(ob_worker *w);
/* The broker became ready (1) or not (0). */
void ob_worker_broker(ob_worker *w, int ready);
/* The answer to a publish of this worker (batch ack->gen, slot ack->slot). */
void ob_worker_ack(ob_worker *w, const ob_ack *ack);
/* max_in_flight has room again. */
void ob_worker_capacity(ob_worker *w);
/* More rows are likely: end a poll-interval sleep now. */
void ob_worker_wake(ob_worker *w);
/* Graceful (hard = 0) or immediate (hard = 1) stop. When the worker is
 * closed it calls ob_relay_child_closed(). */
void ob_worker_stop(ob_worker *w, int hard);
/* The shutdown deadline passed: give back what is still in flight. */
void ob_worker_shutdown_deadline(ob_worker *w);
/* Frees a worker that was never started (or is closed). */
void ob_worker_free(ob_worker *w);
/* Nonzero while the worker is inside a batch transaction or its statement. */
int ob_worker_busy(const ob_worker *w);

/* relay.c, for its children */
void ob_relay_child_closed(outbox_relay *r);
void ob_relay_wake_all(outbox_relay *r, ob_worker *except);
void ob_relay_capacity_freed(outbox_relay *r);
/* Worker `w` saw an empty fetch and the table has no pending row. The relay
 * is drained once no other worker is inside a batch either. */
void ob_relay_maybe_drained(outbox_relay *r, ob_worker *w);

/* maint.c: the loop timers. new checks the maintenance options and touches
 * nothing on the loop; on error it returns NULL with a message in errbuf. */
ob_maint *ob_maint_new(outbox_relay *r, char *errbuf, size_t errlen);
void ob_maint_start(ob_maint *m);
void ob_maint_stop(ob_maint *m); /* calls ob_relay_child_closed() when closed */
void ob_maint_free(ob_maint *m);

#endif
