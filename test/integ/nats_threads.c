/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What NATS costs in threads and thread switches: the same drain of 20,000
 * rows at 4 connections x 500, first with nats.c on its own threads
 * (nats_client = OUTBOX_NATS_CLIENT_THREADS), then with its socket on the relay's loop (the
 * default). During each drain the process's threads are counted from
 * /proc/self/task (the most seen), each thread's switches are read from its
 * status file before and after, and the process's context switches per
 * message come from getrusage. Threads have no names of their own (comm is
 * the program's for all of them), so each is named by when it appeared:
 * the loop is the main thread; nats_Open, called first, starts nats.c's
 * timer, asynchronous-callback and garbage-collector threads, in that
 * order; the first four that appear after the relay starts are libuv's
 * thread pool (the connect runs there); any later one belongs to a nats.c
 * connection (reader, flusher, a subscription's delivery thread).
 *
 * Asserted of the loop mode (outcomes, with room for a loaded machine): each
 * row once, no thread beyond the loop, nats.c's three and the pool, no
 * thread of a connection, and fewer voluntary switches than one per 5
 * messages in all. The figures are printed for the README.
 */
#include <dirent.h>
#include <nats/nats.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include "check.h"
#include "integ.h"

#define ROWS 20000
#define MAX_TASKS 64

static volatile int drained, stopped;
static int max_threads;

/* A thread seen so far: its id, its role and its switches at a snapshot. */
typedef struct task {
    long tid;
    const char *role;
    long vol, invol;
} task;

static task tasks[MAX_TASKS];
static int ntasks;
static int pool_seen; /* threads named "libuv pool" so far */

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

static task *find(long tid) {
    for (int i = 0; i < ntasks; i++)
        if (tasks[i].tid == tid)
            return &tasks[i];
    return NULL;
}

static int by_tid(const void *a, const void *b) {
    long x = *(const long *)a, y = *(const long *)b;
    return x < y ? -1 : x > y;
}

/* Reads a thread's switch counts; 0 or -1 when it is gone. */
static int read_switches(long tid, long *vol, long *invol) {
    char path[64], line[128];
    snprintf(path, sizeof(path), "/proc/self/task/%ld/status", tid);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return -1;
    while (fgets(line, sizeof(line), f)) {
        if (strncmp(line, "voluntary_ctxt_switches:", 24) == 0)
            *vol = strtol(line + 24, NULL, 10);
        else if (strncmp(line, "nonvoluntary_ctxt_switches:", 27) == 0)
            *invol = strtol(line + 27, NULL, 10);
    }
    fclose(f);
    return 0;
}

/* Names the threads not seen before (in order of their ids, which is the
 * order they were made in) and records every thread's switches. */
static void snapshot(const char *first_role) {
    long ids[MAX_TASKS];
    int n = 0;
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL && n < MAX_TASKS)
        if (e->d_name[0] != '.')
            ids[n++] = strtol(e->d_name, NULL, 10);
    if (d)
        closedir(d);
    qsort(ids, (size_t)n, sizeof(ids[0]), by_tid);
    static const char *const lib[] = {"nats.c timers", "nats.c async callbacks",
                                      "nats.c garbage collector"};
    int lib_seen = 0;
    for (int i = 0; i < n; i++) {
        task *t = find(ids[i]);
        if (t == NULL && ntasks < MAX_TASKS) {
            t = &tasks[ntasks++];
            t->tid = ids[i];
            if (ids[i] == (long)getpid())
                t->role = "loop (main)";
            else if (first_role && lib_seen < 3)
                t->role = lib[lib_seen++];
            else if (!first_role && pool_seen < 4 && ++pool_seen)
                t->role = "libuv pool";
            else
                t->role = "nats.c connection";
        }
        if (t)
            read_switches(t->tid, &t->vol, &t->invol);
    }
}

/* Prints what each thread alive now did since the last snapshot; returns
 * the threads of a nats.c connection seen. */
static int print_wakes(const char *mode) {
    task before[MAX_TASKS];
    int n = ntasks;
    memcpy(before, tasks, sizeof(before));
    snapshot(NULL);
    int conn_threads = 0;
    printf("nats_threads: %s: per thread, voluntary (involuntary) switches during the drain:\n",
           mode);
    for (int i = 0; i < ntasks; i++) {
        long vol = 0, invol = 0;
        if (read_switches(tasks[i].tid, &vol, &invol) != 0)
            continue;
        long v0 = i < n ? before[i].vol : 0, i0 = i < n ? before[i].invol : 0;
        conn_threads += strcmp(tasks[i].role, "nats.c connection") == 0;
        printf("nats_threads:   %-26s %6ld (%ld), %.4f per message\n", tasks[i].role, vol - v0,
               invol - i0, (double)(vol - v0) / ROWS);
    }
    return conn_threads;
}

static void sample(uv_timer_t *t) {
    (void)t;
    int n = count_threads();
    if (n > max_threads)
        max_threads = n;
}

typedef struct figures {
    int threads;      /* the most seen during the drain */
    int conn_threads; /* of a nats.c connection, alive at its end */
    double csw;       /* context switches per message (getrusage) */
    double vol;       /* of which voluntary */
} figures;

/* One drain. */
static void drain(const char *db, const char *stream, const char *prefix, const char *mode,
                  outbox_nats_client client, figures *f) {
    MYSQL *m = ti_db_fresh(db, NULL);
    ti_seed(m, "outbox", ROWS, 500, 512);
    ti_stream_delete(stream);
    uv_loop_t loop;
    uv_loop_init(&loop);
    outbox_relay_options o;
    ti_relay_options(&o, db, stream, prefix);
    o.connections = 4;
    o.batch_size = 500;
    o.nats_client = client;
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
    snapshot(NULL);
    struct rusage u0, u1;
    getrusage(RUSAGE_SELF, &u0);
    CHECK_EQ(outbox_relay_start(r), OUTBOX_OK);
    CHECK_EQ(ti_run_until(&loop, &drained, 120000), 0);
    getrusage(RUSAGE_SELF, &u1);
    f->conn_threads = print_wakes(mode);
    sample(&t);
    uv_timer_stop(&t);
    uv_close((uv_handle_t *)&t, NULL);
    outbox_stats s;
    outbox_relay_stats(r, &s);
    CHECK_EQ(s.acked, ROWS);
    CHECK_EQ(s.dead, 0);
    CHECK_EQ(outbox_relay_stop(r, ti_set_flag, (void *)&stopped), OUTBOX_OK);
    CHECK_EQ(ti_run_until(&loop, &stopped, 20000), 0);
    outbox_relay_destroy(r);
    CHECK_EQ(uv_loop_close(&loop), 0);
    long long distinct = 0;
    CHECK_EQ(ti_stream_count(stream, &distinct), ROWS);
    CHECK_EQ(distinct, ROWS);
    mysql_close(m);
    long vol = u1.ru_nvcsw - u0.ru_nvcsw, all = vol + u1.ru_nivcsw - u0.ru_nivcsw;
    f->threads = max_threads;
    f->csw = (double)all / ROWS;
    f->vol = (double)vol / ROWS;
}

int main(void) {
    figures th, lp;
    /* nats.c's library threads first, so that they can be named. */
    CHECK_EQ(nats_Open(-1), NATS_OK);
    snapshot("lib");
    drain("it_nats_threads_a", "IT_NTHR_A", "itnthra", "threaded", OUTBOX_NATS_CLIENT_THREADS, &th);
    drain("it_nats_threads_b", "IT_NTHR_B", "itnthrb", "event loop", OUTBOX_NATS_CLIENT_AUTO, &lp);
    printf("nats_threads: threaded: %d threads, %.3f context switches per message (%.3f "
           "voluntary)\n",
           th.threads, th.csw, th.vol);
    printf("nats_threads: event loop: %d threads, %.3f context switches per message (%.3f "
           "voluntary)\n",
           lp.threads, lp.csw, lp.vol);
    /* The loop, nats.c's timers, callbacks and collector, libuv's pool:
     * no reader, flusher or delivery thread. */
    CHECK_INT(lp.conn_threads, ==, 0);
    CHECK_INT(lp.threads, <=, 8);
    CHECK_INT(lp.threads, <=, th.threads - 3);
    /* No thread is woken per message (today about one wake per 50). */
    CHECK(lp.vol < 0.2);
    mysql_library_end();
    nats_CloseAndWait(2000);
    puts("nats_threads: ok");
    return 0;
}
