#include "link.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "nats_security.h"
#include "puback.h"
#include "tls_options.h"

#define CTL_TIMEOUT_MS 5000
#define BACKOFF_MIN_MS 200
#define BACKOFF_MAX_MS 10000
#define CLOSE_WAIT_MS 5000

/* JetStream API error codes the link reacts to. */
#define JS_ERR_STREAM_NOT_FOUND 10059
#define JS_ERR_SUBJECTS_OVERLAP 10065

typedef enum link_state {
    L_IDLE,      /* not started */
    L_RESOLVING, /* waiting for uv_getaddrinfo of the first server */
    L_PROBING,   /* waiting for a TCP connect that proves the server listens */
    L_STREAM,    /* connected; waiting for the reply to a stream info/create request */
    L_READY,     /* rows may be published */
    L_DOWN,      /* disconnected; nats.c reconnects on its own threads */
    L_BACKOFF,   /* waiting before the next attempt */
    L_FATAL,     /* gave up; the owner is told and will close us */
    L_CLOSING,   /* waiting for nats.c to report connection and subscription closed */
} link_state;

/* A reply on the inbox, as read on the delivery thread: an ack, or a
 * control reply (msg kept, seq in ack.slot). */
typedef struct inbox_reply {
    ob_ack ack;
    int control;
} inbox_reply;

/* What nats.c's threads leave for the loop. Guarded by mu. */
typedef struct mailbox {
    uv_mutex_t mu;
    inbox_reply *q;
    size_t n, cap;
    uint32_t disconnects;
    uint32_t reconnects;
    int conn_closed;
    int sub_done;
    int shut; /* the async handle is closing: threads must not touch it */
} mailbox;

struct ob_link {
    uv_loop_t *loop;
    link_state state;
    ob_link_config cfg; /* strings owned */
    ob_link_callbacks cbs;
    const ob_log *log;
    ob_nats_url url;
    char *url_text;
    ob_nats_security sec;

    uv_async_t async;
    uv_timer_t timer; /* backoff, control-request timeout and close deadline */
    int open_handles;
    mailbox mb;
    inbox_reply *spare;
    size_t spare_cap;

    uv_getaddrinfo_t resolve_req;
    int resolving;
    struct sockaddr_storage addr;
    char addr_text[64];
    uv_tcp_t *probe;

    natsConnection *nc;
    natsSubscription *sub;
    char *inbox;
    size_t inbox_len;
    int stream_create; /* the control request in flight is a create */
    uint32_t ctl_seq;

    uint32_t seen_disconnects;
    uint32_t seen_reconnects;
    uint32_t epoch;
    int attempts;
    int warned_window;
    int final;        /* the last handles are closing; free when none is left */
    int leak_mailbox; /* nats.c did not confirm its close: never free what it may touch */

    void (*close_cb)(void *data);
    void *close_data;
};

static void link_step_connect(ob_link *l);
static void link_request_stream(ob_link *l, int create);

static const char *state_name(link_state s) {
    switch (s) {
    case L_IDLE:
        return "idle";
    case L_RESOLVING:
        return "resolving";
    case L_PROBING:
        return "probing";
    case L_STREAM:
        return "checking stream";
    case L_READY:
        return "ready";
    case L_DOWN:
        return "disconnected";
    case L_BACKOFF:
        return "backing off";
    case L_FATAL:
        return "fatal";
    case L_CLOSING:
        return "closing";
    }
    return "?";
}

/* Every state change goes through here; leaving READY bumps the epoch and
 * tells the owner, entering READY tells the owner too. */
static void set_state(ob_link *l, link_state s) {
    link_state old = l->state;
    if (old == s)
        return;
    l->state = s;
    OB_DEBUG(l->log, "nats: -> %s", state_name(s));
    if (old == L_READY) {
        l->epoch++;
        if (l->cbs.on_ready)
            l->cbs.on_ready(l->cbs.data, 0);
    } else if (s == L_READY) {
        l->attempts = 0;
        if (l->cbs.on_ready)
            l->cbs.on_ready(l->cbs.data, 1);
    }
}

