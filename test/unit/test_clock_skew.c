/* SPDX-License-Identifier: Apache-2.0 */
/* The relay's clock against the database's: each sample bounds the skew by
 * its round trip, successive samples narrow it, a stepped clock starts it
 * again, and a skew is said once, then only when it moves by a second or
 * goes away. */
#include "check.h"
#include "clock_skew.h"

#define NEAR(a, b, tol) CHECK((a) - (b) < (tol) && (b) - (a) < (tol))

int main(void) {
    ob_skew s = {0};
    CHECK_EQ(s.known, 0);
    NEAR(ob_skew_error(&s), -1.0, 1e-9);
    /* No reading, or answered before sent: ignored. */
    CHECK_EQ(ob_skew_add(&s, 0, 1000, 1001), OB_SKEW_QUIET);
    CHECK_EQ(ob_skew_add(&s, 1000, 1001, 1000), OB_SKEW_QUIET);
    CHECK_EQ(s.known, 0);

    /* The host runs 2 h ahead; a first sample with a 40 ms round trip. */
    const double t = 1.8e9, ahead = 7200;
    CHECK_EQ(ob_skew_add(&s, t, t + ahead - 0.010, t + ahead + 0.030), OB_SKEW_APART);
    NEAR(ob_skew_value(&s), ahead + 0.010, 1e-6);
    NEAR(ob_skew_error(&s), 0.020, 1e-6);
    /* Faster samples narrow it; nothing more is said while it holds. */
    for (int i = 1; i <= 10; i++)
        CHECK_EQ(
            ob_skew_add(&s, t + i * 10, t + i * 10 + ahead - 0.001, t + i * 10 + ahead + 0.001),
            OB_SKEW_QUIET);
    NEAR(ob_skew_value(&s), ahead, 1e-6);
    NEAR(ob_skew_error(&s), 0.001, 1e-6);
    /* A slow sample (a long COUNT) that overlaps changes nothing. */
    CHECK_EQ(ob_skew_add(&s, t + 200, t + 199 + ahead, t + 203 + ahead), OB_SKEW_QUIET);
    NEAR(ob_skew_error(&s), 0.001, 1e-6);

    /* NTP steps the host's clock back by 2 h: the new interval misses the
     * old one, the estimate starts again from it, and the agreement is said. */
    CHECK_EQ(ob_skew_add(&s, t + 300, t + 300 - 0.002, t + 300 + 0.002), OB_SKEW_AGREE);
    NEAR(ob_skew_value(&s), 0, 1e-6);
    CHECK_EQ(ob_skew_add(&s, t + 310, t + 310 - 0.002, t + 310 + 0.002), OB_SKEW_QUIET);

    /* Half a second apart: not said (under a second). A skew whose error
     * bound reaches under a second is not said either. */
    ob_skew u = {0};
    CHECK_EQ(ob_skew_add(&u, t, t + 0.5, t + 0.51), OB_SKEW_QUIET);
    ob_skew v = {0};
    CHECK_EQ(ob_skew_add(&v, t, t, t + 3), OB_SKEW_QUIET); /* 1.5 s, within 1.5 s */
    /* The host behind by 3 s: said; a move of 0.5 s is not; a move of 2 s is. */
    ob_skew w = {0};
    CHECK_EQ(ob_skew_add(&w, t, t - 3.001, t - 2.999), OB_SKEW_APART);
    NEAR(ob_skew_value(&w), -3, 1e-6);
    CHECK_EQ(ob_skew_add(&w, t, t - 3.501, t - 3.499), OB_SKEW_QUIET);
    CHECK_EQ(ob_skew_add(&w, t, t - 5.001, t - 4.999), OB_SKEW_APART);
    puts("test_clock_skew: ok");
    return 0;
}
