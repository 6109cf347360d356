/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A reader's publishing context: the batch it publishes, its membership of
 * the relay's flow control, and what it needs to publish the rows and take
 * their answers. Both readers embed one (the worker, worker_int.h; the
 * cursor reader, cursor_int.h) and find themselves back from its flow
 * member with one step (offsetof of the embedded member).
 *
 * What publish.c does: capacity from the flow control, the broker's
 * verdict per row, acks (whose fault each refusal is), and the ack deadline
 * that tells a silent broker (its fault: rows go back without an attempt)
 * from a row the broker did not answer while it answered others (the row's
 * fault). It owns no handle: the reader owns the timer of the ack deadline
 * and the finishing of the batch.
 *
 * Ownership: the reader owns the context and its batch (ob_batch_init and
 * ob_batch_free are the reader's). Every function runs on the loop thread.
 */
#ifndef OB_PUBLISH_H
#define OB_PUBLISH_H

#include <stdint.h>

#include "reader_env.h"

typedef struct ob_pub {
    const ob_reader_env *env; /* the relay's publisher, flow, counters, batch settings */
    uint32_t index;           /* the publisher number of this reader's publishes */
    char name[32];            /* for logs: "worker 3", "cursor" */
    ob_batch batch;           /* the batch being published */
    ob_flow_member fm;        /* on the flow's lists; its callbacks are the reader's */
    ob_pub_fail pf;           /* why the last publish was refused before it left */
} ob_pub;

/* Sets up p (its batch apart) for a reader whose flow callbacks are given. */
void ob_pub_init(ob_pub *p, const ob_reader_env *env, uint32_t index, const char *name,
                 void (*on_capacity)(ob_flow_member *), void (*on_wake)(ob_flow_member *));
/* Gives back in-flight capacity for n publishes. */
void ob_pub_give_back(ob_pub *p, int n);
/* Publishes as many unsent rows as the capacity allows; returns 1 once
 * every row has its answer (the batch is to be finished). */
int ob_pub_some(ob_pub *p);
/* ms until the ack deadline of the oldest publish in flight, UINT64_MAX
 * when none is. */
uint64_t ob_pub_ack_due_in(const ob_pub *p);
/* The answer to a publish; a late one (an earlier batch, an expired
 * publish) is ignored. */
void ob_pub_take_ack(ob_pub *p, const ob_ack *a);
/* The ack deadline passed for the oldest publishes. */
void ob_pub_ack_deadline(ob_pub *p);

/* A broker's outage ends the wait for answers: the rows it left unanswered
 * (in flight, or expired by the ack deadline while it still answered others)
 * go back untouched, to go out again once it is back, and are counted for
 * ob_pub_say_unanswered. */
void ob_pub_outage(ob_pub *p);

/* The broker is back: rows an outage left unanswered for longer than the
 * stream's duplicate window may be stored twice; say how many, once. */
void ob_pub_say_unanswered(ob_pub *p);

/* Says, once, that the u->rows published rows (by a lost database connection
 * left unmarked, or by a broker's outage unanswered: cause) go out again past
 * the stream's duplicate window, if they do (slack_ms added to their age). */
void ob_unmarked_say(const ob_reader_env *e, ob_unmarked *u, uint64_t slack_ms, const char *cause);
/* What follows answers (or the link's verdict). */
typedef enum ob_after {
    OB_AFTER_ACKS,    /* rows still in flight or unsent: keep the ack deadline armed */
    OB_AFTER_VERDICT, /* all answered, a failure may be the broker's: wait for the link */
    OB_AFTER_FINISH   /* all answered: write the outcome */
} ob_after;
ob_after ob_pub_after_answers(ob_pub *p);
/* Ordered: names each row of the batch being finished that goes dead, which
 * the later events of its aggregate then pass. */
void ob_pub_log_passed(const ob_pub *p);

#endif
