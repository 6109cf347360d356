/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The rows outbox_republish_run() publishes again (republish_rows.h).
 *
 * Delivered means: status 1 in every mode; in a table with a cursor table,
 * also status 0 at or below the bucket's cursor (the cursor relay never
 * writes a row it delivered; status 2 there still waits for its retry).
 * Dead rows (-1) only when asked. The order is the relay's: seq in a table
 * that has it, id (UUIDv7, the insertion order) in a plain one.
 */
#include "republish_rows.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db_blocking.h"
#include "log.h"
#include "sql.h"
#include "tls_options.h"
#include "url.h"

static int digits(const char *s, int n, int lo, int hi, int *out) {
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (!isdigit((unsigned char)s[i]))
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return v < lo || v > hi ? -1 : 0;
}

int ob_rp_time(const char *in, char *out, size_t outlen) {
    int y, mo, d, h = 0, mi = 0, sec = 0, v;
    char frac[7] = "000000";
    size_t n = in ? strlen(in) : 0;
    if (n > 0 && in[n - 1] == 'Z')
        n--;
    if (n < 10 || digits(in, 4, 1970, 2106, &y) || in[4] != '-' || digits(in + 5, 2, 1, 12, &mo) ||
        in[7] != '-' || digits(in + 8, 2, 1, 31, &d))
        return -1;
    const char *p = in + 10, *end = in + n;
    if (p < end) {
        if ((*p != ' ' && *p != 'T') || end - p < 6 || digits(p + 1, 2, 0, 23, &h) || p[3] != ':' ||
            digits(p + 4, 2, 0, 59, &mi))
            return -1;
        p += 6;
        if (p < end && (end - p < 3 || *p != ':' || digits(p + 1, 2, 0, 59, &sec)))
            return -1;
        p += p < end ? 3 : 0;
        if (p < end) {
            if (*p != '.' || end - p < 2 || end - p > 7)
                return -1;
            for (int i = 0; p + 1 + i < end; i++) {
                if (digits(p + 1 + i, 1, 0, 9, &v))
                    return -1;
                frac[i] = (char)('0' + v);
            }
        }
    }
    int k = snprintf(out, outlen, "%04d-%02d-%02d %02d:%02d:%02d.%s", y, mo, d, h, mi, sec, frac);
    return k < 0 || (size_t)k >= outlen ? -1 : 0;
}

void ob_rp_where(ob_buf *b, const ob_rp_names *n, const outbox_republish_options *o,
                 const char *since, const char *until) {
    ob_buf_printf(b, " FROM %s o", n->qtable);
    if (n->ctable)
        /* The name passed ob_sql_check_table: no quote can be in it. */
        ob_buf_printf(b, " LEFT JOIN %s c ON c.table_name = '%s' AND c.bucket = o.bucket",
                      n->ctable, n->table);
    ob_buf_puts(b, " WHERE (o.status = 1");
    if (n->ctable)
        ob_buf_puts(b, " OR (o.status = 0 AND o.seq <= c.seq)");
    if (o->include_dead)
        ob_buf_puts(b, " OR o.status = -1");
    ob_buf_putc(b, ')');
    /* The bounds passed ob_rp_time: digits, '-', ':', '.' and a space. */
    if (since)
        ob_buf_printf(b, " AND o.created_at >= '%s'", since);
    if (until)
        ob_buf_printf(b, " AND o.created_at < '%s'", until);
    if (o->has_seq_range)
        ob_buf_printf(b, " AND o.seq >= %llu AND o.seq <= %llu", (unsigned long long)o->seq_from,
                      (unsigned long long)o->seq_to);
    if (o->id_from) {
        ob_buf_puts(b, " AND o.id >= X'");
        ob_buf_hex(b, o->id_from->b, 16);
        ob_buf_putc(b, '\'');
    }
    if (o->id_to) {
        ob_buf_puts(b, " AND o.id <= X'");
        ob_buf_hex(b, o->id_to->b, 16);
        ob_buf_putc(b, '\'');
    }
}

void ob_rp_page_sql(ob_buf *b, const ob_rp_names *n, const char *where, int has_after,
                    uint64_t after_seq, const unsigned char *after_id) {
    ob_buf_puts(b, "SELECT o.id, o.aggregate_type, o.aggregate_id, o.event_type, o.payload, "
                   "o.headers, o.attempt_count, o.created_at, ");
    ob_buf_puts(b, n->has_seq ? "o.seq" : "NULL");
    ob_buf_puts(b, where);
    if (has_after && n->has_seq) {
        ob_buf_printf(b, " AND o.seq > %llu", (unsigned long long)after_seq);
    } else if (has_after) {
        ob_buf_puts(b, " AND o.id > X'");
        ob_buf_hex(b, after_id, 16);
        ob_buf_putc(b, '\'');
    }
    ob_buf_printf(b, " ORDER BY %s LIMIT %d", n->has_seq ? "o.seq" : "o.id", OB_RP_PAGE);
}

