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

/* Parses "host[:port]" or "[v6]:port" in s[0..n). */
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
        if (pl == 0 || pl > 5) {
            ob_errf(err, errlen, -1, "%s: port must be a number from 1 to 65535", what);
            return -1;
        }
        unsigned v = 0;
        for (size_t i = 0; i < pl; i++) {
            if (rest[i] < '0' || rest[i] > '9') {
                ob_errf(err, errlen, -1, "%s: port '%.*s' must be a number from 1 to 65535", what,
                        (int)pl, rest);
                return -1;
            }
            v = v * 10 + (unsigned)(rest[i] - '0');
        }
        if (v == 0 || v > 65535) {
            ob_errf(err, errlen, -1, "%s: port '%.*s' must be a number from 1 to 65535", what,
                    (int)pl, rest);
            return -1;
        }
        *port = v;
    }
    *host = dupn(hs, (size_t)(he - hs));
    return *host ? 0 : -1;
}

int ob_db_url_set_password(ob_db_url *u, const char *password) {
    if (password == NULL)
        return 0;
    char *p = strdup(password);
    if (p == NULL)
        return -1;
    free(u->password);
    u->password = p;
    return 0;
}

void ob_db_url_free(ob_db_url *u) {
    free(u->user);
    free(u->password);
    free(u->host);
    free(u->database);
    free(u->socket);
    memset(u, 0, sizeof(*u));
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
        ob_errf(err, errlen, -1, "%s must start with mysql:// or mariadb:// (got '%.20s')", what,
                s);
        return -1;
    }
    const char *slash = strchr(p, '/');
    const char *query = strchr(p, '?');
    const char *auth_end = slash ? slash : (query ? query : p + strlen(p));
    if (query && slash && query < slash)
        auth_end = query;
    const char *at = NULL;
    for (const char *q = p; q < auth_end; q++)
        if (*q == '@')
            at = q;
    const char *hp = p;
    if (at) {
        const char *colon = memchr(p, ':', (size_t)(at - p));
        if (colon) {
            u->user = pct_decode(p, (size_t)(colon - p));
            u->password = pct_decode(colon + 1, (size_t)(at - colon - 1));
            if (u->user == NULL || u->password == NULL) {
                ob_errf(err, errlen, -1, "%s: bad percent-escape in user or password", what);
                goto fail;
            }
        } else {
            u->user = pct_decode(p, (size_t)(at - p));
            if (u->user == NULL) {
                ob_errf(err, errlen, -1, "%s: bad percent-escape in user", what);
                goto fail;
            }
        }
        hp = at + 1;
    } else {
        u->user = dupn("", 0);
    }
    if (parse_hostport(what, hp, (size_t)(auth_end - hp), &u->host, &u->port, 3306, err, errlen) !=
        0)
        goto fail;
    if (auth_end == slash) {
        const char *ds = slash + 1;
        const char *de = query && query > slash ? query : ds + strlen(ds);
        u->database = pct_decode(ds, (size_t)(de - ds));
        if (u->database == NULL) {
            ob_errf(err, errlen, -1, "%s: bad percent-escape in database name", what);
            goto fail;
        }
    }
    if (u->database == NULL || u->database[0] == '\0') {
        ob_errf(err, errlen, -1, "%s: missing database name (mysql://user:pass@host:port/DATABASE)",
                what);
        goto fail;
    }
    if (query) {
        const char *q = query + 1;
        while (*q) {
            const char *amp = strchr(q, '&');
            size_t len = amp ? (size_t)(amp - q) : strlen(q);
            if (len > 7 && strncmp(q, "socket=", 7) == 0) {
                free(u->socket);
                u->socket = pct_decode(q + 7, len - 7);
                if (u->socket == NULL) {
                    ob_errf(err, errlen, -1, "%s: bad percent-escape in socket path", what);
                    goto fail;
                }
            } else if (len > 0) {
                ob_errf(err, errlen, -1, "%s: unknown parameter '%.*s' (known: socket)", what,
                        (int)len, q);
                goto fail;
            }
            q += len + (amp ? 1 : 0);
        }
    }
    return 0;
fail:
    ob_db_url_free(u);
    return -1;
}

