/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The lease table's statements (see lease_table.h). Every value written into
 * them is the relay's own: the lease key is hex, identities and bucket
 * numbers are integers, the table's name was checked at start.
 */
#include "lease_table.h"

#include <inttypes.h>
#include <mysqld_error.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "buckets.h"
#include "sql.h"

/* The lease table, quoted, in the schema of `table`. */
static void lease_name(char *out, size_t n, const char *table) {
    const char *dot = table ? strchr(table, '.') : NULL;
    if (dot)
        snprintf(out, n, "`%.*s`.`" OB_LEASE_TABLE "`", (int)(dot - table), table);
    else
        snprintf(out, n, "`" OB_LEASE_TABLE "`");
}

void ob_lease_tbl_init(ob_lease_tbl *t, const char *table, const char *key, char mode,
                       uint32_t stale_ms) {
    memset(t, 0, sizeof(*t));
    t->mode = mode;
    t->stale_ms = stale_ms;
    snprintf(t->key, sizeof(t->key), "%s", key);
    lease_name(t->name, sizeof(t->name), table);
    ob_lease_tbl_new_identity(t);
}

void ob_lease_tbl_holders_sql(ob_buf *b, const char *table, const char *key) {
    char name[160];
    const char *dot = table ? strchr(table, '.') : NULL;
    lease_name(name, sizeof(name), table);
    ob_buf_puts(b, "SET @outbox_lease_n = (SELECT COUNT(*) FROM information_schema.TABLES WHERE ");
    if (dot)
        ob_buf_printf(b, "TABLE_SCHEMA = '%.*s'", (int)(dot - table), table);
    else
        ob_buf_puts(b, "TABLE_SCHEMA = DATABASE()");
    /* The query is a string literal: its own quotes are doubled. */
    ob_buf_printf(b,
                  " AND TABLE_NAME = '" OB_LEASE_TABLE "'); EXECUTE IMMEDIATE "
                  "IF(@outbox_lease_n > 0, 'SELECT x.kind, x.slot, x.holder FROM %s x JOIN %s "
                  "y ON y.lease_key = x.lease_key AND y.kind = ''i'' AND y.slot = x.holder AND "
                  "y.renewed >= NOW(6) - INTERVAL y.stale_ms * 1000 MICROSECOND WHERE "
                  "x.lease_key = ''%s'' AND x.kind IN (''b'', ''l'')', 'SELECT NULL, NULL, "
                  "NULL FROM DUAL WHERE FALSE')",
                  name, name, key);
}

void ob_lease_tbl_new_identity(ob_lease_tbl *t) {
    uint64_t v = 0;
    /* Without the system's random source (it does not fail on Linux), the
     * clock and the address still make two instances differ. */
    if (uv_random(NULL, NULL, &v, sizeof(v), 0, NULL) != 0)
        v = uv_hrtime() ^ (uint64_t)(uintptr_t)t;
    v &= INT64_MAX;
    t->me = v ? v : 1;
    t->registered = 0;
}

/* " WHERE <alias>lease_key = 'K' AND <alias>kind = 'k'" */
static void where(const ob_lease_tbl *t, ob_buf *sql, const char *alias, char kind) {
    ob_buf_printf(sql, " WHERE %slease_key = '%s' AND %skind = '%c'", alias, t->key, alias, kind);
}

/* " AND EXISTS (this instance's presence row)" */
static void me_present(const ob_lease_tbl *t, ob_buf *sql) {
    ob_buf_printf(sql,
                  " AND EXISTS (SELECT 1 FROM %s q WHERE q.lease_key = '%s' AND q.kind = 'i' AND "
                  "q.slot = %" PRIu64 ")",
                  t->name, t->key, t->me);
}

/* The take of kind's rows already narrowed by `slots` (" AND x.slot ..."):
 * free, this instance's, or held by an identity whose presence is gone. */
