/* SPDX-License-Identifier: Apache-2.0 */
#include "logsink.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

enum { RETRY_MS = 50 }; /* SOCKET and PROBE: how often a stalled reader is tried again */

/* What `fd` is, and so how to write to it without blocking (see the header).
 * A pipe, FIFO or terminal is opened anew into *own (else -1). */
static ob_logsink_mode mode_of(int fd, int nonblocking, int *own) {
    struct stat st, again;
    *own = -1;
    if (fstat(fd, &st) != 0 || S_ISREG(st.st_mode) || S_ISBLK(st.st_mode))
        return OB_SINK_DIRECT;
    if (S_ISSOCK(st.st_mode))
        return OB_SINK_SOCKET;
    if (!S_ISFIFO(st.st_mode) && !isatty(fd))
        return OB_SINK_DIRECT; /* /dev/null and the like */
    if (nonblocking)
        return OB_SINK_OWN;
    char path[64];
    snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    int f = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (f < 0)
        return OB_SINK_PROBE;
    if (fstat(f, &again) != 0 || again.st_dev != st.st_dev || again.st_ino != st.st_ino) {
        close(f);
        return OB_SINK_PROBE;
    }
    *own = f;
    return OB_SINK_OWN;
}

int ob_logsink_init(ob_logsink *s, int fd, int nonblocking, uint64_t *dropped_total,
                    ob_logsink_dropped_fn on_dropped, void *data) {
    memset(s, 0, sizeof(*s));
    s->dropped_total = dropped_total ? dropped_total : &s->lost;
    s->on_dropped = on_dropped;
    s->data = data;
    s->buf = malloc(OB_LOGSINK_CAP);
    if (s->buf == NULL) {
        s->fd = -1;
        return -1;
    }
    int own;
    s->mode = mode_of(fd, nonblocking, &own);
    s->fd = own >= 0 ? own : fd;
    s->owned = own >= 0;
    return 0;
}

/* The output failed for good: what waits is lost (and counted), and so is
 * every later line. */
static void fail(ob_logsink *s, int why) {
    s->failed = why ? why : EIO;
    for (size_t i = 0; i < s->len; i++)
        if (s->buf[i] == '\n')
            (*s->dropped_total)++;
    s->len = 0;
}

/* One write of what waits: the bytes written, 0 when the reader takes
 * nothing now, -1 when the output failed (errno). */
static ssize_t write_some(ob_logsink *s) {
    size_t n = s->len;
    if (s->mode == OB_SINK_PROBE) {
        struct pollfd p = {.fd = s->fd, .events = POLLOUT};
        if (poll(&p, 1, 0) <= 0 || p.revents == 0)
            return 0;
        if (n > PIPE_BUF) /* atomic, and a pipe that polls writable has a free page */
            n = PIPE_BUF;
    }
    ssize_t w;
    do {
        if (s->mode == OB_SINK_SOCKET)
            w = send(s->fd, s->buf, n, MSG_DONTWAIT | MSG_NOSIGNAL);
        else
            w = write(s->fd, s->buf, n);
    } while (w < 0 && errno == EINTR);
    if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        return 0;
    return w;
}

/* The reader caught up (half the buffer is free) after lines were dropped:
 * the owner says how many, once. */
static void catch_up(ob_logsink *s) {
    if (!s->dropping || s->len > OB_LOGSINK_CAP / 2)
        return;
    s->dropping = 0;
    uint64_t n = s->dropped;
    s->dropped = 0;
    if (n && s->on_dropped)
        s->on_dropped(s, n, s->data);
}

/* Writes what the reader takes now. */
static void write_now(ob_logsink *s) {
    while (s->len > 0 && !s->failed) {
        ssize_t w = write_some(s);
        if (w < 0)
            fail(s, errno);
        if (w <= 0)
            break;
        memmove(s->buf, s->buf + w, s->len - (size_t)w);
        s->len -= (size_t)w;
        s->gave_up = 0;
    }
    catch_up(s);
}

static uint64_t now_ms(void) {
    return uv_hrtime() / 1000000u;
}

/* Without a loop: waits for the reader up to wait_ms; once a wait ran out,
 * later ones do not wait until the reader takes something again. */
