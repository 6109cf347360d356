/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The link's state machine without a server: a fake client (link_ops)
 * records what the link asks of it, and the test plays the client's
 * reports (connects, replies, disconnects, closes) through the link's sink,
 * as nats.c would. Timers run on a real loop, bounded.
 */
#include <uv.h>

#include "check.h"
#include "subject.h"
#include "link_int.h"

/* --- the fake client ---------------------------------------------------- */

typedef struct fake_client {
    int connects, subscribes, requests, closes, drops, stops, frees;
    int fail_subscribe;
    int close_confirmed; /* close_done answers this */
    char last_subj[256];
    char last_reply[96];
    char last_body[512];
    link_conn conn;
    uv_idle_t idle; /* one handle of the client's own, as the real one has */
} fake_client;

static fake_client fc;

static int f_init(ob_link *l) {
    (void)l;
    return 0;
}
static int f_start(ob_link *l) {
    uv_idle_init(l->loop, &fc.idle);
    fc.idle.data = l;
    return 1;
}
static int f_connect(ob_link *l) {
    fc.connects++;
    snprintf(fc.conn.inbox, sizeof(fc.conn.inbox), "_INBOX.fake");
    fc.conn.inbox_len = strlen(fc.conn.inbox);
    l->conn = &fc.conn;
    return 0;
}
static int f_subscribe(ob_link *l) {
    (void)l;
    fc.subscribes++;
    return fc.fail_subscribe ? -1 : 0;
}
static int f_request(ob_link *l, const char *subj, const char *reply, const char *body, size_t len,
                     const char **why) {
    (void)l;
    (void)why;
    fc.requests++;
    snprintf(fc.last_subj, sizeof(fc.last_subj), "%s", subj);
    snprintf(fc.last_reply, sizeof(fc.last_reply), "%s", reply);
    snprintf(fc.last_body, sizeof(fc.last_body), "%.*s", (int)len, body);
    return 0;
}
static const char *f_last_error(ob_link *l) {
    (void)l;
    return "fake: closed";
}
static void f_close(ob_link *l) {
    (void)l;
    fc.closes++;
}
static int f_close_done(ob_link *l, int leak) {
    (void)l;
    return leak || fc.close_confirmed;
}
static void f_drop(ob_link *l) {
    (void)l;
    fc.drops++;
}
static void idle_closed(uv_handle_t *h) {
    ob_link *l = h->data;
    l->sink->handle_closed(l);
}
static void f_stop(ob_link *l, int leak) {
    (void)l;
    (void)leak;
    fc.stops++;
    uv_close((uv_handle_t *)&fc.idle, idle_closed);
}
static void f_free(ob_link *l) {
    (void)l;
    fc.frees++;
}

static int f_rebuilds(ob_link *l) {
    (void)l;
    return 0;
}

static const link_ops fake_ops = {
    .init = f_init,
    .start = f_start,
    .connect = f_connect,
    .subscribe = f_subscribe,
    .request = f_request,
    .last_error = f_last_error,
    .close = f_close,
    .close_done = f_close_done,
    .drop = f_drop,
    .stop = f_stop,
    .rebuilds = f_rebuilds,
    .free = f_free,
};

/* --- the owner ---------------------------------------------------------- */

typedef struct owner {
    int ready_calls, ready, fatal, acks, wakes, closed;
    ob_ack_result last_result;
    char fatal_why[512];
    char log[8192]; /* every line, for the state names */
} owner;

static owner ow;

static void o_ack(void *d, const ob_ack *a) {
    (void)d;
    ow.last_result = a->result;
    ow.acks++;
}
static void o_ready(void *d, int ready) {
    (void)d;
    ow.ready_calls++;
    ow.ready = ready;
}
static void o_wake(void *d) {
    (void)d;
    ow.wakes++;
}
static void o_fatal(void *d, const char *why) {
    (void)d;
    ow.fatal++;
    snprintf(ow.fatal_why, sizeof(ow.fatal_why), "%s", why);
}
static void o_closed(void *d) {
    (void)d;
    ow.closed++;
}
static void o_log(outbox_log_level level, const char *msg, void *data) {
    (void)level;
    (void)data;
    size_t n = strlen(ow.log);
    snprintf(ow.log + n, sizeof(ow.log) - n, "%s\n", msg);
}

static uv_loop_t loop;

