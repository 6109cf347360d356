/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The relay's private structure, shared by relay.c (life cycle, phases and
 * the glue between link and readers), relay_options.c (defaults, checks
 * and the copy of the options), relay_lease.c (the lease and the workers'
 * shares of the buckets) and relay_cursor.c (cursor mode's lease and
 * reader). The readers, the link and the maintenance timers do not see it:
 * each gets what it needs through its own interface.
 */
#ifndef OB_RELAY_INT_H
#define OB_RELAY_INT_H

#include <uv.h>

#include "cluster_watch.h"
#include "cursor.h"
#include "flow.h"
#include "lease.h"
#include "link.h"
#include "log.h"
#include "mode.h"
#include "outbox/relay.h"
#include "reader.h"
#include "relay_maint.h"
#include "url.h"
#include "worker.h"

typedef enum relay_phase {
    R_CREATED,      /* options checked; nothing on the loop yet */
    R_RUNNING,      /* handles on the loop, claiming rows */
    R_STOPPING,     /* no new claims; waiting for the readers and the timers to close */
    R_CLOSING_LINK, /* readers closed; waiting for the link and the shutdown timer */
    R_STOPPED       /* every handle closed; only destroy is left */
} relay_phase;

struct outbox_relay {
    uv_loop_t *loop;
    relay_phase phase;
    outbox_relay_options o; /* strings owned */
    const ob_mode *mode;    /* o's mode (ob_mode_pick), asked what it needs */
    ob_log log;
    char errmsg[512];

    /* Every connection of the relay: a node one finds silent is left by all. */
    ob_db_group dbgroup;
    ob_db_url db;     /* parsed db_url, password override applied */
    char *qtable;     /* `schema`.`table` */
    char *ce_source;  /* percent-encoded */
    ob_buf sql_fetch; /* statements built once */
    ob_buf sql_probe;
    ob_buf sql_drain;
    ob_buf wake;              /* the doorbell's subject */
    const char *wake_subject; /* wake.p, or NULL without a doorbell */

    ob_reader_env env; /* shared by the workers */
    ob_unmarked unmarked;
    ob_unmarked unanswered;
    int any_fetched;
    ob_paused paused; /* subjects refused for themselves alone (paused.h) */
    ob_flow flow;
    /* The readers: `connections` workers (one in leader mode), or cursor
     * mode's one reader. Owned: each is freed with its ops' free. A
     * reader's index is its publisher number, so an ack goes to
     * readers[ack->worker]. */
    ob_reader *readers;
    int nreaders;
    ob_timers *timers;
    outbox_stats stats;

    /* Ordered and leader modes (relay_lease.c). */
    struct {
        ob_lease *lease;
        int lease_open;    /* started and not yet closed */
        int lease_stopped; /* ob_relay_lease_stop was called (it runs once) */
        uint64_t *share;   /* per worker: the buckets it reads */
        ob_buf *sql;       /* per worker: its fetch statement */
        int *built;        /* per worker: the row limit sql was built for, 0 to rebuild */
        unsigned *turn;    /* per worker: the round robin over its buckets */
        char base[32];     /* the lease's lock name prefix */
        /* Ordered modes: buckets leaving cursor mode (relay_lease.c). */
        struct ob_cursor_switch *sw;
        uint64_t owned; /* the buckets the lease gives */
        uint64_t ready; /* the buckets known to have no cursor row: only these are read */
        int on_table;   /* the lease last owned on the lease table (a Galera node) */
        /* relay.c's, handed down at prepare: relay_lease.c calls nothing of
         * relay.c by name, so the pair calls in one direction. */
        void (*fatal)(outbox_relay *r, const char *why);
        void (*closed)(outbox_relay *r); /* the lease closed: step the phase */
        /* Cursor mode (set by its prepare): the readers write under the
         * lease to their end, so the lease closes after them (relay_cursor.c)
         * rather than at the stop, and a graceful stop before the lease
         * started stops them at once (they own nothing to write). The one
         * difference of the modes the stop sees. */
        int readers_hold_lease;
    } order;

