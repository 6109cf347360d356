/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The link's state machine. Every input is an event; dispatch() hands it to
 * the handler of the current state and every change goes through
 * set_state(), which also tells the owner when readiness changes. The
 * client (nats.c) is reached only through l->ops, and reports only through
 * the sink below, whose every entry is an event (link_int.h).
 *
 *   NEW --start--> CONNECTING (the client connects off the loop)
 *                    | ok                         | failed
 *                    v                            v
 *                  STREAM (INFO, then CREATE) <-- CONNECT_WAIT --timer--> CONNECTING
 *                    | answered, window ok        (refused for good before ever ready: FATAL)
 *                    v
 *                  READY --disconnected--> DOWN --reconnected--> STREAM
 *                    | unavailable / no reply      STREAM --no answer--> STREAM_WAIT
 *                    v                                    STREAM_WAIT --timer--> STREAM
 *                  STREAM_WAIT
 *
 *   READY --no responders / 503--> CHECKING --the stream answers--> READY
 *                                  CHECKING --no answer--> STREAM_WAIT
 *   READY, CHECKING --stream full--> STREAM_WAIT (a pause that grows while it stays full)
 *   STREAM, CHECKING --the stream answers but lists none of the relay's subjects-->
 *                  STREAM_WAIT (a pause, asked again every 2 s at most; READY once a stream
 *                  takes them)
 *   STREAM, CHECKING --a stream once seen is not found (deleted under the relay)-->
 *                  STREAM_WAIT (the same pause, never a create; READY once it exists again)
 *   STREAM --create refused before ever ready (not a cluster placing peers)--> FATAL
 *   closed for good by nats.c (any connected state) --> CONNECT_WAIT, a new connection
 *   strict duplicate-window check failed --> FATAL
 *   close (any state) --> CLOSING --the client confirmed, or deadline--> freed
 */
#include "link_int.h"

#include "tls_options.h"

#include <stdlib.h>
#include <string.h>

/* A JetStream API request unanswered this long is asked again; short, so
 * that a stream leader's election is noticed soon after it ends. */
#define CTL_TIMEOUT_MS 2000
#define BACKOFF_MIN_MS 200
#define BACKOFF_MAX_MS 10000
#define CLOSE_WAIT_MS 5000

/* A pause that the operator ends (link_stream.c) asks this often at most. */
#define PAUSE_ASK_MS 2000

typedef enum link_event {
    LE_START,
    LE_CONNECTED,       /* the connect succeeded */
    LE_CONNECT_FAILED,  /* arg: the reason; another try may work */
    LE_CONNECT_REFUSED, /* arg: the reason; the server refused (credentials, TLS) */
    LE_TIMER,
    LE_DISCONNECTED,
    LE_RECONNECTED,
    LE_CLOSED,      /* nats.c closed the connection for good */
    LE_REPLY,       /* arg: a link_reply; the answer to a JetStream API request */
    LE_UNAVAILABLE, /* arg: why; JetStream did not answer (a silent broker) */
    LE_SUSPECT,     /* arg: why; a publish found no responders or a 503 */
    LE_REFUSED,     /* arg: why; JetStream refused a message as every row would be */
    LE_CLOSE
} link_event;

static void dispatch(ob_link *l, link_event ev, const void *arg);

static const char *const state_names[] = {
    [L_NEW] = "new",
    [L_CONNECTING] = "connecting",
    [L_CONNECT_WAIT] = "connect-wait",
    [L_STREAM] = "stream",
    [L_STREAM_WAIT] = "stream-wait",
    [L_READY] = "ready",
    [L_CHECKING] = "checking",
    [L_DOWN] = "down",
    [L_FATAL] = "fatal",
    [L_CLOSING] = "closing",
};

static int is_ready(link_state s) {
    return s == L_READY || s == L_CHECKING;
}

/* Leaving readiness bumps the epoch and tells the owner; entering it tells
 * the owner too, and so does a check that ends well (CHECKING -> READY), so
 * that batches waiting for its verdict can finish. The owner is told
 * later, from the loop (ob_link_post_ready): a change made inside a
 * reader's call (a suspect answer, a refusal, an ack deadline) never calls
 * the readers back inside it. */
