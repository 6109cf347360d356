/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The monitoring responder: one uv_tcp_t listener and, per connection, a
 * uv_tcp_t and a uv_timer_t. A connection reads one request into a buffer of
 * max_request_bytes, answers it, shuts its side down and closes; there is no
 * keep-alive, which keeps every connection short and the code small. The
 * timer bounds the whole life of a connection, so a slow or silent client
 * costs one slot for request_timeout_ms at most.
 *
 * A connection's states (client_state; set_state() logs each change at debug):
 *
 *   READING --request read, refused or timed out: respond--> WRITING
 *   WRITING --response written: shut our side down--------> SHUTTING
 *   SHUTTING --shutdown done------------------------------> CLOSING
 *   READING, WRITING, SHUTTING --error, EOF, stop---------> CLOSING
 *   CLOSING: both handles closing; the last close callback frees it.
 *
 * libmicrohttpd could be driven from the loop through uv_poll_t in its
 * external-select mode, but it would bring its own request parser, thread
 * options and allocation for three fixed GET paths; a responder that only
 * knows those paths is shorter than the glue it would need.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "log.h"
#include "metrics.h"
#include "outbox/http.h"

typedef enum client_state {
    C_READING,  /* waiting for the end of the request headers */
    C_WRITING,  /* the response is being written */
    C_SHUTTING, /* the response is out; waiting for our shutdown to complete */
    C_CLOSING,  /* uv_close called on both handles; freed by the last close cb */
} client_state;

static const char *const state_names[] = {"reading", "writing", "shutting", "closing"};

/* Refused connections (over max_clients) are counted, and said at most once
 * per this interval, with the count, so that a client opening connections in
 * a loop cannot flood the log. */
#define REFUSED_LOG_INTERVAL_MS 10000

typedef struct client {
    uv_tcp_t tcp;
    uv_timer_t timer;
    uv_write_t wr;
    uv_shutdown_t sd;
    struct outbox_http *h;
    client_state state;
    int open_handles;
    char *req;
    size_t len;
    ob_buf out;
    struct client *prev, *next;
} client;

typedef struct bound_relay {
    outbox_relay *relay;
    char *table;
} bound_relay;

/* A counter of the embedder's (outbox_http_add_counter). */
typedef struct extra_counter {
    char *name, *help;
    const uint64_t *value;
} extra_counter;

struct outbox_http {
    uv_loop_t *loop;
    outbox_http_options o;
    char *listen;
    struct sockaddr_storage addr;
    uv_tcp_t *listener; /* heap: freed by its close callback, so a failed start
                         * leaves nothing on the loop that the handle must wait for */
    int started, stopping, listener_open;
    uint64_t refused;         /* connections refused and not yet logged */
    uint64_t refused_said_ms; /* loop time of the last warning about them; 0: never */
    int port;
    bound_relay *relays;
    outbox_stats *snap;
    const char **labels;
    size_t nrelays;
    extra_counter *counters;
    size_t ncounters;
    client *clients; /* open connections, a doubly linked list */
    uint32_t nclients;
    ob_buf body; /* scratch for the metrics text, reused */
    ob_log log;
    outbox_http_stop_cb stop_cb;
    void *stop_data;
};

void outbox_http_options_init(outbox_http_options *o) {
    memset(o, 0, sizeof(*o));
    o->listen = "127.0.0.1:9464";
    o->request_timeout_ms = 5000;
    o->max_request_bytes = 8192;
    o->max_clients = 64;
    o->log_level = OUTBOX_LOG_INFO;
}

