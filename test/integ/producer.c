/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The producer API on a real MariaDB: ids, one round trip for many entries,
 * the caller's transaction decides, and bad entries insert nothing.
 */
#include "check.h"
#include "integ.h"

static long long questions(MYSQL *m) {
    /* Questions counts statements sent by this session, this one included. */
    return ti_int(m, "SELECT VARIABLE_VALUE FROM information_schema.SESSION_STATUS "
                     "WHERE VARIABLE_NAME = 'QUESTIONS'");
}

static long long rows(MYSQL *m) {
    return ti_int(m, "SELECT COUNT(*) FROM outbox");
}

static outbox_entry entry(const char *type, const char *payload) {
    outbox_entry e = {0};
    e.aggregate_type = "order";
    e.aggregate_id = "42";
    e.event_type = type;
    e.payload = payload;
    return e;
}

static void many_in_one_round_trip(outbox_producer *p, MYSQL *m, MYSQL *other) {
    outbox_entry e[100];
    outbox_id ids[100];
    for (int i = 0; i < 100; i++)
        e[i] = entry("created", "{\"ok\":true}");
    ti_exec(m, "START TRANSACTION");
    long long q0 = questions(m);
    CHECK_EQ(outbox_enqueue_many(p, m, e, 100, ids), OUTBOX_OK);
    long long q1 = questions(m);
    /* q1 - q0 counts the INSERT and the second Questions query. */
    CHECK_EQ(q1 - q0, 2);
    for (int i = 0; i < 100; i++) {
        CHECK(outbox_id_is_v7(&ids[i]));
        if (i)
            CHECK_INT(memcmp(ids[i - 1].b, ids[i].b, 16), <, 0);
    }
    /* Not visible to others before the caller commits. */
    CHECK_EQ(rows(other), 0);
    ti_exec(m, "COMMIT");
    CHECK_EQ(rows(other), 100);
    char hex[33];
    for (int i = 0; i < 16; i++)
        snprintf(hex + 2 * i, 3, "%02x", ids[7].b[i]);
    CHECK_EQ(ti_int(m, "SELECT COUNT(*) FROM outbox WHERE id = X'%s' AND status = 0", hex), 1);
}

static void rollback_leaves_nothing(outbox_producer *p, MYSQL *m) {
    long long before = rows(m);
    outbox_entry e = entry("created", "{}");
    ti_exec(m, "START TRANSACTION");
    CHECK_EQ(outbox_enqueue(p, m, &e, NULL), OUTBOX_OK);
    ti_exec(m, "ROLLBACK");
    CHECK_EQ(rows(m), before);
}

