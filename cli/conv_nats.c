/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The NATS ecosystem's conventions, for what the relay's own options leave
 * unset: the nats CLI's variables (NATS_URL, NATS_USER, NATS_PASSWORD,
 * NATS_CREDS, NATS_NKEY, NATS_CERT, NATS_KEY, NATS_CA), then its contexts
 * ($XDG_CONFIG_HOME/nats/context/NAME.json, else ~/.config/nats/...). A
 * variable wins over the context, as in the nats CLI.
 *
 * The context is the one NATS_CONTEXT names; without NATS_CONTEXT, the one
 * `nats context select` chose (context.txt), but only when nothing else
 * names a server: a relay does not follow what an operator selects for
 * their own shell once it has a server of its own. Credentials come from
 * here only when the relay is given none (no --nats-creds, --nats-nkey,
 * --nats-token-file, --nats-password-file, no user in its URL). A context
 * key the relay cannot honour (a JetStream domain, an inbox prefix, ...) is
 * refused, naming the key, rather than ignored.
 */
#include "args_int.h"

#include <errno.h>
#include <jansson.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { N_URL, N_USER, N_PASSWORD, N_TOKEN, N_CREDS, N_NKEY, N_CERT, N_KEY, N_CA, N_FIELDS };

static const struct {
    const char *env; /* the nats CLI's variable, or NULL */
    const char *key; /* the context's key */
    const char *opt; /* the relay's option it fills; NULL: the URL's user information */
} fields[N_FIELDS] = {
    {"NATS_URL", "url", "nats"},
    {"NATS_USER", "user", NULL},
    {"NATS_PASSWORD", "password", NULL},
    {NULL, "token", NULL},
    {"NATS_CREDS", "creds", "nats-creds"},
    {"NATS_NKEY", "nkey", "nats-nkey"},
    {"NATS_CERT", "cert", "nats-tls-cert"},
    {"NATS_KEY", "key", "nats-tls-key"},
    {"NATS_CA", "ca", "nats-tls-ca"},
};

/* Keys of a context that change nothing the relay does. */
static const char *const harmless[] = {"description", "color_scheme"};

typedef struct nats_conv {
    const char *val[N_FIELDS];
    const char *from[N_FIELDS]; /* "environment NATS_URL", "nats context NAME (PATH)" */
} nats_conv;

/* A context value the nats CLI writes for a key left unset. */
static int empty(const json_t *v) {
    return json_is_null(v) || json_is_false(v) ||
           (json_is_string(v) && json_string_length(v) == 0) ||
           (json_is_integer(v) && json_integer_value(v) == 0);
}

static int field_of(const char *key) {
    for (int f = 0; f < N_FIELDS; f++)
        if (strcmp(fields[f].key, key) == 0)
            return f;
    return -1;
}

/* The folder of the nats CLI's settings into out; -1 without a home. */
static int nats_dir(const ob_conv_target *t, char *out, size_t n) {
    const char *x = ob_conv_env(t, "XDG_CONFIG_HOME");
    const char *h = ob_conv_env(t, "HOME");
    int w = x ? snprintf(out, n, "%s/nats", x) : h ? snprintf(out, n, "%s/.config/nats", h) : -1;
    return w < 0 || (size_t)w >= n ? -1 : 0;
}

/* The context `nats context select` chose, into out; 0 with out empty when
 * none was. */
static int selected_context(const ob_conv_target *t, char *out, size_t n, char *err,
                            size_t errlen) {
    char dir[2048], path[2100];
    out[0] = '\0';
    if (nats_dir(t, dir, sizeof(dir)) != 0)
        return 0;
    snprintf(path, sizeof(path), "%s/context.txt", dir);
    FILE *f = fopen(path, "r");
    if (f == NULL && errno == ENOENT)
        return 0;
    if (f == NULL) {
        snprintf(err, errlen, "nats context: cannot read %s: %s", path, strerror(errno));
        return 1;
    }
    if (fgets(out, (int)n, f) == NULL)
        out[0] = '\0';
    fclose(f);
    out[strcspn(out, " \t\r\n")] = '\0';
    return 0;
}

/* The file of context `name` (a name, or the path of a .json file: a
 * service may keep its context beside its other settings), into out. */
static int context_path(const ob_conv_target *t, const char *name, char *out, size_t n, char *err,
                        size_t errlen) {
    size_t len = strlen(name);
    if (strchr(name, '/') && len > 5 && strcmp(name + len - 5, ".json") == 0) {
        snprintf(out, n, "%s", name);
        return 0;
    }
    char dir[2048];
    if (strchr(name, '/') || strcmp(name, "..") == 0 || strcmp(name, ".") == 0) {
        snprintf(err, errlen, "nats context '%s': not a context name (nor a path to a .json file)",
                 name);
        return 2;
    }
    if (nats_dir(t, dir, sizeof(dir)) != 0 ||
        (size_t)snprintf(out, n, "%s/context/%s.json", dir, name) >= n) {
        snprintf(err, errlen,
                 "nats context '%s': neither XDG_CONFIG_HOME nor HOME is set, so it cannot be "
                 "found",
                 name);
        return 1;
    }
    return 0;
}