static void take(const ob_lease_tbl *t, ob_buf *sql, char kind, const char *slots) {
    ob_buf_printf(sql,
                  "; UPDATE %s AS x SET x.holder = %" PRIu64 ", x.epoch = x.epoch + 1, "
                  "x.renewed = NOW(6)",
                  t->name, t->me);
    where(t, sql, "x.", kind);
    ob_buf_printf(sql,
                  "%s AND (x.holder IS NULL OR x.holder = %" PRIu64 " OR NOT EXISTS (SELECT 1 "
                  "FROM %s p WHERE p.lease_key = '%s' AND p.kind = 'i' AND p.slot = x.holder))",
                  slots, t->me, t->name, t->key);
    me_present(t, sql);
}

/* Statements 0 to 2 of every round: the session's causal reads, the
 * presence row's renewal (or first write), the deletion of stale ones. */
static void prefix(const ob_lease_tbl *t, ob_buf *sql) {
    ob_buf_puts(sql, "SET SESSION wsrep_sync_wait = 1; ");
    if (t->registered)
        ob_buf_printf(sql,
                      "UPDATE %s SET renewed = NOW(6) WHERE lease_key = '%s' AND kind = 'i' AND "
                      "slot = %" PRIu64,
                      t->name, t->key, t->me);
    else
        ob_buf_printf(sql,
                      "INSERT INTO %s (lease_key, kind, slot, holder, mode, stale_ms, renewed) "
                      "VALUES ('%s', 'i', %" PRIu64 ", %" PRIu64 ", '%c', %" PRIu32 ", NOW(6))",
                      t->name, t->key, t->me, t->me, t->mode, t->stale_ms);
    ob_buf_printf(sql, "; DELETE FROM %s", t->name);
    where(t, sql, "", 'i');
    /* Each row by its own instance's stale time, which its fencing keeps. */
    ob_buf_puts(sql, " AND renewed < NOW(6) - INTERVAL stale_ms * 1000 MICROSECOND");
}

/* The buckets' live holders beside the mode's live instances, numbered. */
static void bucket_survey(const ob_lease_tbl *t, ob_buf *sql) {
    ob_buf_printf(sql,
                  "; SELECT s_.seq, b.holder, p.slot, NULL FROM " OB_SQL_SEQ_0_TO
                  " LEFT JOIN (SELECT x.slot, x.holder FROM %s x JOIN %s y ON y.lease_key = "
                  "x.lease_key AND y.kind = 'i' AND y.slot = x.holder",
                  OB_BUCKETS - 1, t->name, t->name);
    where(t, sql, "x.", 'b');
    ob_buf_printf(sql,
                  ") b ON b.slot = s_.seq LEFT JOIN (SELECT slot, ROW_NUMBER() OVER (ORDER BY "
                  "slot) - 1 AS rn FROM %s",
                  t->name);
    where(t, sql, "", 'i');
    ob_buf_printf(sql, " AND mode = '%c') p ON p.rn = s_.seq", t->mode);
}

/* The mode check's two results: a placeholder and the counts per mode. */
static void modes(const ob_lease_tbl *t, ob_buf *sql) {
    ob_buf_puts(sql, "; DO 0");
    for (int i = 0; i < OB_MODE_COUNT; i++)
        ob_buf_printf(sql, "%sSUM(mode = '%c')", i == 0 ? "; SELECT " : ", ", ob_modes[i]->lock);
    ob_buf_printf(sql, " FROM %s", t->name);
    where(t, sql, "", 'i');
}

void ob_lease_tbl_survey(ob_lease_tbl *t, ob_buf *sql, int leader, int leading) {
    ob_buf_reset(sql);
    prefix(t, sql);
    if (leader && !leading) {
        ob_buf_printf(sql, "; INSERT IGNORE INTO %s (lease_key, kind, slot) VALUES ('%s', 'l', 0)",
                      t->name, t->key);
        take(t, sql, 'l', " AND x.slot = 0");
        ob_buf_printf(sql,
                      "; SELECT x.holder = %" PRIu64 " AND y.slot IS NOT NULL, x.holder, NULL "
                      "FROM %s x LEFT JOIN %s y ON y.lease_key = x.lease_key AND y.kind = 'i' AND "
                      "y.slot = x.holder",
                      t->me, t->name, t->name);
        where(t, sql, "x.", 'l');
        modes(t, sql);
        return;
    }
    ob_buf_puts(sql, "; DO 0; DO 0");
    if (leader) {
        ob_buf_printf(sql,
                      "; SELECT COUNT(*) FROM %s x JOIN %s y ON y.lease_key = x.lease_key AND "
                      "y.kind = 'i' AND y.slot = x.holder",
                      t->name, t->name);
        where(t, sql, "x.", 'l');
        ob_buf_printf(sql, " AND x.holder = %" PRIu64, t->me);
    } else if (t->mode == 'p') {
        ob_buf_puts(sql, "; DO 0");
    } else {
        bucket_survey(t, sql);
    }
    modes(t, sql);
}

