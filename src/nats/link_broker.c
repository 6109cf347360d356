/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The link as a broker (broker.h): the table of operations the relay
 * installs in its readers' environment. Each entry is the link's own
 * function with the handle typed; the one that is more is the verdict on a
 * failed answer, JetStream's table (puback.c) applied with the stream's
 * max_bytes as the link last read it. The readers reach NATS only through
 * this table.
 */
#include "link.h"
#include "puback.h"

static int b_start(void *self) {
    return ob_link_start(self);
}

static int b_ready(const void *self) {
    return ob_link_ready(self);
}

static uint32_t b_epoch(const void *self) {
    return ob_link_epoch(self);
}

static uint64_t b_last_answer(const void *self) {
    return ob_link_last_answer(self);
}

static uint64_t b_window_ms(const void *self) {
    return ob_link_window_ms(self);
}

static int b_publish(void *self, uint32_t worker, uint32_t gen, uint32_t slot, const ob_row *row,
                     ob_pub_fail *fail) {
    return ob_link_publish(self, worker, gen, slot, row, fail);
}

static void b_verdict(const void *self, const ob_ack *a, const ob_row *row, ob_verdict *v) {
    ob_js_verdict(a, row, ob_link_max_bytes(self), v);
}

static void b_unavailable(void *self, const char *why) {
    ob_link_unavailable(self, why);
}

static void b_suspect(void *self, const char *why) {
    ob_link_suspect(self, why);
}

static int b_settled(const void *self) {
    return ob_link_settled(self);
}

static void b_refused(void *self, const char *why) {
    ob_link_refused(self, why);
}

static const char *b_refusal(const void *self) {
    return ob_link_refusal(self);
}

static uint32_t b_refusal_episode(const void *self) {
    return ob_link_refusal_episode(self);
}

static void b_store_lost(const void *self, int *missing, uint32_t *losses) {
    *missing = ob_link_stream_missing(self);
    *losses = ob_link_stream_losses(self);
}

static void b_close(void *self, void (*cb)(void *data), void *data) {
    ob_link_close(self, cb, data);
}

const ob_broker_ops ob_link_broker_ops = {
    .start = b_start,
    .ready = b_ready,
    .epoch = b_epoch,
    .last_answer = b_last_answer,
    .window_ms = b_window_ms,
    .publish = b_publish,
    .verdict = b_verdict,
    .unavailable = b_unavailable,
    .suspect = b_suspect,
    .settled = b_settled,
    .refused = b_refused,
    .refusal = b_refusal,
    .refusal_episode = b_refusal_episode,
    .store_lost = b_store_lost,
    .close = b_close,
};
