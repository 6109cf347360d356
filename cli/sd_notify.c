/* SPDX-License-Identifier: Apache-2.0 */
#include "sd_notify.h"

#include <stdint.h>

#ifdef OUTBOX_HAVE_SYSTEMD
#include <systemd/sd-daemon.h>

static struct {
    uv_timer_t watchdog;
    int timer_open; /* the watchdog timer is initialized and not yet closed */
    int stopping;
} sd;

static void on_watchdog(uv_timer_t *t) {
    (void)t;
    sd_notify(0, "WATCHDOG=1");
}

void ob_sd_ready(uv_loop_t *loop) {
    sd_notify(0, "READY=1");
    uint64_t usec = 0;
    if (sd.stopping || sd_watchdog_enabled(0, &usec) <= 0 || usec == 0)
        return;
    uint64_t every = usec / 2000; /* half the interval, in ms */
    if (every == 0)
        every = 1;
    uv_timer_init(loop, &sd.watchdog);
    uv_unref((uv_handle_t *)&sd.watchdog);
    sd.timer_open = 1;
    uv_timer_start(&sd.watchdog, on_watchdog, every, every);
}

void ob_sd_stopping(void) {
    if (sd.stopping)
        return;
    sd.stopping = 1;
    sd_notify(0, "STOPPING=1");
    if (sd.timer_open) {
        sd.timer_open = 0;
        uv_close((uv_handle_t *)&sd.watchdog, NULL);
    }
}

#else

void ob_sd_ready(uv_loop_t *loop) {
    (void)loop;
}

void ob_sd_stopping(void) {}

#endif