/* What the owner has been told: readiness comes posted, delivered by the
 * loop (link_post.c), so the loop turns once first. */
static const owner *told(void) {
    uv_run(&loop, UV_RUN_NOWAIT);
    return &ow;
}
static ob_log lg = {o_log, NULL, OUTBOX_LOG_DEBUG};

static ob_link *make(uint64_t horizon_ms, int strict) {
    memset(&fc, 0, sizeof(fc));
    memset(&ow, 0, sizeof(ow));
    ob_link_config cfg = {0};
    cfg.url = "nats://127.0.0.1:4222";
    cfg.stream = "S";
    cfg.subject_prefix = "outbox";
    cfg.duplicate_window_ms = 120000;
    cfg.retry_horizon_ms = horizon_ms;
    cfg.strict_duplicate_window = strict;
    cfg.max_in_flight = 100;
    cfg.log = &lg;
    ob_link_callbacks cbs = {o_ack, o_ready, o_wake, o_fatal, NULL};
    char err[256];
    ob_link *l = ob_link_new_ops(&loop, &cfg, &cbs, &fake_ops, err, sizeof(err));
    CHECK(l != NULL);
    return l;
}

/* The reply to the request in flight, as the client would hand it over. */
static void reply(ob_link *l, const char *json) {
    link_reply r = {l->ctl_seq, 0, json, strlen(json)};
    l->sink->control(l, &r);
}

static void no_responders(ob_link *l) {
    link_reply r = {l->ctl_seq, 1, "", 0};
    l->sink->control(l, &r);
}

#define INFO_OK "{\"config\":{\"subjects\":[\"outbox.>\"],\"duplicate_window\":120000000000}}"

/* Runs the loop until cond holds, for at most ms. */
#define RUN_UNTIL(cond, ms)                                                                        \
    do {                                                                                           \
        uint64_t until_ = uv_now(&loop) + (ms);                                                    \
        while (!(cond) && uv_now(&loop) < until_) {                                                \
            uv_run(&loop, UV_RUN_NOWAIT);                                                          \
            uv_sleep(5);                                                                           \
            uv_update_time(&loop);                                                                 \
        }                                                                                          \
        CHECK(cond);                                                                               \
    } while (0)

/* NEW -> CONNECTING -> STREAM -> READY. */
static ob_link *make_ready(void) {
    ob_link *l = make(60000, 0);
    CHECK_EQ(ob_link_start(l), 0);
    CHECK_EQ(fc.connects, 1);
    CHECK_EQ(l->state, L_CONNECTING);
    l->sink->connect_done(l, LC_OK, "");
    CHECK_EQ(fc.subscribes, 1);
    CHECK_EQ(l->state, L_STREAM);
    CHECK_STR(fc.last_subj, "$JS.API.STREAM.INFO.S");
    reply(l, INFO_OK);
    CHECK_EQ(l->state, L_READY);
    CHECK(ob_link_ready(l));
    CHECK_EQ(told()->ready, 1);
    CHECK_EQ(ob_link_window_ms(l), 120000);
    return l;
}

static void close_link(ob_link *l) {
    ob_link_close(l, o_closed, NULL);
    CHECK_EQ(l->state, L_CLOSING);
    CHECK_EQ(fc.closes, 1);
    fc.close_confirmed = 1;
    l->sink->conn_event(l, 0, 0, 1); /* the client reports the close */
    RUN_UNTIL(ow.closed == 1, 2000);
    CHECK_EQ(fc.stops, 1);
    CHECK_EQ(fc.frees, 1);
}

/* A stream that does not exist is created; its reply makes the link ready. */
static void test_create(void) {
    ob_link *l = make(60000, 0);
    ob_link_start(l);
    l->sink->connect_done(l, LC_OK, "");
    reply(l, "{\"error\":{\"code\":404,\"err_code\":10059,\"description\":\"stream not found\"}}");
    CHECK_EQ(l->state, L_STREAM);
    CHECK_STR(fc.last_subj, "$JS.API.STREAM.CREATE.S");
    CHECK(strstr(fc.last_body, "\"outbox.>\"") != NULL);
    CHECK(strstr(fc.last_body, "\"duplicate_window\":120000000000") != NULL);
    reply(l, INFO_OK);
    CHECK_EQ(l->state, L_READY);
    close_link(l);
}

