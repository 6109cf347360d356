/* SPDX-License-Identifier: Apache-2.0 */
#include "url.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "log.h"

/* Percent-decodes s[0..n) into a new string; NULL on a bad escape. */
static char *pct_decode(const char *s, size_t n) {
    char *o = malloc(n + 1);
    if (o == NULL)
        return NULL;
    size_t j = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '%') {
            if (i + 2 >= n) {
                free(o);
                return NULL;
            }
            int a = ob_hexval((unsigned char)s[i + 1]), b = ob_hexval((unsigned char)s[i + 2]);
            if (a < 0 || b < 0) {
                free(o);
                return NULL;
            }
            o[j++] = (char)(a << 4 | b);
            i += 2;
        } else {
            o[j++] = s[i];
        }
    }
    o[j] = '\0';
    return o;
}

static char *dupn(const char *s, size_t n) {
    char *o = malloc(n + 1);
    if (o) {
        memcpy(o, s, n);
        o[n] = '\0';
    }
    return o;
}

/* Parses "host[:port]" or "[v6]:port" in s[0..n). Messages never quote the
 * text: when a URL has no '@', what looks like host:port may be user:password. */
static int parse_hostport(const char *what, const char *s, size_t n, char **host, unsigned *port,
                          unsigned defport, char *err, size_t errlen) {
    const char *hs = s, *he;
    const char *rest;
    if (n > 0 && s[0] == '[') {
        const char *close = memchr(s, ']', n);
        if (close == NULL) {
            ob_errf(err, errlen, -1, "%s: unclosed '[' in host", what);
            return -1;
        }
        hs = s + 1;
        he = close;
        rest = close + 1;
    } else {
        const char *colon = memchr(s, ':', n);
        he = colon ? colon : s + n;
        rest = he;
    }
    if (he == hs) {
        ob_errf(err, errlen, -1, "%s: missing host", what);
        return -1;
    }
    *port = defport;
    if (rest < s + n) {
        if (*rest != ':') {
            ob_errf(err, errlen, -1, "%s: unexpected text after host", what);
            return -1;
        }
        rest++;
        size_t pl = (size_t)(s + n - rest);
        unsigned v = 0;
        for (size_t i = 0; i < pl && v <= 65535; i++) {
            if (rest[i] < '0' || rest[i] > '9') {
                v = 0;
                break;
            }
            v = v * 10 + (unsigned)(rest[i] - '0');
        }
        if (pl == 0 || v == 0 || v > 65535) {
            ob_errf(err, errlen, -1, "%s: the port must be a number from 1 to 65535", what);
            return -1;
        }
        *port = v;
    }
    *host = dupn(hs, (size_t)(he - hs));
    return *host ? 0 : -1;
}

/* The last '@' in s[0..n): everything before it is user information, which
 * may then hold '/', '?', ':' or '@' without percent-escapes. */
static const char *last_at(const char *s, size_t n) {
    const char *at = NULL;
    for (const char *q = s; q < s + n; q++)
        if (*q == '@')
            at = q;
    return at;
}

/* Splits and percent-decodes "user[:password]" in s[0..n). */
static int split_userinfo(const char *what, const char *s, size_t n, char **user, char **password,
                          char *err, size_t errlen) {
    const char *colon = memchr(s, ':', n);
    *user = pct_decode(s, colon ? (size_t)(colon - s) : n);
    *password = colon ? pct_decode(colon + 1, (size_t)(s + n - colon - 1)) : NULL;
    if (*user == NULL || (colon && *password == NULL)) {
        free(*user);
        free(*password);
        *user = *password = NULL;
        ob_errf(err, errlen, -1, "%s: bad percent-escape in the user or password", what);
        return -1;
    }
    return 0;
}

/* For "must start with" messages: the scheme the user wrote, when it cannot
 * be part of a credential (letters only, short, followed by "://"). */
static void scheme_of(const char *s, char *out, size_t outlen) {
    size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ+-");
    if (n > 0 && n < 16 && n + 4 <= outlen && strncmp(s + n, "://", 3) == 0)
        snprintf(out, outlen, "got '%.*s://'", (int)n, s);
    else
        snprintf(out, outlen, "got something else");
}