/* Reads a context's keys into nc where no variable set them already. */
static int load_context(ob_cli *c, const char *name, const char *path, nats_conv *nc, char *err,
                        size_t errlen) {
    struct stat st;
    int gone = stat(path, &st) != 0 || access(path, R_OK) != 0;
    if (gone || !S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "nats context '%s': cannot read %s: %s", name, path,
                 gone ? strerror(errno) : "not a regular file");
        return gone ? 1 : 2;
    }
    json_error_t je;
    json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    if (root == NULL || !json_is_object(root)) {
        /* jansson's text may quote the file: a secret; only the line. */
        snprintf(err, errlen, "nats context '%s': %s is not a JSON object (line %d)", name, path,
                 root ? 1 : je.line);
        json_decref(root);
        return 2;
    }
    const char *from = ob_conv_keepf(c, "nats context %s (%s)", name, path);
    const char *key;
    json_t *v;
    int rc = from ? 0 : 1;
    json_object_foreach(root, key, v) {
        int f = field_of(key);
        if (rc != 0 || empty(v))
            continue;
        if (f >= 0 && !json_is_string(v)) {
            snprintf(err, errlen, "nats context '%s' (%s): key '%s' must be a string", name, path,
                     key);
            rc = 2;
        } else if (f >= 0 && nc->val[f] == NULL) {
            nc->val[f] = ob_cli_keep(c, json_string_value(v));
            nc->from[f] = from;
            rc = nc->val[f] ? 0 : 1;
        } else if (f < 0 && strcmp(key, harmless[0]) != 0 && strcmp(key, harmless[1]) != 0) {
            snprintf(err, errlen,
                     "nats context '%s' (%s): key '%s' is set, and outbox-uvrelay cannot honour "
                     "it: remove it from the context, or give the relay its options instead",
                     name, path, key);
            rc = 2;
        }
    }
    json_decref(root);
    if (rc != 0 && err[0] == '\0')
        snprintf(err, errlen, "nats context '%s': out of memory", name);
    return rc;
}

/* A file named by a variable or a context: a path, ~/path or file://path
 * (the credential URIs of newer nats CLIs, nsc:// op:// env:// data:, are
 * refused). */
static const char *file_value(ob_conv_target *t, int f, const char *v, const char *from, char *err,
                              size_t errlen) {
    if (strncmp(v, "file://", 7) == 0)
        v += 7;
    else if (strstr(v, "://") || strncmp(v, "data:", 5) == 0) {
        snprintf(err, errlen, "%s: %s names no file: only a file path is supported", from,
                 fields[f].key);
        return NULL;
    }
    const char *home = ob_conv_env(t, "HOME");
    if (strncmp(v, "~/", 2) == 0 && home)
        return ob_conv_keepf(t->c, "%s/%s", home, v + 2);
    return v;
}

/* Appends s to b (of size n, used *o) percent-encoded: a URL's user
 * information is percent-decoded by the relay. */
static void put_enc(char *b, size_t n, size_t *o, const char *s) {
    for (; *s && *o + 4 < n; s++) {
        unsigned char ch = (unsigned char)*s;
        if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
            strchr("-._~", ch))
            b[(*o)++] = (char)ch;
        else
            *o += (size_t)snprintf(b + *o, n - *o, "%%%02X", ch);
    }
}

/* The server list as the nats CLI takes it (comma-separated; a server
 * without a scheme is nats://), each with `user:password@` or `token@`
 * when given. NULL with a message when a server carries credentials of its
 * own as well. */
static const char *url_list(ob_cli *c, const char *in, const char *user, const char *pass,
                            const char *token, const char *from, char *err, size_t errlen) {
    size_t servers = 1, cred = 3 * (strlen(user    ? user
                                           : token ? token
                                                   : "") +
                                    strlen(user && pass ? pass : ""));
    for (const char *p = in; *p; p++)
        servers += *p == ',';
    size_t n = strlen(in) + servers * (cred + 16) + 1, o = 0;
    char *b = malloc(n);
    const char *p = in, *kept = NULL;
    while (b && *p) {
        size_t len = strcspn(p, ","), lead = strspn(p, " \t");
        const char *s = p + (lead < len ? lead : len), *e = p + len;
        while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
            e--;
        p += len + (p[len] == ',');
        if (e == s)
            continue;
        const char *sch = strstr(s, "://");
        size_t sl = sch && sch < e ? (size_t)(sch + 3 - s) : 0;
        if ((user || token) && memchr(s, '@', (size_t)(e - s))) {
            snprintf(err, errlen,
                     "%s: a server of the URL carries credentials, and a user or token is "
                     "given too: give one",
                     from);
            explicit_bzero(b, n);
            free(b);
            return NULL;
        }
        o += (size_t)snprintf(b + o, n - o, "%s%.*s", o ? "," : "", (int)(sl ? sl : 7),
                              sl ? s : "nats://");
        if (user || token) {
            put_enc(b, n, &o, user ? user : token);
            if (user) {
                b[o++] = ':';
                put_enc(b, n, &o, pass);
            }
            b[o++] = '@';
        }
        o += (size_t)snprintf(b + o, n - o, "%.*s", (int)(e - s - (ptrdiff_t)sl), s + sl);
    }
    if (b && o > 0) {
        b[o] = '\0';
        kept = ob_cli_keep(c, b);
    }
    if (b) {
        explicit_bzero(b, n);
        free(b);
    }
    if (kept == NULL)
        snprintf(err, errlen, "%s: no server in the URL", from);
    return kept;
}