static void set_state(ob_link *l, link_state s) {
    link_state old = l->state;
    if (old == s)
        return;
    l->state = s;
    OB_DEBUG(l->log, "nats: %s -> %s", state_names[old], state_names[s]);
    if (is_ready(old) && !is_ready(s)) {
        l->epoch++;
        ob_link_post_ready(l, 0);
    } else if (s == L_READY) {
        l->failures = 0;
        l->ever_ready = 1;
        ob_link_post_ready(l, 1);
    }
}

static void on_timer(uv_timer_t *t) {
    dispatch(t->data, LE_TIMER, NULL);
}

static void wait_then(ob_link *l, link_state s) {
    set_state(l, s);
    uv_timer_start(&l->timer, on_timer, ob_retry_delay(&l->retry, l->failures++), 0);
}

static void fatal(ob_link *l, const char *why) {
    uv_timer_stop(&l->timer);
    set_state(l, L_FATAL);
    if (l->cbs.on_fatal)
        l->cbs.on_fatal(l->cbs.data, why);
}

/* --- connecting --------------------------------------------------------- */

static void start_connect(ob_link *l) {
    set_state(l, L_CONNECTING);
    if (l->ops->connect(l) != 0)
        wait_then(l, L_CONNECT_WAIT);
}

/* --- the stream ---------------------------------------------------------- */

static void request_stream_in(ob_link *l, int create, link_state waiting);

static void request_stream(ob_link *l, int create) {
    request_stream_in(l, create, L_STREAM);
}

/* Sends a stream info (or create) request and waits for it in `waiting`. */
static void request_stream_in(ob_link *l, int create, link_state waiting) {
    char subj[256], reply_to[96];
    ob_buf body = OB_BUF_INIT;
    l->ctl_seq++;
    snprintf(reply_to, sizeof(reply_to), "%s.c.%u", l->conn->inbox, l->ctl_seq);
    l->stream_create = create;
    ob_link_stream_request(l, create, subj, sizeof(subj), &body);
    set_state(l, waiting);
    const char *why = NULL;
    int rc = l->ops->request(l, subj, reply_to, body.p ? body.p : "", body.len, &why);
    ob_buf_free(&body);
    if (rc != 0) {
        OB_WARN(l->log, "nats: stream request failed: %s; retrying", why ? why : "?");
        wait_then(l, L_STREAM_WAIT);
        return;
    }
    uv_timer_start(&l->timer, on_timer, CTL_TIMEOUT_MS, 0);
}

/* A reply to the control request in flight (STREAM, CHECKING): what it
 * means is link_stream.c's to read, what follows is the state machine's. A
 * pause the operator must end (the stream deleted, or listing none of the
 * relay's subjects) asks again at least every PAUSE_ASK_MS, so that
 * publishing resumes soon after the stream is mended. */
static void pause_then_ask(ob_link *l) {
    uint64_t delay = ob_retry_delay(&l->retry, l->failures++);
    l->say_ready = 1;
    set_state(l, L_STREAM_WAIT);
    uv_timer_start(&l->timer, on_timer, delay < PAUSE_ASK_MS ? delay : PAUSE_ASK_MS, 0);
}

static void stream_reply(ob_link *l, const link_reply *msg) {
    uv_timer_stop(&l->timer);
    char why[400] = "";
    switch (ob_link_stream_reply(l, msg, why, sizeof(why))) {
    case LS_READY:
        set_state(l, L_READY);
        return;
    case LS_CREATE:
        request_stream(l, 1);
        return;
    case LS_FATAL:
        fatal(l, why);
        return;
    case LS_PAUSE:
        pause_then_ask(l);
        return;
    case LS_RETRY:
        wait_then(l, L_STREAM_WAIT);
        return;
    }
}

/* --- the states ---------------------------------------------------------- */

static void begin_close(ob_link *l);

