/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The producer: checks entries, then writes them with one multi-row INSERT on
 * the caller's connection, inside the caller's transaction.
 */
#include "outbox/producer.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "json_scan.h"
#include "log.h"
#include "message.h"
#include "sql.h"
#include "subject.h"
#include "trace_context.h"
#include "url.h"

struct outbox_producer {
    outbox_producer_options o;
    char *qtable;
    ob_buf sql;
    ob_buf hdr; /* an entry's headers with the trace added */
    char errmsg[512];
};

void outbox_producer_options_init(outbox_producer_options *o) {
    memset(o, 0, sizeof(*o));
    o->table = "outbox";
    o->validate_payload = 1;
    o->validate_headers = 1;
    o->binary_payload = 0;
}

int outbox_producer_create(outbox_producer **out, const outbox_producer_options *o, char *errbuf,
                           size_t errlen) {
    outbox_producer_options d;
    char err[256];
    *out = NULL;
    if (o == NULL) {
        outbox_producer_options_init(&d);
        o = &d;
    }
    if (ob_sql_check_table(o->table, err, sizeof(err)) != 0)
        return ob_errf(errbuf, errlen, OUTBOX_EINVAL, "%s", err);
    outbox_producer *p = calloc(1, sizeof(*p));
    if (p == NULL)
        return ob_errf(errbuf, errlen, OUTBOX_ENOMEM, "out of memory");
    p->o = *o;
    p->o.table = NULL;
    ob_buf b = OB_BUF_INIT;
    ob_sql_quote_table(&b, o->table);
    p->qtable = b.p;
    if (p->qtable == NULL) {
        free(p);
        return ob_errf(errbuf, errlen, OUTBOX_ENOMEM, "out of memory");
    }
    *out = p;
    return OUTBOX_OK;
}

void outbox_producer_destroy(outbox_producer *p) {
    if (p == NULL)
        return;
    free(p->qtable);
    ob_buf_free(&p->sql);
    ob_buf_free(&p->hdr);
    free(p);
}

const char *outbox_producer_errmsg(const outbox_producer *p) {
    return p->errmsg;
}

static int perr(outbox_producer *p, int status, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->errmsg, sizeof(p->errmsg), fmt, ap);
    va_end(ap);
    return status;
}

static int check_field(outbox_producer *p, size_t idx, const char *name, const char *v,
                       int required) {
    if (v == NULL)
        return perr(p, OUTBOX_EINVAL, "entry %zu: %s is missing", idx, name);
    size_t n = strlen(v);
    if (required && n == 0)
        return perr(p, OUTBOX_EINVAL, "entry %zu: %s is empty", idx, name);
    long chars = ob_utf8_chars(v, n);
    if (chars < 0)
        return perr(p, OUTBOX_EINVAL, "entry %zu: %s is not valid UTF-8", idx, name);
    if (chars > OUTBOX_FIELD_MAX_CHARS)
        return perr(p, OUTBOX_ETOOLONG, "entry %zu: %s has %ld characters; the limit is %d", idx,
                    name, chars, OUTBOX_FIELD_MAX_CHARS);
    return OUTBOX_OK;
}

static int check_headers(outbox_producer *p, size_t idx, const char *h, size_t n) {
    json_error_t jerr;
    json_t *root = json_loadb(h, n, 0, &jerr);
    if (root == NULL)
        return perr(p, OUTBOX_EJSON, "entry %zu: headers is not valid JSON: %s (column %d)", idx,
                    jerr.text, jerr.column);
    int rc = OUTBOX_OK;
    ob_trace_seen trace = {0, 0};
    if (!json_is_object(root)) {
        rc = perr(p, OUTBOX_EJSON, "entry %zu: headers must be a JSON object", idx);
    } else {
        const char *key;
        json_t *v;
        json_object_foreach(root, key, v) {
            if (!ob_header_key_ok(key)) {
                rc = perr(p, OUTBOX_EINVAL,
                          "entry %zu: headers key '%.64s' cannot be a message header (printable "
                          "ASCII without ':' or space)",
                          idx, key);
                break;
            }
            if (!json_is_string(v)) { /* the relay refuses the row otherwise */
                rc = perr(p, OUTBOX_EINVAL, "entry %zu: headers value of '%.64s' must be a string",
                          idx, key);
                break;
            }
            const char *s = json_string_value(v);
            size_t sl = json_string_length(v);
            if (!ob_header_value_ok(s, sl)) {
                rc = perr(p, OUTBOX_EINVAL,
                          "entry %zu: headers value of '%.64s' contains CR, LF or NUL", idx, key);
                break;
            }
            char twhy[160];
            const char *why = ob_header_reserved(key, s);
            if (why == NULL)
                why = ob_trace_member(&trace, key, s, sl, twhy, sizeof(twhy));
            if (why != NULL) {
                rc = perr(p, OUTBOX_EINVAL, "entry %zu: headers member '%.64s' is refused: %s", idx,
                          key, why);
                break;
            }
        }
        const char *unpaired = rc == OUTBOX_OK ? ob_trace_done(&trace) : NULL;
        if (unpaired != NULL)
            rc = perr(p, OUTBOX_EINVAL, "entry %zu: headers member 'tracestate' is refused: %s",
                      idx, unpaired);
    }
    json_decref(root);
    return rc;
}

