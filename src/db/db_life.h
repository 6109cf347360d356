/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The life of a database connection, as one policy for every owner of one
 * (the workers, the cursor reader, the lease, the cursor switch, the
 * maintenance handle, the cluster watch): when it counts as up and as lost,
 * how long to wait before connecting again, when an error is fatal, and when
 * an error is worth saying again.
 *
 * Each owner embeds an ob_db_life and keeps its own timer and state machine;
 * it calls these functions at its decision points:
 *
 *   connected ----------------> ob_db_life_up       (counted in the gauge)
 *   a statement answered -----> ob_db_life_worked   (the backoff starts over)
 *   the set-up proven --------> ob_db_life_settle   (later errors are not start-up's)
 *   a failure ----------------> ob_db_life_verdict  FATAL: a permanent error before
 *                                                   the owner settled, a misconfiguration
 *                                                   RETRY: wait ob_db_life_backoff() ms
 *   lost ---------------------> ob_db_life_down     (the gauge and the lost counter)
 *   closed -------------------> ob_db_life_closed   (the gauge only)
 *
 * The backoff runs from OB_DB_LIFE_MIN_MS to OB_DB_LIFE_MAX_MS with equal
 * jitter (retry.h), the first wait the shortest; it grows with every failure
 * until a statement answers, so a server that takes connections and drops
 * them at once is not tried in a tight loop. All but ob_db_life_close are
 * pure (no handle, no I/O); every function runs on the owner's loop thread.
 */
#ifndef OB_DB_LIFE_H
#define OB_DB_LIFE_H

#include <stdint.h>
#include <uv.h>

#include "db.h"
#include "retry.h"

#define OB_DB_LIFE_MIN_MS 250
#define OB_DB_LIFE_MAX_MS 10000

typedef enum ob_db_verdict {
    OB_DB_RETRY, /* wait ob_db_life_backoff() ms, then try again */
    OB_DB_FATAL  /* retrying cannot heal it: the owner refuses to go on */
} ob_db_verdict;

typedef struct ob_db_life {
    ob_retry retry;
    int failures;    /* since a statement last answered */
    int up;          /* connected, and counted in *gauge */
    int settled;     /* the owner's set-up was proven once */
    int has_said;    /* `said` holds an error said since a statement answered */
    unsigned said;   /* the error last said in the log */
    uint32_t *gauge; /* connections up (the relay's readers), or NULL */
    uint64_t *lost;  /* connections lost after they were up, or NULL */
    int closing;     /* ob_db_life_close: handles not closed yet */
    void (*on_closed)(void *data);
    void *closed_data;
} ob_db_life;

/* gauge and lost are the counters the connection counts into (either may be
 * NULL); they must outlive the owner. */
void ob_db_life_init(ob_db_life *l, uint32_t *gauge, uint64_t *lost);

/* The connection is made. */
void ob_db_life_up(ob_db_life *l);

/* A statement answered: the next failure waits the shortest time again, and
 * an error is said again when it comes back. */
void ob_db_life_worked(ob_db_life *l);

/* The owner's first statement that proves its set-up (the grants, the
 * columns) passed; also worked. */
void ob_db_life_settle(ob_db_life *l);

/* The connection is gone. Returns 1 when it was up (then counted as lost). */
int ob_db_life_down(ob_db_life *l);

/* The owner closes the connection: no longer up, not counted as lost. */
void ob_db_life_closed(ob_db_life *l);

/* What a failure with MariaDB error `err` means: FATAL for an error that
 * retrying cannot heal (ob_db_errno_is_permanent) before the owner settled,
 * else RETRY. */
ob_db_verdict ob_db_life_verdict(const ob_db_life *l, unsigned err);

/* Counts a failure and returns the wait before the next try, in ms. */
uint64_t ob_db_life_backoff(ob_db_life *l);

/* 1 when `err` should be said in the log: it differs from the error said
 * last since a statement answered (a lasting error is said once). */
int ob_db_life_say(ob_db_life *l, unsigned err);

/* For an owner with one timer and one connection (db may be NULL): closes
 * both (ob_db_life_closed first) and calls on_closed(data) from the last
 * close callback, where the owner may free itself and the ob_db_life in it.
 * The timer must have been initialised; its `data` is taken over. */
void ob_db_life_close(ob_db_life *l, uv_timer_t *timer, ob_db *db, void (*on_closed)(void *data),
                      void *data);

#endif
