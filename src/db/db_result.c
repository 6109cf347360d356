/* SPDX-License-Identifier: Apache-2.0 */
/* Reading the rows of a connection's last results (db.h): needs nothing
 * but the stored result, so it sits apart from the state machine. */
#include "db.h"

char **ob_db_next_row(ob_db *db, int i, unsigned long **lengths) {
    MYSQL_RES *res = ob_db_result(db, i);
    MYSQL_ROW row = res ? mysql_fetch_row(res) : NULL;
    if (row && lengths)
        *lengths = mysql_fetch_lengths(res);
    return row;
}

int ob_db_col_binary(const ob_db *db, int i, unsigned col) {
    MYSQL_RES *res = ob_db_result(db, i);
    if (res == NULL || col >= mysql_num_fields(res))
        return 0;
    return mysql_fetch_fields(res)[col].charsetnr == 63;
}