/* " AND x.slot IN (k, ...)" for the buckets of mask. */
static void slots_in(ob_buf *b, uint64_t mask) {
    const char *sep = " AND x.slot IN (";
    for (int k = 0; k < OB_BUCKETS; k++)
        if (mask >> k & 1) {
            ob_buf_printf(b, "%s%d", sep, k);
            sep = ", ";
        }
    ob_buf_putc(b, ')');
}

void ob_lease_tbl_claims(const ob_lease_tbl *t, ob_buf *sql, uint64_t take_b, uint64_t release) {
    ob_buf slots = OB_BUF_INIT;
    ob_buf_reset(sql);
    if (release) {
        slots_in(&slots, release);
        ob_buf_printf(sql, "UPDATE %s AS x SET x.holder = NULL, x.epoch = x.epoch + 1", t->name);
        where(t, sql, "x.", 'b');
        ob_buf_printf(sql, " AND x.holder = %" PRIu64 "%s", t->me, slots.p ? slots.p : "");
    } else {
        ob_buf_puts(sql, "DO 0");
    }
    if (take_b) {
        ob_buf_reset(&slots);
        slots_in(&slots, take_b);
        ob_buf_printf(sql, "; INSERT IGNORE INTO %s (lease_key, kind, slot) VALUES ", t->name);
        const char *sep = "";
        for (int k = 0; k < OB_BUCKETS; k++)
            if (take_b >> k & 1) {
                ob_buf_printf(sql, "%s('%s', 'b', %d)", sep, t->key, k);
                sep = ", ";
            }
        take(t, sql, 'b', slots.p ? slots.p : "");
    } else {
        ob_buf_puts(sql, "; DO 0; DO 0");
    }
    if (slots.oom)
        sql->oom = 1;
    ob_buf_free(&slots);
    ob_buf_printf(sql, "; DO 0; DO 0; SELECT x.slot FROM %s x", t->name);
    where(t, sql, "x.", 'b');
    ob_buf_printf(sql, " AND x.holder = %" PRIu64, t->me);
    me_present(t, sql);
}

uint64_t ob_lease_tbl_owned(ob_db *db) {
    uint64_t owned = 0;
    char **row;
    while ((row = ob_db_next_row(db, OB_LEASE_TBL_MAIN, NULL)) != NULL) {
        int k = row[0] ? atoi(row[0]) : -1;
        if (k >= 0 && k < OB_BUCKETS)
            owned |= 1ULL << k;
    }
    return owned;
}

/* --- the backend ------------------------------------------------------- */

/* A registration whose answer was lost takes a new identity. */
static void tbl_connected(ob_lease_ctx *c) {
    if (!c->tbl.registered)
        ob_lease_tbl_new_identity(&c->tbl);
}

static void tbl_survey(ob_lease_ctx *c, int leading) {
    ob_lease_tbl_survey(&c->tbl, &c->sql, c->mode->lease == OB_MODE_LEASE_LEADERSHIP, leading);
}

/* Notes a registration, or finds the presence row gone (the renewal
 * changed nothing: the instance was silent past the stale time), says so
 * and takes a new identity: nothing is held any more. */
static void tbl_surveyed(ob_lease_ctx *c) {
    ob_lease_tbl *t = &c->tbl;
    if (!t->registered) {
        t->registered = 1;
        return;
    }
    if (ob_db_affected(c->db, 1) > 0)
        return;
    OB_WARN(c->log,
            "lease: this relay's presence row in %s was deleted (not renewed for %" PRIu32
            " ms); its leases went with it, it registers again",
            t->name, t->stale_ms);
    ob_lease_tbl_new_identity(t);
}

