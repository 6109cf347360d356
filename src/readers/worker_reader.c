/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The worker as a reader (reader.h): a table of thin calls into its public
 * functions (worker.h), so that the relay calls it as it calls any reader.
 */
#include "worker.h"

static void worker_start(void *self) {
    ob_worker_start(self);
}

static void worker_stop(void *self, int now) {
    ob_worker_stop(self, now);
}

static void worker_halt(void *self) {
    ob_worker_halt(self);
}

static void worker_ack(void *self, const ob_ack *ack) {
    ob_worker_ack(self, ack);
}

static void worker_broker(void *self, int ready) {
    ob_worker_broker(self, ready);
}

static void worker_deadline(void *self) {
    ob_worker_deadline(self);
}

static int worker_busy(const void *self) {
    return ob_worker_busy(self);
}

static const char *worker_refusal(const void *self) {
    return ob_worker_refusal(self);
}

static void worker_free(void *self) {
    ob_worker_free(self);
}

const ob_reader_ops ob_worker_reader_ops = {
    .start = worker_start,
    .stop = worker_stop,
    .halt = worker_halt,
    .ack = worker_ack,
    .broker = worker_broker,
    .deadline = worker_deadline,
    .busy = worker_busy,
    .refusal = worker_refusal,
    .free = worker_free,
};
