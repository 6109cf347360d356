/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The relay handle (relay/relay.c) made by outbox_relay_create, without
 * servers: the fake broker in place of the link, fake connections in place
 * of MariaDB (relay_harness.h). What the relay itself decides: readiness
 * fanned out to every reader once the loop delivers it, a refusal that
 * lasts counted as one outage, a fatal error halting every reader with its
 * reason, what /readyz is told (outbox_relay_paused and the stats), and the
 * stop closing every part.
 */
#include "relay_harness.h"

/* Two workers connected, the plain lease's first look done, the broker
 * not ready yet: both wait for it. */
static outbox_relay *two_workers_waiting(void) {
    outbox_relay_options o = options(2);
    outbox_relay *r = make(&o);
    CHECK_EQ(r->nreaders, 2);
    answer("worker 0", FAKE_CONNECT);
    answer("worker 1", FAKE_CONNECT);
    answer_plain_lease();
    RUN_UNTIL(ob_lease_checked(r->order.lease));
    CHECK_STR(reader_state(r, 0), "broker-wait");
    CHECK_STR(reader_state(r, 1), "broker-wait");
    return r;
}

/* The broker comes up: the change reaches the relay from the loop, after
 * the call that made it, and the relay tells every reader, which fetch. */
static outbox_relay *two_workers_fetching(void) {
    outbox_relay *r = two_workers_waiting();
    fake_broker *b = fake_broker_last();
    fake_broker_set_ready(b, 1);
    CHECK_EQ(stats_of(r).broker_ready, 0); /* posted, not told inline */
    CHECK_EQ(fake_broker_told(b), 0);
    RUN_UNTIL(fake_broker_told(b) == 1);
    CHECK_EQ(stats_of(r).broker_ready, 1);
    CHECK_CONTAINS(fake_db_sql(pending("worker 0", FAKE_QUERY)), "START TRANSACTION");
    CHECK_CONTAINS(fake_db_sql(pending("worker 1", FAKE_QUERY)), "START TRANSACTION");
    return r;
}

/* A reader's ack handler tells the broker it refused a message (a full
 * stream): the loss of readiness is delivered after the handler returned,
 * never inside it, and reaches both readers; the rows go back without an
 * attempt, and /readyz names the refusal. */