/* Parses "host[:port][,host[:port]...]" in s[0..n) into u->nodes, and the
 * first node into u->host and u->port. A host's position is named in
 * messages, never its text. */
static int parse_nodes(const char *what, const char *s, size_t n, ob_db_url *u, char *err,
                       size_t errlen) {
    const char *end = s + n;
    for (const char *p = s;;) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        const char *e = comma ? comma : end;
        if (u->n_nodes == OB_DB_MAX_NODES) {
            ob_errf(err, errlen, -1, "%s: more than %d hosts", what, OB_DB_MAX_NODES);
            return -1;
        }
        char hw[64];
        if (comma || u->n_nodes > 0)
            snprintf(hw, sizeof(hw), "%s, host %d of the list", what, u->n_nodes + 1);
        else
            snprintf(hw, sizeof(hw), "%s", what);
        ob_db_node *nd = &u->nodes[u->n_nodes];
        if (e == p && (comma || u->n_nodes > 0)) {
            ob_errf(err, errlen, -1, "%s is empty (hosts are separated by single commas)", hw);
            return -1;
        }
        if (parse_hostport(hw, p, (size_t)(e - p), &nd->host, &nd->port, 3306, err, errlen) != 0)
            return -1;
        u->n_nodes++;
        if (comma == NULL)
            break;
        p = comma + 1;
    }
    u->host = strdup(u->nodes[0].host);
    u->port = u->nodes[0].port;
    return u->host ? 0 : -1;
}

void ob_db_url_free(ob_db_url *u) {
    free(u->user);
    free(u->password);
    free(u->host);
    free(u->database);
    free(u->socket);
    for (int i = 0; i < u->n_nodes; i++)
        free(u->nodes[i].host);
    memset(u, 0, sizeof(*u));
}

/* Parses the query string q ("name=value&..."): only socket= is known. */
static int parse_query(const char *what, const char *q, ob_db_url *u, char *err, size_t errlen) {
    while (*q) {
        const char *amp = strchr(q, '&');
        size_t len = amp ? (size_t)(amp - q) : strlen(q);
        if (len > 7 && strncmp(q, "socket=", 7) == 0) {
            free(u->socket);
            u->socket = pct_decode(q + 7, len - 7);
            if (u->socket == NULL) {
                ob_errf(err, errlen, -1, "%s: bad percent-escape in socket path", what);
                return -1;
            }
        } else if (len > 0) {
            size_t nl = strcspn(q, "=&");
            ob_errf(err, errlen, -1, "%s: unknown parameter '%.*s' (known: socket)", what,
                    (int)(nl > 32 ? 32 : nl), q);
            return -1;
        }
        q += len + (amp ? 1 : 0);
    }
    return 0;
}

int ob_db_url_parse(const char *s, ob_db_url *u, char *err, size_t errlen) {
    static const char *what = "database URL";
    memset(u, 0, sizeof(*u));
    if (s == NULL || *s == '\0') {
        ob_errf(err, errlen, -1, "%s is missing (mysql://user:pass@host:port/database)", what);
        return -1;
    }
    const char *p;
    if (strncmp(s, "mysql://", 8) == 0)
        p = s + 8;
    else if (strncmp(s, "mariadb://", 10) == 0)
        p = s + 10;
    else {
        char got[32];
        scheme_of(s, got, sizeof(got));
        ob_errf(err, errlen, -1, "%s must start with mysql:// or mariadb:// (%s)", what, got);
        return -1;
    }
    const char *at = last_at(p, strlen(p));
    const char *hp = p;
    if (at) {
        if (split_userinfo(what, p, (size_t)(at - p), &u->user, &u->password, err, errlen) != 0)
            goto fail;
        hp = at + 1;
    } else {
        u->user = dupn("", 0);
    }
    const char *slash = strchr(hp, '/');
    const char *query = strchr(hp, '?');
    if (query && slash && query < slash)
        slash = NULL;
    const char *auth_end = slash ? slash : (query ? query : hp + strlen(hp));
    if (parse_nodes(what, hp, (size_t)(auth_end - hp), u, err, errlen) != 0)
        goto fail;
    if (slash) {
        const char *ds = slash + 1;
        const char *de = query ? query : ds + strlen(ds);
        u->database = pct_decode(ds, (size_t)(de - ds));
        if (u->database == NULL) {
            ob_errf(err, errlen, -1, "%s: bad percent-escape in database name", what);
            goto fail;
        }
    }
    if (u->database == NULL || u->database[0] == '\0') {
        ob_errf(err, errlen, -1,
                "%s: missing database name (mysql://user:pass@host:port/DATABASE; a password "
                "with '%%' needs it written as %%25)",
                what);
        goto fail;
    }
    if (query && parse_query(what, query + 1, u, err, errlen) != 0)
        goto fail;
    if (u->socket && u->n_nodes > 1) {
        ob_errf(err, errlen, -1, "%s: ?socket= names one server; it cannot go with %d hosts", what,
                u->n_nodes);
        goto fail;
    }
    return 0;
fail:
    ob_db_url_free(u);
    return -1;
}

