/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Assertion macros for the tests: on failure they print both values with
 * the file and line, and exit(1). A test that returns from main has passed.
 */
#ifndef OB_TEST_CHECK_H
#define OB_TEST_CHECK_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK_FAIL_(...)                                                                           \
    do {                                                                                           \
        fprintf(stderr, "%s:%d: check failed: ", __FILE__, __LINE__);                              \
        fprintf(stderr, __VA_ARGS__);                                                              \
        fputc('\n', stderr);                                                                       \
        exit(1);                                                                                   \
    } while (0)

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond))                                                                               \
            CHECK_FAIL_("%s", #cond);                                                              \
    } while (0)

#define CHECK_INT(a, op, b)                                                                        \
    do {                                                                                           \
        long long a_ = (long long)(a), b_ = (long long)(b);                                        \
        if (!(a_ op b_))                                                                           \
            CHECK_FAIL_("%s %s %s (%lld vs %lld)", #a, #op, #b, a_, b_);                           \
    } while (0)

#define CHECK_EQ(a, b) CHECK_INT(a, ==, b)

#define CHECK_STR(a, b)                                                                            \
    do {                                                                                           \
        const char *a_ = (a), *b_ = (b);                                                           \
        if (a_ == NULL || b_ == NULL || strcmp(a_, b_) != 0)                                       \
            CHECK_FAIL_("%s == %s (\"%s\" vs \"%s\")", #a, #b, a_ ? a_ : "(null)",                 \
                        b_ ? b_ : "(null)");                                                       \
    } while (0)

#define CHECK_CONTAINS(hay, needle)                                                                \
    do {                                                                                           \
        const char *h_ = (hay), *n_ = (needle);                                                    \
        if (h_ == NULL || strstr(h_, n_) == NULL)                                                  \
            CHECK_FAIL_("%s contains \"%s\" (got \"%s\")", #hay, n_, h_ ? h_ : "(null)");          \
    } while (0)

#endif