static void a_refusal_reaches_every_reader_after_the_ack(void) {
    outbox_relay *r = two_workers_fetching();
    fake_broker *b = fake_broker_last();
    ob_db *w0 = fake_db_named("worker 0"), *w1 = fake_db_named("worker 1");
    add_rows(w0, 2);
    fake_db_complete(w0, 1, 0, NULL, 0);
    add_rows(w1, 1);
    fake_db_complete(w1, 1, 0, NULL, 0);
    CHECK_EQ(fake_broker_published(b), 3);
    CHECK_EQ(fake_broker_worker(b, 0), 0);
    CHECK_EQ(fake_broker_worker(b, 2), 1);
    CHECK_EQ(stats_of(r).in_flight, 3);
    CHECK(outbox_relay_paused(r) == NULL);
    /* An answer goes to the reader whose publisher number it names. */
    fake_broker_answer(b, 2, OB_ACKED_STORED);
    CHECK_CONTAINS(fake_db_sql(pending("worker 1", FAKE_QUERY)), "UPDATE");
    CHECK_STR(reader_state(r, 0), "publishing");
    answer("worker 1", FAKE_QUERY);
    CHECK_EQ(stats_of(r).acked, 1);
    CHECK_CONTAINS(fake_db_sql(pending("worker 1", FAKE_QUERY)), "START TRANSACTION");
    add_rows(w1, 1);
    fake_db_complete(w1, 1, 0, NULL, 0);
    CHECK_EQ(fake_broker_published(b), 4);
    CHECK_EQ(fake_broker_worker(b, 3), 1);

    fake_broker_blame(b, OB_BLAME_BROKER, "maximum bytes exceeded");
    fake_broker_answer(b, 0, OB_ACKED_ERROR);
    CHECK_EQ(fake_broker_refusals(b), 1);
    /* Inside the ack: nothing told yet, the batches go on. */
    CHECK_EQ(stats_of(r).broker_ready, 1);
    CHECK_STR(reader_state(r, 0), "publishing");
    CHECK_STR(reader_state(r, 1), "publishing");
    RUN_UNTIL(fake_broker_told(b) == 2);
    CHECK_EQ(fake_broker_reentered(b), 0);
    outbox_stats s = stats_of(r);
    CHECK_EQ(s.broker_ready, 0);
    CHECK_EQ(s.broker_outages, 1);
    /* Both readers heard it: what was open goes back, nothing is written. */
    CHECK_CONTAINS(fake_db_sql(pending("worker 0", FAKE_QUERY)), "ROLLBACK");
    CHECK_CONTAINS(fake_db_sql(pending("worker 1", FAKE_QUERY)), "ROLLBACK");
    answer("worker 0", FAKE_QUERY);
    answer("worker 1", FAKE_QUERY);
    s = stats_of(r);
    CHECK_EQ(s.failed, 0);
    CHECK_EQ(s.released, 3); /* the refused row and the two open */
    CHECK_EQ(s.in_flight, 0);
    CHECK_STR(reader_state(r, 0), "broker-wait");
    CHECK_STR(reader_state(r, 1), "broker-wait");
    CHECK_STR(outbox_relay_paused(r), "maximum bytes exceeded");

    /* The refusal lasts: the broker tries again and is refused again, with
     * no message stored between. One outage, not one per try. */
    fake_broker_set_ready(b, 1);
    RUN_UNTIL(fake_broker_told(b) == 3);
    fake_broker_ops.refused(b, "maximum bytes exceeded");
    RUN_UNTIL(fake_broker_told(b) == 4);
    CHECK_EQ(stats_of(r).broker_outages, 1);
    /* A message stored ends it; the next refusal is another outage. */
    fake_broker_stored(b);
    CHECK(outbox_relay_paused(r) == NULL);
    fake_broker_set_ready(b, 1);
    RUN_UNTIL(fake_broker_told(b) == 5);
    fake_broker_ops.refused(b, "insufficient resources");
    RUN_UNTIL(fake_broker_told(b) == 6);
    CHECK_EQ(stats_of(r).broker_outages, 2);
    CHECK_STR(outbox_relay_paused(r), "insufficient resources");
    CHECK_EQ(fake_broker_reentered(b), 0);
    stop_and_destroy(r);
}

/* The broker cannot go on (credentials refused at the first connection):
 * the relay reports it once, with the broker's reason, and every reader
 * halts; it claims nothing more, even when the broker comes up. */
static void a_fatal_broker_halts_every_reader_with_its_reason(void) {
    outbox_relay *r = two_workers_waiting();
    fake_broker *b = fake_broker_last();
    fake_broker_fatal(b, "nats: authorization violation");
    CHECK_EQ(seen.fatals, 1);
    CHECK_STR(seen.why, "nats: authorization violation");
    CHECK_STR(outbox_relay_errmsg(r), "nats: authorization violation");
    CHECK_EQ(logged("relay cannot go on: nats: authorization violation"), 1);
    CHECK_STR(reader_state(r, 0), "halted");
    CHECK_STR(reader_state(r, 1), "halted");
    /* A second cause changes nothing: the first is the one reported. */
    fake_broker_fatal(b, "nats: something else");
    CHECK_EQ(seen.fatals, 1);
    CHECK_STR(outbox_relay_errmsg(r), "nats: authorization violation");
    CHECK_EQ(logged("relay cannot go on"), 1);
    fake_broker_set_ready(b, 1);
    RUN_UNTIL(fake_broker_told(b) == 1);
    for (int i = 0; i < 20; i++)
        uv_run(&loop, UV_RUN_NOWAIT);
    CHECK(!has_pending("worker 0", FAKE_QUERY));
    CHECK(!has_pending("worker 1", FAKE_QUERY));
    CHECK_STR(reader_state(r, 0), "halted");
    stop_and_destroy(r);
}

