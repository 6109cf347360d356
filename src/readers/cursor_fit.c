/* SPDX-License-Identifier: Apache-2.0 */
/* Cursor mode's checked assumptions (see cursor_fit.h). */
#include "cursor_fit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* "TABLE_SCHEMA = .. AND TABLE_NAME = '..'" for information_schema. */
static void table_where(ob_buf *b, const char *table) {
    const char *dot = strchr(table, '.');
    if (dot) {
        ob_buf_printf(b, "TABLE_SCHEMA = '%.*s'", (int)(dot - table), table);
        table = dot + 1;
    } else {
        ob_buf_puts(b, "TABLE_SCHEMA = DATABASE()");
    }
    ob_buf_printf(b, " AND TABLE_NAME = '%s'", table);
}

void ob_cursor_index_sql(ob_buf *b, const char *table, const char *index, const char *first) {
    ob_buf_puts(b, "SELECT COUNT(*) FROM information_schema.STATISTICS WHERE ");
    table_where(b, table);
    ob_buf_printf(b, " AND INDEX_NAME = '%s' AND SEQ_IN_INDEX = 1 AND COLUMN_NAME = '%s'", index,
                  first);
}

/* The cursors are read first: a cursor never passes a seq already handed
 * out, so one read before the counter is below it, whatever commits in
 * between. */
void ob_cursor_fit_sql(ob_buf *b, const ob_cursor_fit_names *t) {
    ob_buf_printf(b, "SELECT MAX(seq) FROM %s WHERE table_name = '%s'; ", t->ctable, t->table);
    ob_buf_puts(b, "SELECT AUTO_INCREMENT FROM information_schema.TABLES WHERE ");
    table_where(b, t->table);
    ob_buf_puts(b, "; ");
    ob_cursor_stamp_check_sql(b, t);
    if (t->trust_seq)
        return;
    ob_buf_puts(b, "; SELECT TRIGGER_NAME, ACTION_STATEMENT FROM information_schema.TRIGGERS "
                   "WHERE EVENT_MANIPULATION = 'INSERT' AND ACTION_TIMING = 'BEFORE' AND ");
    const char *dot = strchr(t->table, '.');
    if (dot)
        ob_buf_printf(b, "EVENT_OBJECT_SCHEMA = '%.*s'", (int)(dot - t->table), t->table);
    else
        ob_buf_puts(b, "EVENT_OBJECT_SCHEMA = DATABASE()");
    ob_buf_printf(b, " AND EVENT_OBJECT_TABLE = '%s'", dot ? dot + 1 : t->table);
}

/* The table's witness: "<seq>:<md5 of id>" in the witness column of its
 * cursor rows (each row that has one holds the same), NULL before the
 * first cursor move and after cursor-reset. */
void ob_cursor_stamp_check_sql(ob_buf *b, const ob_cursor_fit_names *t) {
    ob_buf_printf(b,
                  "SELECT s.q, EXISTS (SELECT 1 FROM %s o WHERE o.seq = s.q), EXISTS (SELECT 1 "
                  "FROM %s o WHERE o.seq = s.q AND CAST(MD5(o.id) AS BINARY) = CAST(s.h AS "
                  "BINARY)), EXISTS (SELECT 1 FROM %s o WHERE o.seq <= s.q) FROM (SELECT "
                  "CAST(SUBSTRING_INDEX(witness, ':', 1) AS UNSIGNED) AS q, "
                  "SUBSTRING_INDEX(witness, ':', -1) AS h FROM %s WHERE table_name = '%s' AND "
                  "witness IS NOT NULL LIMIT 1) s",
                  t->qtable, t->qtable, t->qtable, t->ctable, t->table);
}

void ob_cursor_stamp_sql(ob_buf *b, const ob_cursor_fit_names *t, uint64_t seq) {
    ob_buf_printf(b,
                  "UPDATE %s SET witness = (SELECT CONCAT(o.seq, ':', MD5(o.id)) FROM %s o WHERE "
                  "o.seq = (SELECT MAX(seq) FROM %s WHERE status = 0 AND seq <= %llu) LIMIT 1) "
                  "WHERE table_name = '%s' AND witness IS NULL AND (SELECT COUNT(*) FROM (SELECT "
                  "1 FROM %s WHERE table_name = '%s' AND witness IS NOT NULL) w_) = 0",
                  t->ctable, t->qtable, t->qtable, (unsigned long long)seq, t->table, t->ctable,
                  t->table);
}

void ob_cursor_witness_seq_sql(ob_buf *b, const char *ctable, const char *table) {
    ob_buf_printf(b,
                  "SELECT CAST(SUBSTRING_INDEX(witness, ':', 1) AS UNSIGNED) FROM %s WHERE "
                  "table_name = '%s' AND witness IS NOT NULL",
                  ctable, table);
}

