/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The named locks' statements (see lease_locks.h).
 */
#include "lease_locks.h"

#include <inttypes.h>

#include "buckets.h"
#include "sql.h"

void ob_lease_lock_name(ob_buf *b, const char *base, char kind, int k) {
    if (kind == 'l')
        ob_buf_printf(b, "'%s:leader'", base);
    else
        ob_buf_printf(b, "'%s:%c%d'", base, kind, k);
}

void ob_lease_locks_modes(ob_buf *b, const char *base, char mine, int claim) {
    if (claim)
        ob_buf_printf(b,
                      "; SELECT GET_LOCK(CONCAT('%s:%c', (SELECT MIN(seq) FROM " OB_SQL_SEQ_0_TO
                      " WHERE IS_FREE_LOCK(CONCAT('%s:%c', seq)))), 0)",
                      base, mine, OB_BUCKETS - 1, base, mine);
    else
        ob_buf_puts(b, "; DO 0");
    ob_buf_printf(b,
                  "; SELECT SUM(IS_USED_LOCK(CONCAT('%s:p', seq)) IS NOT NULL), "
                  "SUM(IS_USED_LOCK(CONCAT('%s:m', seq)) IS NOT NULL), "
                  "SUM(IS_USED_LOCK(CONCAT('%s:s', seq)) IS NOT NULL), "
                  "SUM(IS_USED_LOCK(CONCAT('%s:c', seq)) IS NOT NULL) FROM " OB_SQL_SEQ_0_TO,
                  base, base, base, base, OB_BUCKETS - 1);
}

void ob_lease_locks_survey(ob_buf *b, const char *base, char mode) {
    ob_buf_printf(b,
                  "SELECT seq, IS_USED_LOCK(CONCAT('%s:b', seq)), IS_USED_LOCK(CONCAT('%s:%c', "
                  "seq)), NULL FROM " OB_SQL_SEQ_0_TO,
                  base, base, mode, OB_BUCKETS - 1);
}

void ob_lease_locks_idle(ob_buf *b, const char *base, int leader, char mode, uint32_t stale_ms,
                         int nulls) {
    ob_buf_puts(b, " UNION ALL SELECT ");
    for (int i = 0; i < nulls; i++)
        ob_buf_puts(b, "NULL, ");
    ob_buf_printf(b,
                  "ID FROM information_schema.PROCESSLIST WHERE COMMAND = 'Sleep' AND "
                  "TIME_MS > %" PRIu32 " AND ID IN (",
                  stale_ms);
    if (leader)
        ob_buf_printf(b, "SELECT IS_USED_LOCK('%s:leader')", base);
    else
        ob_buf_printf(b,
                      "SELECT IS_USED_LOCK(CONCAT('%s:b', seq)) FROM " OB_SQL_SEQ_0_TO
                      " UNION SELECT IS_USED_LOCK(CONCAT('%s:%c', seq)) FROM " OB_SQL_SEQ_0_TO,
                      base, OB_BUCKETS - 1, base, mode, OB_BUCKETS - 1);
    ob_buf_puts(b, ")");
}

void ob_lease_locks_workers(ob_buf *b, const char *base, unsigned long victim, int most) {
    ob_buf_printf(b,
                  "SELECT IS_USED_LOCK(CONCAT('%s:w%lu.', seq)) FROM " OB_SQL_SEQ_0_TO " WHERE "
                  "IS_USED_LOCK(CONCAT('%s:w%lu.', seq)) IS NOT NULL",
                  base, victim, most - 1, base, victim);
}