/* The credentials of the conventions, checked. Returns 0, or 2. */
static int check_creds(const nats_conv *nc, char *err, size_t errlen) {
    if (!nc->val[N_USER] != !nc->val[N_PASSWORD]) {
        int f = nc->val[N_USER] ? N_USER : N_PASSWORD;
        snprintf(err, errlen, "%s: a NATS %s without a %s: give both", nc->from[f], fields[f].key,
                 f == N_USER ? "password" : "user");
        return 2;
    }
    if (nc->val[N_USER] && nc->val[N_TOKEN]) {
        snprintf(err, errlen, "%s: a NATS token and a user (%s): give one", nc->from[N_TOKEN],
                 nc->from[N_USER]);
        return 2;
    }
    return 0;
}

/* The relay's own options give a NATS credential. */
static int own_creds(const outbox_relay_options *r) {
    return r->nats_creds_file || r->nats_nkey_file || r->nats_token_file || r->nats_password_file ||
           (r->nats_url && strchr(r->nats_url, '@'));
}

/* Fills the target from nc: the URL (with user information), the files. */
static int apply(ob_conv_target *t, nats_conv *nc, char *err, size_t errlen) {
    outbox_relay_options *r = t->r;
    int creds = !own_creds(r);
    if (creds && check_creds(nc, err, errlen) != 0)
        return 2;
    const char *user = creds ? nc->val[N_USER] : NULL, *token = creds ? nc->val[N_TOKEN] : NULL;
    int auth = user ? N_USER : token ? N_TOKEN : -1;
    if (r->nats_url == NULL ? nc->val[N_URL] != NULL : auth >= 0) {
        const char *base = r->nats_url ? r->nats_url : nc->val[N_URL];
        const char *from = r->nats_url ? "the relay's URL" : nc->from[N_URL];
        if (auth >= 0 && (r->nats_url || nc->from[auth] != nc->from[N_URL]))
            from = ob_conv_keepf(t->c, "%s, with the %s of %s", from,
                                 auth == N_USER ? "user and password" : "token", nc->from[auth]);
        const char *url =
            from ? url_list(t->c, base, user, nc->val[N_PASSWORD], token, from, err, errlen) : NULL;
        if (url == NULL)
            return 2;
        ob_conv_set(t, "nats", url, from);
    }
    for (int f = N_CREDS; f < N_FIELDS; f++) {
        const opt *o = ob_opt_find(fields[f].opt, strlen(fields[f].opt));
        const char **field = (const char **)((char *)r + (o->off - offsetof(ob_cli, relay)));
        if (nc->val[f] == NULL || *field != NULL || ((f == N_CREDS || f == N_NKEY) && !creds))
            continue;
        const char *path = file_value(t, f, nc->val[f], nc->from[f], err, errlen);
        if (path == NULL)
            return 2;
        ob_conv_set(t, fields[f].opt, path, nc->from[f]);
    }
    return 0;
}

int ob_conv_nats(ob_conv_target *t, char *err, size_t errlen) {
    nats_conv nc;
    memset(&nc, 0, sizeof(nc));
    for (int f = 0; f < N_FIELDS; f++)
        if (fields[f].env && (nc.val[f] = ob_conv_env(t, fields[f].env)) != NULL &&
            (nc.from[f] = ob_conv_keepf(t->c, "environment %s", fields[f].env)) == NULL)
            return snprintf(err, errlen, "out of memory"), 1;
    const char *name = ob_conv_env(t, "NATS_CONTEXT");
    char chosen[256];
    int rc = 0;
    if (name == NULL && t->r->nats_url == NULL && nc.val[N_URL] == NULL) {
        if ((rc = selected_context(t, chosen, sizeof(chosen), err, errlen)) != 0)
            return rc;
        name = chosen[0] ? chosen : NULL;
    }
    char path[2200];
    if (name && ((rc = context_path(t, name, path, sizeof(path), err, errlen)) != 0 ||
                 (rc = load_context(t->c, name, path, &nc, err, errlen)) != 0))
        return rc;
    return apply(t, &nc, err, errlen);
}