/* A create refused before the link was ever ready is a misconfiguration. */
static void test_create_refused(void) {
    ob_link *l = make(60000, 0);
    ob_link_start(l);
    l->sink->connect_done(l, LC_OK, "");
    reply(l, "{\"error\":{\"code\":404,\"err_code\":10059,\"description\":\"stream not found\"}}");
    reply(l, "{\"error\":{\"code\":500,\"err_code\":10074,\"description\":\"replicas > 1 not "
             "supported in non-clustered mode\"}}");
    CHECK_EQ(l->state, L_FATAL);
    CHECK_EQ(ow.fatal, 1);
    CHECK(strstr(ow.fatal_why, "refused to create stream S") != NULL);
    CHECK(strstr(ow.fatal_why, "10074") != NULL);
    close_link(l);
}

/* A reply to an older request changes nothing. */
static void test_stale_reply(void) {
    ob_link *l = make(60000, 0);
    ob_link_start(l);
    l->sink->connect_done(l, LC_OK, "");
    link_reply old = {l->ctl_seq - 1, 0, INFO_OK, strlen(INFO_OK)};
    l->sink->control(l, &old);
    CHECK_EQ(l->state, L_STREAM);
    reply(l, INFO_OK);
    CHECK_EQ(l->state, L_READY);
    close_link(l);
}

/* The strict check refuses a window shorter than the retry horizon. */
static void test_strict_window(void) {
    ob_link *l = make(300000, 1);
    ob_link_start(l);
    l->sink->connect_done(l, LC_OK, "");
    reply(l, INFO_OK);
    CHECK_EQ(l->state, L_FATAL);
    CHECK(strstr(ow.fatal_why, "120000 ms") != NULL);
    close_link(l);
}

/* No responders: a pause (no attempts), then the stream is asked again. */
static void test_no_responders(void) {
    ob_link *l = make(60000, 0);
    ob_link_start(l);
    l->sink->connect_done(l, LC_OK, "");
    no_responders(l);
    CHECK_EQ(l->state, L_STREAM_WAIT);
    int before = fc.requests;
    RUN_UNTIL(fc.requests == before + 1, 3000); /* the backoff's first step */
    CHECK_EQ(l->state, L_STREAM);
    reply(l, INFO_OK);
    CHECK_EQ(l->state, L_READY);
    close_link(l);
}

/* A suspicious publish: the stream answers, so the failure was the
 * message's and the link stays ready; the state's name is logged. */
static void test_checking(void) {
    ob_link *l = make_ready();
    uint32_t epoch = ob_link_epoch(l);
    ob_link_suspect(l, "no responders");
    CHECK_EQ(l->state, L_CHECKING);
    CHECK(ob_link_ready(l));
    CHECK(!ob_link_settled(l));
    CHECK(strstr(ow.log, "nats: ready -> checking") != NULL);
    ob_link_suspect(l, "no responders"); /* a second one while checking: ignored */
    CHECK_EQ(l->state, L_CHECKING);
    int calls = told()->ready_calls;
    reply(l, INFO_OK);
    CHECK_EQ(l->state, L_READY);
    CHECK(ob_link_settled(l));
    CHECK_EQ(told()->ready_calls, calls + 1); /* batches waiting for the verdict go on */
    CHECK_EQ(ob_link_epoch(l), epoch);
    CHECK(strstr(ow.log, "nats: checking -> ready") != NULL);
    close_link(l);
}

/* A change of readiness made inside the owner's call (a refusal from a
 * reader's ack handler) is not told inside it: it is posted, and the loop
 * delivers it, in order, after the call returned. */
static void test_ready_posted(void) {
    ob_link *l = make_ready();
    int calls = told()->ready_calls;
    ob_link_refused(l, "maximum bytes exceeded");
    CHECK_EQ(l->state, L_STREAM_WAIT);
    CHECK(!ob_link_ready(l));
    CHECK_EQ(ow.ready_calls, calls); /* not yet: the caller has not returned */
    CHECK_EQ(ow.ready, 1);
    CHECK_EQ(told()->ready_calls, calls + 1);
    CHECK_EQ(ow.ready, 0);
    close_link(l);
}

/* The check gets no answer: an outage, readiness ends. */
static void test_checking_timeout(void) {
    ob_link *l = make_ready();
    uint32_t epoch = ob_link_epoch(l);
    ob_link_suspect(l, "503");
    RUN_UNTIL(l->state == L_STREAM_WAIT, 4000);
    CHECK_EQ(told()->ready, 0);
    CHECK_EQ(ob_link_epoch(l), epoch + 1);
    close_link(l);
}