static int query(ob_rp_reader *r, const char *sql, MYSQL_RES **res, char *err, size_t errlen) {
    if (mysql_query(r->m, sql) != 0 || (*res = mysql_store_result(r->m)) == NULL) {
        unsigned no = mysql_errno(r->m);
        return ob_errf(err, errlen, OUTBOX_EDB, "MariaDB: %s (error %u)%s", mysql_error(r->m), no,
                       no == 1142 || no == 1143
                           ? ": the command needs SELECT on the outbox table (and on "
                             "outbox_cursor in cursor mode)"
                           : "");
    }
    return OUTBOX_OK;
}

static int make_names(ob_rp_reader *r, const char *table, const char *database) {
    const char *dot = strchr(table, '.');
    ob_buf q = OB_BUF_INIT, w = OB_BUF_INIT, c = OB_BUF_INIT, s = OB_BUF_INIT;
    ob_sql_quote_table(&q, table);
    if (dot) {
        ob_buf_printf(&w, "TABLE_SCHEMA = '%.*s'", (int)(dot - table), table);
        ob_buf_printf(&c, "`%.*s`.`outbox_cursor`", (int)(dot - table), table);
        ob_buf_printf(&s, "%.*s.outbox_cursor", (int)(dot - table), table);
    } else {
        ob_buf_puts(&w, "TABLE_SCHEMA = DATABASE()");
        ob_buf_puts(&c, "`outbox_cursor`");
        ob_buf_printf(&s, "%s.outbox_cursor", database);
    }
    r->qtable = q.p;
    r->ctable = c.p;
    r->is_where = w.p;
    r->cname = s.p;
    r->names.table = table;
    r->names.qtable = r->qtable;
    return r->qtable && r->ctable && r->is_where && r->cname ? 0 : -1;
}

/* Whether the table exists, has seq, and has a cursor table beside it. */
static int layout(ob_rp_reader *r, const outbox_relay_options *o, char *err, size_t errlen) {
    const char *dot = strchr(o->table, '.');
    const char *bare = dot ? dot + 1 : o->table;
    ob_buf_reset(&r->sql);
    ob_buf_printf(&r->sql,
                  "SELECT COUNT(*), IFNULL(SUM(COLUMN_NAME IN ('seq', 'bucket')), 0) FROM "
                  "information_schema.COLUMNS WHERE %s AND TABLE_NAME = '%s'",
                  r->is_where, bare);
    MYSQL_RES *res = NULL;
    int rc = query(r, r->sql.p, &res, err, errlen);
    if (rc != OUTBOX_OK)
        return rc;
    MYSQL_ROW row = mysql_fetch_row(res);
    long cols = row && row[0] ? atol(row[0]) : 0, seq = row && row[1] ? atol(row[1]) : 0;
    mysql_free_result(res);
    if (cols == 0)
        return ob_errf(err, errlen, OUTBOX_ENOTFOUND,
                       "table %s does not exist, or the user may not read it", o->table);
    r->names.has_seq = seq == 2;
    if (!r->names.has_seq)
        return OUTBOX_OK;
    /* A table of the ordered layout may have had cursor relays: only the
     * cursor table tells which of its status 0 rows they delivered. The
     * information schema hides a table the user may not read, so ask it. */
    ob_buf_reset(&r->sql);
    ob_buf_printf(&r->sql, "SELECT 1 FROM %s LIMIT 0", r->ctable);
    if (mysql_query(r->m, r->sql.p) == 0) {
        mysql_free_result(mysql_store_result(r->m));
        r->names.ctable = r->ctable;
        return OUTBOX_OK;
    }
    unsigned no = mysql_errno(r->m);
    if (no == 1146 && !o->cursor)
        return OUTBOX_OK; /* no cursor table: no cursor relay ever ran */
    return ob_errf(err, errlen, OUTBOX_ESCHEMA,
                   "cannot read the cursor table %s (%u %s): %s has the ordered layout, and only "
                   "the cursor table tells which of its rows cursor mode delivered; grant it "
                   "with `GRANT SELECT ON %s TO '<user>'@'<host>'`; nothing was published",
                   r->cname, no, mysql_error(r->m), o->table, r->cname);
}

