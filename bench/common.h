/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Helpers shared by the benchmark tools: clocks, argument parsing, database
 * connections, payloads, percentiles and a small fork-and-join runner.
 *
 * The tools are not library code. They block, and they use processes for
 * parallelism, so that every worker has its own connection and its own CPU
 * accounting.
 */
#ifndef OB_BENCH_COMMON_H
#define OB_BENCH_COMMON_H

#include <mysql.h>
#include <stddef.h>
#include <stdint.h>

/* Nanoseconds on the monotonic clock, which every process on the machine
 * shares, so times from different workers can be compared. */
uint64_t bn_mono_ns(void);
/* Nanoseconds since the Unix epoch (the clock JetStream stamps messages with). */
uint64_t bn_wall_ns(void);
/* Sleeps until the monotonic clock reaches `t`. */
void bn_sleep_until(uint64_t t);

/* Prints "<tool>: message" to stderr and exits with status 2. */
void bn_die(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2), noreturn))
#endif
    ;
void bn_set_tool(const char *name);

/* Argument helpers: `v` is the value after the flag, or NULL when missing. */
const char *bn_need(const char *flag, const char *v);
long bn_long(const char *flag, const char *v, long min, long max);

/* Connects with the relay's session settings (READ COMMITTED, UTC) from a
 * mysql:// URL. With `multi`, several statements may be sent in one query. */
MYSQL *bn_db_connect(const char *url, int multi);
/* Runs a statement and discards every result; exits on error. */
void bn_db_exec(MYSQL *m, const char *sql, size_t len);

/* Writes a JSON object of exactly `size` bytes (at least 28) into out,
 * which has room for size + 1 bytes: {"n":"<10 digits>","pad":"xx..."}.
 * Returns the length, or 0 when `size` is too small. */
size_t bn_payload(char *out, size_t size, uint64_t n);

/* Sorts `v` and returns the value at quantile q (0..1), 0 for an empty set. */
double bn_quantile_sorted(const double *v, size_t n, double q);
void bn_sort(double *v, size_t n);

/* Fork-and-join. Each of `n` children runs setup(i), then waits until every
 * child is set up, then runs work(i). Setup failures abort the whole run.
 * The shared area (n slots of `slot_size` bytes, zeroed) is visible to the
 * parent after bn_fork_join() returns; each child writes only its own slot.
 * Returns the number of children that exited with a non-zero status. */
typedef struct bn_fork {
    int n;
    size_t slot_size;
    int (*setup)(int i, void *slot, void *data); /* 0 ok */
    int (*work)(int i, void *slot, void *data);  /* 0 ok */
    void *data;
    void *shared;   /* set by bn_fork_join */
    uint64_t go_ns; /* monotonic time when the children were released */
} bn_fork;

int bn_fork_join(bn_fork *f);
void *bn_fork_slot(const bn_fork *f, int i);
/* Allocates memory shared with children created later (zeroed). */
void *bn_shared_alloc(size_t size);

#endif