/* A full stream pauses from READY and from CHECKING; a stored ack ends the
 * streak. */
static void test_full(void) {
    ob_link *l = make_ready();
    ob_link_refused(l, "maximum bytes exceeded");
    CHECK_EQ(l->state, L_STREAM_WAIT);
    CHECK_EQ(l->full, 1);
    CHECK_EQ(l->full_streak, 1);
    CHECK_EQ(ob_link_refusal_episode(l), 1);
    CHECK_EQ(told()->ready, 0);
    RUN_UNTIL(l->state == L_STREAM, 3000);
    reply(l, INFO_OK);
    ob_link_suspect(l, "503");
    CHECK_EQ(l->state, L_CHECKING);
    ob_link_refused(l, "maximum bytes exceeded");
    CHECK_EQ(l->state, L_STREAM_WAIT);
    CHECK_EQ(l->full_streak, 2);
    CHECK_EQ(ob_link_refusal_episode(l), 1); /* the same stretch of refusals */
    ob_ack a = {0};
    a.result = OB_ACKED_STORED;
    l->sink->ack(l, &a);
    CHECK_EQ(ow.acks, 1);
    CHECK_EQ(l->full, 0);
    CHECK_EQ(l->full_streak, 0);
    CHECK_EQ(ob_link_refusal_episode(l), 0);
    close_link(l);
}

#define INFO_OTHER                                                                                 \
    "{\"config\":{\"subjects\":[\"other.>\",\"x.*\"],\"duplicate_window\":120000000000}}"
#define INFO_PART                                                                                  \
    "{\"config\":{\"subjects\":[\"other.>\",\"outbox.order.*\"],\"duplicate_window\":"             \
    "120000000000}}"

/* The stream answers a check but lists none of the relay's subjects: a
 * pause (not ready, the reason given, said once) that lasts while it stays
 * so, and ends when it takes them again. A stream that takes some of them
 * leaves the failure to the row. */
static void test_unlisted(void) {
    CHECK_EQ(ob_subject_patterns_meet(">", "outbox.*.>"), 1);
    CHECK_EQ(ob_subject_patterns_meet("outbox.>", "outbox.*.>"), 1);
    CHECK_EQ(ob_subject_patterns_meet("outbox.order.created", "outbox.*.>"), 1);
    CHECK_EQ(ob_subject_patterns_meet("*.order.*", "outbox.*.>"), 1);
    CHECK_EQ(ob_subject_patterns_meet("outbox.*", "outbox.*.>"), 0); /* one token after */
    CHECK_EQ(ob_subject_patterns_meet("outbox", "outbox.*.>"), 0);
    CHECK_EQ(ob_subject_patterns_meet("other.>", "outbox.*.>"), 0);
    CHECK_EQ(ob_subject_patterns_meet("outboxx.>", "outbox.*.>"), 0);
    CHECK_EQ(ob_subject_patterns_meet("a.b", "a.b"), 1);
    CHECK_EQ(ob_subject_patterns_meet("a.b", "a.b.c"), 0);
    ob_link *l = make_ready();
    uint32_t epoch = ob_link_epoch(l);
    ob_link_suspect(l, "no responders");
    reply(l, INFO_PART);
    CHECK_EQ(l->state, L_READY);
    CHECK(ob_link_refusal(l) == NULL);
    ob_link_suspect(l, "no responders");
    reply(l, INFO_OTHER);
    CHECK_EQ(l->state, L_STREAM_WAIT);
    CHECK_EQ(told()->ready, 0);
    CHECK_EQ(ob_link_epoch(l), epoch + 1);
    CHECK(ob_link_refusal(l) != NULL);
    CHECK(strstr(ob_link_refusal(l), "stream S lists no subject the relay publishes to") != NULL);
    CHECK(strstr(ob_link_refusal(l), "other.>, x.*") != NULL);
    CHECK_EQ(ob_link_refusal_episode(l), 1);
    const char *said = strstr(ow.log, "lists no subject");
    CHECK(said != NULL);
    RUN_UNTIL(l->state == L_STREAM, 3000);
    reply(l, INFO_OTHER); /* still so: paused again, not said again */
    CHECK_EQ(l->state, L_STREAM_WAIT);
    CHECK(strstr(said + 1, "lists no subject") == NULL);
    CHECK_EQ(ob_link_refusal_episode(l), 1);
    RUN_UNTIL(l->state == L_STREAM, 3000);
    reply(l, INFO_OK);
    CHECK_EQ(l->state, L_READY);
    CHECK_EQ(told()->ready, 1);
    CHECK(ob_link_refusal(l) == NULL);
    CHECK_EQ(ob_link_refusal_episode(l), 0);
    CHECK(strstr(ow.log, "takes 'outbox.>' again; resuming") != NULL);
    close_link(l);
}