int ob_rp_open(ob_rp_reader *r, const outbox_relay_options *o, char *err, size_t errlen) {
    memset(r, 0, sizeof(*r));
    ob_db_url url;
    if (ob_db_settings(o->db_url, o->db_password, &url, err, errlen) != 0)
        return OUTBOX_EINVAL;
    ob_db_config cfg = {0};
    ob_db_url_to_config(&url, &cfg);
    ob_db_config_tls_from_options(&cfg, o);
    cfg.connect_timeout_s = 10;
    cfg.read_timeout_s = 600;
    cfg.init_command = "SET SESSION time_zone = '+00:00'";
    int rc = OUTBOX_OK;
    if (strchr(o->table, '.') == NULL && (url.database == NULL || *url.database == '\0'))
        rc = ob_errf(err, errlen, OUTBOX_EINVAL,
                     "table '%s' has no database: name one in the URL (mysql://.../db) or write "
                     "the table as db.table",
                     o->table);
    else if (make_names(r, o->table, url.database) != 0)
        rc = ob_errf(err, errlen, OUTBOX_ENOMEM, "out of memory");
    else if ((r->m = ob_db_connect_blocking(&cfg, err, errlen)) == NULL)
        rc = OUTBOX_EDB;
    ob_db_url_free(&url);
    if (rc == OUTBOX_OK)
        rc = layout(r, o, err, errlen);
    return rc;
}

int ob_rp_survey(ob_rp_reader *r, uint64_t *count, char *oldest_range, char *oldest_table,
                 size_t len, char *err, size_t errlen) {
    MYSQL_RES *res = NULL;
    ob_buf_reset(&r->sql);
    ob_buf_printf(&r->sql, "SELECT COUNT(*), MIN(o.created_at)%s", r->where.p);
    int rc = query(r, r->sql.p, &res, err, errlen);
    if (rc != OUTBOX_OK)
        return rc;
    MYSQL_ROW row = mysql_fetch_row(res);
    *count = row && row[0] ? strtoull(row[0], NULL, 10) : 0;
    snprintf(oldest_range, len, "%s", row && row[1] ? row[1] : "");
    mysql_free_result(res);
    ob_buf_reset(&r->sql);
    /* ids are UUIDv7, in time order: the first is the oldest, read from the
     * primary key without a scan. */
    ob_buf_printf(&r->sql, "SELECT created_at FROM %s ORDER BY id LIMIT 1", r->qtable);
    if ((rc = query(r, r->sql.p, &res, err, errlen)) != OUTBOX_OK)
        return rc;
    row = mysql_fetch_row(res);
    snprintf(oldest_table, len, "%s", row && row[0] ? row[0] : "");
    mysql_free_result(res);
    return OUTBOX_OK;
}

int ob_rp_next_page(ob_rp_reader *r, int has_after, uint64_t after_seq,
                    const unsigned char *after_id, char *err, size_t errlen) {
    if (r->res) {
        mysql_free_result(r->res);
        r->res = NULL;
    }
    ob_buf_reset(&r->sql);
    ob_rp_page_sql(&r->sql, &r->names, r->where.p, has_after, after_seq, after_id);
    if (r->sql.oom)
        return ob_errf(err, errlen, -1, "out of memory");
    if (query(r, r->sql.p, &r->res, err, errlen) != OUTBOX_OK)
        return -1;
    r->binary = mysql_fetch_fields(r->res)[OB_COL_PAYLOAD].charsetnr == 63;
    return (int)mysql_num_rows(r->res);
}

int ob_rp_row(ob_rp_reader *r, ob_row *row, uint64_t *seq) {
    MYSQL_ROW f = r->res ? mysql_fetch_row(r->res) : NULL;
    if (f == NULL)
        return -1;
    unsigned long *len = mysql_fetch_lengths(r->res);
    memset(row, 0, sizeof(*row));
    row->id = (const unsigned char *)f[OB_COL_ID];
    row->aggregate_type = f[OB_COL_AGGREGATE_TYPE];
    row->aggregate_type_len = len[OB_COL_AGGREGATE_TYPE];
    row->aggregate_id = f[OB_COL_AGGREGATE_ID];
    row->aggregate_id_len = len[OB_COL_AGGREGATE_ID];
    row->event_type = f[OB_COL_EVENT_TYPE];
    row->event_type_len = len[OB_COL_EVENT_TYPE];
    row->payload = f[OB_COL_PAYLOAD];
    row->payload_len = len[OB_COL_PAYLOAD];
    row->headers = f[OB_COL_HEADERS];
    row->headers_len = f[OB_COL_HEADERS] ? len[OB_COL_HEADERS] : 0;
    row->created_at = f[OB_COL_CREATED_AT];
    row->created_at_len = len[OB_COL_CREATED_AT];
    row->attempts = f[OB_COL_ATTEMPTS] ? atoi(f[OB_COL_ATTEMPTS]) : 0;
    row->payload_binary = r->binary;
    *seq = f[8] ? strtoull(f[8], NULL, 10) : 0;
    return len[OB_COL_ID] == 16 ? 0 : -1;
}

void ob_rp_close(ob_rp_reader *r) {
    if (r->res)
        mysql_free_result(r->res);
    if (r->m)
        mysql_close(r->m);
    free(r->qtable);
    free(r->ctable);
    free(r->is_where);
    free(r->cname);
    ob_buf_free(&r->where);
    ob_buf_free(&r->sql);
    memset(r, 0, sizeof(*r));
}
