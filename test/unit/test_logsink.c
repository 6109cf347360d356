/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The log output's bounded buffer (cli/logsink.c) on a real pipe of one page
 * that nobody reads: lines beyond the pipe and the buffer are dropped and
 * counted, a put never waits longer than it is allowed, the pipe's shared
 * description stays blocking, and once the reader catches up one call says
 * how many were dropped; on the loop, what waits goes as the reader takes it,
 * and the loop closes with no handle left.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "check.h"
#include "logsink.h"

static uint64_t said, said_calls;

static void on_dropped(ob_logsink *s, uint64_t n, void *data) {
    (void)data;
    said += n;
    said_calls++;
    ob_logsink_put(s, "dropped\n", 8, 1, 0);
}

/* Reads what the pipe holds now; returns the bytes read. */
static size_t drain(int fd) {
    char b[65536];
    size_t total = 0;
    ssize_t n;
    while ((n = read(fd, b, sizeof(b))) > 0)
        total += (size_t)n;
    return total;
}

static void fill(ob_logsink *s, const char *line, int n, int *queued, int *dropped) {
    for (int i = 0; i < n; i++) {
        int rc = ob_logsink_put(s, line, strlen(line), 1, 0);
        CHECK(rc >= 0);
        if (rc)
            (*queued)++;
        else
            (*dropped)++;
    }
}

int main(void) {
    signal(SIGPIPE, SIG_IGN); /* as the binary does */
    int p[2];
    CHECK_EQ(pipe(p), 0);
    CHECK_EQ(fcntl(p[0], F_SETPIPE_SZ, 4096), 4096);
    fcntl(p[0], F_SETFL, O_NONBLOCK); /* the test's reader, not the sink's end */
    uint64_t total = 0;
    ob_logsink s;
    CHECK_EQ(ob_logsink_init(&s, p[1], 0, &total, on_dropped, NULL), 0);
    CHECK_EQ(s.mode, OB_SINK_OWN);
    CHECK(s.fd != p[1]);
    CHECK_EQ(fcntl(p[1], F_GETFL) & O_NONBLOCK, 0);

    /* 100-byte lines: the pipe takes 40, the buffer 655 more. */
    char line[101];
    memset(line, 'x', 99);
    line[99] = '\n';
    line[100] = '\0';
    int queued = 0, dropped = 0;
    uint64_t t0 = uv_hrtime();
    fill(&s, line, 2000, &queued, &dropped);
    CHECK((uv_hrtime() - t0) / 1000000 < 5000); /* no put waited (wait 0) */
    CHECK_EQ(queued + dropped, 2000);
    CHECK(dropped > 0);
    CHECK_EQ(total, (uint64_t)dropped);
    CHECK_EQ(said_calls, 0);

    /* The reader takes everything: once half the buffer is free, one call. */
    for (int i = 0; i < 1000 && s.len > 0; i++) {
        drain(p[0]);
        ob_logsink_flush(&s, 0);
    }
    CHECK_EQ(said_calls, 1);
    CHECK_EQ(said, (uint64_t)dropped);
    CHECK_EQ(s.len, 0);
    CHECK(drain(p[0]) > 0);
    int first_dropped = dropped;

    /* On a loop: fill again, then read while the loop runs; what waited
     * goes without any put. */
    uv_loop_t loop;
    uv_loop_init(&loop);
    CHECK_EQ(ob_logsink_attach(&s, &loop), 0);
    queued = dropped = 0;
    fill(&s, line, 300, &queued, &dropped);
    CHECK_EQ(dropped, 0);
    CHECK(s.len > 0);
    size_t read_total = 0;
    for (int i = 0; i < 1000 && s.len > 0; i++) {
        read_total += drain(p[0]);
        uv_run(&loop, UV_RUN_NOWAIT);
    }
    CHECK_EQ(s.len, 0);
    read_total += drain(p[0]);
    CHECK_EQ(read_total, 300 * 100);
    ob_logsink_detach(&s);
    uv_run(&loop, UV_RUN_DEFAULT);
    CHECK_EQ(uv_loop_close(&loop), 0);

    /* The reader gone: the output failed, and what is put is handed back. */
    close(p[0]);
    CHECK_EQ(ob_logsink_put(&s, line, 100, 1, 0), -1);
    CHECK(s.failed != 0);
    ob_logsink_close(&s, 0);
    close(p[1]);
    printf("test_logsink: ok (%d of 2000 lines dropped on a full pipe, said once)\n",
           first_dropped);
    return 0;
}
