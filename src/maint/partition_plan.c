/* SPDX-License-Identifier: Apache-2.0 */
#include "partition_plan.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "outbox/common.h"
#include "outbox/id.h"
#include "schema.h"

int ob_part_parse_bound(const char *desc, uint64_t *bound_ms, int *is_max) {
    static const char prefix[] = "_binary 0x";
    static const unsigned char zeros[10];
    *bound_ms = 0;
    *is_max = 0;
    if (desc == NULL)
        return -1;
    if (strcmp(desc, "MAXVALUE") == 0) {
        *is_max = 1;
        return 0;
    }
    outbox_id id;
    if (strncmp(desc, prefix, sizeof(prefix) - 1) != 0 ||
        outbox_id_parse(desc + sizeof(prefix) - 1, &id) != OUTBOX_OK ||
        memcmp(id.b + 6, zeros, sizeof(zeros)) != 0)
        return -1;
    *bound_ms = outbox_id_unix_ms(&id);
    return 0;
}

int ob_part_parse_name(const char *name, int monthly, uint64_t *start_ms) {
    size_t digits = monthly ? 6 : 8;
    if (name == NULL || name[0] != 'p' || strlen(name) != digits + 1)
        return -1;
    int v[8];
    for (size_t i = 0; i < digits; i++) {
        if (name[1 + i] < '0' || name[1 + i] > '9')
            return -1;
        v[i] = name[1 + i] - '0';
    }
    struct tm tm;
    memset(&tm, 0, sizeof(tm));
    tm.tm_year = v[0] * 1000 + v[1] * 100 + v[2] * 10 + v[3] - 1900;
    tm.tm_mon = v[4] * 10 + v[5] - 1;
    tm.tm_mday = monthly ? 1 : v[6] * 10 + v[7];
    if (tm.tm_year < 70 || tm.tm_mon < 0 || tm.tm_mon > 11 || tm.tm_mday < 1)
        return -1;
    time_t t = timegm(&tm);
    uint64_t ms = (uint64_t)t * 1000ULL;
    /* timegm normalises 20260231 into March: such a name is not a period. */
    char back[32];
    ob_period_name(ms, monthly, back);
    if (strcmp(back, name) != 0)
        return -1;
    *start_ms = ms;
    return 0;
}

static void bound_text(char *out, size_t len, uint64_t ms) {
    ob_buf b = OB_BUF_INIT;
    ob_period_bound(&b, ms);
    snprintf(out, len, "%s", b.p ? b.p : "?");
    ob_buf_free(&b);
}

int ob_part_check(const char *qtable, const char *method, const char *expression, const ob_part *p,
                  size_t n, int monthly, char *err, size_t errlen) {
    const char *kind = monthly ? "monthly" : "daily";
    if (method == NULL || n == 0) {
        snprintf(err, errlen,
                 "table %s is not partitioned: the partition maintainer needs PARTITION BY RANGE "
                 "COLUMNS(id) with a MAXVALUE tail (see `outbox-uvrelay schema --partitioned`); "
                 "keep a plain table bounded with the cleanup maintainer instead",
                 qtable);
        return -1;
    }
    if (strcmp(method, "RANGE COLUMNS") != 0 || expression == NULL ||
        strcmp(expression, "`id`") != 0) {
        snprintf(err, errlen,
                 "table %s is partitioned by %s(%s), not RANGE COLUMNS(id): the partition "
                 "maintainer leaves it alone",
                 qtable, method, expression ? expression : "?");
        return -1;
    }
    if (!p[n - 1].is_max) {
        snprintf(err, errlen,
                 "table %s has no MAXVALUE tail partition (its last is %s): the maintainer "
                 "splits the tail to add periods; add one with ALTER TABLE %s ADD PARTITION "
                 "(PARTITION pmax VALUES LESS THAN (MAXVALUE))",
                 qtable, p[n - 1].name, qtable);
        return -1;
    }
    for (size_t i = 0; i + 1 < n; i++) {
        uint64_t start;
        if (ob_part_parse_name(p[i].name, monthly, &start) != 0) {
            snprintf(err, errlen,
                     "partition %s of table %s is not a %s partition name (%s): run the "
                     "maintainer with the period the table was made with, or fix the table",
                     p[i].name, qtable, kind, monthly ? "pYYYYMM" : "pYYYYMMDD");
            return -1;
        }
        uint64_t want = ob_period_add(start, monthly, 1);
        if (p[i].is_max || p[i].bound_ms != want) {
            char w[48];
            bound_text(w, sizeof(w), want);
            snprintf(err, errlen,
                     "partition %s of table %s does not end where its %s period ends (%s): "
                     "the maintainer only manages partitions made by `outbox-uvrelay schema "
                     "--partitioned` or by itself",
                     p[i].name, qtable, kind, w);
            return -1;
        }
    }
    return 0;
}

uint32_t ob_part_split_sql(ob_buf *b, const char *qtable, const ob_part *p, size_t n, int monthly,
                           uint64_t now_ms, uint32_t lookahead) {
    uint64_t current = ob_period_start(now_ms, monthly);
    uint64_t target = ob_period_add(current, monthly, (int)lookahead + 1);
    uint64_t last = n >= 2 ? p[n - 2].bound_ms : 0;
    if (last >= target)
        return 0;
    /* The first new partition is the period that starts at the newest bound,
     * or the current period when the table is behind. */
    uint64_t start = last > current ? last : current;
    const char *tail = p[n - 1].name;
    ob_buf_puts(b, "ALTER TABLE ");
    ob_buf_puts(b, qtable);
    ob_buf_printf(b, " REORGANIZE PARTITION `%s` INTO (", tail);
    uint32_t created = 0;
    for (uint64_t s = start; s < target; s = ob_period_add(s, monthly, 1)) {
        char name[32];
        ob_period_name(s, monthly, name);
        ob_buf_printf(b, "PARTITION %s VALUES LESS THAN (", name);
        ob_period_bound(b, ob_period_add(s, monthly, 1));
        ob_buf_puts(b, "), ");
        created++;
    }
    ob_buf_printf(b, "PARTITION `%s` VALUES LESS THAN (MAXVALUE))", tail);
    return created;
}

size_t ob_part_expired(const ob_part *p, size_t n, int monthly, uint64_t now_ms, uint32_t retention,
                       size_t *idx) {
    if (retention == 0)
        return 0;
    uint64_t cutoff = ob_period_add(ob_period_start(now_ms, monthly), monthly, -(int)retention);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (!p[i].is_max && p[i].bound_ms <= cutoff)
            idx[k++] = i;
    return k;
}