/* Parses HOST:PORT with a literal address into `ss`. */
static int parse_listen(const char *s, struct sockaddr_storage *ss, char *err, size_t errlen) {
    char host[64];
    const char *colon;
    if (s == NULL || *s == '\0')
        return ob_errf(err, errlen, OUTBOX_EINVAL, "the listen address is empty");
    if (*s == '[') {
        const char *close = strchr(s, ']');
        if (close == NULL || close[1] != ':')
            return ob_errf(err, errlen, OUTBOX_EINVAL, "'%s': expected [IPv6]:PORT", s);
        if ((size_t)(close - s - 1) >= sizeof(host))
            return ob_errf(err, errlen, OUTBOX_EINVAL, "'%s': address too long", s);
        memcpy(host, s + 1, (size_t)(close - s - 1));
        host[close - s - 1] = '\0';
        colon = close + 1;
    } else {
        colon = strrchr(s, ':');
        if (colon == NULL)
            return ob_errf(err, errlen, OUTBOX_EINVAL, "'%s': expected HOST:PORT", s);
        if ((size_t)(colon - s) >= sizeof(host))
            return ob_errf(err, errlen, OUTBOX_EINVAL, "'%s': address too long", s);
        memcpy(host, s, (size_t)(colon - s));
        host[colon - s] = '\0';
    }
    char *end;
    const char *ps = colon + 1;
    long port = strtol(ps, &end, 10);
    if (*ps < '0' || *ps > '9' || *end != '\0' || port < 0 || port > 65535)
        return ob_errf(err, errlen, OUTBOX_EINVAL, "'%s': the port must be 0-65535", s);
    if (host[0] == '\0')
        strcpy(host, "0.0.0.0");
    else if (strcmp(host, "localhost") == 0)
        strcpy(host, "127.0.0.1");
    memset(ss, 0, sizeof(*ss));
    if (uv_ip4_addr(host, (int)port, (struct sockaddr_in *)ss) == 0)
        return OUTBOX_OK;
    if (uv_ip6_addr(host, (int)port, (struct sockaddr_in6 *)ss) == 0)
        return OUTBOX_OK;
    return ob_errf(err, errlen, OUTBOX_EINVAL,
                   "'%s': the host must be an IP address or localhost (nothing is resolved)", s);
}

int outbox_http_create(outbox_http **out, uv_loop_t *loop, const outbox_http_options *o,
                       char *errbuf, size_t errlen) {
    *out = NULL;
    if (loop == NULL || o == NULL)
        return ob_errf(errbuf, errlen, OUTBOX_EINVAL, "loop and options are required");
    if (o->max_request_bytes < 256 || o->max_request_bytes > (1u << 20))
        return ob_errf(errbuf, errlen, OUTBOX_EINVAL, "max_request_bytes must be 256 to 1 MiB");
    if (o->request_timeout_ms == 0 || o->max_clients == 0)
        return ob_errf(errbuf, errlen, OUTBOX_EINVAL,
                       "request_timeout_ms and max_clients must be positive");
    outbox_http *h = calloc(1, sizeof(*h));
    if (h == NULL)
        return ob_errf(errbuf, errlen, OUTBOX_ENOMEM, "out of memory");
    int rc = parse_listen(o->listen, &h->addr, errbuf, errlen);
    if (rc != OUTBOX_OK) {
        free(h);
        return rc;
    }
    h->loop = loop;
    h->o = *o;
    h->listen = strdup(o->listen);
    if (h->listen == NULL) {
        free(h);
        return ob_errf(errbuf, errlen, OUTBOX_ENOMEM, "out of memory");
    }
    h->o.listen = h->listen;
    h->port = -1;
    h->log.fn = o->log;
    h->log.data = o->log_data;
    h->log.level = o->log_level;
    *out = h;
    return OUTBOX_OK;
}

int outbox_http_add_relay(outbox_http *h, outbox_relay *r, const char *table) {
    if (h->started)
        return OUTBOX_ESTATE;
    if (r == NULL)
        return OUTBOX_EINVAL;
    size_t n = h->nrelays + 1;
    bound_relay *rel = realloc(h->relays, n * sizeof(*rel));
    if (rel == NULL)
        return OUTBOX_ENOMEM;
    h->relays = rel;
    outbox_stats *snap = realloc(h->snap, n * sizeof(*snap));
    if (snap == NULL)
        return OUTBOX_ENOMEM;
    h->snap = snap;
    const char **labels = realloc(h->labels, n * sizeof(*labels));
    if (labels == NULL)
        return OUTBOX_ENOMEM;
    h->labels = labels;
    char *t = NULL;
    if (table && *table && (t = strdup(table)) == NULL)
        return OUTBOX_ENOMEM;
    rel[h->nrelays].relay = r;
    rel[h->nrelays].table = t;
    labels[h->nrelays] = t;
    h->nrelays = n;
    return OUTBOX_OK;
}

