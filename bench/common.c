/* SPDX-License-Identifier: Apache-2.0 */
#include "common.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "url.h"

static const char *tool = "bench";

void bn_set_tool(const char *name) {
    tool = name;
}

uint64_t bn_mono_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t bn_wall_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void bn_sleep_until(uint64_t t) {
    struct timespec ts = {(time_t)(t / 1000000000u), (long)(t % 1000000000u)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
    }
}

void bn_die(const char *fmt, ...) {
    va_list ap;
    fprintf(stderr, "%s: ", tool);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(2);
}

const char *bn_need(const char *flag, const char *v) {
    if (v == NULL)
        bn_die("%s needs a value", flag);
    return v;
}

long bn_long(const char *flag, const char *v, long min, long max) {
    char *end = NULL;
    errno = 0;
    long x = strtol(bn_need(flag, v), &end, 10);
    if (errno || end == v || *end != '\0' || x < min || x > max)
        bn_die("%s wants a number from %ld to %ld, not '%s'", flag, min, max, v);
    return x;
}

MYSQL *bn_db_connect(const char *url, int multi) {
    ob_db_url u;
    char err[256];
    if (ob_db_url_parse(url, &u, err, sizeof(err)) != 0)
        bn_die("%s", err);
    MYSQL *m = mysql_init(NULL);
    if (m == NULL)
        bn_die("out of memory");
    mysql_options(m, MYSQL_SET_CHARSET_NAME, "utf8mb4");
    mysql_options(m, MYSQL_INIT_COMMAND,
                  "SET SESSION tx_isolation = 'READ-COMMITTED', time_zone = '+00:00'");
    unsigned long flags = multi ? CLIENT_MULTI_STATEMENTS | CLIENT_MULTI_RESULTS : 0;
    if (mysql_real_connect(m, u.socket ? "localhost" : u.host, u.user, u.password, u.database,
                           u.socket ? 0 : u.port, u.socket, flags) == NULL)
        bn_die("cannot connect to %s: %s", u.host, mysql_error(m));
    ob_db_url_free(&u);
    return m;
}

void bn_db_exec(MYSQL *m, const char *sql, size_t len) {
    if (mysql_real_query(m, sql, (unsigned long)len) != 0)
        bn_die("query failed: %u %s", mysql_errno(m), mysql_error(m));
    int st;
    do {
        MYSQL_RES *r = mysql_store_result(m);
        if (r)
            mysql_free_result(r);
        else if (mysql_field_count(m) != 0)
            bn_die("reading a result failed: %s", mysql_error(m));
    } while ((st = mysql_next_result(m)) == 0);
    if (st > 0)
        bn_die("statement failed: %u %s", mysql_errno(m), mysql_error(m));
}

size_t bn_payload(char *out, size_t size, uint64_t n) {
    /* {"n":"0000000001","pad":""} is 27 bytes; the pad fills the rest. */
    if (size < 28)
        return 0;
    int h = snprintf(out, size + 1, "{\"n\":\"%010llu\",\"pad\":\"",
                     (unsigned long long)(n % 10000000000ull));
    size_t pad = size - (size_t)h - 2;
    memset(out + h, 'x', pad);
    memcpy(out + (size_t)h + pad, "\"}", 3);
    return size;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

void bn_sort(double *v, size_t n) {
    qsort(v, n, sizeof(*v), cmp_double);
}

double bn_quantile_sorted(const double *v, size_t n, double q) {
    if (n == 0)
        return 0;
    /* Nearest rank: the smallest value with at least q of the set at or below it. */
    size_t k = (size_t)(q * (double)n + 0.999999);
    if (k < 1)
        k = 1;
    if (k > n)
        k = n;
    return v[k - 1];
}

void *bn_shared_alloc(size_t size) {
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        bn_die("mmap of %zu bytes failed: %s", size, strerror(errno));
    return p;
}

void *bn_fork_slot(const bn_fork *f, int i) {
    return (char *)f->shared + (size_t)i * f->slot_size;
}

int bn_fork_join(bn_fork *f) {
    int ready[2], go[2];
    if (pipe(ready) != 0 || pipe(go) != 0)
        bn_die("pipe: %s", strerror(errno));
    f->shared = bn_shared_alloc((size_t)f->n * f->slot_size + 1);
    volatile char *abort_flag = (char *)f->shared + (size_t)f->n * f->slot_size;
    pid_t *pids = calloc((size_t)f->n, sizeof(*pids));
    fflush(NULL);
    for (int i = 0; i < f->n; i++) {
        pid_t p = fork();
        if (p < 0)
            bn_die("fork: %s", strerror(errno));
        if (p == 0) {
            close(ready[0]);
            close(go[1]);
            void *slot = bn_fork_slot(f, i);
            char c = f->setup && f->setup(i, slot, f->data) != 0 ? 'E' : 'R';
            if (write(ready[1], &c, 1) != 1)
                _exit(3);
            if (read(go[0], &c, 1) != 1 || *abort_flag)
                _exit(3);
            int rc = f->work(i, slot, f->data);
            fflush(NULL);
            _exit(rc == 0 ? 0 : 1);
        }
        pids[i] = p;
    }
    close(ready[1]);
    close(go[0]);
    int bad = 0;
    for (int i = 0; i < f->n; i++) {
        char c = 'E';
        if (read(ready[0], &c, 1) != 1 || c != 'R')
            bad++;
    }
    if (bad)
        *abort_flag = 1;
    f->go_ns = bn_mono_ns();
    for (int i = 0; i < f->n; i++) {
        char c = 'G';
        if (write(go[1], &c, 1) != 1)
            bn_die("cannot release the workers");
    }
    close(go[1]);
    close(ready[0]);
    int failed = 0;
    for (int i = 0; i < f->n; i++) {
        int status = 0;
        while (waitpid(pids[i], &status, 0) < 0 && errno == EINTR) {
        }
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            failed++;
    }
    free(pids);
    if (bad)
        bn_die("%d worker(s) failed to set up", bad);
    return failed;
}
