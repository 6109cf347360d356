/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench-rusage: runs a command and reports what it cost, like GNU time but
 * with microsecond CPU figures and with SIGTERM/SIGINT passed on to the
 * command, so a relay started in the background can be stopped gracefully
 * and still be measured.
 *
 *   bench-rusage --out FILE -- command [args...]
 * Writes to FILE (after the command ends) one line:
 *   wall_s=S user_s=U sys_s=Y maxrss_kb=K exit=E vcsw=V ivcsw=I threads_max=T
 * CPU, peak RSS and context switches (voluntary, involuntary) are the
 * command's own (wait4), threads included; threads_max is the most threads
 * seen in /proc/PID/status, read every 20 ms while it runs.
 * Exits with the command's status.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

static volatile sig_atomic_t child_pid;

static void forward(int sig) {
    if (child_pid > 0)
        kill((pid_t)child_pid, sig);
}

/* The "Threads:" line of /proc/PID/status; 0 when unreadable. */
static long threads_of(pid_t p) {
    char path[64], line[128];
    long n = 0;
    snprintf(path, sizeof(path), "/proc/%ld/status", (long)p);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return 0;
    while (fgets(line, sizeof(line), f))
        if (strncmp(line, "Threads:", 8) == 0)
            n = strtol(line + 8, NULL, 10);
    fclose(f);
    return n;
}

int main(int argc, char **argv) {
    bn_set_tool("bench-rusage");
    const char *out = NULL;
    int i = 1;
    for (; i < argc; i++) {
        if (strcmp(argv[i], "--out") == 0 && i + 1 < argc)
            out = argv[++i];
        else if (strcmp(argv[i], "--") == 0) {
            i++;
            break;
        } else
            bn_die("usage: bench-rusage --out FILE -- command [args...]");
    }
    if (out == NULL || i >= argc)
        bn_die("usage: bench-rusage --out FILE -- command [args...]");

    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = forward;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);

    uint64_t t0 = bn_mono_ns();
    pid_t p = fork();
    if (p < 0)
        bn_die("fork: %s", strerror(errno));
    if (p == 0) {
        signal(SIGTERM, SIG_DFL);
        signal(SIGINT, SIG_DFL);
        execvp(argv[i], argv + i);
        fprintf(stderr, "bench-rusage: cannot run %s: %s\n", argv[i], strerror(errno));
        _exit(127);
    }
    child_pid = p;
    int status = 0;
    struct rusage ru;
    memset(&ru, 0, sizeof(ru));
    long threads_max = 0;
    for (;;) {
        pid_t w = wait4(p, &status, WNOHANG, &ru);
        if (w == p)
            break;
        if (w < 0 && errno != EINTR)
            bn_die("wait4: %s", strerror(errno));
        long n = threads_of(p);
        if (n > threads_max)
            threads_max = n;
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    uint64_t t1 = bn_mono_ns();
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    FILE *f = fopen(out, "w");
    if (f == NULL)
        bn_die("cannot write %s: %s", out, strerror(errno));
    fprintf(f,
            "wall_s=%.6f user_s=%.6f sys_s=%.6f maxrss_kb=%ld exit=%d vcsw=%ld ivcsw=%ld "
            "threads_max=%ld\n",
            (double)(t1 - t0) / 1e9, (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6,
            (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6, ru.ru_maxrss, code,
            ru.ru_nvcsw, ru.ru_nivcsw, threads_max);
    fclose(f);
    return code;
}