/* --- threads -> loop ----------------------------------------------------- */

static void mb_signal(ob_link *l) {
    /* Called with mb.mu held. */
    if (!l->mb.shut)
        uv_async_send(&l->async);
}

static int parse_u32(const char **p, const char *end, uint32_t *out);

/* Reads a reply on the delivery thread. Returns 0 with *r filled, or -1 for
 * a message that is not ours. The inbox is fixed while the subscription
 * lives, so reading it here is safe. */
static int read_reply(const ob_link *l, natsMsg *msg, inbox_reply *r) {
    const char *subj = natsMsg_GetSubject(msg);
    size_t n = strlen(subj);
    memset(r, 0, sizeof(*r));
    if (l->inbox == NULL || n <= l->inbox_len + 1 || memcmp(subj, l->inbox, l->inbox_len) != 0 ||
        subj[l->inbox_len] != '.')
        return -1;
    const char *p = subj + l->inbox_len + 1, *end = subj + n;
    if (*p == 'c' && p + 1 < end && p[1] == '.') {
        p += 2;
        if (parse_u32(&p, end, &r->ack.slot) != 0 || p != end)
            return -1;
        r->control = 1;
        r->ack.msg = msg;
        return 0;
    }
    if (parse_u32(&p, end, &r->ack.worker) != 0 || p == end || *p++ != '.' ||
        parse_u32(&p, end, &r->ack.gen) != 0 || p == end || *p++ != '.' ||
        parse_u32(&p, end, &r->ack.slot) != 0 || p != end)
        return -1;
    if (natsMsg_IsNoResponders(msg)) {
        r->ack.kind = OB_ACK_NO_RESPONDERS;
        return 0;
    }
    const char *data = natsMsg_GetData(msg);
    size_t len = (size_t)natsMsg_GetDataLength(msg);
    ob_puback pa;
    if (ob_puback_parse(data, len, &pa) != 0) {
        r->ack.kind = OB_ACK_GARBLED;
        r->ack.text = data ? data : "";
        r->ack.text_len = data ? len : 0;
        r->ack.msg = msg;
    } else if (pa.ok) {
        r->ack.kind = pa.duplicate ? OB_ACK_DUPLICATE : OB_ACK_STORED;
    } else {
        r->ack.kind = OB_ACK_ERROR;
        r->ack.code = pa.code;
        r->ack.err_code = pa.err_code;
        r->ack.text = pa.desc ? pa.desc : "";
        r->ack.text_len = pa.desc_len;
        r->ack.msg = msg;
    }
    return 0;
}

static void on_nats_msg(natsConnection *nc, natsSubscription *sub, natsMsg *msg, void *closure) {
    (void)nc;
    (void)sub;
    ob_link *l = closure;
    inbox_reply r;
    /* The common answer, "stored", needs nothing more of the message: free
     * it here, on the thread that allocated it. */
    int ours = read_reply(l, msg, &r) == 0;
    if (!ours || r.ack.msg == NULL)
        natsMsg_Destroy(msg);
    if (!ours)
        return;
    uv_mutex_lock(&l->mb.mu);
    if (!l->mb.shut && l->mb.n == l->mb.cap) {
        size_t cap = l->mb.cap ? l->mb.cap * 2 : 1024;
        inbox_reply *q = realloc(l->mb.q, cap * sizeof(*q));
        if (q != NULL) {
            l->mb.q = q;
            l->mb.cap = cap;
        }
    }
    if (l->mb.shut || l->mb.n == l->mb.cap) {
        /* Closing, or out of memory: the ack is dropped and its publish
         * times out and is retried. */
        uv_mutex_unlock(&l->mb.mu);
        natsMsg_Destroy(r.ack.msg);
        return;
    }
    l->mb.q[l->mb.n++] = r;
    mb_signal(l);
    uv_mutex_unlock(&l->mb.mu);
}

