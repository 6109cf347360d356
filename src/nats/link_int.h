/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The link's private structure, shared by link.c (the state machine),
 * link_mailbox.c (what nats.c's threads hand to the loop) and
 * link_publish.c (rows to messages).
 */
#ifndef OB_LINK_INT_H
#define OB_LINK_INT_H

#include <nats/nats.h>

#include "buf.h"
#include "link.h"
#include "nats_security.h"
#include "retry.h"

/* How many spent messages, and how much payload, are kept back at most
 * (see ob_link.spent). */
#define LINK_SPENT_MAX 4096
#define LINK_SPENT_BYTES (4u << 20)

typedef enum link_state {
    L_NEW,          /* not started */
    L_CONNECTING,   /* nats.c connecting on the thread pool (every listed server) */
    L_CONNECT_WAIT, /* no connection; waiting before building one again */
    L_STREAM,       /* connected; waiting for the reply to a stream info/create request */
    L_STREAM_WAIT,  /* connected; JetStream did not answer: waiting before asking again */
    L_READY,        /* rows may be published */
    L_CHECKING,     /* rows may be published; a publish found no responders or a 503, and
                       the stream is being asked whether JetStream is up (the answer tells a
                       broker outage from one message's failure) */
    L_DOWN,         /* disconnected; nats.c reconnects on its own threads */
    L_FATAL,        /* gave up; the owner was told and will close us */
    L_CLOSING       /* waiting for nats.c to report the close (or a connect to end) */
} link_state;

/* One nats.c connection's identity, given to nats.c as the callbacks'
 * closure. It lives as long as the link, since nats.c may call back until
 * it reports the close. */
typedef struct link_conn {
    struct ob_link *l;
    uint32_t id;
    char inbox[64];
    size_t inbox_len;
    int closed;   /* nats.c reported the connection closed (under mb.mu) */
    int sub_done; /* nats.c reported the subscription finished (under mb.mu) */
    struct link_conn *next;
} link_conn;

/* A reply on the inbox, as read where it arrived: an ack, or a control
 * reply (sequence number in ack.slot). `msg` is the reply, kept while the
 * ack's text points into it (the threaded client keeps every one until the
 * loop has handed it on; the loop's client keeps none: NULL). */
typedef struct inbox_reply {
    ob_ack ack;
    int control;
    natsMsg *msg;
} inbox_reply;

/* What nats.c's threads leave for the loop. Guarded by mu. */
typedef struct mailbox {
    uv_mutex_t mu;
    inbox_reply *q;
    size_t n, cap;
    uint32_t current;     /* id of the connection in use; events of others are dropped */
    uint32_t disconnects; /* of the current connection */
    uint32_t reconnects;
    int current_closed; /* the current connection was closed by nats.c */
    uint32_t wakes;     /* doorbell messages */
    int shut;           /* the async handle is closing: threads must not touch it */
} mailbox;

/* What a connect on the thread pool works with and brings back. */
typedef struct connect_job {
    uv_work_t req;
    natsOptions *opts;
    natsConnection *nc;
    natsStatus status;
    char error[256];
} connect_job;

/* A reply to a JetStream API request, as the state machine reads it. */
typedef struct link_reply {
    uint32_t seq; /* from "<inbox>.c.<seq>" */
    int no_responders;
    const char *data;
    size_t len;
} link_reply;

/* How a connect ended. */
typedef enum link_connect_result {
    LC_OK,
    LC_FAILED,         /* another try may work */
    LC_FAILED_FOR_GOOD /* refused: credentials, TLS; another try will not heal it */
} link_connect_result;

/* The seam between the state machine (link.c) and the client: link.c calls
 * the client only through these, and the client reports only through
 * link_sink. link_client_loop.c and link_client_threads.c are the real ones; the unit test has a
 * fake. */
typedef struct link_ops {
    /* Where nats.c reads and writes, for the log ("on the relay's loop"). */
    const char *name;
    /* Sets up the client's part of a new link (nothing on the loop). 0 or
     * -1. */
    int (*init)(ob_link *l);
    /* Puts the client's handles on the loop; returns how many, or -1. */
    int (*start)(ob_link *l);
    /* The client's own natsOptions on top of the shared ones (may be NULL). */
    natsStatus (*tune)(ob_link *l, natsOptions *o);
    /* Starts a new connection; sink.connect_done follows. 0 or -1 (then
     * nothing follows). */
    int (*connect)(ob_link *l);
    /* Subscribes the inbox (and the wake subject) on the new connection. */
    int (*subscribe)(ob_link *l);
    /* Publishes a JetStream API request whose reply comes back as
     * sink.control. 0 or -1 with a reason in *why. */
    int (*request)(ob_link *l, const char *subj, const char *reply, const char *body, size_t len,
                   const char **why);
    /* The client's last error on the connection ("" when none). */
    const char *(*last_error)(ob_link *l);
    /* Asks the client to close the connection; sink.conn_event(closed)
     * follows. */
    void (*close)(ob_link *l);
    /* 1 once nothing of the client is under way (a connect off the loop
     * cannot be stopped) and, unless leak, it confirmed the close of the
     * connection in use (or there is none). */
    int (*close_done)(ob_link *l, int leak);
    /* Frees the connection in use and its subscriptions. */
    void (*drop)(ob_link *l);
    /* Closes the handles start opened (each closed one calls
     * sink.handle_closed). leak: the client did not confirm its
     * close, so what it may still touch is never freed. */
    void (*stop)(ob_link *l, int leak);
    /* 1 when the client does not reconnect by itself: a close it reports
     * is a lost connection, which the link replaces. */
    int (*rebuilds)(ob_link *l);
    /* Frees the client's memory (not called when leaking). */
    void (*free)(ob_link *l);
    /* A message was published while the connection looked idle: a client
     * that checks liveness itself watches closely again (may be NULL). */
    void (*busy)(ob_link *l);
} link_ops;

/* What the client reports, on the loop. Set by link.c. */
typedef struct link_sink {
    void (*connect_done)(ob_link *l, link_connect_result r, const char *error);
    void (*control)(ob_link *l, const link_reply *r);
    void (*ack)(ob_link *l, const ob_ack *a);
    void (*wake)(ob_link *l);
    /* A reply whose request is not known said "no responders". */
    void (*suspect)(ob_link *l, const char *why);
    void (*conn_event)(ob_link *l, int disconnected, int reconnected, int closed);
    void (*handle_closed)(ob_link *l);
} link_sink;

struct ob_link {
    /* The state machine's (link.c). */
    uv_loop_t *loop;
    link_state state;
    const link_ops *ops;
    const link_sink *sink;
    ob_link_config cfg; /* strings owned */
    ob_link_callbacks cbs;
    const ob_log *log;
    ob_nats_url url;
    char *url_text; /* redacted, for messages */
    ob_nats_security sec;
    uv_timer_t timer; /* backoff, control-request timeout and close deadline */
    int open_handles;
    /* Readiness changes, posted by set_state and delivered to the owner
     * from the loop's idle phase (link_post.c), in order: never inside the
     * call that caused them (a reader's ack handler among them). */
    uv_idle_t post;
    int post_on; /* the handle is initialised and not closing */
    int nposted;
    uint8_t posted[16];

    int stream_create; /* the control request in flight is a create */
    uint32_t ctl_seq;
    uint32_t epoch;
    uint64_t last_answer;
    ob_retry retry;
    int failures;
    int ever_ready;
    int warned_window;
    int warned_subjects;
    int warned_replicas;
    uint64_t window_ms; /* the stream's duplicate window, once read */
    int64_t max_bytes;  /* the stream's max_bytes, once read (<= 0: no limit) */
    int full;           /* the stream refused a message as full; cleared by the next stored ack */
    int full_streak;    /* pauses for a full stream since the last stored ack */
    uint32_t refusals;  /* refusal episodes begun (a `full` or `unlisted` not set before) */
    int unlisted;       /* the stream lists no subject the relay publishes to: paused */
    char unlisted_why[320];
    int stream_seen;       /* an info or create reply described the stream: never create it again */
    int missing;           /* the stream seen was found missing (deleted): paused */
    uint32_t losses;       /* times the stream seen was found missing */
    char missing_why[200]; /* for /readyz */
    int stream_lists;      /* the stream seen lists subjects: its acks must name it */
    int elsewhere;         /* another stream stored the relay's messages: paused */
    char elsewhere_why[360]; /* for /readyz */
    char stream_was[400];    /* the stream's settings as last read, for the operator */
    uint64_t top_seq;        /* the highest sequence a stored ack gave since the stream was seen */
    char login_why[320];     /* the server refuses the connection after a first success: why */
    int say_ready;           /* the next "stream is ready" is worth an info line */
    int final;               /* the last handles are closing; free when none is left */
    int leak_mailbox;        /* nats.c did not confirm its close: never free what it may touch */
    void (*close_cb)(void *data);
    void *close_data;

    /* The clients' (link_client*.c, link_mailbox.c, link_publish.c). */
    struct ob_nats_loop *nl;
    uv_timer_t probe;     /* on the loop: the liveness check that stands in for nats.c's pings */
    int probes_out;       /* probes sent since the last read */
    uint64_t probe_reads; /* read events counted at the last probe tick */
    uint64_t sends;       /* publishes and requests so far */
    uint64_t probe_sends; /* sends counted at the last probe tick */
    int probe_slow;       /* on the loop: idle, the probe ticks every PROBE_IDLE_MS */
    int lost;             /* on the loop: the liveness check closed the connection */
    uv_async_t async;
    int connecting; /* a connect_job is on the thread pool */
    connect_job job;
    mailbox mb;
    inbox_reply *spare;
    size_t spare_cap;
    natsConnection *nc;
    natsSubscription *sub;
    natsSubscription *wake_sub;
    uint32_t seen_wakes;
    uint32_t seen_disconnects;
    uint32_t seen_reconnects;
    link_conn *conn;  /* of nc; its inbox names the control replies */
    link_conn *conns; /* every one made, freed with the link */
    uint32_t next_conn_id;

    char refused[200]; /* why JetStream refused a message as it would any (while `full`) */

    /* Published and received messages whose destroy is put off. nats.c
     * hands every destroyed message to its collector thread and wakes that
     * thread when it sleeps; on a busy machine the woken thread takes the
     * loop's core at once, frees the one message and sleeps again, so a
     * run of destroys costs a wake for nearly every message until the
     * scheduler stops favouring it (some 20 wakes a run, whatever its
     * length). Few long runs, then: at LINK_SPENT_MAX messages or
     * LINK_SPENT_BYTES of payload, and at a probe tick that follows a
     * tick with nothing sent (on the loop) or at each burst of acks (threaded). */
    natsMsg *spent[LINK_SPENT_MAX];
    int nspent;
    size_t spent_bytes;

    /* on the loop: "no responders" answers taken off the inbox before
     * NextMsg would drop them unread (link_client_loop.c, nr_filter); under
     * mb.mu. */
    inbox_reply *nr;
    size_t nnr, nr_cap;

    ob_buf subject; /* publish scratch */
    ob_buf scratch;
    ob_buf block; /* a message's header block and payload, before nats.c copies them */
    char reply[96];
    size_t reply_prefix; /* "<inbox>." length in reply */
};

/* link.c: a link over the given client (the unit test passes a fake). */
ob_link *ob_link_new_ops(uv_loop_t *loop, const ob_link_config *cfg, const ob_link_callbacks *cbs,
                         const link_ops *ops, char *err, size_t errlen);

/* The two clients: nats.c's socket on the loop (link_client_loop.c), and
 * nats.c on its own threads (link_client_threads.c). */
extern const link_ops ob_link_loop_ops;
extern const link_ops ob_link_threads_ops;

/* link_client.c: what both clients share, for their ops tables. */
int ob_link_client_connect(ob_link *l);
int ob_link_client_request(ob_link *l, const char *subj, const char *reply, const char *body,
                           size_t len, const char **why);
const char *ob_link_client_last_error(ob_link *l);
int ob_link_client_close_done(ob_link *l, int leak);
/* Ends the subscriptions of the connection in use; -1 when there is none
 * (nothing to close), else 0. */
int ob_link_client_unsubscribe(ob_link *l);
void ob_link_client_drop(ob_link *l);
/* Shuts the mailbox, drops (or, leaking, forgets) the connection and
 * closes the async handle; a client with more handles closes them too. */
void ob_link_client_stop(ob_link *l, int leak);
void ob_link_client_handle_closed(uv_handle_t *h);
void ob_link_client_free(ob_link *l);

/* link_mailbox.c: what nats.c's threads hand to the loop. */
int ob_link_mailbox_init(ob_link *l);
void ob_link_mailbox_free(ob_link *l);
/* Makes c the connection whose events count. */
void ob_link_mailbox_current(ob_link *l, link_conn *c);
/* From now on nats.c's threads leave the async handle alone. */
void ob_link_mailbox_shut(ob_link *l);
/* Registers the callbacks that feed the mailbox for connection c. */
natsStatus ob_link_mailbox_options(natsOptions *o, link_conn *c);
/* Subscribes c's inbox with the mailbox's message handler, and the wake
 * subject when there is one. */
natsStatus ob_link_mailbox_subscribe(ob_link *l, link_conn *c);
/* The uv_async_t callback: hands replies, wakes and connection events to
 * l->sink. */
void ob_link_mailbox_on_async(uv_async_t *h);
/* Whether connection c confirmed its close (and its subscription's). */
int ob_link_conn_done(ob_link *l, link_conn *c);

/* link_post.c: readiness posted to the owner. */
void ob_link_post_init(ob_link *l);
/* Posts on_ready(ready); delivered from the idle phase, after the caller returned. */
void ob_link_post_ready(ob_link *l, int ready);
/* Delivers what is still posted and closes the handle (the link's last
 * handles are closing; nothing is posted after). */
void ob_link_post_close(ob_link *l, uv_close_cb cb);

/* link_reply.c: reads a reply on c's inbox into *r; -1 for a message that
 * is not ours. */
int ob_link_read_reply(const link_conn *c, natsMsg *msg, inbox_reply *r);

/* link_stream.c: the stream requests and what their replies mean. */
typedef enum link_stream_next {
    LS_READY,  /* the stream takes the relay's subjects: publish */
    LS_CREATE, /* it does not exist and was never seen: create it */
    LS_RETRY,  /* no usable answer (said): ask again after the backoff */
    LS_PAUSE,  /* the operator must mend the stream (deleted, or none of the relay's
                  subjects; said once): not ready, ask again */
    LS_FATAL   /* a misconfiguration retrying will not heal: the reason is in why */
} link_stream_next;
/* The subject (of n bytes) and, for a create, the body of a stream info or
 * create request. */
void ob_link_stream_request(const ob_link *l, int create, char *subj, size_t n, ob_buf *body);
/* Reads the reply to that request (l->stream_create says which), keeps
 * what it learnt of the stream in l, logs what is worth it, and says what
 * follows; why (of n bytes) gets the reason of LS_FATAL. */
link_stream_next ob_link_stream_reply(ob_link *l, const link_reply *msg, char *why, size_t n);

/* A message was stored at sequence seq. Returns 1 when the sequence went
 * back: the stream was deleted and made again between two publishes (said
 * once, counted as a loss). */
int ob_link_stream_stored(ob_link *l, uint64_t seq);
/* 1 when the ack (stored or duplicate) names a stream other than the
 * relay's, seen listing subjects: another stream took the relay's subjects
 * (the relay's was deleted, or lost them) and the message reached a stream
 * nobody reads. Sets `elsewhere` and says it once per episode. */
int ob_link_stream_elsewhere(ob_link *l, const ob_ack *a);

/* link_publish.c */
/* Destroys the published messages kept back. */
void ob_link_spent_flush(ob_link *l);
/* Keeps msg back, to be destroyed with the others of its burst. */
void ob_link_spend(ob_link *l, natsMsg *msg, size_t bytes);

#endif
