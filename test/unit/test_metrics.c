/* SPDX-License-Identifier: Apache-2.0 */
/* The Prometheus text: one HELP/TYPE per family, a table label per relay,
 * cumulative histogram buckets, and snprintf-like truncation. */
#include "check.h"
#include "outbox/metrics.h"
#include "stats.h"

static int count(const char *hay, const char *needle) {
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle))
        n++;
    return n;
}

int main(void) {
    outbox_stats s[2];
    memset(s, 0, sizeof(s));
    s[0].acked = 120;
    s[0].duplicates = 20;
    s[0].failed = 3;
    s[0].dead = 1;
    s[0].db_connected = 2;
    s[0].broker_ready = 1;
    s[0].pending = 42;
    s[0].oldest_pending_ms = 1500;
    s[0].db_errors = 4;
    ob_stats_failure(&s[0], OUTBOX_FAIL_ACK_TIMEOUT);
    ob_stats_failure(&s[0], OUTBOX_FAIL_ACK_TIMEOUT);
    ob_stats_failure(&s[0], (outbox_failure_kind)99); /* ignored */
    ob_hist_observe(&s[0].batch_duration, 0.004);
    ob_hist_observe(&s[0].batch_duration, 0.02);
    ob_hist_observe(&s[0].batch_duration, 1000); /* +Inf */
    ob_hist_observe(&s[0].delivery_lag, -1);     /* counts as 0 */
    s[1].pending = -1;
    s[1].oldest_pending_ms = -1;
    s[1].db_connected = 0;

    const char *tables[] = {"orders", "billing"};
    size_t need = outbox_metrics_format(NULL, 0, s, tables, 2);
    CHECK(need > 1000);
    char *buf = malloc(need + 1);
    CHECK_EQ(outbox_metrics_format(buf, need + 1, s, tables, 2), need);
    CHECK_EQ(strlen(buf), need);

    CHECK_EQ(count(buf, "# TYPE outbox_relay_published_total counter\n"), 1);
    CHECK_EQ(count(buf, "# TYPE "), count(buf, "# HELP "));
    CHECK_CONTAINS(buf, "outbox_relay_published_total{table=\"orders\",result=\"stored\"} 100\n");
    CHECK_CONTAINS(buf, "outbox_relay_published_total{table=\"orders\",result=\"duplicate\"} 20\n");
    CHECK_CONTAINS(buf, "outbox_relay_published_total{table=\"billing\",result=\"stored\"} 0\n");
    CHECK_CONTAINS(buf, "outbox_relay_failures_total{table=\"orders\",reason=\"ack_timeout\"} 2\n");
    CHECK_CONTAINS(buf, "outbox_relay_failures_total{table=\"orders\",reason=\"database\"} 4\n");
    CHECK_CONTAINS(buf, "outbox_relay_retries_total{table=\"orders\"} 3\n");
    CHECK_CONTAINS(buf, "outbox_relay_dead_total{table=\"orders\"} 1\n");
    CHECK_CONTAINS(buf, "outbox_relay_up{table=\"orders\",dependency=\"database\"} 1\n");
    CHECK_CONTAINS(buf, "outbox_relay_up{table=\"billing\",dependency=\"database\"} 0\n");
    CHECK_CONTAINS(buf, "outbox_relay_up{table=\"billing\",dependency=\"nats\"} 0\n");
    CHECK_CONTAINS(buf, "outbox_relay_pending_rows{table=\"orders\"} 42\n");
    CHECK_CONTAINS(buf, "outbox_relay_oldest_pending_age_seconds{table=\"orders\"} 1.5\n");
    /* Unknown pending figures are left out, not reported as 0. */
    CHECK(strstr(buf, "outbox_relay_pending_rows{table=\"billing\"}") == NULL);
    /* Buckets are cumulative and end with +Inf = count. */
    CHECK_CONTAINS(buf,
                   "outbox_relay_batch_duration_seconds_bucket{table=\"orders\",le=\"0.001\"} 0\n");
    CHECK_CONTAINS(buf,
                   "outbox_relay_batch_duration_seconds_bucket{table=\"orders\",le=\"0.005\"} 1\n");
    CHECK_CONTAINS(buf,
                   "outbox_relay_batch_duration_seconds_bucket{table=\"orders\",le=\"0.025\"} 2\n");
    CHECK_CONTAINS(buf,
                   "outbox_relay_batch_duration_seconds_bucket{table=\"orders\",le=\"300\"} 2\n");
    CHECK_CONTAINS(buf,
                   "outbox_relay_batch_duration_seconds_bucket{table=\"orders\",le=\"+Inf\"} 3\n");
    CHECK_CONTAINS(buf, "outbox_relay_batch_duration_seconds_count{table=\"orders\"} 3\n");
    CHECK_CONTAINS(buf, "outbox_relay_batch_duration_seconds_sum{table=\"orders\"} 1000.024\n");
    CHECK_CONTAINS(buf,
                   "outbox_relay_delivery_lag_seconds_bucket{table=\"orders\",le=\"0.001\"} 1\n");
    CHECK_EQ(count(buf, "# TYPE outbox_relay_delivery_lag_seconds histogram\n"), 1);

    /* Cut like snprintf. */
    char small[64];
    CHECK_EQ(outbox_metrics_format(small, sizeof(small), s, tables, 2), need);
    CHECK_EQ(strlen(small), sizeof(small) - 1);
    CHECK(strncmp(small, buf, sizeof(small) - 1) == 0);

    /* Without a table name, no table label. */
    outbox_metrics_format(buf, need + 1, s, NULL, 1);
    CHECK_CONTAINS(buf, "outbox_relay_retries_total 3\n");
    CHECK_CONTAINS(buf, "outbox_relay_published_total{result=\"stored\"} 100\n");
    free(buf);
    puts("test_metrics: ok");
    return 0;
}