void ob_nats_url_free(ob_nats_url *u) {
    for (int i = 0; i < u->n; i++) {
        free(u->srv[i].userinfo);
        free(u->srv[i].host);
    }
    memset(u, 0, sizeof(*u));
}

int ob_nats_url_parse(const char *s, ob_nats_url *u, char *err, size_t errlen) {
    static const char *what = "NATS URL";
    memset(u, 0, sizeof(*u));
    if (s == NULL || *s == '\0') {
        ob_errf(err, errlen, -1, "%s is missing (nats://host:port)", what);
        return -1;
    }
    const char *p = s;
    while (*p) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (u->n == OB_NATS_MAX_SERVERS) {
            ob_errf(err, errlen, -1, "%s: more than %d servers", what, OB_NATS_MAX_SERVERS);
            goto fail;
        }
        const char *a = p;
        int tls = 0;
        if (len >= 7 && strncmp(p, "nats://", 7) == 0)
            a = p + 7;
        else if (len >= 6 && strncmp(p, "tls://", 6) == 0) {
            a = p + 6;
            tls = 1;
        } else {
            ob_errf(err, errlen, -1, "%s must start with nats:// or tls:// (got '%.*s')", what,
                    (int)(len > 20 ? 20 : len), p);
            goto fail;
        }
        const char *end = p + len;
        const char *slash = memchr(a, '/', (size_t)(end - a));
        if (slash && slash + 1 != end) {
            ob_errf(err, errlen, -1, "%s: unexpected path '%.*s'", what, (int)(end - slash), slash);
            goto fail;
        }
        if (slash)
            end = slash;
        const char *at = NULL;
        for (const char *q = a; q < end; q++)
            if (*q == '@')
                at = q;
        ob_nats_server *sv = &u->srv[u->n];
        if (at) {
            sv->userinfo = dupn(a, (size_t)(at - a));
            a = at + 1;
        }
        if (parse_hostport(what, a, (size_t)(end - a), &sv->host, &sv->port, 4222, err, errlen) !=
            0) {
            free(sv->userinfo);
            sv->userinfo = NULL;
            goto fail;
        }
        sv->tls = tls;
        u->n++;
        if (!comma)
            break;
        p = comma + 1;
    }
    if (u->n == 0) {
        ob_errf(err, errlen, -1, "%s is missing (nats://host:port)", what);
        return -1;
    }
    return 0;
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
    size_t n = strlen(host) + (s->userinfo ? strlen(s->userinfo) : 0) + 32;
    char *o = malloc(n);
    if (o == NULL)
        return NULL;
    int v6 = strchr(host, ':') != NULL;
    snprintf(o, n, "%s://%s%s%s%s%s:%u", s->tls ? "tls" : "nats", s->userinfo ? s->userinfo : "",
             s->userinfo ? "@" : "", v6 ? "[" : "", host, v6 ? "]" : "", s->port);
    return o;
}

char *ob_url_redact(const char *url) {
    if (url == NULL)
        return NULL;
    size_t n = strlen(url), segs = 1;
    for (const char *q = url; *q; q++)
        segs += *q == ',';
    char *o = malloc(n + 3 * segs + 1);
    if (o == NULL)
        return NULL;
    size_t j = 0;
    const char *p = url;
    /* One comma-separated URL at a time: copy it, hiding what lies between
     * the first ':' of the authority and its '@'. */
    while (*p) {
        size_t seg = strcspn(p, ",");
        const char *end = p + seg;
        const char *sch = strstr(p, "://");
        const char *a = sch && sch < end ? sch + 3 : p;
        const char *ae = a + strcspn(a, "/?,");
        if (ae > end)
            ae = end;
        const char *at = NULL;
        for (const char *q = a; q < ae; q++)
            if (*q == '@')
                at = q;
        const char *colon = at ? memchr(a, ':', (size_t)(at - a)) : NULL;
        if (colon) {
            memcpy(o + j, p, (size_t)(colon + 1 - p));
            j += (size_t)(colon + 1 - p);
            memcpy(o + j, "***", 3);
            j += 3;
            memcpy(o + j, at, (size_t)(end - at));
            j += (size_t)(end - at);
        } else {
            memcpy(o + j, p, seg);
            j += seg;
        }
        p = end;
        if (*p == ',')
            o[j++] = *p++;
    }
    o[j] = '\0';
    return o;
}