static int check_entry(outbox_producer *p, size_t idx, const outbox_entry *e) {
    int rc;
    if ((rc = check_field(p, idx, "aggregate_type", e->aggregate_type, 1)) != OUTBOX_OK ||
        (rc = check_field(p, idx, "aggregate_id", e->aggregate_id, 0)) != OUTBOX_OK ||
        (rc = check_field(p, idx, "event_type", e->event_type, 1)) != OUTBOX_OK)
        return rc;
    /* The relay would refuse these rows: say so now, not at delivery. */
    char why[256];
    if (ob_subject_check(e->aggregate_type, strlen(e->aggregate_type), "aggregate_type", why,
                         sizeof(why)) != 0 ||
        ob_subject_check(e->event_type, strlen(e->event_type), "event_type", why, sizeof(why)) != 0)
        return perr(p, OUTBOX_EINVAL, "entry %zu: %s (it becomes a NATS subject)", idx, why);
    if (e->payload == NULL)
        return perr(p, OUTBOX_EINVAL, "entry %zu: payload is missing", idx);
    size_t plen = e->payload_len ? e->payload_len : strlen(e->payload);
    if (!p->o.binary_payload && p->o.validate_payload) {
        ob_json_error jerr;
        if (ob_json_scan(e->payload, plen, &jerr) != 0)
            return perr(p, OUTBOX_EJSON, "entry %zu: payload is not valid JSON: %s (byte %zu)", idx,
                        jerr.why, jerr.offset);
    }
    if (e->headers != NULL && p->o.validate_headers) {
        size_t hlen = e->headers_len ? e->headers_len : strlen(e->headers);
        if ((rc = check_headers(p, idx, e->headers, hlen)) != OUTBOX_OK)
            return rc;
    }
    return OUTBOX_OK;
}

/* The trace of a traced call, checked once for the whole batch. */
typedef struct trace_args {
    const char *parent; /* NULL: an untraced call */
    const char *state;  /* NULL: none (W3C: an empty list is not sent) */
} trace_args;

static int check_trace_args(outbox_producer *p, const trace_args *t) {
    const char *bad;
    if (t->parent == NULL)
        return perr(p, OUTBOX_EINVAL, "traceparent is missing (a traced call needs one)");
    if ((bad = ob_traceparent_invalid(t->parent, strlen(t->parent))) != NULL)
        return perr(p, OUTBOX_EINVAL, "traceparent '%.64s' is not W3C Trace Context: %s", t->parent,
                    bad);
    if (t->state != NULL && (bad = ob_tracestate_invalid(t->state, strlen(t->state))) != NULL)
        return perr(p, OUTBOX_EINVAL, "tracestate '%.64s' is not W3C Trace Context: %s", t->state,
                    bad);
    return OUTBOX_OK;
}

/* An entry of a traced call: its headers, if any, are an object that does
 * not carry a trace of its own. */
static int check_entry_trace(outbox_producer *p, size_t idx, const outbox_entry *e) {
    if (e->headers == NULL)
        return OUTBOX_OK;
    json_error_t jerr;
    json_t *root =
        json_loadb(e->headers, e->headers_len ? e->headers_len : strlen(e->headers), 0, &jerr);
    int rc = OUTBOX_OK;
    if (root == NULL || !json_is_object(root)) {
        rc = perr(p, OUTBOX_EJSON, "entry %zu: headers must be a JSON object to add the trace to",
                  idx);
    } else {
        const char *key;
        json_t *v;
        json_object_foreach(root, key, v) {
            if (ob_trace_header_of(key) != OB_TRACE_NONE) {
                rc = perr(p, OUTBOX_EINVAL,
                          "entry %zu: headers already has a '%.64s' member, and the call gives "
                          "the trace: give it once",
                          idx, key);
                break;
            }
        }
    }
    json_decref(root);
    return rc;
}