/* A metric name of the text format, and a help text on one line. */
static int valid_counter(const char *name, const char *help) {
    if (name == NULL || help == NULL || !(isalpha((unsigned char)*name) || *name == '_'))
        return 0;
    for (const char *p = name; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '_' && *p != ':')
            return 0;
    return strchr(help, '\n') == NULL && strchr(help, '\\') == NULL;
}

int outbox_http_add_counter(outbox_http *h, const char *name, const char *help,
                            const uint64_t *value) {
    if (h->started)
        return OUTBOX_ESTATE;
    if (value == NULL || !valid_counter(name, help))
        return OUTBOX_EINVAL;
    extra_counter *c = realloc(h->counters, (h->ncounters + 1) * sizeof(*c));
    if (c == NULL)
        return OUTBOX_ENOMEM;
    h->counters = c;
    c = &h->counters[h->ncounters];
    c->name = strdup(name);
    c->help = strdup(help);
    c->value = value;
    if (c->name == NULL || c->help == NULL) {
        free(c->name);
        free(c->help);
        return OUTBOX_ENOMEM;
    }
    h->ncounters++;
    return OUTBOX_OK;
}

static void maybe_stopped(outbox_http *h) {
    if (h->stopping && !h->listener_open && h->clients == NULL && h->stop_cb) {
        outbox_http_stop_cb cb = h->stop_cb;
        h->stop_cb = NULL;
        cb(h, h->stop_data);
    }
}

static void client_closed(uv_handle_t *handle) {
    client *c = handle->data;
    if (--c->open_handles > 0)
        return;
    outbox_http *h = c->h;
    if (c->prev)
        c->prev->next = c->next;
    else
        h->clients = c->next;
    if (c->next)
        c->next->prev = c->prev;
    h->nclients--;
    ob_buf_free(&c->out);
    free(c->req);
    free(c);
    maybe_stopped(h);
}

static void set_state(client *c, client_state to) {
    OB_DEBUG(&c->h->log, "http: connection %p: %s -> %s", (void *)c, state_names[c->state],
             state_names[to]);
    c->state = to;
}

static void client_close(client *c) {
    if (c->state == C_CLOSING)
        return;
    set_state(c, C_CLOSING);
    uv_close((uv_handle_t *)&c->timer, client_closed);
    uv_close((uv_handle_t *)&c->tcp, client_closed);
}

static void on_shutdown(uv_shutdown_t *req, int status) {
    (void)status;
    client_close(req->data);
}

static void on_written(uv_write_t *req, int status) {
    client *c = req->data;
    if (c->state != C_WRITING) /* closed meanwhile: the write was cancelled */
        return;
    if (status < 0 || uv_shutdown(&c->sd, (uv_stream_t *)&c->tcp, on_shutdown) != 0) {
        client_close(c);
        return;
    }
    set_state(c, C_SHUTTING);
}

static const char *reason_phrase(int code) {
    switch (code) {
    case 200:
        return "OK";
    case 400:
        return "Bad Request";
    case 404:
        return "Not Found";
    case 405:
        return "Method Not Allowed";
    case 408:
        return "Request Timeout";
    case 431:
        return "Request Header Fields Too Large";
    case 503:
        return "Service Unavailable";
    }
    return "Error";
}

/* Sends a complete response and closes after it. `body` has `len` bytes. */
static void respond(client *c, int code, const char *type, const char *body, size_t len,
                    int head_only) {
    uv_read_stop((uv_stream_t *)&c->tcp);
    ob_buf_printf(&c->out,
                  "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
                  "Cache-Control: no-store\r\n%sConnection: close\r\n\r\n",
                  code, reason_phrase(code), type, len, code == 405 ? "Allow: GET, HEAD\r\n" : "");
    if (!head_only)
        ob_buf_append(&c->out, body, len);
    if (c->out.oom) {
        client_close(c);
        return;
    }
    uv_buf_t b = uv_buf_init(c->out.p, (unsigned)c->out.len);
    set_state(c, C_WRITING);
    if (uv_write(&c->wr, (uv_stream_t *)&c->tcp, &b, 1, on_written) != 0)
        client_close(c);
}

