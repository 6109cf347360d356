/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Flow control shared by a relay's workers, pgbouncer-style: every worker is
 * a member that sits on at most one list at a time.
 *
 *   waiting  members that have rows to publish but no in-flight capacity;
 *            released capacity is handed to them in arrival order.
 *   idle     members that found no work; one of them, the scout, polls the
 *            table, the others are parked until something wakes them.
 *
 * Pure bookkeeping: nothing here touches the loop or the network, so it is
 * unit-tested on its own. Callbacks run synchronously from the call that
 * made room or woke the members, and may call back into the module.
 */
#ifndef OB_FLOW_H
#define OB_FLOW_H

#include <stdint.h>

typedef struct ob_flow_member ob_flow_member;

typedef enum ob_flow_list { OB_FLOW_NONE = 0, OB_FLOW_WAITING, OB_FLOW_IDLE } ob_flow_list;

struct ob_flow_member {
    ob_flow_member *prev, *next;
    ob_flow_list list;
    /* Capacity is available again: the member was taken off `waiting`. */
    void (*on_capacity)(ob_flow_member *m);
    /* More rows are likely: the member was taken off `idle`. */
    void (*on_wake)(ob_flow_member *m);
};

typedef struct ob_flow_queue {
    ob_flow_member *head, *tail;
} ob_flow_queue;

typedef struct ob_flow {
    uint32_t in_flight;
    uint32_t max_in_flight;
    ob_flow_queue waiting;
    ob_flow_queue idle;
    ob_flow_member *scout; /* on `idle`, or NULL */
    int handing_out;       /* inside ob_flow_release's loop */
    int wake_pending;      /* a wake came while nobody was idle */
    /* Adaptive polling: the scout polls every poll_min_ms while rows keep
     * coming (for a second after the last were found), then the interval
     * doubles with each empty poll up to poll_max_ms; once no row was found
     * for OB_FLOW_WARM_MS (counted from the first idle poll before any row
     * was found) it goes on doubling up to poll_idle_ms, so that a relay at
     * rest wakes about once a second. */
    uint32_t poll_min_ms, poll_max_ms, poll_idle_ms, poll_ms;
    uint64_t hot_until;
    uint64_t warm_until; /* 0 before the first idle poll */
} ob_flow;

/* How long after the last rows the scout keeps polling at poll_max_ms. */
#define OB_FLOW_WARM_MS 60000
/* The slowest poll of a relay at rest (poll_max_ms when that is longer). */
#define OB_FLOW_IDLE_POLL_MS 1000

void ob_flow_init(ob_flow *f, uint32_t max_in_flight, uint32_t poll_min_ms, uint32_t poll_max_ms);

/* Takes room for one publish and returns 1; when there is none, puts m on
 * the waiting list (once) and returns 0. */
int ob_flow_acquire(ob_flow *f, ob_flow_member *m);

/* Gives back room for n publishes and hands it to waiting members. */
void ob_flow_release(ob_flow *f, uint32_t n);

/* m found no work. Returns 1 when m is the scout (it should poll), 0 when
 * it is parked until woken. */
int ob_flow_idle(ob_flow *f, ob_flow_member *m);

/* Takes m off whichever list it is on; a scout gives up its role. Returns
 * 1 when m was the scout. */
int ob_flow_leave(ob_flow *f, ob_flow_member *m);

/* Wakes every idle member but `except` (may be NULL); the scout too. */
void ob_flow_wake_all(ob_flow *f, ob_flow_member *except);

/* Rows were committed (a doorbell, a notify): wakes one idle member (the
 * first to go idle), or, when none is idle, leaves a wake for the next
 * member that goes idle. A full batch wakes the others. */
void ob_flow_ring(ob_flow *f);
/* Takes a pending wake: returns 1 (the caller should fetch at once) or 0. */
int ob_flow_take_wake(ob_flow *f);

/* Rows were found at loop time `now`: poll fast for a while. */
void ob_flow_activity(ob_flow *f, uint64_t now);
/* Nonzero while rows keep coming (the scout then fetches instead of
 * probing: the probe would find rows anyway). */
int ob_flow_hot(const ob_flow *f, uint64_t now);
/* The scout's next poll delay at loop time `now`: poll_min_ms while hot,
 * then doubling up to poll_max_ms while warm, then up to poll_idle_ms. */
uint32_t ob_flow_poll_delay(ob_flow *f, uint64_t now);

#endif