/* What /readyz reads (outbox_relay_paused, and the stats it falls back
 * on): nothing connected yet; the database node outside the primary
 * component; the broker's refusal, which comes first while it holds; the
 * stream deleted under the relay. */
static void readyz_is_told_what_holds_delivery_back(void) {
    outbox_relay_options o = options(1);
    outbox_relay *r = make(&o);
    fake_broker *b = fake_broker_last();
    outbox_stats s = stats_of(r);
    CHECK_EQ(s.broker_ready, 0);
    CHECK_EQ(s.db_connected, 0);
    CHECK(outbox_relay_paused(r) == NULL);
    answer("worker 0", FAKE_CONNECT);
    CHECK_EQ(stats_of(r).db_connected, 1);

    static const char *const cut_off[] = {"wsrep_on",
                                          "ON",
                                          "wsrep_provider_name",
                                          "Galera",
                                          "wsrep_cluster_status",
                                          "non-Primary",
                                          "wsrep_ready",
                                          "OFF",
                                          NULL};
    answer("cluster", FAKE_CONNECT);
    answer_watch(cut_off);
    CHECK_EQ(stats_of(r).db_node_unready, 1);
    CHECK_STR(outbox_relay_paused(r), "the database node cannot serve: the node is not ready "
                                      "(wsrep_ready OFF, cluster status non-Primary)");

    fake_broker_ops.refused(b, "maximum messages exceeded");
    CHECK_STR(outbox_relay_paused(r), "maximum messages exceeded");
    fake_broker_stored(b);
    CHECK_CONTAINS(outbox_relay_paused(r), "the database node cannot serve");

    fake_broker_store_missing(b, 1);
    s = stats_of(r);
    CHECK_EQ(s.stream_missing, 1);
    CHECK_EQ(s.stream_losses, 1);
    fake_broker_store_missing(b, 0);
    s = stats_of(r);
    CHECK_EQ(s.stream_missing, 0);
    CHECK_EQ(s.stream_losses, 1);

    /* An answer for a publisher the relay does not have (the reply subject
     * comes from the broker) is dropped. */
    ob_ack stray;
    memset(&stray, 0, sizeof(stray));
    stray.worker = 7;
    stray.result = OB_ACKED_STORED;
    fake_broker_answer_raw(b, &stray);
    CHECK_EQ(stats_of(r).acked, 0);
    stop_and_destroy(r);
}

/* The handle's life cycle: each call in the wrong phase is refused with a
 * message, and a relay made but never started is destroyed, its broker
 * closed, nothing left on the loop. */
static void calls_out_of_phase_are_refused(void) {
    outbox_relay_options o = options(1);
    outbox_relay *r = NULL;
    char err[256];
    memset(&seen, 0, sizeof(seen));
    CHECK_EQ(outbox_relay_create(&r, &loop, &o, err, sizeof(err)), OUTBOX_OK);
    CHECK_EQ(outbox_relay_stop(r, on_stopped, NULL), OUTBOX_ESTATE);
    CHECK_STR(outbox_relay_errmsg(r), "relay is not running");
    int closed = fake_broker_closed_count();
    CHECK_EQ(outbox_relay_destroy(r), OUTBOX_OK);
    CHECK_EQ(fake_broker_closed_count(), closed + 1);
    CHECK_EQ(fake_db_open_count(), 0);

    r = make(&o);
    CHECK_EQ(outbox_relay_start(r), OUTBOX_ESTATE);
    CHECK_STR(outbox_relay_errmsg(r), "relay already started");
    CHECK_EQ(outbox_relay_destroy(r), OUTBOX_ESTATE);
    CHECK_CONTAINS(outbox_relay_errmsg(r), "stop it and destroy it from the stop callback");
    stop_and_destroy(r);
}