static void on_nats_disconnected(natsConnection *nc, void *closure) {
    (void)nc;
    ob_link *l = closure;
    uv_mutex_lock(&l->mb.mu);
    l->mb.disconnects++;
    mb_signal(l);
    uv_mutex_unlock(&l->mb.mu);
}

static void on_nats_reconnected(natsConnection *nc, void *closure) {
    (void)nc;
    ob_link *l = closure;
    uv_mutex_lock(&l->mb.mu);
    l->mb.reconnects++;
    mb_signal(l);
    uv_mutex_unlock(&l->mb.mu);
}

static void on_nats_closed(natsConnection *nc, void *closure) {
    (void)nc;
    ob_link *l = closure;
    uv_mutex_lock(&l->mb.mu);
    l->mb.conn_closed = 1;
    mb_signal(l);
    uv_mutex_unlock(&l->mb.mu);
}

static void on_sub_complete(void *closure) {
    ob_link *l = closure;
    uv_mutex_lock(&l->mb.mu);
    l->mb.sub_done = 1;
    mb_signal(l);
    uv_mutex_unlock(&l->mb.mu);
}

/* --- backoff ------------------------------------------------------------- */

static void on_timer(uv_timer_t *t);

static void backoff(ob_link *l) {
    uint64_t d = BACKOFF_MIN_MS;
    for (int i = 0; i < l->attempts && d < BACKOFF_MAX_MS; i++)
        d *= 2;
    if (d > BACKOFF_MAX_MS)
        d = BACKOFF_MAX_MS;
    d = d / 2 + (uint64_t)rand() % (d / 2 + 1);
    l->attempts++;
    set_state(l, L_BACKOFF);
    uv_timer_start(&l->timer, on_timer, d, 0);
}

/* --- connecting ---------------------------------------------------------- */

static void drop_connection(ob_link *l) {
    if (l->sub) {
        natsSubscription_Destroy(l->sub);
        l->sub = NULL;
    }
    if (l->nc) {
        natsConnection_Destroy(l->nc);
        l->nc = NULL;
    }
}