static void bad_entries_insert_nothing(outbox_producer *p, MYSQL *m) {
    long long before = rows(m);
    char long_type[200];
    memset(long_type, 't', 129);
    long_type[129] = '\0';
    outbox_entry batch[3] = {entry("created", "{}"), entry("created", "{}"),
                             entry("created", "{}")};
    ti_exec(m, "START TRANSACTION");

    batch[1].event_type = NULL;
    CHECK_EQ(outbox_enqueue_many(p, m, batch, 3, NULL), OUTBOX_EINVAL);
    CHECK_STR(outbox_producer_errmsg(p), "entry 1: event_type is missing");
    batch[1] = entry("", "{}");
    CHECK_EQ(outbox_enqueue_many(p, m, batch, 3, NULL), OUTBOX_EINVAL);
    CHECK_CONTAINS(outbox_producer_errmsg(p), "event_type is empty");
    batch[1] = entry(long_type, "{}");
    CHECK_EQ(outbox_enqueue_many(p, m, batch, 3, NULL), OUTBOX_ETOOLONG);
    CHECK_CONTAINS(outbox_producer_errmsg(p), "entry 1: event_type has 129 characters");
    batch[2] = entry("created", "{\"a\":");
    batch[1] = entry("created", "{}");
    CHECK_EQ(outbox_enqueue_many(p, m, batch, 3, NULL), OUTBOX_EJSON);
    CHECK_CONTAINS(outbox_producer_errmsg(p), "entry 2: payload is not valid JSON");
    batch[2] = entry("created", "{}");
    batch[0].headers = "[\"not\", \"an object\"]";
    CHECK_EQ(outbox_enqueue_many(p, m, batch, 3, NULL), OUTBOX_EJSON);
    CHECK_CONTAINS(outbox_producer_errmsg(p), "entry 0: headers must be a JSON object");
    batch[0].headers = "{\"bad key\": \"v\"}";
    CHECK_EQ(outbox_enqueue_many(p, m, batch, 3, NULL), OUTBOX_EINVAL);
    CHECK_CONTAINS(outbox_producer_errmsg(p), "cannot be a message header");
    /* What the relay would refuse is refused at enqueue. */
    batch[0].headers = "{\"n\": 5}";
    CHECK_EQ(outbox_enqueue_many(p, m, batch, 3, NULL), OUTBOX_EINVAL);
    CHECK_CONTAINS(outbox_producer_errmsg(p), "entry 0: headers value of 'n' must be a string");
    batch[0].headers = "{\"Nats-Rollup\": \"all\"}";
    CHECK_EQ(outbox_enqueue_many(p, m, batch, 3, NULL), OUTBOX_EINVAL);
    CHECK_CONTAINS(outbox_producer_errmsg(p), "entry 0: headers member 'Nats-Rollup' is refused");
    batch[0].headers = "{\"ce-ID\": \"x\"}";
    CHECK_EQ(outbox_enqueue_many(p, m, batch, 3, NULL), OUTBOX_EINVAL);
    CHECK_CONTAINS(outbox_producer_errmsg(p), "is refused");
    batch[0].headers = NULL;
    batch[1] = entry("has space", "{}");
    CHECK_EQ(outbox_enqueue_many(p, m, batch, 3, NULL), OUTBOX_EINVAL);
    CHECK_CONTAINS(outbox_producer_errmsg(p), "entry 1: event_type 'has space' holds whitespace");
    batch[1] = entry("a*", "{}");
    CHECK_EQ(outbox_enqueue_many(p, m, batch, 3, NULL), OUTBOX_EINVAL);
    CHECK_CONTAINS(outbox_producer_errmsg(p), "wildcards");
    batch[1] = entry("created", "{}");
    batch[1].aggregate_type = "bad\xff";
    CHECK_EQ(outbox_enqueue_many(p, m, batch, 3, NULL), OUTBOX_EINVAL);
    CHECK_CONTAINS(outbox_producer_errmsg(p), "aggregate_type is not valid UTF-8");
    batch[1] = entry("created", "{}");
    batch[0].aggregate_id = NULL;
    CHECK_EQ(outbox_enqueue_many(p, m, batch, 3, NULL), OUTBOX_EINVAL);
    CHECK_CONTAINS(outbox_producer_errmsg(p), "aggregate_id is missing");

    /* Nothing was inserted, and the caller's transaction is still usable. */
    CHECK_EQ(rows(m), before);
    batch[0].aggregate_id = "7";
    CHECK_EQ(outbox_enqueue_many(p, m, batch, 3, NULL), OUTBOX_OK);
    ti_exec(m, "COMMIT");
    CHECK_EQ(rows(m), before + 3);

    /* 128 two-byte characters fit a VARCHAR(128). */
    char wide[300] = "";
    for (int i = 0; i < 128; i++)
        strcat(wide, "\xc3\xa9");
    outbox_entry w = entry(wide, "{}");
    CHECK_EQ(outbox_enqueue(p, m, &w, NULL), OUTBOX_OK);
    CHECK_EQ(rows(m), before + 4);
}

#define TP "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

/* The traced calls add the trace to each entry's headers, keeping the
 * entry's own text, and refuse a malformed trace with nothing inserted. */