/* A graceful stop waits for the answers in flight until the shutdown
 * timeout, then gives back what is unanswered (pending again, no attempt)
 * and closes every part; the stop callback runs once. */
static void a_stop_gives_back_what_is_unanswered_at_the_deadline(void) {
    outbox_relay *r = two_workers_fetching();
    fake_broker *b = fake_broker_last();
    add_rows(fake_db_named("worker 0"), 1);
    fake_db_complete(fake_db_named("worker 0"), 1, 0, NULL, 0);
    CHECK_EQ(fake_broker_published(b), 1);
    int closed = fake_broker_closed_count();
    CHECK_EQ(outbox_relay_stop(r, on_stopped, NULL), OUTBOX_OK);
    CHECK_EQ(r->phase, R_STOPPING);
    finish_stop(r, closed);
    CHECK_EQ(logged("1 publish(es) still unacked after 200 ms; giving them back"), 1);
    CHECK_EQ(logged("still waiting on the database"), 0); /* given back, not dropped */
    CHECK_EQ(logged("relay stopped: 0 acked, 0 dead; given back untouched: 0 while running (read "
                    "again), 1 by the stop (left pending)"),
             1);
}

/* A second stop while stopping drops what is open at once. */
static void a_second_stop_is_a_hard_stop(void) {
    outbox_relay *r = two_workers_fetching();
    fake_broker *b = fake_broker_last();
    add_rows(fake_db_named("worker 0"), 1);
    fake_db_complete(fake_db_named("worker 0"), 1, 0, NULL, 0);
    CHECK_EQ(fake_broker_published(b), 1);
    int closed = fake_broker_closed_count();
    CHECK_EQ(outbox_relay_stop(r, on_stopped, NULL), OUTBOX_OK);
    CHECK_EQ(outbox_relay_stop(r, on_stopped, NULL), OUTBOX_OK);
    CHECK_EQ(logged("stopping now: open transactions are dropped"), 1);
    CHECK_EQ(outbox_relay_stop(r, on_stopped, NULL), OUTBOX_OK); /* said once */
    CHECK_EQ(logged("stopping now"), 1);
    finish_stop(r, closed);
    CHECK_EQ(logged("still unacked"), 0); /* it did not wait for the deadline */
}

static void count_drained(outbox_relay *r, void *data) {
    (void)r;
    (void)data;
    seen.drains++;
}

/* The drain probe's answer: `due` rows due, none later. */
static void answer_drain_probe(const char *name, const char *due) {
    ob_db *db = pending(name, FAKE_QUERY);
    CHECK_CONTAINS(fake_db_sql(db), "COMMIT; SELECT (SELECT COUNT(*)");
    char *cols[8] = {(char *)due, "0", NULL};
    unsigned long lens[8] = {strlen(due), 1, 0};
    fake_db_add_row(db, 1, cols, lens);
    fake_db_complete(db, 1, 0, NULL, 0);
}

/* A drain (--drain-and-exit): one worker finds nothing due while the
 * other is still inside a batch; the relay says drained only once that
 * batch is done and the table found empty again, and says it once. */