static int nats_connect(ob_link *l) {
    natsOptions *o = NULL;
    char *servers[OB_NATS_MAX_SERVERS] = {0};
    natsStatus s = natsOptions_Create(&o);
    int n = l->url.n;
    for (int i = 0; s == NATS_OK && i < n; i++) {
        servers[i] = ob_nats_server_url(&l->url.srv[i], i == 0 ? l->addr_text : l->url.srv[i].host);
        if (servers[i] == NULL)
            s = NATS_NO_MEMORY;
    }
    if (s == NATS_OK)
        s = natsOptions_SetServers(o, (const char **)servers, n);
    if (s == NATS_OK)
        s = natsOptions_SetNoRandomize(o, true);
    if (s == NATS_OK)
        s = natsOptions_SetName(o, "outbox-uvrelay");
    if (s == NATS_OK)
        s = natsOptions_SetTimeout(o, 2000);
    if (s == NATS_OK)
        s = natsOptions_SetAllowReconnect(o, true);
    if (s == NATS_OK)
        s = natsOptions_SetMaxReconnect(o, -1);
    if (s == NATS_OK)
        s = natsOptions_SetReconnectWait(o, 250);
    if (s == NATS_OK)
        s = natsOptions_SetReconnectJitter(o, 100, 1000);
    if (s == NATS_OK)
        s = natsOptions_SetPingInterval(o, 5000);
    if (s == NATS_OK)
        s = natsOptions_SetMaxPingsOut(o, 3);
    if (s == NATS_OK)
        s = natsOptions_SetIOBufSize(o, 1024 * 1024);
    if (s == NATS_OK)
        s = natsOptions_SetWriteDeadline(o, 2000);
    if (s == NATS_OK)
        s = natsOptions_SetMaxPendingMsgs(
            o, (int)(l->cfg.max_in_flight * 4 > 65536 ? l->cfg.max_in_flight * 4 : 65536));
    if (s == NATS_OK)
        s = natsOptions_SetDisconnectedCB(o, on_nats_disconnected, l);
    if (s == NATS_OK)
        s = natsOptions_SetReconnectedCB(o, on_nats_reconnected, l);
    if (s == NATS_OK)
        s = natsOptions_SetClosedCB(o, on_nats_closed, l);
    char sec_err[512];
    if (s == NATS_OK && ob_nats_security_apply(o, &l->sec, sec_err, sizeof(sec_err)) != 0) {
        OB_WARN(l->log, "nats: %s; retrying", sec_err);
        s = NATS_INVALID_ARG;
    }
    if (s == NATS_OK)
        s = natsConnection_Connect(&l->nc, o);
    for (int i = 0; i < n; i++)
        free(servers[i]);
    natsOptions_Destroy(o);
    if (s != NATS_OK) {
        OB_WARN(l->log, "nats: cannot connect to %s: %s; retrying", l->url_text,
                natsStatus_GetText(s));
        l->nc = NULL;
        return -1;
    }

    natsInbox *inbox = NULL;
    s = natsInbox_Create(&inbox);
    if (s == NATS_OK) {
        free(l->inbox);
        l->inbox = strdup((const char *)inbox);
        l->inbox_len = l->inbox ? strlen(l->inbox) : 0;
        natsInbox_Destroy(inbox);
        if (l->inbox == NULL)
            s = NATS_NO_MEMORY;
    }
    if (s == NATS_OK) {
        char subj[128];
        snprintf(subj, sizeof(subj), "%s.>", l->inbox);
        s = natsConnection_Subscribe(&l->sub, l->nc, subj, on_nats_msg, l);
    }
    if (s == NATS_OK)
        s = natsSubscription_SetPendingLimits(l->sub, -1, -1);
    if (s == NATS_OK)
        s = natsSubscription_SetOnCompleteCB(l->sub, on_sub_complete, l);
    if (s != NATS_OK) {
        OB_WARN(l->log, "nats: cannot subscribe to the reply inbox: %s; retrying",
                natsStatus_GetText(s));
        drop_connection(l);
        return -1;
    }
    OB_INFO(l->log, "nats: connected to %s", l->url_text);
    return 0;
}

static void maybe_free(ob_link *l);

static void on_probe_closed(uv_handle_t *h) {
    ob_link *l = h->data;
    free(h);
    l->open_handles--;
    maybe_free(l);
}

static void on_probe(uv_connect_t *req, int status) {
    ob_link *l = req->data;
    free(req);
    uv_close((uv_handle_t *)l->probe, on_probe_closed);
    l->probe = NULL;
    if (l->state != L_PROBING)
        return;
    if (status != 0) {
        OB_WARN(l->log, "nats: %s (%s) is not reachable: %s; retrying", l->url_text, l->addr_text,
                uv_strerror(status));
        backoff(l);
        return;
    }
    if (nats_connect(l) != 0) {
        backoff(l);
        return;
    }
    link_request_stream(l, 0);
}

