/*
 * What NATS costs in threads and thread switches: the same drain of 20,000
 * rows, first with nats.c on its own threads (the default), then with its
 * socket on the relay's loop (OUTBOX_NATS_EVENT_LOOP=1). The process's
 * threads are counted from /proc/self/task during each drain (the most
 * seen), and its context switches per message from getrusage. The loop mode
 * must run with fewer threads (no reader, flusher or delivery thread) and
 * deliver each row once. The figures are printed for the README.
 */
#include <dirent.h>
#include <nats/nats.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "check.h"
#include "integ.h"

#define ROWS 20000

static volatile int drained, stopped;
static int max_threads;

static int count_threads(void) {
    DIR *d = opendir("/proc/self/task");
    int n = 0;
    struct dirent *e;
    if (d == NULL)
        return -1;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n;
}

/* Each thread's voluntary context switches (how often it slept and was
 * woken), printed to say which threads wake during a drain. */
static void print_wakes(const char *mode) {
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    printf("nats_threads: %s: voluntary switches per thread:", mode);
    while (d && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[300], line[128];
        snprintf(path, sizeof(path), "/proc/self/task/%s/status", e->d_name);
        FILE *f = fopen(path, "r");
        while (f && fgets(line, sizeof(line), f))
            if (strncmp(line, "voluntary_ctxt_switches:", 24) == 0)
                printf(" %ld", strtol(line + 24, NULL, 10));
        if (f)
            fclose(f);
    }
    if (d)
        closedir(d);
    printf("\n");
}

static void sample(uv_timer_t *t) {
    (void)t;
    int n = count_threads();
    if (n > max_threads)
        max_threads = n;
}

static long switches(void) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_nvcsw + u.ru_nivcsw;
}

/* One drain; returns the most threads seen and sets *csw_per_msg. */
static int drain(const char *db, const char *stream, const char *prefix, double *csw_per_msg) {
    MYSQL *m = ti_db_fresh(db, NULL);
    ti_seed(m, "outbox", ROWS, 500, 512);
    ti_stream_delete(stream);
    uv_loop_t loop;
    uv_loop_init(&loop);
    outbox_relay_options o;
    ti_relay_options(&o, db, stream, prefix);
    o.connections = 4;
    o.batch_size = 500;
    o.on_drained = ti_set_flag;
    o.drained_data = (void *)&drained;
    outbox_relay *r = NULL;
    char err[256];
    drained = stopped = 0;
    max_threads = 0;
    CHECK_EQ(outbox_relay_create(&r, &loop, &o, err, sizeof(err)), OUTBOX_OK);
    uv_timer_t t;
    uv_timer_init(&loop, &t);
    uv_timer_start(&t, sample, 5, 5);
    long before = switches();
    CHECK_EQ(outbox_relay_start(r), OUTBOX_OK);
    CHECK_EQ(ti_run_until(&loop, &drained, 120000), 0);
    long used = switches() - before;
    sample(&t);
    uv_timer_stop(&t);
    uv_close((uv_handle_t *)&t, NULL);
    outbox_stats s;
    outbox_relay_stats(r, &s);
    CHECK_EQ(s.acked, ROWS);
    CHECK_EQ(s.dead, 0);
    print_wakes(getenv("OUTBOX_NATS_EVENT_LOOP") ? "event loop" : "threaded");
    CHECK_EQ(outbox_relay_stop(r, ti_set_flag, (void *)&stopped), OUTBOX_OK);
    CHECK_EQ(ti_run_until(&loop, &stopped, 20000), 0);
    outbox_relay_destroy(r);
    CHECK_EQ(uv_loop_close(&loop), 0);
    long long distinct = 0;
    CHECK_EQ(ti_stream_count(stream, &distinct), ROWS);
    CHECK_EQ(distinct, ROWS);
    mysql_close(m);
    *csw_per_msg = (double)used / ROWS;
    return max_threads;
}

int main(void) {
    double csw_threaded, csw_loop;
    unsetenv("OUTBOX_NATS_EVENT_LOOP");
    int threaded = drain("it_nats_threads_a", "IT_NTHR_A", "itnthra", &csw_threaded);
    setenv("OUTBOX_NATS_EVENT_LOOP", "1", 1);
    int looped = drain("it_nats_threads_b", "IT_NTHR_B", "itnthrb", &csw_loop);
    printf("nats_threads: threaded: %d threads, %.3f context switches per message\n", threaded,
           csw_threaded);
    printf("nats_threads: event loop: %d threads, %.3f context switches per message\n", looped,
           csw_loop);
    /* At least the reader, the flusher and the inbox's delivery thread are
     * gone. */
    CHECK_INT(looped, <=, threaded - 3);
    mysql_library_end();
    nats_CloseAndWait(2000);
    puts("nats_threads: ok");
    return 0;
}
