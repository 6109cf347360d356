/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Readiness and watchdog for systemd's Type=notify (libsystemd's sd_notify).
 * Without libsystemd (-DOUTBOX_SYSTEMD=OFF), or outside systemd (no
 * NOTIFY_SOCKET), every call does nothing.
 *
 * The binary's state is one process's: the calls keep it here, not in a
 * handle.
 */
#ifndef OB_SD_NOTIFY_H
#define OB_SD_NOTIFY_H

#include <uv.h>

/* Tells systemd the relay runs (READY=1), and when the unit sets
 * WatchdogSec=, starts a timer on the loop that sends WATCHDOG=1 at half the
 * interval: a loop that stops turning stops the pings, and systemd restarts
 * the service. The timer does not keep the loop alive. */
void ob_sd_ready(uv_loop_t *loop);

/* Tells systemd the relay is stopping (STOPPING=1) and closes the watchdog
 * timer. Safe to call more than once, and before ob_sd_ready. */
void ob_sd_stopping(void);

#endif