static void on_resolved(uv_getaddrinfo_t *req, int status, struct addrinfo *res) {
    ob_link *l = req->data;
    l->resolving = 0;
    l->open_handles--;
    if (l->state != L_RESOLVING) {
        uv_freeaddrinfo(res);
        maybe_free(l);
        return;
    }
    if (status != 0 || res == NULL) {
        OB_WARN(l->log, "nats: cannot resolve '%s': %s; retrying", l->url.srv[0].host,
                uv_strerror(status));
        uv_freeaddrinfo(res);
        backoff(l);
        return;
    }
    memcpy(&l->addr, res->ai_addr, res->ai_addrlen);
    if (res->ai_family == AF_INET6) {
        uv_ip6_name((struct sockaddr_in6 *)res->ai_addr, l->addr_text, sizeof(l->addr_text));
        ((struct sockaddr_in6 *)&l->addr)->sin6_port = htons((uint16_t)l->url.srv[0].port);
    } else {
        uv_ip4_name((struct sockaddr_in *)res->ai_addr, l->addr_text, sizeof(l->addr_text));
        ((struct sockaddr_in *)&l->addr)->sin_port = htons((uint16_t)l->url.srv[0].port);
    }
    uv_freeaddrinfo(res);

    l->probe = malloc(sizeof(*l->probe));
    uv_connect_t *creq = malloc(sizeof(*creq));
    if (l->probe == NULL || creq == NULL || uv_tcp_init(l->loop, l->probe) != 0) {
        free(l->probe);
        free(creq);
        l->probe = NULL;
        backoff(l);
        return;
    }
    l->probe->data = l;
    l->open_handles++;
    creq->data = l;
    set_state(l, L_PROBING);
    if (uv_tcp_connect(creq, l->probe, (const struct sockaddr *)&l->addr, on_probe) != 0) {
        free(creq);
        uv_close((uv_handle_t *)l->probe, on_probe_closed);
        l->probe = NULL;
        backoff(l);
    }
}

/* Resolve, probe, connect: the first two on the loop without blocking. */
static void link_step_connect(ob_link *l) {
    struct addrinfo hints;
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    set_state(l, L_RESOLVING);
    l->resolve_req.data = l;
    l->resolving = 1;
    l->open_handles++;
    if (uv_getaddrinfo(l->loop, &l->resolve_req, on_resolved, l->url.srv[0].host, NULL, &hints) !=
        0) {
        l->resolving = 0;
        l->open_handles--;
        backoff(l);
    }
}

/* --- the stream ---------------------------------------------------------- */

static void link_request_stream(ob_link *l, int create) {
    char subj[256], reply_to[96];
    ob_buf body = OB_BUF_INIT;
    l->ctl_seq++;
    snprintf(reply_to, sizeof(reply_to), "%s.c.%u", l->inbox, l->ctl_seq);
    l->stream_create = create;
    if (create) {
        snprintf(subj, sizeof(subj), "$JS.API.STREAM.CREATE.%s", l->cfg.stream);
        char subjects[160];
        snprintf(subjects, sizeof(subjects), "%s.>", l->cfg.subject_prefix);
        json_t *cfg = json_pack(
            "{s:s, s:[s], s:s, s:s, s:s, s:I, s:i}", "name", l->cfg.stream, "subjects", subjects,
            "retention", "limits", "storage", "file", "discard", "old", "duplicate_window",
            (json_int_t)(l->cfg.duplicate_window_ms * 1000000ULL), "num_replicas", 1);
        char *text = cfg ? json_dumps(cfg, JSON_COMPACT) : NULL;
        if (text)
            ob_buf_puts(&body, text);
        free(text);
        json_decref(cfg);
    } else {
        snprintf(subj, sizeof(subj), "$JS.API.STREAM.INFO.%s", l->cfg.stream);
    }
    set_state(l, L_STREAM);
    natsStatus s =
        natsConnection_PublishRequest(l->nc, subj, reply_to, body.p ? body.p : "", (int)body.len);
    ob_buf_free(&body);
    if (s != NATS_OK) {
        OB_WARN(l->log, "nats: stream request failed: %s; retrying", natsStatus_GetText(s));
        backoff(l);
        return;
    }
    uv_timer_start(&l->timer, on_timer, CTL_TIMEOUT_MS, 0);
}

static int subjects_cover(json_t *subjects, const char *prefix) {
    size_t i;
    json_t *v;
    size_t pl = strlen(prefix);
    json_array_foreach(subjects, i, v) {
        const char *s = json_string_value(v);
        if (s == NULL)
            continue;
        if (strcmp(s, ">") == 0)
            return 1;
        if (strncmp(s, prefix, pl) == 0 && strcmp(s + pl, ".>") == 0)
            return 1;
    }
    return 0;
}