static void respond_text(client *c, int code, const char *text, int head_only) {
    respond(c, code, "text/plain; charset=utf-8", text, strlen(text), head_only);
}

/* Ready: 200, naming what is held back while the rest flows (paused
 * subjects), so that a look at /readyz shows it. */
static void serve_ready(client *c, int head_only) {
    outbox_http *h = c->h;
    char text[512], why[300];
    size_t used =
        (size_t)snprintf(text, sizeof(text), "%s", h->nrelays ? "ready" : "ready (no relay)");
    for (size_t i = 0; i < h->nrelays && used < sizeof(text) - 2; i++) {
        const char *what = outbox_relay_degraded(h->relays[i].relay, why, sizeof(why));
        if (what == NULL)
            continue;
        const char *t = h->relays[i].table ? h->relays[i].table : "relay";
        int k = snprintf(text + used, sizeof(text) - used, "; %s: %s", t, what);
        if (k > 0)
            used += (size_t)k;
    }
    if (used > sizeof(text) - 2)
        used = sizeof(text) - 2;
    text[used] = '\n';
    text[used + 1] = '\0';
    respond_text(c, 200, text, head_only);
}

static void serve_readyz(client *c, int head_only) {
    outbox_http *h = c->h;
    char reason[256] = "";
    size_t used = 0;
    for (size_t i = 0; i < h->nrelays && used < sizeof(reason) - 1; i++) {
        outbox_stats s;
        outbox_relay_stats(h->relays[i].relay, &s);
        /* The reason of a pause while the servers are up comes first. */
        const char *what = outbox_relay_paused(h->relays[i].relay);
        if (what == NULL && s.db_connected == 0)
            what = s.broker_ready ? "no database connection" : "database and NATS not ready";
        else if (what == NULL && !s.broker_ready)
            what = "NATS or the stream not ready";
        if (what == NULL)
            continue;
        const char *t = h->relays[i].table ? h->relays[i].table : "relay";
        int k =
            snprintf(reason + used, sizeof(reason) - used, "%s%s: %s", used ? "; " : "", t, what);
        if (k > 0)
            used += (size_t)k;
    }
    if (used == 0) {
        serve_ready(c, head_only);
        return;
    }
    if (used > sizeof(reason) - 2)
        used = sizeof(reason) - 2;
    reason[used] = '\n';
    reason[used + 1] = '\0';
    respond_text(c, 503, reason, head_only);
}

static void serve_metrics(client *c, int head_only) {
    outbox_http *h = c->h;
    for (size_t i = 0; i < h->nrelays; i++)
        outbox_relay_stats(h->relays[i].relay, &h->snap[i]);
    ob_buf_reset(&h->body);
    ob_metrics_write(&h->body, h->snap, h->labels, h->nrelays);
    ob_metrics_process(&h->body);
    for (size_t i = 0; i < h->ncounters; i++) {
        const extra_counter *k = &h->counters[i];
        ob_buf_printf(&h->body, "# HELP %s %s\n# TYPE %s counter\n%s ", k->name, k->help, k->name,
                      k->name);
        ob_buf_u64(&h->body, *k->value);
        ob_buf_putc(&h->body, '\n');
    }
    if (h->body.oom) {
        ob_buf_free(&h->body);
        client_close(c);
        return;
    }
    respond(c, 200, "text/plain; version=0.0.4; charset=utf-8", h->body.p ? h->body.p : "",
            h->body.len, head_only);
}

static int is_token_char(char ch) {
    return ch > ' ' && ch < 127;
}

