/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the relay sees of a reader: the part of its life cycle that every
 * kind shares. A reader reads the outbox table on its own MariaDB
 * connection and publishes the rows through the relay's publisher; the
 * worker (worker.h, one of `connections` claiming rows with locks) and the
 * cursor reader (cursor.h, cursor mode's one reader, without locks) are the
 * two kinds. Each implements the table below over its own functions, so
 * that the relay holds an array of readers and forwards to every one alike.
 *
 * What is not shared stays with the kind and its owner: how a reader is
 * made (its environment and owner callbacks), cursor mode's owned buckets
 * (ob_cursor_owned), and its state's name.
 *
 * Ownership: an ob_reader is a value, {ops, self}; whoever holds it owns
 * `self` and ends it with free, once the reader is closed (its owner's
 * closed callback ran) or was never started. `ops` is a static table that
 * outlives every reader.
 *
 * Threading: every call runs on the loop thread, as the reader's own.
 */
#ifndef OB_READER_H
#define OB_READER_H

#include "broker.h"

typedef struct ob_reader_ops {
    /* Puts the reader's handles on the loop; it starts reading. */
    void (*start)(void *self);
    /* Graceful (now = 0: what is under way finishes, until the shutdown
     * deadline) or immediate (now = 1: an open transaction is dropped).
     * The owner's closed callback follows once every handle is closed. */
    void (*stop)(void *self, int now);
    /* The relay cannot go on: take and publish nothing more, wait for the
     * stop. */
    void (*halt)(void *self);
    /* The answer to one of this reader's publishes: those it made with its
     * publisher number, ack->worker. `ack` is valid during the call only. */
    void (*ack)(void *self, const ob_ack *ack);
    /* The broker became ready (1) or not (0). */
    void (*broker)(void *self, int ready);
    /* The shutdown deadline passed: give back what is still in flight. */
    void (*deadline)(void *self);
    /* Nonzero while the reader is inside a batch whose outcome a drain
     * must wait for (its counters are not final yet). */
    int (*busy)(const void *self);
    /* Why the reader holds back while the servers are up (a privilege
     * taken away, the cursors above the table's counter), for /readyz;
     * NULL when it does not. Valid until the next call into the reader. */
    const char *(*refusal)(const void *self);
    /* Frees a reader that was never started or is closed; NULL is a no-op. */
    void (*free)(void *self);
} ob_reader_ops;

typedef struct ob_reader {
    const ob_reader_ops *ops;
    void *self;
} ob_reader;

#endif