static void wait_bounded(ob_logsink *s, int wait_ms) {
    if (s->gave_up || wait_ms <= 0)
        return;
    uint64_t deadline = now_ms() + (uint64_t)wait_ms;
    while (s->len > 0 && !s->failed) {
        uint64_t now = now_ms();
        if (now >= deadline) {
            s->gave_up = 1;
            return;
        }
        struct pollfd p = {.fd = s->fd, .events = POLLOUT};
        int left = (int)(deadline - now);
        if (s->mode == OB_SINK_PROBE && left > RETRY_MS)
            left = RETRY_MS; /* a tty may poll ready and still take little */
        poll(&p, 1, left);
        write_now(s);
    }
}

static void on_writable(uv_poll_t *h, int status, int events);
static void on_timer(uv_timer_t *t);

/* On the loop: what waits goes when the reader is ready. */
static void arm(ob_logsink *s) {
    if (s->poll && !uv_is_active((uv_handle_t *)s->poll))
        uv_poll_start(s->poll, UV_WRITABLE, on_writable);
    else if (s->timer && !uv_is_active((uv_handle_t *)s->timer))
        uv_timer_start(s->timer, on_timer, RETRY_MS, 0);
}

static void pump(ob_logsink *s, int wait_ms) {
    write_now(s);
    if (s->len == 0 || s->failed)
        return;
    if (s->loop)
        arm(s);
    else
        wait_bounded(s, wait_ms);
}

int ob_logsink_put(ob_logsink *s, const char *p, size_t n, int line, int wait_ms) {
    if (s->failed || s->buf == NULL)
        return -1;
    catch_up(s);
    if (s->dropping || s->len + n > OB_LOGSINK_CAP) {
        if (line) {
            s->dropping = 1;
            s->dropped++;
            (*s->dropped_total)++;
        }
        return 0;
    }
    memcpy(s->buf + s->len, p, n);
    s->len += n;
    pump(s, wait_ms);
    if (s->failed && line)
        (*s->dropped_total)--; /* handed back to the caller, not lost */
    return s->failed ? -1 : 1;
}

static void on_writable(uv_poll_t *h, int status, int events) {
    (void)status;
    (void)events;
    ob_logsink *s = h->data;
    write_now(s);
    if (s->len == 0 || s->failed)
        uv_poll_stop(h);
}

static void on_timer(uv_timer_t *t) {
    ob_logsink *s = t->data;
    write_now(s);
    if (s->len > 0 && !s->failed)
        uv_timer_start(t, on_timer, RETRY_MS, 0);
}

static void free_handle(uv_handle_t *h) {
    free(h);
}

int ob_logsink_attach(ob_logsink *s, uv_loop_t *loop) {
    if (s->buf == NULL || s->mode == OB_SINK_DIRECT) {
        s->loop = loop;
        return 0;
    }
    if (s->mode == OB_SINK_OWN) {
        uv_poll_t *p = malloc(sizeof(*p));
        if (p && uv_poll_init(loop, p, s->fd) == 0) {
            p->data = s;
            s->poll = p;
        } else {
            free(p);
        }
    }
    if (s->poll == NULL) {
        uv_timer_t *t = malloc(sizeof(*t));
        if (t == NULL)
            return -1;
        uv_timer_init(loop, t);
        t->data = s;
        s->timer = t;
    }
    s->loop = loop;
    pump(s, 0);
    return 0;
}

void ob_logsink_detach(ob_logsink *s) {
    if (s->poll)
        uv_close((uv_handle_t *)s->poll, free_handle);
    if (s->timer)
        uv_close((uv_handle_t *)s->timer, free_handle);
    s->poll = NULL;
    s->timer = NULL;
    s->loop = NULL;
}

size_t ob_logsink_flush(ob_logsink *s, int wait_ms) {
    s->gave_up = 0;
    pump(s, wait_ms);
    return s->len;
}

void ob_logsink_close(ob_logsink *s, int wait_ms) {
    if (s->buf) {
        ob_logsink_flush(s, wait_ms);
        if (s->len)
            fail(s, EAGAIN);
    }
    free(s->buf);
    s->buf = NULL;
    if (s->owned)
        close(s->fd);
    s->owned = 0;
    s->fd = -1;
}
