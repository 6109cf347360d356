/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Reconnect and retry delays: exponential from a minimum to a maximum, with
 * "equal jitter" (half fixed, half random) drawn from a generator seeded per
 * process, so that relays started together do not retry in step.
 */
#ifndef OB_RETRY_H
#define OB_RETRY_H

#include <stdint.h>

typedef struct ob_retry {
    uint32_t min_ms, max_ms;
    uint64_t rng; /* xorshift64 state, never 0 */
} ob_retry;

/* Seeds from the clock, the process id and the object's address. */
void ob_retry_init(ob_retry *r, uint32_t min_ms, uint32_t max_ms);

/* The delay before try number `failures` + 1: min * 2^failures, capped at
 * max, then a random value in [d/2, d]. */
uint64_t ob_retry_delay(ob_retry *r, int failures);

/* A random value in [0, n). */
uint64_t ob_retry_random(ob_retry *r, uint64_t n);

#endif