static unsigned long tbl_me(const ob_lease_ctx *c) {
    return (unsigned long)c->tbl.me;
}

/* The claims decide() listed, as takes and releases of rows. */
static void tbl_claims(ob_lease_ctx *c) {
    uint64_t take_b = 0, release = 0;
    for (int i = 0; i < c->nclaims; i++) {
        if (c->claims[i].kind == 'b')
            take_b |= 1ULL << c->claims[i].k;
        else if (c->claims[i].kind == 'r')
            release |= 1ULL << c->claims[i].k;
    }
    ob_lease_tbl_claims(&c->tbl, &c->sql, take_b, release);
}

static uint64_t tbl_held(ob_lease_ctx *c) {
    return ob_lease_tbl_owned(c->db);
}

/* Error 1213 is a lost race (certification failed the later of two
 * conflicting writes); a permanent error before the lease ever worked, a
 * missing table or grant. A failed registration takes a new identity (its
 * row may be half made). */
static int tbl_failed(ob_lease_ctx *c, int settled, char *why, size_t n) {
    ob_lease_tbl *t = &c->tbl;
    unsigned no = ob_db_errno(c->db);
    if (!t->registered)
        ob_lease_tbl_new_identity(t);
    if (no == ER_LOCK_DEADLOCK)
        return 1;
    if (settled || !ob_db_errno_is_permanent(no))
        return 0;
    snprintf(why, n,
             "on a Galera node the leases are rows of the lease table %s, which this relay "
             "cannot use (%u %s): create it with `outbox-uvrelay schema --no-function --table %s | "
             "mariadb <database>` (it makes only the tables that are missing) and grant SELECT, "
             "INSERT, UPDATE, DELETE on it to the relay's user",
             t->name, no, ob_db_error(c->db), c->table);
    return 2;
}

static int tbl_has_rows(const ob_lease_ctx *c) {
    return c->tbl.registered;
}

static void left(ob_db *db, int ok, void *data) {
    (void)db;
    (void)ok;
    (void)data;
}

/* Gives up this instance's buckets and leadership and deletes its presence
 * row, so that the others may take them at their next round rather than
 * after the stale time: an instance refused at start (another mode runs on
 * the table), which leaves nothing behind, and a clean stop once nothing of
 * its own can still be published. */
static int tbl_leave(ob_lease_ctx *c, ob_db_cb cb, void *data) {
    ob_lease_tbl *t = &c->tbl;
    if (!t->registered)
        return -1;
    /* The buckets first: a bucket whose holder's row is gone is free as
     * well, but one set free says so to `status` at once. */
    int n = snprintf(t->leave, sizeof(t->leave),
                     "UPDATE %s SET holder = NULL, epoch = epoch + 1 WHERE lease_key = '%s' AND "
                     "kind IN ('b', 'l') AND holder = %" PRIu64 "; DELETE FROM %s WHERE "
                     "lease_key = '%s' AND kind = 'i' AND slot = %" PRIu64,
                     t->name, t->key, t->me, t->name, t->key, t->me);
    if (n <= 0 || (size_t)n >= sizeof(t->leave))
        return -1;
    return ob_db_query(c->db, t->leave, (size_t)n, cb ? cb : left, data);
}

/* Its rounds renew the presence row, so they come often whatever the
 * mode; a bucket given up stays held to the next round; the bucket claims
 * renew nothing (the round proved the lease). */
const ob_lease_backend ob_lease_table_backend = {
    .says = "on a Galera node: leases are rows of the lease table",
    .first = OB_LEASE_TBL_MAIN,
    .renews = 1,
    .releases_late = 1,
    .connected = tbl_connected,
    .survey = tbl_survey,
    .surveyed = tbl_surveyed,
    .me = tbl_me,
    .claims = tbl_claims,
    .held = tbl_held,
    .failed = tbl_failed,
    .has_rows = tbl_has_rows,
    .leave = tbl_leave,
};