#define NOT_FOUND                                                                                  \
    "{\"error\":{\"code\":404,\"err_code\":10059,\"description\":\"stream not found\"}}"
#define INFO_R3                                                                                    \
    "{\"config\":{\"subjects\":[\"outbox.order.>\"],\"num_replicas\":3,\"storage\":\"file\","      \
    "\"retention\":\"limits\",\"max_msgs\":5000,\"duplicate_window\":120000000000}}"

/* A stream seen once and then found missing was deleted under the relay:
 * never created again, a pause (not ready, the reason given, said once with
 * what the stream was, counted) that ends when the operator makes it again
 * (even after a reconnect). Before it was seen, a missing stream is created. */
static void test_deleted(void) {
    ob_link *l = make(60000, 0);
    ob_link_start(l);
    l->sink->connect_done(l, LC_OK, "");
    reply(l, INFO_R3);
    CHECK_EQ(l->state, L_READY);
    CHECK_EQ(told()->ready, 1);
    uint32_t epoch = ob_link_epoch(l);
    ob_link_suspect(l, "no responders");
    reply(l, NOT_FOUND);
    CHECK_EQ(l->state, L_STREAM_WAIT);
    CHECK_STR(fc.last_subj, "$JS.API.STREAM.INFO.S"); /* no create */
    CHECK_EQ(told()->ready, 0);
    CHECK_EQ(ob_link_epoch(l), epoch + 1);
    CHECK_EQ(ob_link_stream_missing(l), 1);
    CHECK_EQ(ob_link_stream_losses(l), 1);
    CHECK(ob_link_refusal(l) != NULL);
    CHECK(strstr(ob_link_refusal(l), "stream S was deleted while the relay ran") != NULL);
    CHECK_EQ(ob_link_refusal_episode(l), 1);
    const char *said = strstr(ow.log, "was deleted while the relay ran");
    CHECK(said != NULL);
    CHECK(strstr(said, "subjects outbox.order.>, 3 replica(s), file storage") != NULL);
    CHECK(strstr(said, "max_msgs 5000") != NULL);
    for (int i = 0; i < 2; i++) { /* still missing: asked again, not said again, never created */
        RUN_UNTIL(l->state == L_STREAM, 3000);
        CHECK_STR(fc.last_subj, "$JS.API.STREAM.INFO.S");
        reply(l, NOT_FOUND);
        CHECK_EQ(l->state, L_STREAM_WAIT);
    }
    l->sink->conn_event(l, 0, 1, 0); /* a reconnect asks again: still no create */
    reply(l, NOT_FOUND);
    CHECK_EQ(l->state, L_STREAM_WAIT);
    CHECK(strstr(said + 1, "was deleted while the relay ran") == NULL);
    CHECK_EQ(ob_link_stream_losses(l), 1);
    CHECK_EQ(ob_link_refusal_episode(l), 1);
    RUN_UNTIL(l->state == L_STREAM, 3000);
    reply(l, INFO_OTHER); /* made again with other subjects: still paused, for that */
    CHECK_EQ(l->state, L_STREAM_WAIT);
    CHECK_EQ(ob_link_stream_missing(l), 0);
    CHECK(strstr(ob_link_refusal(l), "lists no subject") != NULL);
    RUN_UNTIL(l->state == L_STREAM, 3000);
    reply(l, INFO_OK);
    CHECK_EQ(l->state, L_READY);
    CHECK_EQ(told()->ready, 1);
    CHECK(ob_link_refusal(l) == NULL);
    CHECK(strstr(ow.log, "stream S exists again") != NULL);
    close_link(l);
}

/* A publish answered "stream not found" (puback.c: the broker's) pauses as
 * a refusal; the stream asked about is missing: the deletion's pause, which
 * the refusal does not outlive. */