static void a_drain_waits_for_the_batch_under_way(void) {
    outbox_relay_options o = options(2);
    o.on_drained = count_drained;
    outbox_relay *r = make(&o);
    answer("worker 0", FAKE_CONNECT);
    answer("worker 1", FAKE_CONNECT);
    answer_plain_lease();
    RUN_UNTIL(ob_lease_checked(r->order.lease));
    fake_broker *b = fake_broker_last();
    fake_broker_set_ready(b, 1);
    ob_db *w0 = pending("worker 0", FAKE_QUERY), *w1 = pending("worker 1", FAKE_QUERY);
    add_rows(w1, 1);
    fake_db_complete(w1, 1, 0, NULL, 0);
    fake_db_complete(w0, 1, 0, NULL, 0); /* nothing: the drain probe follows */
    answer_drain_probe("worker 0", "0");
    CHECK_EQ(seen.drains, 0); /* worker 1's batch is not done */
    fake_broker_answer(b, 0, OB_ACKED_STORED);
    answer("worker 1", FAKE_QUERY); /* its UPDATE and COMMIT */
    CHECK_EQ(seen.drains, 0);
    /* The scout (worker 0, waiting for the poll) fetches again. */
    ob_db *scout = pending("worker 0", FAKE_QUERY);
    CHECK_CONTAINS(fake_db_sql(scout), "START TRANSACTION");
    fake_db_complete(scout, 1, 0, NULL, 0); /* nothing */
    answer_drain_probe("worker 0", "0");
    CHECK_EQ(seen.drains, 1);
    CHECK_EQ(logged("no pending rows left (drained)"), 1);
    /* Drained: the next empty fetch only commits, and says nothing more. */
    scout = pending("worker 0", FAKE_QUERY);
    fake_db_complete(scout, 1, 0, NULL, 0);
    CHECK_STR(fake_db_sql(pending("worker 0", FAKE_QUERY)), "COMMIT");
    CHECK_EQ(seen.drains, 1);
    stop_and_destroy(r);
}

/* The database refuses the relay's user at the first connect: the relay
 * cannot go on, naming the error and what to check. A lost server is
 * retried instead. */
static void a_refused_login_at_start_is_fatal(void) {
    outbox_relay_options o = options(1);
    outbox_relay *r = make(&o);
    fake_db_complete(pending("worker 0", FAKE_CONNECT), 0, 2003,
                     "Can't connect to MySQL server on '127.0.0.1'", 0);
    CHECK_EQ(seen.fatals, 0);
    fake_db_complete(pending("worker 0", FAKE_CONNECT), 0, 1045,
                     "Access denied for user 'relay'@'localhost'", 0);
    CHECK_EQ(seen.fatals, 1);
    CHECK_STR(seen.why, "database: 1045 Access denied for user 'relay'@'localhost' (check the "
                        "user and password of the database URL)");
    CHECK_STR(reader_state(r, 0), "halted");
    stop_and_destroy(r);
}

/* A table access refused once rows were read is a pause (the grant may
 * come back), not the end; during a drain, which must end, it is fatal. */
static void a_refusal_after_reading_is_fatal_only_to_a_drain(void) {
    for (int drain = 0; drain < 2; drain++) {
        outbox_relay_options o = options(1);
        o.on_drained = drain ? count_drained : NULL;
        outbox_relay *r = make(&o);
        answer("worker 0", FAKE_CONNECT);
        answer_plain_lease();
        fake_broker_set_ready(fake_broker_last(), 1);
        answer("worker 0", FAKE_QUERY); /* a fetch: nothing */
        if (drain)
            answer_drain_probe("worker 0", "1"); /* one row still due elsewhere */
        else
            answer("worker 0", FAKE_QUERY); /* its COMMIT */
        ob_db *db = pending("worker 0", FAKE_QUERY);
        fake_db_complete(db, 0, 1142, "SELECT command denied to user 'relay' for table 'outbox'",
                         0);
        CHECK_EQ(seen.fatals, drain);
        if (drain)
            CHECK_CONTAINS(seen.why, "database: 1142 SELECT command denied");
        stop_and_destroy(r);
    }
}

int main(void) {
    uv_loop_init(&loop);
    a_refusal_reaches_every_reader_after_the_ack();
    a_fatal_broker_halts_every_reader_with_its_reason();
    readyz_is_told_what_holds_delivery_back();
    calls_out_of_phase_are_refused();
    a_drain_waits_for_the_batch_under_way();
    a_refused_login_at_start_is_fatal();
    a_refusal_after_reading_is_fatal_only_to_a_drain();
    a_stop_gives_back_what_is_unanswered_at_the_deadline();
    a_second_stop_is_a_hard_stop();
    CHECK_EQ(uv_loop_close(&loop), 0);
    printf("test_relay: ok\n");
    return 0;
}
