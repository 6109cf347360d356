/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A stand-in for the broker (pipeline/broker.h) in unit tests of the relay:
 * no server, no client. It records every publish and answers it when the
 * test says, with the verdict the test chose; readiness is the test's to
 * set, and a change of it is posted and delivered from the loop, as the
 * link does (link_post.c), never inside an operation of the table.
 *
 * Linked into a test, it also stands in for the link itself (link.c and
 * link_broker.c: ob_link_new and ob_link_broker_ops), so that the relay
 * made by outbox_relay_create gets this broker in place of NATS.
 */
#ifndef OB_TEST_FAKE_BROKER_H
#define OB_TEST_FAKE_BROKER_H

#include <uv.h>

#include "broker.h"

typedef struct fake_broker fake_broker;

extern const ob_broker_ops fake_broker_ops;

/* A broker telling `ev` (copied). Touches nothing on the loop before start. */
fake_broker *fake_broker_new(uv_loop_t *loop, const ob_broker_events *ev);
/* The most recent broker made and not closed, or NULL. */
fake_broker *fake_broker_last(void);
/* How many brokers were closed (their close callback ran). */
int fake_broker_closed_count(void);

/* 1 once start was called. */
int fake_broker_started(const fake_broker *b);
/* Sets readiness. A change is posted to on_ready, delivered by the loop;
 * a loss counts an epoch. */
void fake_broker_set_ready(fake_broker *b, int ready);
/* How many on_ready calls the loop delivered, and how many of them came
 * inside an operation of the table (a re-entrant delivery: must stay 0). */
int fake_broker_told(const fake_broker *b);
int fake_broker_reentered(const fake_broker *b);

/* The publishes made so far, and the publisher number (worker) of the i-th. */
int fake_broker_published(const fake_broker *b);
uint32_t fake_broker_worker(const fake_broker *b, int i);
/* Answers the i-th publish with `result` (STORED ends a refusal that
 * holds). The ack reaches on_ack now: the test plays the loop. */
void fake_broker_answer(fake_broker *b, int i, ob_ack_result result);
/* Hands on_ack a record of the test's own (an answer for a publisher that
 * does not exist, say). */
void fake_broker_answer_raw(fake_broker *b, const ob_ack *a);
/* The verdict every failed answer gets from now on, with `text`. */
void fake_broker_blame(fake_broker *b, ob_blame blame, const char *text);
/* How many times a reader told the broker it refused a message, and the
 * reason it gave last. */
int fake_broker_refusals(const fake_broker *b);
const char *fake_broker_refusal_text(const fake_broker *b);

/* A message was stored: a refusal that holds ends (its episode with it). */
void fake_broker_stored(fake_broker *b);

/* The broker cannot go on: on_fatal now. */
void fake_broker_fatal(fake_broker *b, const char *why);
/* The stream seen is missing (1) or back (0); a loss is counted. */
void fake_broker_store_missing(fake_broker *b, int missing);
/* A doorbell rang: on_wake now. */
void fake_broker_wake(fake_broker *b);

#endif