static void check_stream(ob_link *l, json_t *info) {
    json_t *config = json_object_get(info, "config");
    json_t *subjects = json_object_get(config, "subjects");
    json_int_t window_ns = json_integer_value(json_object_get(config, "duplicate_window"));
    uint64_t window_ms = (uint64_t)window_ns / 1000000ULL;
    if (subjects && !subjects_cover(subjects, l->cfg.subject_prefix))
        OB_WARN(l->log,
                "nats: stream %s does not list the subject '%s.>'; publishes may find no "
                "stream",
                l->cfg.stream, l->cfg.subject_prefix);
    if (window_ms < l->cfg.retry_horizon_ms) {
        char why[320];
        snprintf(why, sizeof(why),
                 "stream %s keeps Msg-Ids for %llu ms, shorter than the relay's retry horizon of "
                 "%llu ms (ack timeout + maximum backoff): a late retry could be stored twice",
                 l->cfg.stream, (unsigned long long)window_ms,
                 (unsigned long long)l->cfg.retry_horizon_ms);
        if (l->cfg.strict_duplicate_window) {
            OB_ERROR(l->log, "nats: %s; refusing to run (strict duplicate window)", why);
            set_state(l, L_FATAL);
            if (l->cbs.on_fatal)
                l->cbs.on_fatal(l->cbs.data, why);
            return;
        }
        if (!l->warned_window)
            OB_WARN(l->log, "nats: %s", why);
        l->warned_window = 1;
    }
    OB_INFO(l->log, "nats: stream %s is ready (duplicate window %llu ms)", l->cfg.stream,
            (unsigned long long)window_ms);
    set_state(l, L_READY);
}

static void on_control_reply(ob_link *l, uint32_t seq, natsMsg *msg) {
    if (l->state != L_STREAM || seq != l->ctl_seq)
        return;
    uv_timer_stop(&l->timer);
    if (natsMsg_IsNoResponders(msg)) {
        OB_WARN(l->log, "nats: JetStream is not answering (no responders); retrying");
        backoff(l);
        return;
    }
    json_error_t jerr;
    json_t *root = json_loadb(natsMsg_GetData(msg), (size_t)natsMsg_GetDataLength(msg), 0, &jerr);
    if (root == NULL) {
        OB_WARN(l->log, "nats: unreadable JetStream reply: %s; retrying", jerr.text);
        backoff(l);
        return;
    }
    json_t *err = json_object_get(root, "error");
    if (err) {
        int code = (int)json_integer_value(json_object_get(err, "err_code"));
        const char *desc = json_string_value(json_object_get(err, "description"));
        if (!l->stream_create && code == JS_ERR_STREAM_NOT_FOUND) {
            OB_INFO(l->log, "nats: stream %s does not exist; creating it for '%s.>'", l->cfg.stream,
                    l->cfg.subject_prefix);
            json_decref(root);
            link_request_stream(l, 1);
            return;
        }
        if (l->stream_create && code == JS_ERR_SUBJECTS_OVERLAP) {
            OB_WARN(l->log,
                    "nats: cannot create stream %s: %s; another stream already takes '%s.>', "
                    "publishing to it",
                    l->cfg.stream, desc ? desc : "subjects overlap", l->cfg.subject_prefix);
            json_decref(root);
            set_state(l, L_READY);
            return;
        }
        OB_WARN(l->log, "nats: JetStream refused the stream %s request: %s (%d); retrying",
                l->stream_create ? "create" : "info", desc ? desc : "?", code);
        json_decref(root);
        backoff(l);
        return;
    }
    if (l->stream_create)
        OB_INFO(l->log, "nats: created stream %s", l->cfg.stream);
    check_stream(l, root);
    json_decref(root);
}

/* --- the mailbox, on the loop -------------------------------------------- */

static void finish_close(ob_link *l);

static int parse_u32(const char **p, const char *end, uint32_t *out) {
    const char *s = *p;
    uint64_t v = 0;
    if (s >= end || *s < '0' || *s > '9')
        return -1;
    while (s < end && *s >= '0' && *s <= '9') {
        v = v * 10 + (uint64_t)(*s - '0');
        if (v > UINT32_MAX)
            return -1;
        s++;
    }
    *p = s;
    *out = (uint32_t)v;
    return 0;
}

