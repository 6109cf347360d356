/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The cursor reader's checked assumptions (cursor_int.h): the verdicts of
 * the start-up probe and of the comparison of the table's counter with the
 * cursors, the grants refused on a running reader and given back, and what
 * it says while it publishes nothing.
 */
#include <mysqld_error.h>
#include <stdio.h>
#include <string.h>

#include "cursor_fit.h"
#include "cursor_int.h"
#include "cursor_sql.h"

/* The probe passed again: every grant is back. */
static void grants_back(ob_cursor *c) {
    if (!c->refusing)
        return;
    OB_INFO(c->env.log, "cursor: the database accepts the reader's writes again");
    c->refusing = 0;
}

/* Results 0 and 1: PROCESS and the cursor table; 2: the bucket index. */
void ob_cursor_probe_sql(ob_cursor *c, int grants_only) {
    ob_buf_reset(&c->sql);
    c->probe_full = !grants_only;
    if (!grants_only) {
        ob_cursor_sql_probe(&c->sql, c->cfg.ctable);
        ob_buf_puts(&c->sql, "; ");
        ob_cursor_index_sql(&c->sql, c->cfg.table, OB_CURSOR_BUCKET_INDEX, "bucket");
        ob_buf_puts(&c->sql, "; ");
    }
    ob_cursor_grants_sql(&c->sql, c->cfg.qtable, c->cfg.ctable);
}

void ob_cursor_probe_taken(ob_cursor *c) {
    if (c->probe_full) {
        char **row = ob_db_next_row(c->db, 2, NULL);
        c->bucket_index = row && row[0] && strcmp(row[0], "0") != 0;
        if (!c->bucket_index && !c->index_said)
            OB_WARN(c->env.log,
                    "cursor: table %s has no index " OB_CURSOR_BUCKET_INDEX " (bucket, status, "
                    "seq), which outbox-uvrelay schema gives it: a bucket's first cursor and its "
                    "retries are found by reading the table",
                    c->cfg.table);
        c->index_said = !c->bucket_index;
    }
    grants_back(c);
}

void ob_cursor_next_fit_sql(ob_cursor *c) {
    c->fit_at = uv_now(c->env.loop) + OB_CURSOR_FIT_EVERY_MS;
    ob_buf_reset(&c->sql);
    ob_cursor_fit_names t = ob_cursor_names(c);
    ob_cursor_fit_sql(&c->sql, &t);
}

void ob_cursor_process_back(ob_cursor *c) {
    if (!c->no_process)
        return;
    OB_INFO(c->env.log, "cursor: information_schema.INNODB_TRX can be read again: the open "
                        "gaps close and the cursors move");
    c->no_process = 0;
}

/* INNODB_TRX refused on a running reader (PROCESS revoked, seen after a
 * reconnect): rows are still published, but no gap can be proven closed and
 * the cursors stay below the first one; said once, at error level. */
void ob_cursor_process_refused(ob_cursor *c, unsigned no) {
    c->process_at = uv_now(c->env.loop) + REFUSED_RETRY_MS;
    c->env.stats->db_errors++;
    if (c->no_process)
        return;
    c->no_process = 1;
    snprintf(c->process_why, sizeof(c->process_why),
             "no PROCESS privilege: the cursors cannot move (GRANT PROCESS ON *.* TO "
             "'%s'@'<host>')",
             c->cfg.db_user ? c->cfg.db_user : "user");
    OB_ERROR(c->env.log,
             "cursor: the server refuses to show information_schema.INNODB_TRX (%u %s): "
             "without the PROCESS privilege no seq gap can be proven closed, so the cursors "
             "stay below the first open gap while rows are still published: GRANT PROCESS ON "
             "*.* TO '%s'@'<host>'",
             no, ob_db_error(c->db), c->cfg.db_user ? c->cfg.db_user : "user");
}

const char *ob_cursor_paused(const ob_cursor *c) {
    if (c->misfit)
        return c->misfit_why;
    if (c->refusing)
        return c->refused_why;
    return c->no_process ? c->process_why : NULL;
}

/* The counter and the cursors compared (cursor_fit.h). Returns 1 when the
 * mismatch is fatal, with why: at start, or under a drain, which could
 * never end; while running, the reader publishes and writes nothing until
 * they agree again. */
int ob_cursor_fit_taken(ob_cursor *c, char *why, size_t n) {
    ob_cursor_fit_names t = ob_cursor_names(c);
    int bad = ob_cursor_fit_result(c->db, &t, c->active && !c->misfit ? c->gaps.top : 0,
                                   &c->stamped, why, n);
    if (bad && (!c->fitted || c->own.drain_wanted(c->own.data)))
        return 1;
    c->fitted = 1;
    if (bad && !c->misfit) {
        OB_ERROR(c->env.log, "cursor: %s; publishing nothing and moving no cursor until then", why);
        snprintf(c->misfit_why, sizeof(c->misfit_why), "%s", why);
        c->misfit = 1;
        c->active = 0;
        c->handoff = 0;
        ob_cursor_resync(c, RESYNC_MISFIT);
    } else if (bad) {
        /* Still at odds, maybe for another reason: /readyz says the last. */
        snprintf(c->misfit_why, sizeof(c->misfit_why), "%s", why);
    } else if (!bad && c->misfit) {
        OB_INFO(c->env.log, "cursor: table %s and its cursors agree again: reading from them",
                c->cfg.table);
        c->misfit = 0;
        ob_cursor_resync(c, RESYNC_FITS);
    }
    c->env.stats->cursor_mismatch = c->misfit;
    return 0;
}

