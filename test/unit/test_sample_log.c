/* SPDX-License-Identifier: Apache-2.0 */
/* The pending sample's log level: an idle relay says "pending: 0" once, then
 * stays quiet however long it idles; a changing count is said at most once
 * per interval. */
#include "check.h"
#include "relay_maint.h"

int main(void) {
    ob_sample_log s = {0, 0, 0};
    const uint64_t minute = OB_SAMPLE_LOG_INTERVAL_MS;
    /* The first sample is said, at any time (even at loop time 0). */
    CHECK_EQ(ob_sample_log_info(&s, 0, 0), 1);
    /* Idle for a day, sampled every 10 s: never said again. */
    int said = 0;
    for (uint64_t t = 10000; t <= 24 * 60 * minute; t += 10000)
        said += ob_sample_log_info(&s, t, 0);
    CHECK_EQ(said, 0);
    /* Rows arrive: said at once (the last line is a day old). */
    uint64_t now = 24 * 60 * minute + 1000;
    CHECK_EQ(ob_sample_log_info(&s, now, 500), 1);
    /* A busy relay: the count changes every second, said once a minute. */
    said = 0;
    for (int i = 1; i <= 600; i++)
        said += ob_sample_log_info(&s, now + (uint64_t)i * 1000, 500 + i);
    CHECK_EQ(said, 10);
    /* Back to idle: the change to 0 is said (once the minute is up), then
     * nothing. */
    now += 601000;
    said = 0;
    for (int i = 0; i < 600; i++)
        said += ob_sample_log_info(&s, now + (uint64_t)i * 1000, 0);
    CHECK_EQ(said, 1);
    puts("test_sample_log: ok");
    return 0;
}