static void on_async(uv_async_t *h) {
    ob_link *l = h->data;
    /* Swap the queue for the spare one, so the lock is held only briefly
     * and neither array is reallocated once both reached working size. */
    uv_mutex_lock(&l->mb.mu);
    inbox_reply *q = l->mb.q;
    size_t n = l->mb.n, qcap = l->mb.cap;
    l->mb.q = l->spare;
    l->mb.cap = l->spare_cap;
    l->mb.n = 0;
    l->spare = q;
    l->spare_cap = qcap;
    uint32_t disc = l->mb.disconnects, reco = l->mb.reconnects;
    int closed = l->mb.conn_closed, sub_done = l->mb.sub_done;
    uv_mutex_unlock(&l->mb.mu);

    for (size_t i = 0; i < n; i++) {
        if (l->state != L_CLOSING) {
            if (q[i].control)
                on_control_reply(l, q[i].ack.slot, q[i].ack.msg);
            else if (l->cbs.on_ack)
                l->cbs.on_ack(l->cbs.data, &q[i].ack);
        }
        natsMsg_Destroy(q[i].ack.msg);
    }

    if (l->state == L_CLOSING) {
        if (closed && (sub_done || l->sub == NULL))
            finish_close(l);
        return;
    }
    if (disc != l->seen_disconnects) {
        l->seen_disconnects = disc;
        /* Also from BACKOFF: JetStream may stop answering just before the
         * server closes the connection. */
        if (l->state == L_READY || l->state == L_STREAM || l->state == L_BACKOFF) {
            uv_timer_stop(&l->timer);
            OB_WARN(l->log, "nats: disconnected; pausing until the server is back");
            set_state(l, L_DOWN);
        }
    }
    if (reco != l->seen_reconnects) {
        l->seen_reconnects = reco;
        if (l->state == L_DOWN || l->state == L_BACKOFF || l->state == L_READY) {
            uv_timer_stop(&l->timer);
            OB_INFO(l->log, "nats: reconnected; checking the stream");
            if (l->state == L_READY)
                set_state(l, L_DOWN);
            link_request_stream(l, 0);
        }
    }
}

static void on_timer(uv_timer_t *t) {
    ob_link *l = t->data;
    switch (l->state) {
    case L_BACKOFF:
        if (l->nc == NULL)
            link_step_connect(l);
        else if (natsConnection_Status(l->nc) == NATS_CONN_STATUS_CONNECTED)
            link_request_stream(l, 0);
        else
            set_state(l, L_DOWN); /* the reconnected event will resume us */
        break;
    case L_STREAM:
        OB_WARN(l->log, "nats: no reply from JetStream within %d ms; retrying", CTL_TIMEOUT_MS);
        backoff(l);
        break;
    case L_CLOSING:
        OB_WARN(l->log, "nats: the client did not report its close in time; leaving its memory "
                        "in place");
        finish_close(l);
        break;
    default:
        break;
    }
}

/* --- public -------------------------------------------------------------- */

ob_link *ob_link_new(uv_loop_t *loop, const ob_link_config *cfg, const ob_link_callbacks *cbs,
                     char *err, size_t errlen) {
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
    l->cfg = *cfg;
    l->cfg.url = NULL;
    l->cfg.stream = strdup(cfg->stream);
    l->cfg.subject_prefix = strdup(cfg->subject_prefix);
    l->url_text = ob_url_redact(cfg->url);
    l->cbs = *cbs;
    l->log = cfg->log;
    l->state = L_IDLE;
    if (uv_mutex_init(&l->mb.mu) != 0 || !l->cfg.stream || !l->cfg.subject_prefix || !l->url_text) {
        snprintf(err, errlen, "out of memory");
        ob_nats_url_free(&l->url);
        free((char *)l->cfg.stream);
        free((char *)l->cfg.subject_prefix);
        free(l->url_text);
        free(l);
        return NULL;
    }
    return l;
}