    /* Cursor mode (relay_cursor.c): the reader in place of the workers,
     * for what only it is told (the owned buckets). Borrowed: readers[0]
     * owns it. */
    ob_cursor *cursor;
    /* On a Galera node, the other members' gap proof (gap_proof.h): made at
     * the watch's first answer that finds one, closed after the reader. */
    ob_gap_proof *proof;
    char members_why[256]; /* why the members' proof cannot serve, for /readyz */
    char node_why[200];    /* why the database node cannot serve (cluster watch), "" when it can */
    char *ctable;          /* the cursor table's name */

    /* What the database is (cluster_watch.c). The locking modes start their
     * lease only once it has answered and found no Galera node. */
    ob_cluster_watch *watch;
    int watch_open;    /* started and not yet closed */
    int locks_started; /* the lease was started */

    int drained;              /* on_drained was called */
    uint32_t refusal_counted; /* the refusal episode last counted as an outage */
    int fatal;
    int hard_stop;
    int past_deadline;         /* the shutdown timeout passed */
    uint64_t released_running; /* stats.released when the stop began */

    /* Children on the loop, counted when started and counted down in their
     * close callbacks, whatever the phase. */
    int open_readers;
    int timers_open;
    int link_open;
    int shutdown_timer_open;
    uv_timer_t shutdown_timer;
    outbox_relay_stop_cb stop_cb;
    void *stop_data;
};

/* relay.c */
void ob_relay_fatal(outbox_relay *r, const char *why);
/* Moves the phase on when the children it waits for are closed. */
void ob_relay_step(outbox_relay *r);

/* relay_lease.c, called by relay.c only (it calls back through the two
 * functions given to prepare). In the unordered mode only the mode check. */
/* Sets up the workers' ordered fetches and the lease; before the workers
 * are made. `fatal` stops the relay with a cause; `closed` tells it the
 * lease is closed. Returns 0, or -1 when out of memory. */
int ob_relay_lease_prepare(outbox_relay *r, void (*fatal)(outbox_relay *r, const char *why),
                           void (*closed)(outbox_relay *r));
void ob_relay_lease_start(outbox_relay *r);
void ob_relay_lease_stop(outbox_relay *r);
void ob_relay_lease_free(outbox_relay *r);
/* The lease of this relay's mode (plain when unordered, the presence lock
 * 'c' in cursor mode), telling `changed` of the owned buckets; a fatal
 * error and the close go to r->order's fatal and closed. Sets
 * r->order.base. NULL out of memory. */
ob_lease *ob_relay_make_lease(outbox_relay *r, void (*changed)(void *data, uint64_t owned));

/* relay_cursor.c, called by relay.c only: cursor mode's lease and reader
 * (r->cursor), made in place of ob_relay_lease_prepare's. Returns 0, or -1
 * when out of memory. */
/* Every answer of the cluster watch in cursor mode: on a Galera node the
 * members' gap proof follows its member list (relay_cursor.c). */
void ob_relay_cursor_cluster(outbox_relay *r, const ob_cluster *c);
/* Why the members' proof holds the cursors back, NULL when it does not. */
const char *ob_relay_cursor_members_why(const outbox_relay *r);
int ob_relay_cursor_prepare(outbox_relay *r, void (*fatal)(outbox_relay *r, const char *why),
                            void (*closed)(outbox_relay *r));

/* relay_options.c */
/* Checks o; returns OUTBOX_OK or an error with a message in errbuf. */
int ob_relay_check_options(const outbox_relay_options *o, char *errbuf, size_t errlen);
/* The caller's options (of o->size bytes) as this library's whole struct in
 * `out`, the fields the caller lacks at their defaults. OUTBOX_EINVAL when
 * o->size was not set by outbox_relay_options_init, or is larger than this
 * library knows (a program built against a newer header). */
int ob_relay_options_upgrade(const outbox_relay_options *o, outbox_relay_options *out, char *errbuf,
                             size_t errlen);
/* Copies o into r->o, duplicating every string. Returns 0, or -1 when out
 * of memory. */
int ob_relay_copy_options(outbox_relay *r, const outbox_relay_options *o);
void ob_relay_free_options(outbox_relay_options *o);

#endif