static void test_deleted_refused(void) {
    ob_link *l = make_ready();
    ob_link_refused(l, "the stream is not found (404/10059)");
    CHECK_EQ(l->state, L_STREAM_WAIT);
    CHECK_EQ(l->full, 1);
    RUN_UNTIL(l->state == L_STREAM, 3000);
    reply(l, NOT_FOUND);
    CHECK_EQ(l->state, L_STREAM_WAIT);
    CHECK_EQ(l->full, 0);
    CHECK_EQ(ob_link_stream_missing(l), 1);
    CHECK(strstr(ob_link_refusal(l), "was deleted while the relay ran") != NULL);
    CHECK_STR(fc.last_subj, "$JS.API.STREAM.INFO.S");
    close_link(l);
}

/* A stored ack whose sequence went back: the stream was deleted and made
 * again between two publishes. Said once, counted, and the stream is read
 * again; a duplicate's older sequence is no sign. */
static void test_remade(void) {
    ob_link *l = make_ready();
    ob_ack a = {.result = OB_ACKED_STORED, .seq = 40};
    l->sink->ack(l, &a);
    a.seq = 41;
    l->sink->ack(l, &a);
    ob_ack dup = {.result = OB_ACKED_DUPLICATE, .seq = 3};
    l->sink->ack(l, &dup);
    CHECK_EQ(ob_link_stream_losses(l), 0);
    CHECK_EQ(l->state, L_READY);
    a.seq = 1;
    l->sink->ack(l, &a);
    CHECK_EQ(ob_link_stream_losses(l), 1);
    CHECK(strstr(ow.log, "stream S went back from sequence 41 to 1 while the relay ran") != NULL);
    CHECK_EQ(l->state, L_CHECKING);
    CHECK_STR(fc.last_subj, "$JS.API.STREAM.INFO.S");
    reply(l, INFO_OK);
    CHECK_EQ(l->state, L_READY);
    a.seq = 2;
    l->sink->ack(l, &a);
    CHECK_EQ(ob_link_stream_losses(l), 1);
    CHECK_EQ(ow.acks, 5);
    close_link(l);
}

/* An ack from another stream (the relay's deleted, another taking its
 * subjects): not delivered; the link pauses as for a missing stream, names
 * both, says it once, and resumes once its own stream answers again. An ack
 * naming the relay's stream, or none, passes. */
static void test_elsewhere(void) {
    ob_link *l = make_ready();
    ob_ack a = {.result = OB_ACKED_STORED, .seq = 1, .stream = "S", .stream_len = 1};
    l->sink->ack(l, &a);
    CHECK_EQ(ow.last_result, OB_ACKED_STORED);
    ob_ack unnamed = {.result = OB_ACKED_STORED, .seq = 2};
    l->sink->ack(l, &unnamed);
    CHECK_EQ(ow.last_result, OB_ACKED_STORED);
    CHECK_EQ(l->state, L_READY);
    ob_ack other = {.result = OB_ACKED_STORED, .seq = 1, .stream = "SX", .stream_len = 2};
    l->sink->ack(l, &other);
    CHECK_EQ(ow.last_result, OB_ACKED_ELSEWHERE);
    CHECK_EQ(l->state, L_STREAM_WAIT);
    CHECK_EQ(told()->ready, 0);
    CHECK_EQ(ob_link_stream_missing(l), 1);
    CHECK(strstr(ob_link_refusal(l), "stream SX, not the relay's stream S,") != NULL);
    other.result = OB_ACKED_DUPLICATE;
    l->sink->ack(l, &other);
    CHECK_EQ(ow.last_result, OB_ACKED_ELSEWHERE);
    const char *said = strstr(ow.log, "not the relay's stream S,");
    CHECK(said != NULL && strstr(said + 1, "not the relay's stream S,") == NULL);
    RUN_UNTIL(l->state == L_STREAM, 3000);
    CHECK_STR(fc.last_subj, "$JS.API.STREAM.INFO.S");
    reply(l, NOT_FOUND);
    CHECK_EQ(l->state, L_STREAM_WAIT);
    CHECK(strstr(ob_link_refusal(l), "not the relay's stream S,") != NULL);
    RUN_UNTIL(l->state == L_STREAM, 3000);
    reply(l, INFO_OK);
    CHECK_EQ(l->state, L_READY);
    CHECK(ob_link_refusal(l) == NULL);
    CHECK_EQ(ob_link_stream_missing(l), 0);
    l->sink->ack(l, &a);
    CHECK_EQ(ow.last_result, OB_ACKED_STORED);
    close_link(l);
}