/* A write refused (no is a refusal) while `during` ran. Returns 1 when it
 * is fatal, with why: before the first comparison of counter and cursors,
 * or under a drain. Else the reader refuses to publish: what is in flight
 * is given back (by cursor.c) and the cursors are loaded again once the
 * grants are. */
int ob_cursor_refusal(ob_cursor *c, unsigned no, const char *during, char *why, size_t n) {
    /* What mends it: a read-only server wants the primary, not a grant. */
    char grants[400], fix[440];
    if (no == ER_OPTION_PREVENTS_STATEMENT || no == ER_READ_ONLY_MODE ||
        no == ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION) {
        snprintf(fix, sizeof(fix), "the server is read-only: point the relay at the primary");
    } else {
        ob_cursor_grants_text(grants, sizeof(grants), c->cfg.table,
                              c->cfg.db_user ? c->cfg.db_user : "user");
        snprintf(fix, sizeof(fix), "cursor mode needs: %s", grants);
    }
    if (!c->fitted || c->own.drain_wanted(c->own.data)) {
        snprintf(why, n, "cursor: the database refuses the reader's %s statement: %u %s; %s",
                 during, no, ob_db_error(c->db), fix);
        return 1;
    }
    if (!c->refusing)
        OB_ERROR(c->env.log,
                 "cursor: the database refuses the reader's %s statement: %u %s; publishing "
                 "nothing until it accepts the writes again (%s)",
                 during, no, ob_db_error(c->db), fix);
    snprintf(c->refused_why, sizeof(c->refused_why),
             "the database refuses the relay's writes: %u %s", no, ob_db_error(c->db));
    c->refusing = 1;
    c->refuse_at = uv_now(c->env.loop) + REFUSED_RETRY_MS;
    c->env.stats->db_errors++;
    c->pending = 0;
    c->active = 0;
    c->handoff = 0;
    ob_cursor_resync(c, RESYNC_REFUSED);
    return 0;
}

/* Why the start-up probe's failure (error no) stops the relay. */
void ob_cursor_probe_why(const ob_cursor *c, unsigned no, char *why, size_t n) {
    if (no == ER_SPECIFIC_ACCESS_DENIED_ERROR ||
        ((no == ER_DBACCESS_DENIED_ERROR || no == ER_TABLEACCESS_DENIED_ERROR) &&
         strstr(ob_db_error(c->db), "INNODB_TRX") != NULL)) {
        snprintf(why, n,
                 "--cursor needs the PROCESS privilege to read information_schema.INNODB_TRX "
                 "(%u %s): GRANT PROCESS ON *.* TO '%s'@'<host>'",
                 no, ob_db_error(c->db), c->cfg.db_user ? c->cfg.db_user : "user");
    } else if (no == ER_TABLEACCESS_DENIED_ERROR || no == ER_COLUMNACCESS_DENIED_ERROR) {
        char grants[400];
        ob_cursor_grants_text(grants, sizeof(grants), c->cfg.table,
                              c->cfg.db_user ? c->cfg.db_user : "user");
        snprintf(why, n, "--cursor: the database refuses a grant it needs (%u %s): %s", no,
                 ob_db_error(c->db), grants);
    } else if (no == ER_BAD_FIELD_ERROR) {
        snprintf(why, n,
                 "--cursor: the cursor table %s has no witness column (%u %s): it was made by "
                 "an earlier release; add it with: outbox-uvrelay schema --migrate --table %s | "
                 "mariadb <database>",
                 c->cfg.ctable, no, ob_db_error(c->db), c->cfg.table);
    } else if (no == ER_NO_SUCH_TABLE) {
        snprintf(why, n,
                 "--cursor needs the cursor table %s (%u %s); create it with: outbox-uvrelay "
                 "schema --migrate --table %s | mariadb <database>",
                 c->cfg.ctable, no, ob_db_error(c->db), c->cfg.table);
    } else {
        snprintf(why, n, "--cursor's start-up check failed: %u %s%s", no, ob_db_error(c->db),
                 ob_db_error_hint(no));
    }
}

int ob_cursor_check_due(const ob_cursor *c, const cursor_pass *p) {
    return c->misfit || c->refusing || !c->fitted || p->now >= c->fit_at;
}

/* Takes the turn: before the first comparison passed nothing else is sent. */
duty_out ob_cursor_check_run(ob_cursor *c, cursor_pass *p) {
    if (c->misfit || c->refusing) {
        uint64_t at = c->misfit ? c->fit_at : c->refuse_at;
        if (p->now < at) {
            p->wait_ms = at - p->now;
            return DUTY_WAIT;
        }
        if (c->refusing && !c->misfit) {
            ob_cursor_probe_sql(c, 1);
            p->send = CR_PROBING;
            return DUTY_SEND;
        }
    }
    ob_cursor_next_fit_sql(c);
    p->send = CR_FITTING;
    return DUTY_SEND;
}