int ob_db_settings(const char *url, const char *password, ob_db_url *out, char *err,
                   size_t errlen) {
    if (ob_db_url_parse(url, out, err, errlen) != 0)
        return -1;
    if (password != NULL) {
        char *pw = strdup(password);
        if (pw == NULL) {
            ob_db_url_free(out);
            ob_errf(err, errlen, -1, "out of memory");
            return -1;
        }
        free(out->password);
        out->password = pw;
    }
    return 0;
}

void ob_nats_url_free(ob_nats_url *u) {
    for (int i = 0; i < u->n; i++) {
        free(u->srv[i].user);
        free(u->srv[i].password);
        free(u->srv[i].host);
    }
    memset(u, 0, sizeof(*u));
}

/* The length of the comma-separated URL starting at s: a comma starts the
 * next URL only when a scheme ("name://") follows it, so a password may hold
 * commas. */
static size_t segment_len(const char *s) {
    for (const char *q = s; *q; q++) {
        if (*q != ',')
            continue;
        size_t n = strspn(q + 1, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ+-");
        if (n > 0 && strncmp(q + 1 + n, "://", 3) == 0)
            return (size_t)(q - s);
    }
    return strlen(s);
}

int ob_nats_url_parse(const char *s, ob_nats_url *u, char *err, size_t errlen) {
    static const char *what = "NATS URL";
    memset(u, 0, sizeof(*u));
    if (s == NULL || *s == '\0') {
        ob_errf(err, errlen, -1, "%s is missing (nats://host:port)", what);
        return -1;
    }
    const char *p = s;
    for (;;) {
        size_t len = segment_len(p);
        if (u->n == OB_NATS_MAX_SERVERS) {
            ob_errf(err, errlen, -1, "%s: more than %d servers", what, OB_NATS_MAX_SERVERS);
            goto fail;
        }
        int tls = len >= 6 && strncmp(p, "tls://", 6) == 0;
        if (!tls && (len < 7 || strncmp(p, "nats://", 7) != 0)) {
            char got[32];
            scheme_of(p, got, sizeof(got));
            ob_errf(err, errlen, -1, "%s: each server must start with nats:// or tls:// (%s)", what,
                    got);
            goto fail;
        }
        const char *a = p + (tls ? 6 : 7);
        const char *end = p + len;
        ob_nats_server *sv = &u->srv[u->n];
        sv->tls = tls;
        const char *at = last_at(a, (size_t)(end - a));
        if (at) {
            if (split_userinfo(what, a, (size_t)(at - a), &sv->user, &sv->password, err, errlen) !=
                0)
                goto fail;
            if (sv->user[0] == '\0' || strchr(sv->user, ':') != NULL) {
                ob_errf(err, errlen, -1, "%s: the user (or token) is empty or holds ':'", what);
                goto fail_server;
            }
            a = at + 1;
        }
        const char *slash = memchr(a, '/', (size_t)(end - a));
        if (slash && slash + 1 != end) {
            ob_errf(err, errlen, -1, "%s: a server URL has no path (nats://host:port)", what);
            goto fail_server;
        }
        if (slash)
            end = slash;
        if (parse_hostport(what, a, (size_t)(end - a), &sv->host, &sv->port, 4222, err, errlen) !=
            0)
            goto fail_server;
        u->n++;
        if (p[len] == '\0')
            break;
        p += len + 1;
    }
    return 0;
fail_server:
    free(u->srv[u->n].user);
    free(u->srv[u->n].password);
    u->srv[u->n].user = u->srv[u->n].password = NULL;
fail:
    ob_nats_url_free(u);
    return -1;
}

int ob_nats_url_tls(const ob_nats_url *u) {
    for (int i = 0; i < u->n; i++)
        if (u->srv[i].tls)
            return 1;
    return 0;
}

char *ob_nats_server_url(const ob_nats_server *s, const char *host) {
    /* nats.c takes user and password as written (it does not percent-decode)
     * and splits them at the last '@' and the first ':'. */
    size_t n = strlen(host) + (s->user ? strlen(s->user) : 0) +
               (s->password ? strlen(s->password) : 0) + 32;
    char *o = malloc(n);
    if (o == NULL)
        return NULL;
    int v6 = strchr(host, ':') != NULL;
    snprintf(o, n, "%s://%s%s%s%s%s%s%s:%u", s->tls ? "tls" : "nats", s->user ? s->user : "",
             s->password ? ":" : "", s->password ? s->password : "", s->user ? "@" : "",
             v6 ? "[" : "", host, v6 ? "]" : "", s->port);
    return o;
}

void ob_url_mask(char *url) {
    if (url == NULL)
        return;
    char *p = url;
    int single = strncmp(url, "mysql://", 8) == 0 || strncmp(url, "mariadb://", 10) == 0;
    for (;;) {
        size_t seg = single ? strlen(p) : segment_len(p);
        char *end = p + seg;
        char *sch = strstr(p, "://");
        char *a = sch && sch < end ? sch + 3 : p;
        const char *at = last_at(a, (size_t)(end - a));
        if (at) {
            char *colon = memchr(a, ':', (size_t)(at - a));
            char *from = colon ? colon + 1 : single ? (char *)at : a; /* password, or token */
            memset(from, '*', (size_t)(at - from));
        }
        if (*end == '\0')
            break;
        p = end + 1;
    }
}

char *ob_url_redact(const char *url) {
    if (url == NULL)
        return NULL;
    ob_buf b = OB_BUF_INIT;
    const char *p = url;
    int single = strncmp(url, "mysql://", 8) == 0 || strncmp(url, "mariadb://", 10) == 0;
    /* One URL at a time: keep a user, hide a password; hide a lone token. */
    for (;;) {
        size_t seg = single ? strlen(p) : segment_len(p);
        const char *end = p + seg;
        const char *sch = strstr(p, "://");
        const char *a = sch && sch < end ? sch + 3 : p;
        const char *at = last_at(a, (size_t)(end - a));
        if (at) {
            const char *colon = memchr(a, ':', (size_t)(at - a));
            ob_buf_append(&b, p, (size_t)(a - p));
            if (colon) {
                ob_buf_append(&b, a, (size_t)(colon + 1 - a));
                ob_buf_puts(&b, "***");
            } else if (single) {
                ob_buf_append(&b, a, (size_t)(at - a)); /* a database user alone */
            } else {
                ob_buf_puts(&b, "***"); /* a NATS token */
            }
            ob_buf_append(&b, at, (size_t)(end - at));
        } else {
            ob_buf_append(&b, p, seg);
        }
        if (*end == '\0')
            break;
        ob_buf_putc(&b, ',');
        p = end + 1;
    }
    if (b.oom || b.p == NULL) {
        ob_buf_free(&b);
        return NULL;
    }
    return b.p;
}

int outbox_url_redact(const char *url, char *out, size_t n) {
    char *r = ob_url_redact(url ? url : "");
    if (r == NULL) {
        if (n)
            out[0] = '\0';
        return -1;
    }
    int len = snprintf(out, n, "%s", r);
    free(r);
    return len;
}

void outbox_url_mask(char *url) {
    ob_url_mask(url);
}
