/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The named locks' statements (see lease_locks.h).
 */
#include "lease_locks.h"

#include <inttypes.h>

#include "buckets.h"
#include "db.h"
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
    for (int i = 0; i < OB_MODE_COUNT; i++)
        ob_buf_printf(b, "%sSUM(IS_USED_LOCK(CONCAT('%s:%c', seq)) IS NOT NULL)",
                      i == 0 ? "; SELECT " : ", ", base, ob_modes[i]->lock);
    ob_buf_printf(b, " FROM " OB_SQL_SEQ_0_TO, OB_BUCKETS - 1);
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

/* --- the backend ------------------------------------------------------- */

/* The holders of this table's leases among the sessions idle past the
 * stale time, as rows of a UNION whose other columns are NULL. */
static void idle_sessions(ob_lease_ctx *c, int nulls) {
    ob_lease_locks_idle(&c->sql, c->base, c->mode->lease == OB_MODE_LEASE_LEADERSHIP, c->mode->lock,
                        c->stale_ms, nulls);
}

/* The leadership's round: a standby asks for the lock and lists the
 * silent sessions; the leader checks that the lock is still its own. */
static void leadership(ob_lease_ctx *c, int leading) {
    if (leading) {
        ob_buf_puts(&c->sql, "SELECT IS_USED_LOCK(");
        ob_lease_lock_name(&c->sql, c->base, 'l', 0);
        ob_buf_puts(&c->sql, ") = CONNECTION_ID()");
        return;
    }
    ob_buf_puts(&c->sql, "SELECT GET_LOCK(");
    ob_lease_lock_name(&c->sql, c->base, 'l', 0);
    ob_buf_puts(&c->sql, ", 0), IS_USED_LOCK(");
    ob_lease_lock_name(&c->sql, c->base, 'l', 0);
    ob_buf_puts(&c->sql, "), NULL");
    idle_sessions(c, 2);
}

/* Every round's statement is followed by two: the claim of the mode lock
 * (the modes without buckets, while not held: the bucket-sharing modes'
 * presence lock is their mode lock) and the count of each mode's locks. */
static void locks_survey(ob_lease_ctx *c, int leading) {
    ob_buf_reset(&c->sql);
    switch (c->mode->lease) {
    case OB_MODE_LEASE_NONE:
        ob_buf_puts(&c->sql, "DO 0");
        break;
    case OB_MODE_LEASE_LEADERSHIP:
        leadership(c, leading);
        break;
    case OB_MODE_LEASE_BUCKETS:
        ob_lease_locks_survey(&c->sql, c->base, c->mode->lock);
        idle_sessions(c, 3);
        break;
    }
    ob_lease_locks_modes(&c->sql, c->base, c->mode->lock,
                         c->mode->lease != OB_MODE_LEASE_BUCKETS && !c->mode_lock);
}

static unsigned long locks_me(const ob_lease_ctx *c) {
    return ob_db_thread_id(c->db);
}

/* One GET_LOCK or RELEASE_LOCK per claim, a column each. */
static void locks_claims(ob_lease_ctx *c) {
    ob_buf_reset(&c->sql);
    for (int i = 0; i < c->nclaims; i++) {
        ob_lease_claim cl = c->claims[i];
        int release = cl.kind == 'r';
        ob_buf_puts(&c->sql, i == 0 ? "SELECT " : ", ");
        ob_buf_puts(&c->sql, release ? "RELEASE_LOCK(" : "GET_LOCK(");
        ob_lease_lock_name(&c->sql, c->base,
                           release          ? 'b'
                           : cl.kind == 'm' ? c->mode->lock
                                            : (char)cl.kind,
                           cl.k);
        ob_buf_puts(&c->sql, release ? ")" : ", 0)");
    }
}

static void locks_fence(ob_lease_ctx *c, unsigned long victim, int most) {
    ob_buf_reset(&c->sql);
    ob_lease_locks_workers(&c->sql, c->base, victim, most);
}

const ob_lease_backend ob_lease_locks_backend = {
    .says = "leases are the server's named locks",
    .first = 0,
    .claims_prove = 1,
    .survey = locks_survey,
    .me = locks_me,
    .claims = locks_claims,
    .fence = locks_fence,
};