/* Disconnect, reconnect: readiness ends and the stream is asked again. */
static void test_reconnect(void) {
    ob_link *l = make_ready();
    l->sink->conn_event(l, 1, 0, 0);
    CHECK_EQ(l->state, L_DOWN);
    CHECK_EQ(told()->ready, 0);
    int before = fc.requests;
    l->sink->conn_event(l, 0, 1, 0);
    CHECK_EQ(l->state, L_STREAM);
    CHECK_EQ(fc.requests, before + 1);
    reply(l, INFO_OK);
    CHECK_EQ(l->state, L_READY);
    l->sink->wake(l);
    CHECK_EQ(ow.wakes, 1);
    close_link(l);
}

/* Closed for good by the client: a new connection after a pause. */
static void test_closed_for_good(void) {
    ob_link *l = make_ready();
    l->sink->conn_event(l, 1, 0, 1);
    CHECK_EQ(l->state, L_CONNECT_WAIT);
    CHECK_EQ(fc.drops, 1);
    RUN_UNTIL(fc.connects == 2, 3000);
    CHECK_EQ(l->state, L_CONNECTING);
    /* Refused now, after it was once ready: retried, not fatal. */
    l->sink->connect_done(l, LC_FAILED_FOR_GOOD, "Authorization Violation");
    CHECK_EQ(l->state, L_CONNECT_WAIT);
    CHECK_EQ(ow.fatal, 0);
    close_link(l);
}

/* Refused at the first connect: fatal, naming the cause. */
static void test_refused_first(void) {
    ob_link *l = make(60000, 0);
    ob_link_start(l);
    l->sink->connect_done(l, LC_FAILED_FOR_GOOD, "Authorization Violation");
    CHECK_EQ(l->state, L_FATAL);
    CHECK(strstr(ow.fatal_why, "Authorization Violation") != NULL);
    close_link(l);
}

/* A failed subscribe drops the connection and tries again. */
static void test_subscribe_fails(void) {
    ob_link *l = make(60000, 0);
    fc.fail_subscribe = 1;
    ob_link_start(l);
    l->sink->connect_done(l, LC_OK, "");
    CHECK_EQ(l->state, L_CONNECT_WAIT);
    CHECK_EQ(fc.drops, 1);
    close_link(l);
}

/* Close while connecting: the link waits for the connect to end. */
static void test_close_while_connecting(void) {
    ob_link *l = make(60000, 0);
    ob_link_start(l);
    ob_link_close(l, o_closed, NULL);
    CHECK_EQ(l->state, L_CLOSING);
    CHECK_EQ(ow.closed, 0);
    fc.close_confirmed = 1;
    l->sink->connect_done(l, LC_OK, "");
    RUN_UNTIL(ow.closed == 1, 2000);
    CHECK_EQ(fc.subscribes, 0);
}

/* A client that never confirms its close: the deadline frees the link's
 * handles and leaves the client's memory alone. */
static void test_close_deadline(void) {
    ob_link *l = make_ready();
    ob_link_close(l, o_closed, NULL);
    RUN_UNTIL(ow.closed == 1, 8000);
    CHECK_EQ(fc.frees, 0);
    /* free_link kept the struct for the client; the test owns it now. */
    free(l);
}

/* Never started: closed without a loop turn. */
static void test_close_unstarted(void) {
    ob_link *l = make(60000, 0);
    ob_link_close(l, o_closed, NULL);
    CHECK_EQ(ow.closed, 1);
    CHECK_EQ(fc.frees, 1);
}

int main(void) {
    uv_loop_init(&loop);
    test_create();
    test_create_refused();
    test_stale_reply();
    test_strict_window();
    test_no_responders();
    test_checking();
    test_checking_timeout();
    test_full();
    test_ready_posted();
    test_unlisted();
    test_deleted();
    test_deleted_refused();
    test_remade();
    test_elsewhere();
    test_reconnect();
    test_closed_for_good();
    test_refused_first();
    test_subscribe_fails();
    test_close_while_connecting();
    test_close_deadline();
    test_close_unstarted();
    CHECK_EQ(uv_loop_close(&loop), 0);
    printf("test_link: ok\n");
    return 0;
}