int ob_link_start(ob_link *l) {
    if (l->state != L_IDLE)
        return -1;
    uv_async_init(l->loop, &l->async, on_async);
    uv_timer_init(l->loop, &l->timer);
    l->async.data = l;
    l->timer.data = l;
    l->open_handles = 2;
    link_step_connect(l);
    return 0;
}

int ob_link_ready(const ob_link *l) {
    return l->state == L_READY;
}

uint32_t ob_link_epoch(const ob_link *l) {
    return l->epoch;
}

natsConnection *ob_link_conn(const ob_link *l) {
    return l->nc;
}

size_t ob_link_reply(const ob_link *l, uint32_t worker, uint32_t gen, uint32_t slot, char *out) {
    size_t n = l->inbox_len;
    memcpy(out, l->inbox, n);
    out[n++] = '.';
    n += ob_u64_to_dec(worker, out + n);
    out[n++] = '.';
    n += ob_u64_to_dec(gen, out + n);
    out[n++] = '.';
    n += ob_u64_to_dec(slot, out + n);
    return n;
}

void ob_link_unavailable(ob_link *l, const char *why) {
    if (l->state != L_READY)
        return;
    OB_WARN(l->log, "nats: JetStream unavailable (%s); pausing and probing the stream", why);
    backoff(l);
}

static void free_link(ob_link *l) {
    void (*cb)(void *) = l->close_cb;
    void *data = l->close_data;
    ob_nats_url_free(&l->url);
    free((char *)l->cfg.stream);
    free((char *)l->cfg.subject_prefix);
    free(l->url_text);
    free(l->inbox);
    free(l->spare);
    if (!l->leak_mailbox) {
        for (size_t i = 0; i < l->mb.n; i++)
            natsMsg_Destroy(l->mb.q[i].ack.msg);
        free(l->mb.q);
        uv_mutex_destroy(&l->mb.mu);
        free(l);
    }
    if (cb)
        cb(data);
}

static void maybe_free(ob_link *l) {
    if (l->final && l->open_handles == 0)
        free_link(l);
}

static void handle_closed(uv_handle_t *h) {
    ob_link *l = h->data;
    l->open_handles--;
    maybe_free(l);
}

static void finish_close(ob_link *l) {
    uv_timer_stop(&l->timer);
    uv_mutex_lock(&l->mb.mu);
    l->mb.shut = 1;
    int clean = l->mb.conn_closed && (l->mb.sub_done || l->sub == NULL);
    uv_mutex_unlock(&l->mb.mu);
    if (clean)
        drop_connection(l);
    else
        l->leak_mailbox = 1; /* nats.c may still call us: keep what it could touch */
    l->final = 1;
    uv_close((uv_handle_t *)&l->async, handle_closed);
    uv_close((uv_handle_t *)&l->timer, handle_closed);
}

void ob_link_close(ob_link *l, void (*cb)(void *data), void *data) {
    l->close_cb = cb;
    l->close_data = data;
    if (l->state == L_IDLE) {
        /* Never started: no handle, no thread. */
        l->final = 1;
        maybe_free(l);
        return;
    }
    uv_timer_stop(&l->timer);
    if (l->resolving)
        uv_cancel((uv_req_t *)&l->resolve_req);
    set_state(l, L_CLOSING);
    if (l->nc == NULL) {
        uv_mutex_lock(&l->mb.mu);
        l->mb.conn_closed = 1;
        uv_mutex_unlock(&l->mb.mu);
        finish_close(l);
        return;
    }
    if (l->sub)
        natsSubscription_Unsubscribe(l->sub);
    natsConnection_Close(l->nc);
    uv_timer_start(&l->timer, on_timer, CLOSE_WAIT_MS, 0);
    /* The closed and complete events arrive through the mailbox. */
    uv_async_send(&l->async);
}
