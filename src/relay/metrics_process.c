/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The process metrics that Prometheus client libraries export by default
 * (process_*), and the build-info gauge. They describe the whole process, so
 * the HTTP responder writes them once per scrape, after the relays' series.
 *
 * Everything comes from the process itself: getrusage for CPU time,
 * /proc/self for the resident set, the open descriptors and the start time
 * (a unit with ProcSubset=pid still sees /proc/self), and CLOCK_BOOTTIME for
 * the boot time, since /proc/stat may be hidden. A figure that cannot be read
 * is left out rather than reported as zero.
 */
#include "metrics.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#include "outbox/common.h"

static void family(ob_buf *b, const char *name, const char *type, const char *help) {
    ob_buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static int cpu_seconds(double *out) {
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return -1;
    *out = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
    return 0;
}

/* Entries of /proc/self/fd, without the one opendir itself holds. */
static long open_fds(void) {
    DIR *d = opendir("/proc/self/fd");
    if (d == NULL)
        return -1;
    long n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n - 1;
}

/* The start time in seconds since the epoch: field 22 of /proc/self/stat is
 * the start in clock ticks after boot; the boot time is the wall clock less
 * CLOCK_BOOTTIME. Read once: it does not change. */
static double start_time(void) {
    static double cached = -1;
    if (cached >= 0)
        return cached;
    FILE *f = fopen("/proc/self/stat", "r");
    if (f == NULL)
        return -1;
    char line[1024];
    size_t n = fread(line, 1, sizeof(line) - 1, f);
    fclose(f);
    line[n] = '\0';
    const char *p = strrchr(line, ')'); /* the command name may hold spaces */
    unsigned long long ticks = 0;
    /* After ")": state (field 3) ... starttime (field 22), 20 fields on. */
    if (p == NULL || sscanf(p + 1,
                            " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d "
                            "%*d %*d %llu",
                            &ticks) != 1)
        return -1;
    long hz = sysconf(_SC_CLK_TCK);
    struct timespec wall, boot;
    if (hz <= 0 || clock_gettime(CLOCK_REALTIME, &wall) != 0 ||
        clock_gettime(CLOCK_BOOTTIME, &boot) != 0)
        return -1;
    double booted =
        (double)wall.tv_sec - (double)boot.tv_sec + (double)(wall.tv_nsec - boot.tv_nsec) / 1e9;
    cached = booted + (double)ticks / (double)hz;
    return cached;
}

void ob_metrics_process(ob_buf *b) {
    double cpu;
    if (cpu_seconds(&cpu) == 0) {
        family(b, "process_cpu_seconds_total", "counter",
               "Total user and system CPU time spent in seconds.");
        ob_buf_printf(b, "process_cpu_seconds_total %.6f\n", cpu);
    }
    size_t rss = 0;
    if (uv_resident_set_memory(&rss) == 0) {
        family(b, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.");
        ob_buf_printf(b, "process_resident_memory_bytes %zu\n", rss);
    }
    long fds = open_fds();
    if (fds >= 0) {
        family(b, "process_open_fds", "gauge", "Number of open file descriptors.");
        ob_buf_printf(b, "process_open_fds %ld\n", fds);
    }
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
        family(b, "process_max_fds", "gauge", "Maximum number of open file descriptors.");
        ob_buf_printf(b, "process_max_fds %llu\n", (unsigned long long)rl.rlim_cur);
    }
    double start = start_time();
    if (start > 0) {
        family(b, "process_start_time_seconds", "gauge",
               "Start time of the process since unix epoch in seconds.");
        ob_buf_printf(b, "process_start_time_seconds %.3f\n", start);
    }
    family(b, "outbox_relay_build_info", "gauge",
           "Always 1; the labels are the library's version and the commit it was built from.");
    /* revision, as Prometheus's own *_build_info names the commit. */
    ob_buf_printf(b, "outbox_relay_build_info{version=\"%s\",revision=\"%s\"} 1\n",
                  outbox_version(), outbox_version_commit());
}
