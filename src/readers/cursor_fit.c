/* SPDX-License-Identifier: Apache-2.0 */
/* Cursor mode's checked assumptions (see cursor_fit.h). */
#include "cursor_fit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* The cursors are read first: a cursor never passes a seq already handed
 * out, so one read before the counter is below it, whatever commits in
 * between. */
void ob_cursor_fit_sql(ob_buf *b, const char *table, const char *ctable) {
    ob_buf_printf(b, "SELECT MAX(seq) FROM %s WHERE table_name = '%s'; ", ctable, table);
    ob_buf_puts(b, "SELECT AUTO_INCREMENT FROM information_schema.TABLES WHERE ");
    table_where(b, table);
}

int ob_cursor_fit_result(ob_db *db, uint64_t read_top, const char *table, char *why, size_t n) {
    char **row = ob_db_next_row(db, 0, NULL);
    uint64_t top = row && row[0] ? strtoull(row[0], NULL, 10) : 0;
    int cursored = row && row[0];
    row = ob_db_next_row(db, 1, NULL);
    if (row == NULL || row[0] == NULL)
        return 0; /* no counter known: nothing to compare */
    uint64_t counter = strtoull(row[0], NULL, 10);
    if (read_top > top) {
        top = read_top;
        cursored = 1;
    }
    if (!cursored || top < counter)
        return 0;
    ob_cursor_mismatch_why(why, n, table, top, counter);
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