/* Events of the states that hold a connection. */
static void connected_common(ob_link *l, link_event ev) {
    switch (ev) {
    case LE_DISCONNECTED:
        uv_timer_stop(&l->timer);
        l->say_ready = 1;
        OB_WARN(l->log, "nats: disconnected; pausing until the server is back");
        set_state(l, L_DOWN);
        return;
    case LE_RECONNECTED:
        uv_timer_stop(&l->timer);
        OB_INFO(l->log, "nats: reconnected; checking the stream");
        l->say_ready = 1;
        set_state(l, L_DOWN); /* leaves READY: batches in flight are interrupted */
        request_stream(l, 0);
        return;
    case LE_CLOSED: {
        const char *why = l->ops->last_error(l);
        uv_timer_stop(&l->timer);
        if (l->ops->rebuilds(l))
            OB_WARN(l->log, "nats: disconnected; pausing until the server is back (%s)",
                    why && *why ? why : "no reason given");
        else
            OB_WARN(l->log,
                    "nats: the client closed the connection for good (%s); building a new "
                    "one",
                    why && *why ? why : "no reason given");
        l->ops->drop(l);
        l->say_ready = 1;
        wait_then(l, L_CONNECT_WAIT);
        return;
    }
    case LE_CLOSE:
        begin_close(l);
        return;
    default:
        return;
    }
}

/* A connect failed, after a first success when refused: tried again. A
 * refusal (credentials, TLS) is said once until its reason changes, and
 * named on /readyz (ob_link_refusal) until a connect succeeds. */
static void connect_failed(ob_link *l, int refused, const char *why) {
    if (!refused) {
        l->login_why[0] = '\0';
        OB_WARN(l->log, "nats: cannot connect to %s: %s; retrying", l->url_text, why);
    } else if (strstr(l->login_why, why) == NULL) {
        OB_WARN(l->log,
                "nats: cannot connect to %s: %s; the server refuses the relay, retrying "
                "(said once until the reason changes)",
                l->url_text, why);
        snprintf(l->login_why, sizeof(l->login_why), "NATS refuses the relay's connection: %s",
                 why);
    }
    wait_then(l, L_CONNECT_WAIT);
}

static void st_connecting(ob_link *l, link_event ev, const void *arg) {
    switch (ev) {
    case LE_CONNECTED:
        if (l->ops->subscribe(l) != 0) {
            OB_WARN(l->log, "nats: cannot subscribe to the reply inbox; retrying");
            l->ops->drop(l);
            wait_then(l, L_CONNECT_WAIT);
            return;
        }
        OB_INFO(l->log, "nats: connected to %s (%s)", l->url_text,
                l->ops->name ? l->ops->name : "a client");
        l->login_why[0] = '\0';
        request_stream(l, 0);
        return;
    case LE_CONNECT_REFUSED:
    case LE_CONNECT_FAILED:
        /* A refusal is for good only before the first success: a server
         * that took the credentials once may take them again. */
        if (ev == LE_CONNECT_REFUSED && !l->ever_ready) {
            char why[400];
            snprintf(why, sizeof(why), "nats: the server refused the connection: %s",
                     (const char *)arg);
            OB_ERROR(l->log, "%s", why);
            fatal(l, why);
            return;
        }
        connect_failed(l, ev == LE_CONNECT_REFUSED, arg);
        return;
    case LE_CLOSE:
        set_state(l, L_CLOSING); /* connect_done comes back to CLOSING */
        return;
    default:
        return;
    }
}

/* The reply to the request in flight (an older one's is ignored). */
static int is_current_reply(ob_link *l, link_event ev, const void *arg) {
    return ev == LE_REPLY && ((const link_reply *)arg)->seq == l->ctl_seq;
}

static void st_stream(ob_link *l, link_event ev, const void *arg) {
    if (is_current_reply(l, ev, arg)) {
        stream_reply(l, arg);
    } else if (ev == LE_TIMER) {
        OB_WARN(l->log, "nats: no reply from JetStream within %d ms; retrying", CTL_TIMEOUT_MS);
        wait_then(l, L_STREAM_WAIT);
    } else {
        connected_common(l, ev);
    }
}

static void st_stream_wait(ob_link *l, link_event ev) {
    if (ev == LE_TIMER)
        request_stream(l, 0);
    else
        connected_common(l, ev);
}

/* Events every ready state treats alike. */
static void ready_common(ob_link *l, link_event ev, const void *arg) {
    switch (ev) {
    case LE_UNAVAILABLE:
        OB_WARN(l->log, "nats: JetStream unavailable (%s); pausing and asking about the stream",
                (const char *)arg);
        l->say_ready = 1;
        wait_then(l, L_STREAM_WAIT);
        return;
    case LE_REFUSED:
        if (!l->full) {
            l->refusals++;
            OB_WARN(l->log,
                    "nats: JetStream refuses new messages on stream %s: %s; pausing, rows keep "
                    "their attempts, until it takes them again",
                    l->cfg.stream, (const char *)arg);
        }
        l->full = 1;
        snprintf(l->refused, sizeof(l->refused), "%s", (const char *)arg);
        /* The pause grows while the refusals go on (a stored ack ends the
         * streak): a full stream is not asked about many times a second. */
        set_state(l, L_STREAM_WAIT);
        uv_timer_start(&l->timer, on_timer, ob_retry_delay(&l->retry, l->full_streak++), 0);
        return;
    default:
        connected_common(l, ev);
        return;
    }
}

