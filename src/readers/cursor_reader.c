/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The cursor reader as a reader (reader.h): a table of thin calls into its
 * public functions (cursor.h), so that the relay calls it as it calls any
 * reader.
 */
#include "cursor.h"

static void cursor_start(void *self) {
    ob_cursor_start(self);
}

static void cursor_stop(void *self, int now) {
    ob_cursor_stop(self, now);
}

static void cursor_halt(void *self) {
    ob_cursor_halt(self);
}

static void cursor_ack(void *self, const ob_ack *ack) {
    ob_cursor_ack(self, ack);
}

static void cursor_broker(void *self, int ready) {
    ob_cursor_broker(self, ready);
}

static void cursor_deadline(void *self) {
    ob_cursor_deadline(self);
}

/* The cursor reader tells its owner of its drain itself (drained) and is
 * the relay's only reader: no drain waits for its batch. */
static int cursor_busy(const void *self) {
    (void)self;
    return 0;
}

static const char *cursor_refusal(const void *self) {
    return ob_cursor_paused(self);
}

static void cursor_free(void *self) {
    ob_cursor_free(self);
}

const ob_reader_ops ob_cursor_reader_ops = {
    .start = cursor_start,
    .stop = cursor_stop,
    .halt = cursor_halt,
    .ack = cursor_ack,
    .broker = cursor_broker,
    .deadline = cursor_deadline,
    .busy = cursor_busy,
    .refusal = cursor_refusal,
    .free = cursor_free,
};