/* Handles the request line; the headers are read but not needed. */
static void handle_request(client *c) {
    char *line = c->req;
    char *eol = memchr(line, '\n', c->len);
    if (eol == NULL) {
        respond_text(c, 400, "bad request\n", 0);
        return;
    }
    if (eol > line && eol[-1] == '\r')
        eol--;
    *eol = '\0';
    char *sp1 = strchr(line, ' ');
    char *sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
    if (sp1 == NULL || sp2 == NULL || sp1 == line || sp2 == sp1 + 1) {
        respond_text(c, 400, "bad request\n", 0);
        return;
    }
    *sp1 = *sp2 = '\0';
    const char *method = line, *target = sp1 + 1, *version = sp2 + 1;
    if (strcmp(version, "HTTP/1.1") != 0 && strcmp(version, "HTTP/1.0") != 0) {
        respond_text(c, 400, "bad request: HTTP/1.0 or HTTP/1.1 only\n", 0);
        return;
    }
    for (const char *p = method; *p; p++)
        if (!is_token_char(*p)) {
            respond_text(c, 400, "bad request\n", 0);
            return;
        }
    for (const char *p = target; *p; p++)
        if (!is_token_char(*p)) {
            respond_text(c, 400, "bad request\n", 0);
            return;
        }
    int head_only = strcmp(method, "HEAD") == 0;
    if (!head_only && strcmp(method, "GET") != 0) {
        respond_text(c, 405, "only GET and HEAD\n", 0);
        return;
    }
    size_t plen = strcspn(target, "?#");
    if (plen == 8 && strncmp(target, "/metrics", 8) == 0)
        serve_metrics(c, head_only);
    else if (plen == 8 && strncmp(target, "/healthz", 8) == 0)
        respond_text(c, 200, "ok\n", head_only);
    else if (plen == 7 && strncmp(target, "/readyz", 7) == 0)
        serve_readyz(c, head_only);
    else
        respond_text(c, 404, "not found: /metrics, /healthz, /readyz\n", head_only);
}

static void on_alloc(uv_handle_t *handle, size_t suggested, uv_buf_t *buf) {
    (void)suggested;
    client *c = handle->data;
    size_t room = c->h->o.max_request_bytes - c->len;
    *buf = uv_buf_init(c->req + c->len, (unsigned)room);
}

/* The end of the header block, searched from a little before `from`. */
static int headers_complete(const client *c, size_t from) {
    size_t i = from > 3 ? from - 3 : 0;
    for (; i < c->len; i++) {
        if (c->req[i] != '\n')
            continue;
        if (i + 1 < c->len && c->req[i + 1] == '\n')
            return 1;
        if (i + 2 < c->len && c->req[i + 1] == '\r' && c->req[i + 2] == '\n')
            return 1;
    }
    return 0;
}

static void on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf) {
    (void)buf;
    client *c = stream->data;
    if (c->state != C_READING)
        return;
    if (nread < 0) { /* EOF or error before a whole request: nothing to answer */
        client_close(c);
        return;
    }
    if (nread == 0)
        return;
    size_t from = c->len;
    c->len += (size_t)nread;
    if (memchr(c->req + from, '\0', (size_t)nread)) {
        respond_text(c, 400, "bad request\n", 0);
        return;
    }
    if (headers_complete(c, from))
        handle_request(c);
    else if (c->len == c->h->o.max_request_bytes)
        respond_text(c, 431, "request headers too large\n", 0);
}

static void on_timeout(uv_timer_t *t) {
    client *c = t->data;
    OB_DEBUG(&c->h->log, "http: a client timed out");
    if (c->state == C_READING)
        respond_text(c, 408, "request timeout\n", 0);
    else /* a client that does not read its response */
        client_close(c);
}

/* Says how many connections were refused since the last warning: at once for
 * the first, then at most once per interval (or at the stop, with `now`). */
static void say_refused(outbox_http *h, int now) {
    uint64_t t = uv_now(h->loop);
    if (h->refused == 0 ||
        (!now && h->refused_said_ms && t - h->refused_said_ms < REFUSED_LOG_INTERVAL_MS))
        return;
    OB_WARN(&h->log,
            "http: more than %u connections: refused %llu connection(s) since the last warning "
            "(said at most every %d s)",
            h->o.max_clients, (unsigned long long)h->refused, REFUSED_LOG_INTERVAL_MS / 1000);
    h->refused = 0;
    h->refused_said_ms = t ? t : 1;
}