static void st_ready(ob_link *l, link_event ev, const void *arg) {
    if (ev == LE_SUSPECT) {
        OB_DEBUG(l->log, "nats: a publish found %s; asking whether JetStream answers",
                 (const char *)arg);
        request_stream_in(l, 0, L_CHECKING);
    } else {
        ready_common(l, ev, arg);
    }
}

/* A reply to the check goes to stream_reply(): a stream that
 * answers makes the link READY again (the failure was the message's); no
 * answer at all makes it not ready (an outage, costing no attempts). */
static void st_checking(ob_link *l, link_event ev, const void *arg) {
    if (is_current_reply(l, ev, arg)) {
        stream_reply(l, arg);
    } else if (ev == LE_TIMER) {
        OB_WARN(l->log, "nats: no reply from JetStream within %d ms; pausing", CTL_TIMEOUT_MS);
        wait_then(l, L_STREAM_WAIT);
    } else if (ev != LE_SUSPECT) {
        ready_common(l, ev, arg);
    }
}

static void st_down(ob_link *l, link_event ev) {
    connected_common(l, ev);
}

static void st_closing(ob_link *l, link_event ev) {
    switch (ev) {
    case LE_CONNECTED:
        /* A connect that finished after the close was asked for. */
        l->ops->close(l);
        begin_close(l);
        return;
    case LE_CONNECT_FAILED:
    case LE_CONNECT_REFUSED:
    case LE_CLOSED:
    case LE_DISCONNECTED:
    case LE_RECONNECTED:
        begin_close(l);
        return;
    case LE_TIMER:
        OB_WARN(l->log, "nats: the client did not report its close in time; leaving its memory "
                        "in place");
        l->leak_mailbox = 1;
        begin_close(l);
        return;
    default:
        return;
    }
}

static void dispatch(ob_link *l, link_event ev, const void *arg) {
    switch (l->state) {
    case L_NEW:
        if (ev == LE_START)
            start_connect(l);
        return;
    case L_CONNECTING:
        st_connecting(l, ev, arg);
        return;
    case L_CONNECT_WAIT:
        if (ev == LE_TIMER)
            start_connect(l);
        else if (ev == LE_CLOSE)
            begin_close(l);
        return;
    case L_STREAM:
        st_stream(l, ev, arg);
        return;
    case L_STREAM_WAIT:
        st_stream_wait(l, ev);
        return;
    case L_READY:
        st_ready(l, ev, arg);
        return;
    case L_CHECKING:
        st_checking(l, ev, arg);
        return;
    case L_DOWN:
        st_down(l, ev);
        return;
    case L_FATAL:
        if (ev == LE_CLOSE)
            begin_close(l);
        return;
    case L_CLOSING:
        st_closing(l, ev);
        return;
    }
}

/* --- what the client reports: every report is an event ----------------- */

static void sink_connect_done(ob_link *l, link_connect_result r, const char *error) {
    dispatch(l,
             r == LC_OK       ? LE_CONNECTED
             : r == LC_FAILED ? LE_CONNECT_FAILED
                              : LE_CONNECT_REFUSED,
             error);
}

static void sink_control(ob_link *l, const link_reply *r) {
    l->last_answer = uv_now(l->loop);
    dispatch(l, LE_REPLY, r);
}

/* Acks go straight to the owner: they belong to its batches, not to the
 * link's state (a stored one only ends a full stream's streak, and its
 * sequence may show the stream made again). */