/* Appends `s` as a JSON string; a checked tracestate is printable ASCII,
 * so '"' and '\\' are all that need escaping. */
static void put_json_ascii(ob_buf *b, const char *s) {
    ob_buf_putc(b, '"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            ob_buf_putc(b, '\\');
        ob_buf_putc(b, *s);
    }
    ob_buf_putc(b, '"');
}

/* The entry's headers with the trace members added at the end of the
 * object, the producer's own text kept as it is. The headers were checked
 * to be an object (check_entry_trace), so their last '}' closes it. */
static void traced_headers(ob_buf *out, const outbox_entry *e, const trace_args *t) {
    ob_buf_reset(out);
    if (e->headers == NULL) {
        ob_buf_putc(out, '{');
    } else {
        size_t n = e->headers_len ? e->headers_len : strlen(e->headers);
        while (n > 0 && e->headers[n - 1] != '}')
            n--;
        size_t open = 0;
        while (open < n && e->headers[open] != '{')
            open++;
        ob_buf_append(out, e->headers, n - 1);
        /* an object with members gets a comma before the new ones */
        size_t k = open + 1;
        while (k + 1 < n && (e->headers[k] == ' ' || e->headers[k] == '\t' ||
                             e->headers[k] == '\r' || e->headers[k] == '\n'))
            k++;
        if (k + 1 < n)
            ob_buf_putc(out, ',');
    }
    ob_buf_puts(out, "\"traceparent\":");
    put_json_ascii(out, t->parent);
    if (t->state != NULL) {
        ob_buf_puts(out, ",\"tracestate\":");
        put_json_ascii(out, t->state);
    }
    ob_buf_putc(out, '}');
}

static void put_string(outbox_producer *p, MYSQL *conn, const char *s, size_t n) {
    if (ob_buf_reserve(&p->sql, 2 * n + 3) != 0)
        return;
    ob_buf_putc(&p->sql, '\'');
    unsigned long w = mysql_real_escape_string(conn, p->sql.p + p->sql.len, s, (unsigned long)n);
    p->sql.len += w;
    p->sql.p[p->sql.len] = '\0';
    ob_buf_putc(&p->sql, '\'');
}

static int build(outbox_producer *p, MYSQL *conn, const outbox_entry *entries, size_t n,
                 const trace_args *t, outbox_id *ids_out, const char **sql, size_t *sql_len) {
    p->errmsg[0] = '\0';
    if (conn == NULL || entries == NULL || n == 0)
        return perr(p, OUTBOX_EINVAL, "a connection and at least one entry are required");
    int rc;
    if (t != NULL && (rc = check_trace_args(p, t)) != OUTBOX_OK)
        return rc;
    for (size_t i = 0; i < n; i++) {
        if ((rc = check_entry(p, i, &entries[i])) != OUTBOX_OK ||
            (t != NULL && (rc = check_entry_trace(p, i, &entries[i])) != OUTBOX_OK))
            return rc;
    }
    ob_buf_reset(&p->sql);
    ob_buf_puts(&p->sql, "INSERT INTO ");
    ob_buf_puts(&p->sql, p->qtable);
    ob_buf_puts(&p->sql,
                " (id, aggregate_type, aggregate_id, event_type, payload, headers) VALUES ");
    for (size_t i = 0; i < n; i++) {
        const outbox_entry *e = &entries[i];
        outbox_id id;
        if (e->id)
            id = *e->id;
        else
            outbox_id_new(&id);
        if (ids_out)
            ids_out[i] = id;
        ob_buf_puts(&p->sql, i ? ",(X'" : "(X'");
        ob_buf_hex(&p->sql, id.b, 16);
        ob_buf_puts(&p->sql, "',");
        put_string(p, conn, e->aggregate_type, strlen(e->aggregate_type));
        ob_buf_putc(&p->sql, ',');
        put_string(p, conn, e->aggregate_id, strlen(e->aggregate_id));
        ob_buf_putc(&p->sql, ',');
        put_string(p, conn, e->event_type, strlen(e->event_type));
        ob_buf_putc(&p->sql, ',');
        size_t plen = e->payload_len ? e->payload_len : strlen(e->payload);
        if (p->o.binary_payload) {
            ob_buf_puts(&p->sql, "X'");
            ob_buf_hex(&p->sql, (const unsigned char *)e->payload, plen);
            ob_buf_putc(&p->sql, '\'');
        } else {
            put_string(p, conn, e->payload, plen);
        }
        ob_buf_putc(&p->sql, ',');
        if (t != NULL) {
            traced_headers(&p->hdr, e, t);
            if (p->hdr.oom)
                p->sql.oom = 1;
            else
                put_string(p, conn, p->hdr.p, p->hdr.len);
        } else if (e->headers)
            put_string(p, conn, e->headers, e->headers_len ? e->headers_len : strlen(e->headers));
        else
            ob_buf_puts(&p->sql, "NULL");
        ob_buf_putc(&p->sql, ')');
    }
    if (p->sql.oom)
        return perr(p, OUTBOX_ENOMEM, "out of memory building the INSERT");
    *sql = p->sql.p;
    *sql_len = p->sql.len;
    return OUTBOX_OK;
}