static void on_connection(uv_stream_t *server, int status) {
    outbox_http *h = server->data;
    if (status < 0) {
        OB_WARN(&h->log, "http: accept failed: %s", uv_strerror(status));
        return;
    }
    client *c = calloc(1, sizeof(*c));
    char *req = malloc(h->o.max_request_bytes);
    if (c == NULL || req == NULL || uv_tcp_init(h->loop, &c->tcp) != 0) {
        /* Accept into a throwaway handle is not possible without memory:
         * the pending connection waits in the backlog. */
        free(c);
        free(req);
        return;
    }
    uv_timer_init(h->loop, &c->timer);
    c->h = h;
    c->req = req;
    c->open_handles = 2;
    c->tcp.data = c->timer.data = c->wr.data = c->sd.data = c;
    c->next = h->clients;
    if (h->clients)
        h->clients->prev = c;
    h->clients = c;
    h->nclients++;
    if (uv_accept(server, (uv_stream_t *)&c->tcp) != 0) {
        client_close(c);
        return;
    }
    if (h->nclients > h->o.max_clients) {
        h->refused++;
        say_refused(h, 0);
        client_close(c);
        return;
    }
    say_refused(h, 0);
    uv_tcp_nodelay(&c->tcp, 1);
    uv_timer_start(&c->timer, on_timeout, h->o.request_timeout_ms, 0);
    if (uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read) != 0)
        client_close(c);
}

static void listener_closed(uv_handle_t *handle) {
    outbox_http *h = handle->data;
    free(handle);
    if (h == NULL) /* a failed start: the responder did not wait for it */
        return;
    h->listener_open = 0;
    maybe_stopped(h);
}

int outbox_http_start(outbox_http *h, char *errbuf, size_t errlen) {
    if (h->started)
        return ob_errf(errbuf, errlen, OUTBOX_ESTATE, "already started");
    uv_tcp_t *l = malloc(sizeof(*l));
    if (l == NULL)
        return ob_errf(errbuf, errlen, OUTBOX_ENOMEM, "http: out of memory");
    int rc = uv_tcp_init(h->loop, l);
    if (rc != 0) {
        free(l);
        return ob_errf(errbuf, errlen, OUTBOX_EINVAL, "http: %s", uv_strerror(rc));
    }
    l->data = h;
    rc = uv_tcp_bind(l, (const struct sockaddr *)&h->addr, 0);
    if (rc == 0)
        rc = uv_listen((uv_stream_t *)l, 64, on_connection);
    if (rc != 0) {
        /* The listener frees itself on the loop's next turn; the responder
         * stays unstarted and can be destroyed at once. */
        l->data = NULL;
        uv_close((uv_handle_t *)l, listener_closed);
        return ob_errf(errbuf, errlen, OUTBOX_EINVAL, "http: cannot listen on %s: %s", h->listen,
                       uv_strerror(rc));
    }
    h->listener = l;
    h->started = 1;
    h->listener_open = 1;
    struct sockaddr_storage ss;
    int sl = sizeof(ss);
    if (uv_tcp_getsockname(h->listener, (struct sockaddr *)&ss, &sl) == 0)
        h->port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                                 : ((struct sockaddr_in *)&ss)->sin_port);
    OB_INFO(&h->log, "http: serving /metrics, /healthz and /readyz on %s (port %d)", h->listen,
            h->port);
    return OUTBOX_OK;
}

int outbox_http_port(const outbox_http *h) {
    return h->port;
}

int outbox_http_stop(outbox_http *h, outbox_http_stop_cb cb, void *data) {
    if (!h->started || h->stopping)
        return OUTBOX_ESTATE;
    h->stopping = 1;
    h->stop_cb = cb;
    h->stop_data = data;
    say_refused(h, 1);
    for (client *c = h->clients; c; c = c->next)
        client_close(c);
    uv_close((uv_handle_t *)h->listener, listener_closed);
    return OUTBOX_OK;
}

int outbox_http_destroy(outbox_http *h) {
    if (h == NULL)
        return OUTBOX_OK;
    if (h->listener_open || h->clients != NULL)
        return OUTBOX_ESTATE; /* still on the loop: stop it, destroy it from the callback */
    for (size_t i = 0; i < h->nrelays; i++)
        free(h->relays[i].table);
    free(h->relays);
    free(h->snap);
    free(h->labels);
    for (size_t i = 0; i < h->ncounters; i++) {
        free(h->counters[i].name);
        free(h->counters[i].help);
    }
    free(h->counters);
    ob_buf_free(&h->body);
    free(h->listen);
    free(h);
    return OUTBOX_OK;
}