static void sink_ack(ob_link *l, const ob_ack *a) {
    l->last_answer = uv_now(l->loop);
    if (l->state == L_CLOSING || l->cbs.on_ack == NULL)
        return;
    if (ob_link_stream_elsewhere(l, a)) {
        /* Another stream stored it: not delivered. The link pauses first,
         * so that the reader's refusal finds it paused, and asks about its
         * stream until that stream takes the subjects again. */
        ob_ack other = *a;
        other.result = OB_ACKED_ELSEWHERE;
        other.text = a->stream;
        other.text_len = a->stream_len;
        if (l->state == L_READY || l->state == L_CHECKING) {
            uv_timer_stop(&l->timer);
            pause_then_ask(l);
        }
        l->cbs.on_ack(l->cbs.data, &other);
        return;
    }
    int remade = 0;
    if (a->result == OB_ACKED_STORED) {
        l->full = l->full_streak = 0;
        remade = ob_link_stream_stored(l, a->seq);
    }
    l->cbs.on_ack(l->cbs.data, a);
    /* A stream made again is read again (its subjects, its window). */
    if (remade && l->state == L_READY)
        dispatch(l, LE_SUSPECT, "the stream's sequence went back");
}

static void sink_wake(ob_link *l) {
    if (l->state != L_CLOSING && l->cbs.on_wake)
        l->cbs.on_wake(l->cbs.data);
}

static void sink_suspect(ob_link *l, const char *why) {
    dispatch(l, LE_SUSPECT, why);
}

static void sink_conn_event(ob_link *l, int disconnected, int reconnected, int closed) {
    if (closed)
        dispatch(l, LE_CLOSED, NULL);
    else if (disconnected && !reconnected)
        dispatch(l, LE_DISCONNECTED, NULL);
    else if (reconnected)
        dispatch(l, LE_RECONNECTED, NULL);
}

static void handle_closed(ob_link *l);

static const link_sink sink = {
    .connect_done = sink_connect_done,
    .control = sink_control,
    .ack = sink_ack,
    .wake = sink_wake,
    .suspect = sink_suspect,
    .conn_event = sink_conn_event,
    .handle_closed = handle_closed,
};

/* --- closing ------------------------------------------------------------- */

static void free_link(ob_link *l) {
    void (*cb)(void *) = l->close_cb;
    void *data = l->close_data;
    ob_nats_url_free(&l->url);
    free((char *)l->cfg.stream);
    free((char *)l->cfg.subject_prefix);
    free((char *)l->cfg.ce_source);
    free((char *)l->cfg.wake_subject);
    free(l->url_text);
    if (!l->leak_mailbox) {
        l->ops->free(l);
        free(l);
    }
    if (cb)
        cb(data);
}

static void maybe_free(ob_link *l) {
    if (l->final && l->open_handles == 0)
        free_link(l);
}

static void handle_closed(ob_link *l) {
    l->open_handles--;
    maybe_free(l);
}

static void timer_closed(uv_handle_t *h) {
    handle_closed(h->data);
}

/* Runs on each step of the close: asks the client to close, waits for its
 * confirmation (or the deadline), then closes the handles. */
static void begin_close(ob_link *l) {
    if (l->state != L_CLOSING) {
        uv_timer_stop(&l->timer);
        set_state(l, L_CLOSING);
        uv_timer_start(&l->timer, on_timer, CLOSE_WAIT_MS, 0);
        l->ops->close(l);
    }
    if (!l->ops->close_done(l, l->leak_mailbox))
        return; /* the closed and complete events come through the sink */
    if (l->final)
        return;
    uv_timer_stop(&l->timer);
    l->final = 1;
    l->ops->stop(l, l->leak_mailbox);
    ob_link_post_close(l, timer_closed);
    uv_close((uv_handle_t *)&l->timer, timer_closed);
}

/* --- public -------------------------------------------------------------- */

ob_link *ob_link_new(uv_loop_t *loop, const ob_link_config *cfg, const ob_link_callbacks *cbs,
                     char *err, size_t errlen) {
    /* Both clients are built the same way; which one is a matter of where
     * nats.c may wait (outbox_nats_client). The TLS settings are known only
     * once the URL and the options are read, so the choice is made twice. */
    ob_link *l = ob_link_new_ops(loop, cfg, cbs, &ob_link_loop_ops, err, errlen);
    if (l) {
        int tls = l->sec.tls || l->sec.tls_ca || l->sec.tls_cert;
        int threads = cfg->client == OUTBOX_NATS_CLIENT_THREADS ||
                      (cfg->client == OUTBOX_NATS_CLIENT_AUTO && tls);
        l->ops = threads ? &ob_link_threads_ops : &ob_link_loop_ops;
    }
    return l;
}

