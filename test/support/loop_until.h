/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Test helpers for code on a libuv loop: run the loop until a condition
 * holds (for at most 5 s, then CHECK it), and the link settings the link
 * tests share (loop_link_config, only where link.h was included before).
 * Header-only; include after check.h.
 */
#ifndef OB_TEST_LOOP_UNTIL_H
#define OB_TEST_LOOP_UNTIL_H

#include <stdint.h>
#include <string.h>
#include <uv.h>

/* Runs `loopp` without waiting until cond holds, for at most 5 s. */
#define LOOP_UNTIL(loopp, cond)                                                                    \
    do {                                                                                           \
        uint64_t until_ = uv_hrtime() + 5000000000ull;                                             \
        while (!(cond) && uv_hrtime() < until_) {                                                  \
            uv_run((loopp), UV_RUN_NOWAIT);                                                        \
            if (!(cond))                                                                           \
                uv_sleep(1);                                                                       \
        }                                                                                          \
        CHECK(cond);                                                                               \
    } while (0)

#ifdef OB_LINK_H
/* A link to a fake server: stream S, prefix outbox, 100 in flight. */
static inline void loop_link_config(ob_link_config *cfg, const ob_log *log) {
    memset(cfg, 0, sizeof(*cfg));
    cfg->url = "nats://127.0.0.1:4222";
    cfg->stream = "S";
    cfg->subject_prefix = "outbox";
    cfg->duplicate_window_ms = 120000;
    cfg->retry_horizon_ms = 60000;
    cfg->max_in_flight = 100;
    cfg->wake_subject = "outbox_wake.t";
    cfg->log = log;
}
#endif

#endif
