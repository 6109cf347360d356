/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A log output that never stalls the loop: lines go into a bounded buffer,
 * and what the reader takes is written at once; the rest waits for the
 * descriptor to become writable, on the loop, while rows go on. A reader that
 * does not keep up (a full pipe, a stopped terminal, a journal that does not
 * read) costs log lines, never delivery: a line that does not fit is dropped
 * and counted, and lines are dropped until half the buffer is free again;
 * then the owner is called back once with the number dropped (and writes a
 * line saying so).
 *
 * How a write is made non-blocking depends on what the descriptor is, since
 * O_NONBLOCK belongs to the open file description, which a pipe or terminal
 * shares with other processes (the shell that started the relay):
 *   - a regular file or a device that is no terminal: written directly (a
 *     write completes);
 *   - a pipe, FIFO or terminal: opened anew through /proc/self/fd, a
 *     description of our own, made non-blocking, watched with a uv_poll_t;
 *   - a socket (journald's stream): send() with MSG_DONTWAIT, tried again on
 *     a timer while it takes nothing; the shared description is untouched;
 *   - a pipe that cannot be opened anew (no /proc): written only when poll()
 *     says it has room, at most PIPE_BUF bytes at a time (a pipe that polls
 *     writable has a free page), tried again on a timer.
 * Without a loop (before it runs, after it ends) a write waits for the reader,
 * up to a bound.
 *
 * Threads: everything on the thread that owns the loop. No thread of its own.
 */
#ifndef OB_CLI_LOGSINK_H
#define OB_CLI_LOGSINK_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

enum { OB_LOGSINK_CAP = 64 * 1024 };

typedef enum ob_logsink_mode {
    OB_SINK_DIRECT, /* a regular file or a device: a write completes */
    OB_SINK_OWN,    /* our own non-blocking description of a pipe, FIFO or terminal */
    OB_SINK_SOCKET, /* a socket: send(MSG_DONTWAIT) */
    OB_SINK_PROBE   /* a pipe not opened anew: poll(), then at most PIPE_BUF */
} ob_logsink_mode;

typedef struct ob_logsink ob_logsink;

/* Called once the reader caught up after lines were dropped, with their
 * number; the callee may put a line (it is not dropped for the same reason). */
typedef void (*ob_logsink_dropped_fn)(ob_logsink *s, uint64_t dropped, void *data);

struct ob_logsink {
    int fd;    /* what is written to */
    int owned; /* fd is ours to close */
    ob_logsink_mode mode;
    int failed; /* errno of a write that failed for good (0: none): lines are dropped */
    char *buf;
    size_t len;
    int dropping;            /* lines are dropped until half the buffer is free */
    uint64_t dropped;        /* lines dropped and not yet said */
    uint64_t *dropped_total; /* every line dropped or lost to a failure (shared) */
    uint64_t lost;           /* dropped_total when the owner gives none */
    int gave_up;             /* a bounded wait ran out; the next writes do not wait */
    ob_logsink_dropped_fn on_dropped;
    void *data;
    uv_loop_t *loop;
    uv_poll_t *poll;   /* OWN, on the loop (heap: freed by its close callback) */
    uv_timer_t *timer; /* SOCKET and PROBE, on the loop (heap, likewise) */
};

/* Writes to `fd` (not closed by the sink unless it opened it anew).
 * `nonblocking`: fd is a description of the caller's own, already
 * non-blocking. Lines dropped or lost are added to *dropped_total (may be
 * NULL). Returns 0, or -1 when out of memory. */
int ob_logsink_init(ob_logsink *s, int fd, int nonblocking, uint64_t *dropped_total,
                    ob_logsink_dropped_fn on_dropped, void *data);

/* Queues `n` bytes and writes what the reader takes now; without a loop,
 * waits up to `wait_ms` for the rest. `line`: the bytes are a line, counted
 * when dropped (a progress line is not). Returns 1 when queued, 0 when
 * dropped (no room), -1 when the output failed (`failed` says why; this
 * line is handed back, not counted, what waited is counted lost). */
int ob_logsink_put(ob_logsink *s, const char *p, size_t n, int line, int wait_ms);

/* From now on what waits is written as the loop finds the reader ready. */
int ob_logsink_attach(ob_logsink *s, uv_loop_t *loop);

/* Closes the sink's handles (before uv_loop_close); what waits stays in
 * the buffer for ob_logsink_flush. */
void ob_logsink_detach(ob_logsink *s);

/* Writes what waits, waiting up to `wait_ms` for the reader (0: no wait).
 * Returns the bytes still waiting. */
size_t ob_logsink_flush(ob_logsink *s, int wait_ms);

/* Flushes up to `wait_ms`, then frees the buffer and closes what the sink
 * opened. Call after ob_logsink_detach. */
void ob_logsink_close(ob_logsink *s, int wait_ms);

#endif
