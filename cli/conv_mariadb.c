/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The MariaDB ecosystem's conventions, for a database URL without a
 * password that neither --db-password nor --db-password-file (nor their
 * variables, nor the config file) completes: MYSQL_PWD, then an option
 * file, the one --db-option-file names or else ~/.my.cnf.
 *
 * The file is read as MariaDB's clients read theirs: groups [client],
 * [client-server], [client-mariadb] and the relay's own [outbox-uvrelay];
 * the last `password` among them, in the order of the file, wins. Only the
 * password is taken: where to connect, and as whom, is the URL's (as a
 * client's --host and --user win over its option file). A `user` in the
 * file is refused when the URL names none, rather than ignored; a key of
 * [outbox-uvrelay] other than user and password, !include and
 * !includedir are refused too. The relay reads the file itself, at start:
 * Connector/C's MYSQL_READ_DEFAULT_FILE would also let the file's host,
 * port, socket and TLS settings override the URL's, and leave the relay
 * unable to say where its password came from.
 */
#include "args_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define OPTION_FILE_MAX (1024 * 1024)

static const char *const groups[] = {"client", "client-server", "client-mariadb", "outbox-uvrelay"};

typedef struct my_file {
    const char *path;
    const char *password; /* kept; NULL when none */
    const char *group;    /* of the password */
    int user;             /* a user is set in one of the groups */
    unsigned user_line;
} my_file;

/* A value as MariaDB reads it: up to an unquoted '#', trimmed, without
 * its quotes, with \b \t \n \r \s \\ \" \' turned into what they stand for.
 * Rewrites v in place. */
static void option_value(char *v) {
    char quote = 0, esc = 0, *p;
    for (p = v; *p; p++) {
        if ((*p == '\'' || *p == '"') && !esc)
            quote = !quote ? *p : quote == *p ? 0 : quote;
        if (!quote && *p == '#') {
            *p = '\0';
            break;
        }
        esc = quote && *p == '\\' && !esc;
    }
    size_t n = strlen(v);
    while (n > 0 && strchr(" \t\r", v[n - 1]))
        v[--n] = '\0';
    if (n >= 2 && (v[0] == '\'' || v[0] == '"') && v[n - 1] == v[0]) {
        memmove(v, v + 1, n - 2);
        v[n - 2] = '\0';
    }
    char *o = v;
    for (p = v; *p; p++) {
        if (*p != '\\' || p[1] == '\0') {
            *o++ = *p;
            continue;
        }
        const char *from = "btnrs\\\"'", *to = "\b\t\n\r \\\"'";
        const char *k = strchr(from, p[1]);
        if (k) {
            *o++ = to[k - from];
            p++;
        } else {
            *o++ = *p;
        }
    }
    *o = '\0';
}

/* The whole file, NUL-terminated, into *buf; -1 with a message. */
static int read_file(const char *path, char **buf, char *err, size_t errlen) {
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        snprintf(err, errlen, "option file %s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return 1;
    }
    const char *bad = !S_ISREG(st.st_mode)           ? "not a regular file"
                      : (st.st_mode & S_IWOTH)       ? "anyone may write it (MariaDB's clients "
                                                       "ignore such a file): chmod o-w it"
                      : st.st_size > OPTION_FILE_MAX ? "larger than 1 MiB"
                                                     : NULL;
    char *b = bad ? NULL : malloc((size_t)st.st_size + 1);
    ssize_t r = b ? read(fd, b, (size_t)st.st_size) : -1;
    int why = errno;
    close(fd);
    if (bad || r != st.st_size) {
        snprintf(err, errlen, "option file %s: %s", path,
                 bad     ? bad
                 : r < 0 ? strerror(why)
                         : "changed while read");
        free(b);
        return bad ? 2 : 1;
    }
    b[r] = '\0';
    *buf = b;
    return 0;
}