static void traced_entries(outbox_producer *p, MYSQL *m) {
    long long before = rows(m);
    outbox_entry e[3] = {entry("traced", "{}"), entry("traced", "{}"), entry("traced", "{}")};
    e[1].headers = "{ \"x-tenant\" : \"acme\" } ";
    e[2].headers = "{}";
    CHECK_EQ(outbox_enqueue_many_traced(p, m, e, 3, TP, "rojo=1,congo=2", NULL), OUTBOX_OK);
    CHECK_EQ(ti_int(m,
                    "SELECT COUNT(*) FROM outbox WHERE event_type = 'traced' AND headers = "
                    "'{\"traceparent\":\"%s\",\"tracestate\":\"rojo=1,congo=2\"}'",
                    TP),
             2);
    CHECK_EQ(ti_int(m,
                    "SELECT COUNT(*) FROM outbox WHERE headers = '{ \"x-tenant\" : \"acme\" "
                    ",\"traceparent\":\"%s\",\"tracestate\":\"rojo=1,congo=2\"}'",
                    TP),
             1);
    outbox_entry one = entry("traced", "{}");
    CHECK_EQ(outbox_enqueue_traced(p, m, &one, TP, "", NULL), OUTBOX_OK); /* "": none */
    CHECK_EQ(
        ti_int(m, "SELECT COUNT(*) FROM outbox WHERE headers = '{\"traceparent\":\"%s\"}'", TP), 1);
    CHECK_EQ(rows(m), before + 4);

    /* Refused at once: the trace itself, and entries that cannot take it. */
    CHECK_EQ(outbox_enqueue_traced(p, m, &one, NULL, NULL, NULL), OUTBOX_EINVAL);
    CHECK_CONTAINS(outbox_producer_errmsg(p), "traceparent is missing");
    CHECK_EQ(
        outbox_enqueue_traced(p, m, &one, "00-4bf92f3577b34da6-00f067aa0ba902b7-01", NULL, NULL),
        OUTBOX_EINVAL);
    CHECK_CONTAINS(outbox_producer_errmsg(p), "is not W3C Trace Context: shorter than");
    CHECK_EQ(outbox_enqueue_traced(p, m, &one, TP, "Rojo=1", NULL), OUTBOX_EINVAL);
    CHECK_CONTAINS(outbox_producer_errmsg(p), "tracestate 'Rojo=1' is not W3C Trace Context");
    e[1].headers = "{\"TraceParent\":\"" TP "\"}";
    CHECK_EQ(outbox_enqueue_many_traced(p, m, e, 3, TP, NULL, NULL), OUTBOX_EINVAL);
    CHECK_CONTAINS(outbox_producer_errmsg(p), "entry 1: headers already has a 'TraceParent'");
    e[1].headers = "[1]";
    CHECK_EQ(outbox_enqueue_many_traced(p, m, e, 3, TP, NULL, NULL), OUTBOX_EJSON);
    CHECK_CONTAINS(outbox_producer_errmsg(p), "entry 1: headers must be a JSON object");
    /* The same checks on a trace written into the headers by hand. */
    e[1].headers = "{\"traceparent\":\"00-00000000000000000000000000000000-00f067aa0ba902b7-01\"}";
    CHECK_EQ(outbox_enqueue_many(p, m, e, 3, NULL), OUTBOX_EINVAL);
    CHECK_CONTAINS(outbox_producer_errmsg(p),
                   "entry 1: headers member 'traceparent' is refused: not a W3C traceparent: the "
                   "trace-id is all zeros");
    e[1].headers = "{\"tracestate\":\"a=1\"}";
    CHECK_EQ(outbox_enqueue_many(p, m, e, 3, NULL), OUTBOX_EINVAL);
    CHECK_CONTAINS(outbox_producer_errmsg(p), "a tracestate without a traceparent");
    e[1].headers = "{\"traceparent\":\"" TP "\",\"tracestate\":\"a=1\"}";
    CHECK_EQ(outbox_enqueue_many(p, m, e, 3, NULL), OUTBOX_OK);
    CHECK_EQ(rows(m), before + 7);
}

static void server_checks_json_when_validation_is_off(MYSQL *m) {
    outbox_producer_options o;
    outbox_producer_options_init(&o);
    o.validate_payload = 0;
    outbox_producer *p = NULL;
    CHECK_EQ(outbox_producer_create(&p, &o, NULL, 0), OUTBOX_OK);
    long long before = rows(m);
    outbox_entry e[2] = {entry("created", "{}"), entry("created", "not json")};
    CHECK_EQ(outbox_enqueue_many(p, m, e, 2, NULL), OUTBOX_EDB);
    CHECK_CONTAINS(outbox_producer_errmsg(p), "INSERT into the outbox failed");
    CHECK_EQ(rows(m), before);
    outbox_producer_destroy(p);
}

static void binary_payloads(void) {
    outbox_schema_options so;
    outbox_schema_options_init(&so);
    so.binary = 1;
    MYSQL *m = ti_db_fresh("it_producer_bin", &so);
    outbox_producer_options o;
    outbox_producer_options_init(&o);
    o.binary_payload = 1;
    outbox_producer *p = NULL;
    CHECK_EQ(outbox_producer_create(&p, &o, NULL, 0), OUTBOX_OK);
    const char bytes[6] = {'\0', '\'', '\\', (char)0xff, '\n', 'z'};
    outbox_entry e = entry("blob", bytes);
    e.payload_len = sizeof(bytes);
    CHECK_EQ(outbox_enqueue(p, m, &e, NULL), OUTBOX_OK);
    CHECK_EQ(ti_int(m, "SELECT COUNT(*) FROM outbox WHERE payload = X'00275cff0a7a'"), 1);
    outbox_producer_destroy(p);
    mysql_close(m);
}

int main(void) {
    MYSQL *m = ti_db_fresh("it_producer", NULL);
    MYSQL *other = ti_db_connect("it_producer");
    outbox_producer *p = NULL;
    outbox_producer_options o;
    outbox_producer_options_init(&o);
    o.table = "bad name";
    char err[256];
    CHECK_EQ(outbox_producer_create(&p, &o, err, sizeof(err)), OUTBOX_EINVAL);
    CHECK_CONTAINS(err, "table name");
    CHECK_EQ(outbox_producer_create(&p, NULL, NULL, 0), OUTBOX_OK);
    many_in_one_round_trip(p, m, other);
    rollback_leaves_nothing(p, m);
    bad_entries_insert_nothing(p, m);
    traced_entries(p, m);
    server_checks_json_when_validation_is_off(m);
    binary_payloads();
    outbox_producer_destroy(p);
    mysql_close(other);
    mysql_close(m);
    puts("producer: ok");
    return 0;
}