ob_link *ob_link_new_ops(uv_loop_t *loop, const ob_link_config *cfg, const ob_link_callbacks *cbs,
                         const link_ops *ops, char *err, size_t errlen) {
    ob_link *l = calloc(1, sizeof(*l));
    if (l == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    if (ob_nats_url_parse(cfg->url, &l->url, err, errlen) != 0) {
        free(l);
        return NULL;
    }
    if (cfg->options &&
        ob_nats_security_from_options(&l->sec, cfg->options, &l->url, err, errlen) != 0) {
        ob_nats_url_free(&l->url);
        free(l);
        return NULL;
    }
    l->loop = loop;
    l->ops = ops;
    l->sink = &sink;
    l->cfg = *cfg;
    l->cfg.url = NULL;
    l->cfg.stream = strdup(cfg->stream);
    l->cfg.subject_prefix = strdup(cfg->subject_prefix);
    l->cfg.ce_source = cfg->ce_source ? strdup(cfg->ce_source) : NULL;
    l->cfg.wake_subject = cfg->wake_subject ? strdup(cfg->wake_subject) : NULL;
    l->cfg.options = NULL; /* read above; its strings are borrowed by l->sec */
    l->url_text = ob_url_redact(cfg->url);
    l->cbs = *cbs;
    l->log = cfg->log;
    l->state = L_NEW;
    l->say_ready = 1;
    ob_retry_init(&l->retry, BACKOFF_MIN_MS, BACKOFF_MAX_MS);
    if (l->ops->init(l) != 0 || !l->cfg.stream || !l->cfg.subject_prefix || !l->url_text ||
        (cfg->ce_source && !l->cfg.ce_source)) {
        snprintf(err, errlen, "out of memory");
        ob_nats_url_free(&l->url);
        free((char *)l->cfg.stream);
        free((char *)l->cfg.subject_prefix);
        free((char *)l->cfg.ce_source);
        free((char *)l->cfg.wake_subject);
        free(l->url_text);
        free(l);
        return NULL;
    }
    return l;
}

int ob_link_start(ob_link *l) {
    if (l->state != L_NEW)
        return -1;
    int n = l->ops->start(l);
    if (n < 0)
        return -1;
    uv_timer_init(l->loop, &l->timer);
    l->timer.data = l;
    ob_link_post_init(l);
    l->open_handles = n + 2;
    dispatch(l, LE_START, NULL);
    return 0;
}

int ob_link_ready(const ob_link *l) {
    return is_ready(l->state);
}

int ob_link_settled(const ob_link *l) {
    return l->state != L_CHECKING;
}

void ob_link_suspect(ob_link *l, const char *why) {
    dispatch(l, LE_SUSPECT, why);
}

void ob_link_refused(ob_link *l, const char *why) {
    dispatch(l, LE_REFUSED, why);
}

const char *ob_link_refusal(const ob_link *l) {
    if (l->login_why[0])
        return l->login_why;
    if (l->elsewhere)
        return l->elsewhere_why;
    if (l->missing)
        return l->missing_why;
    return l->unlisted ? l->unlisted_why : l->full ? l->refused : NULL;
}

uint32_t ob_link_refusal_episode(const ob_link *l) {
    return l->full || l->unlisted || l->missing || l->elsewhere ? l->refusals : 0;
}

int ob_link_stream_missing(const ob_link *l) {
    return l->missing || l->elsewhere;
}

uint32_t ob_link_stream_losses(const ob_link *l) {
    return l->losses;
}

uint32_t ob_link_epoch(const ob_link *l) {
    return l->epoch;
}

uint64_t ob_link_window_ms(const ob_link *l) {
    return l->window_ms;
}

int64_t ob_link_max_bytes(const ob_link *l) {
    return l->max_bytes;
}

uint64_t ob_link_last_answer(const ob_link *l) {
    return l->last_answer;
}

void ob_link_unavailable(ob_link *l, const char *why) {
    dispatch(l, LE_UNAVAILABLE, why);
}

void ob_link_close(ob_link *l, void (*cb)(void *data), void *data) {
    l->close_cb = cb;
    l->close_data = data;
    if (l->state == L_NEW) {
        /* Never started: no handle, no thread. */
        l->final = 1;
        maybe_free(l);
        return;
    }
    dispatch(l, LE_CLOSE, NULL);
}