/* One line of the file in group `group` (NULL: not one the relay reads). */
static int option_line(ob_cli *c, my_file *f, const char *group, char *line, unsigned no, char *err,
                       size_t errlen) {
    char *eq = strchr(line, '=');
    char *key = line, *end = eq ? eq : line + strlen(line);
    while (end > key && strchr(" \t\r", end[-1]))
        end--;
    *end = '\0';
    for (char *p = key; *p; p++)
        *p = *p == '_' ? '-' : *p;
    if (strncmp(key, "loose-", 6) == 0)
        key += 6;
    if (strcmp(key, "password") == 0 && eq) {
        char *v = eq + 1 + strspn(eq + 1, " \t");
        option_value(v);
        f->password = ob_cli_keep(c, v);
        f->group = group;
        explicit_bzero(v, strlen(v));
        return f->password ? 0 : (snprintf(err, errlen, "out of memory"), 1);
    }
    if (strcmp(key, "user") == 0) {
        f->user = 1;
        f->user_line = no;
        return 0;
    }
    if (strcmp(key, "password") == 0 || strcmp(group, "outbox-uvrelay") == 0) {
        snprintf(err, errlen,
                 "option file %s:%u: %s: the relay takes only user and password from "
                 "[outbox-uvrelay], and a password needs a value (it cannot ask for one)",
                 f->path, no, key);
        return 2;
    }
    return 0;
}

static int parse_file(ob_cli *c, my_file *f, char *buf, char *err, size_t errlen) {
    const char *group = NULL;
    unsigned no = 0;
    for (char *line = buf, *next; line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        no++;
        line += strspn(line, " \t");
        if (*line == '#' || *line == ';' || *line == '\0' || *line == '\r')
            continue;
        if (*line == '!') {
            snprintf(err, errlen,
                     "option file %s:%u: !include and !includedir are not supported: put the "
                     "password in this file",
                     f->path, no);
            return 2;
        }
        if (*line == '[') {
            char *close = strchr(line, ']');
            if (close == NULL) {
                snprintf(err, errlen, "option file %s:%u: a group without its ']'", f->path, no);
                return 2;
            }
            *close = '\0';
            line++;
            line += strspn(line, " \t");
            for (char *e = close; e > line && strchr(" \t", e[-1]); e--)
                e[-1] = '\0';
            group = NULL;
            for (size_t g = 0; g < sizeof(groups) / sizeof(groups[0]); g++)
                if (strcasecmp(line, groups[g]) == 0)
                    group = groups[g];
            continue;
        }
        int rc = group ? option_line(c, f, group, line, no, err, errlen) : 0;
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* Reads the option file f->path into f: 0, or 1 or 2 with a message. */
static int read_options(ob_cli *c, my_file *f, char *err, size_t errlen) {
    char *buf = NULL;
    int rc = read_file(f->path, &buf, err, errlen);
    if (rc != 0)
        return rc;
    size_t n = strlen(buf);
    rc = parse_file(c, f, buf, err, errlen);
    explicit_bzero(buf, n);
    free(buf);
    return rc;
}

/* What the URL's user information holds: *user and *password set to 1. */
static void url_userinfo(const char *url, int *user, int *password) {
    const char *s = strstr(url, "://");
    s = s ? s + 3 : url;
    const char *at = strrchr(s, '@');
    const char *colon = at ? memchr(s, ':', (size_t)(at - s)) : NULL;
    *password = colon != NULL;
    *user = at != NULL && at > s && colon != s;
}

int ob_conv_db(ob_conv_target *t, char *err, size_t errlen) {
    ob_cli *c = t->c;
    my_file f = {c->db_option_file, NULL, NULL, 0, 0};
    /* A file named is read even when not needed: its mistakes show now. */
    int rc = f.path ? read_options(c, &f, err, errlen) : 0;
    if (rc != 0)
        return rc;
    int user, password;
    if (t->r->db_url == NULL || t->r->db_password != NULL)
        return 0;
    url_userinfo(t->r->db_url, &user, &password);
    if (password)
        return 0;
    const char *pwd = ob_conv_env(t, "MYSQL_PWD");
    if (pwd) {
        ob_conv_set(t, "db-password", pwd, "environment MYSQL_PWD");
        return 0;
    }
    if (f.path == NULL) {
        const char *home = ob_conv_env(t, "HOME");
        f.path = home ? ob_conv_keepf(c, "%s/.my.cnf", home) : NULL;
        if (f.path == NULL || (access(f.path, F_OK) != 0 && errno == ENOENT))
            return 0;
        if ((rc = read_options(c, &f, err, errlen)) != 0)
            return rc;
    }
    if (f.password == NULL)
        return 0;
    if (f.user && !user) {
        snprintf(err, errlen,
                 "option file %s:%u: a user, and the database URL names none: the relay takes "
                 "only the password from the file; write the user in the URL "
                 "(mysql://USER@host/db)",
                 f.path, f.user_line);
        return 2;
    }
    const char *from = ob_conv_keepf(c, "option file %s [%s]", f.path, f.group);
    if (from == NULL)
        return snprintf(err, errlen, "out of memory"), 1;
    ob_conv_set(t, "db-password", f.password, from);
    return 0;
}
