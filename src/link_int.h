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

/* A reply on the inbox, as read on the delivery thread: an ack, or a
 * control reply (msg kept, sequence number in ack.slot). */
typedef struct inbox_reply {
    ob_ack ack;
    int control;
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

struct ob_link {
    uv_loop_t *loop;
    link_state state;
    ob_link_config cfg; /* strings owned */
    ob_link_callbacks cbs;
    const ob_log *log;
    ob_nats_url url;
    char *url_text; /* redacted, for messages */
    ob_nats_security sec;

    uv_async_t async;
    uv_timer_t timer; /* backoff, control-request timeout and close deadline */
    int open_handles;
    int connecting; /* a connect_job is on the thread pool */
    connect_job job;
    mailbox mb;
    inbox_reply *spare;
    size_t spare_cap;

    natsConnection *nc;
    natsSubscription *sub;
    natsSubscription *wake_sub;
    uint32_t seen_wakes;
    link_conn *conn;  /* of nc */
    link_conn *conns; /* every one made, freed with the link */
    uint32_t next_conn_id;

    int stream_create; /* the control request in flight is a create */
    uint32_t ctl_seq;

    uint32_t seen_disconnects;
    uint32_t seen_reconnects;
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
    int say_ready;      /* the next "stream is ready" is worth an info line */
    int final;          /* the last handles are closing; free when none is left */
    int leak_mailbox;   /* nats.c did not confirm its close: never free what it may touch */

    char refused[200]; /* why JetStream refused a message as it would any (while `full`) */

    /* Published messages whose destroy is put off. nats.c hands every
     * destroyed message to its collector thread and wakes that thread when
     * it sleeps: destroyed one by one, each message costs a thread switch;
     * destroyed together (when acks arrive, or past a count or a size),
     * a burst of them costs one. */
    natsMsg *spent[256];
    int nspent;
    size_t spent_bytes;

    ob_buf subject; /* publish scratch */
    ob_buf scratch;
    char reply[96];
    size_t reply_prefix; /* "<inbox>." length in reply */

    void (*close_cb)(void *data);
    void *close_data;
};

/* link_mailbox.c */
int ob_link_mailbox_init(ob_link *l);
void ob_link_mailbox_free(ob_link *l);
/* Registers the callbacks that feed the mailbox for connection c. */
natsStatus ob_link_mailbox_options(natsOptions *o, link_conn *c);
/* Subscribes c's inbox with the mailbox's message handler, and the wake
 * subject when there is one. */
natsStatus ob_link_mailbox_subscribe(ob_link *l, link_conn *c);
/* The uv_async_t callback: replies to on_ack / the control handler, then
 * connection events to the state machine. */
void ob_link_on_async(uv_async_t *h);
/* Whether connection c confirmed its close (and its subscription's). */
int ob_link_conn_done(ob_link *l, link_conn *c);

/* link_publish.c */
/* Destroys the published messages kept back. */
void ob_link_spent_flush(ob_link *l);

/* link.c, for the mailbox */
void ob_link_control_reply(ob_link *l, uint32_t seq, natsMsg *msg);
void ob_link_conn_event(ob_link *l, int disconnected, int reconnected, int closed);

#endif