int ob_cursor_stamp_result(char **row, const char *table, int *stamped, char *why, size_t n) {
    *stamped = 0;
    if (row == NULL || row[0] == NULL)
        return 0; /* no stamp yet (the next cursor move makes one) */
    *stamped = 1;
    int present = row[1] && strcmp(row[1], "1") == 0;
    int same = row[2] && strcmp(row[2], "1") == 0;
    if (same || (!present && !(row[3] && strcmp(row[3], "1") == 0)))
        return 0; /* the witness, or no row at or below it: nothing was put below */
    snprintf(why, n,
             "the row at seq %s of table %s, which its cursors were checked against, %s: the "
             "table was replaced under its cursors (a TRUNCATE, a RENAME TABLE swap, a dump "
             "and restore), and new rows at or below the cursors would be taken for delivered: "
             "repair with outbox-uvrelay cursor-reset --table %s (the relays then send every "
             "row the table holds)",
             row[0], table, present ? "is another row" : "is gone while rows below it remain",
             table);
    return 1;
}

/* A BEFORE INSERT trigger that sets NEW.seq; a user without the TRIGGER
 * privilege sees the trigger but not its statement: the name schema gives
 * it stands for it then. */
static int seq_trigger(char **row, const char *table) {
    if (row == NULL)
        return 0;
    if (row[1] != NULL) {
        for (const char *p = row[1]; *p; p++)
            if (strncasecmp(p, "new.seq", 7) == 0)
                return 1;
        return 0;
    }
    const char *dot = strchr(table, '.');
    char name[80];
    snprintf(name, sizeof(name), "%.60s_seq", dot ? dot + 1 : table);
    return row[0] && strcmp(row[0], name) == 0;
}

int ob_cursor_fit_result(ob_db *db, const ob_cursor_fit_names *t, uint64_t read_top, int *stamped,
                         char *why, size_t n) {
    char **row = ob_db_next_row(db, 0, NULL);
    uint64_t top = row && row[0] ? strtoull(row[0], NULL, 10) : 0;
    int cursored = row && row[0];
    row = ob_db_next_row(db, 1, NULL);
    uint64_t counter = row && row[0] ? strtoull(row[0], NULL, 10) : 0;
    if (read_top > top) {
        top = read_top;
        cursored = 1;
    }
    if (cursored && row && row[0] && top >= counter) {
        ob_cursor_mismatch_why(why, n, t->table, top, counter);
        return 1;
    }
    if (ob_cursor_stamp_result(ob_db_next_row(db, 2, NULL), t->table, stamped, why, n))
        return 1;
    if (t->trust_seq)
        return 0;
    for (row = ob_db_next_row(db, 3, NULL); row; row = ob_db_next_row(db, 3, NULL))
        if (seq_trigger(row, t->table))
            return 0;
    snprintf(why, n,
             "table %s has no BEFORE INSERT trigger that sets seq: cursor mode takes every row "
             "at or below a cursor for delivered, and a producer that writes seq below one "
             "would lose its row; create it with outbox-uvrelay schema --migrate --table %s | "
             "mariadb <database> (it needs the TRIGGER privilege), or pass --cursor-trust-seq "
             "if no producer ever writes seq",
             t->table, t->table);
    return 1;
}

void ob_cursor_mismatch_why(char *out, size_t n, const char *table, uint64_t top,
                            uint64_t counter) {
    snprintf(out, n,
             "the cursors of table %s (up to seq %llu) are at or above its AUTO_INCREMENT "
             "counter (%llu): repair with outbox-uvrelay cursor-reset --table %s (the table was "
             "reset by a TRUNCATE, an ALTER TABLE ... AUTO_INCREMENT or a restore, or the "
             "cursors belong to another table: new rows at or below the cursors would be taken "
             "for delivered)",
             table, (unsigned long long)top, (unsigned long long)counter, table);
}

void ob_cursor_grants_sql(ob_buf *b, const char *qtable, const char *ctable) {
    ob_buf_printf(b,
                  "UPDATE %s SET status = status WHERE 1 = 0; INSERT INTO %s (table_name, "
                  "bucket, seq) SELECT '', 0, 0 FROM DUAL WHERE 1 = 0; UPDATE %s SET seq = seq "
                  "WHERE 1 = 0",
                  qtable, ctable, ctable);
}

void ob_cursor_grants_text(char *out, size_t n, const char *table, const char *user) {
    const char *dot = strchr(table, '.');
    char db[80];
    if (dot)
        snprintf(db, sizeof(db), "%.*s", (int)(dot - table), table);
    else
        snprintf(db, sizeof(db), "<database>");
    snprintf(out, n,
             "GRANT SELECT, UPDATE ON %s.%s TO '%s'@'<host>'; GRANT SELECT, INSERT, UPDATE ON "
             "%s.outbox_cursor TO '%s'@'<host>'; GRANT PROCESS ON *.* TO '%s'@'<host>'",
             db, dot ? dot + 1 : table, user, db, user, user);
}
