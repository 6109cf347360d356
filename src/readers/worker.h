/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One MariaDB connection's batch cycle: claim rows, publish them, collect
 * the acks, write the outcome, commit; again and again.
 *
 * The worker knows nothing of the relay. It gets what it needs through the
 * environment (reader_env.h): its configuration, the database settings, a publisher
 * (the NATS link, or a fake in unit tests), the shared flow control and the
 * shared counters, and callbacks to its owner. It never calls nats.c.
 *
 * Life cycle: ob_worker_new (nothing on the loop) -> ob_worker_start (a
 * timer and a connection on the loop) -> ob_worker_stop -> the owner's
 * on_closed, called from the last close callback -> ob_worker_free. A worker
 * never closes by itself: only a stop closes it.
 *
 * Every function runs on the loop thread.
 */
#ifndef OB_WORKER_H
#define OB_WORKER_H

#include <stdint.h>
#include <uv.h>

#include "reader.h"
#include "reader_env.h"

typedef struct ob_worker ob_worker;

/* Returns NULL when out of memory. `env` must outlive the worker. */
ob_worker *ob_worker_new(const ob_reader_env *env, int index);
void ob_worker_start(ob_worker *w);
/* The broker became ready (1) or not (0). */
void ob_worker_broker(ob_worker *w, int ready);
/* The answer to a publish of this worker. */
void ob_worker_ack(ob_worker *w, const ob_ack *ack);
/* The relay cannot go on: finish what is under way, claim nothing more,
 * keep the connection, wait for the stop. */
void ob_worker_halt(ob_worker *w);
/* Graceful (now = 0: the batch under way finishes, until the shutdown
 * deadline) or immediate (now = 1: the open transaction is dropped). */
void ob_worker_stop(ob_worker *w, int now);
/* The shutdown deadline passed: give back what is still in flight. */
void ob_worker_deadline(ob_worker *w);
/* Frees a worker that was never started or is closed. */
void ob_worker_free(ob_worker *w);
/* Nonzero while the worker is inside a batch transaction or its statement. */
int ob_worker_busy(const ob_worker *w);
/* Why the database refuses what every row needs (a privilege taken away),
 * while it does; NULL otherwise. */
const char *ob_worker_refusal(const ob_worker *w);
/* The state's name, for logs and tests. */
const char *ob_worker_state_name(const ob_worker *w);

/* The worker as a reader (reader.h): self is an ob_worker; its publisher
 * number (ack->worker) is the index it was made with. */
extern const ob_reader_ops ob_worker_reader_ops;

#endif