int outbox_producer_build(outbox_producer *p, MYSQL *conn, const outbox_entry *entries, size_t n,
                          outbox_id *ids_out, const char **sql, size_t *sql_len) {
    return build(p, conn, entries, n, NULL, ids_out, sql, sql_len);
}

int outbox_producer_build_traced(outbox_producer *p, MYSQL *conn, const outbox_entry *entries,
                                 size_t n, const char *traceparent, const char *tracestate,
                                 outbox_id *ids_out, const char **sql, size_t *sql_len) {
    trace_args t = {traceparent, tracestate && *tracestate ? tracestate : NULL};
    return build(p, conn, entries, n, &t, ids_out, sql, sql_len);
}

static int enqueue(outbox_producer *p, MYSQL *conn, const outbox_entry *entries, size_t n,
                   const trace_args *t, outbox_id *ids_out) {
    const char *sql;
    size_t len;
    int rc = build(p, conn, entries, n, t, ids_out, &sql, &len);
    if (rc != OUTBOX_OK)
        return rc;
    if (mysql_real_query(conn, sql, (unsigned long)len) != 0)
        return perr(p, OUTBOX_EDB, "INSERT into the outbox failed: %u %s", mysql_errno(conn),
                    mysql_error(conn));
    return OUTBOX_OK;
}

int outbox_enqueue_many(outbox_producer *p, MYSQL *conn, const outbox_entry *entries, size_t n,
                        outbox_id *ids_out) {
    return enqueue(p, conn, entries, n, NULL, ids_out);
}

int outbox_enqueue(outbox_producer *p, MYSQL *conn, const outbox_entry *e, outbox_id *id_out) {
    return enqueue(p, conn, e, 1, NULL, id_out);
}

int outbox_enqueue_many_traced(outbox_producer *p, MYSQL *conn, const outbox_entry *entries,
                               size_t n, const char *traceparent, const char *tracestate,
                               outbox_id *ids_out) {
    trace_args t = {traceparent, tracestate && *tracestate ? tracestate : NULL};
    return enqueue(p, conn, entries, n, &t, ids_out);
}

int outbox_enqueue_traced(outbox_producer *p, MYSQL *conn, const outbox_entry *e,
                          const char *traceparent, const char *tracestate, outbox_id *id_out) {
    trace_args t = {traceparent, tracestate && *tracestate ? tracestate : NULL};
    return enqueue(p, conn, e, 1, &t, id_out);
}

/* One blocking connect to node i of u; NULL with err set on failure. */
static MYSQL *connect_node(const ob_db_url *u, int i, char *err, size_t errlen) {
    MYSQL *m = mysql_init(NULL);
    if (m == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    mysql_options(m, MYSQL_SET_CHARSET_NAME, "utf8mb4");
    const char *host = u->socket ? "localhost" : u->nodes[i].host;
    if (mysql_real_connect(m, host, u->user, u->password, u->database,
                           u->socket ? 0 : u->nodes[i].port, u->socket, 0) == NULL) {
        if (u->n_nodes > 1)
            snprintf(err, errlen, "cannot connect to node %d of %d (%s): %s", i + 1, u->n_nodes,
                     host, mysql_error(m));
        else
            snprintf(err, errlen, "cannot connect to %s: %s", host, mysql_error(m));
        mysql_close(m);
        return NULL;
    }
    return m;
}

MYSQL *outbox_connect(const char *url, char *err, size_t errlen) {
    ob_db_url u;
    if (ob_db_settings(url, NULL, &u, err, errlen) != 0)
        return NULL;
    /* Several nodes: the first that accepts the connection, in order; the
     * message is the last node's. */
    MYSQL *m = NULL;
    for (int i = 0; i < (u.n_nodes > 0 ? u.n_nodes : 1) && m == NULL; i++)
        m = connect_node(&u, i, err, errlen);
    ob_db_url_free(&u);
    return m;
}
