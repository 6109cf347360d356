/* SPDX-License-Identifier: Apache-2.0 */
/* The config file: an INI file of global keys and [table NAME] sections
 * (inih), the table --table picks, and the tables' inheritance of global
 * values. */
#include "args_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ini.h>

/* A config file is read whole, and is at most this large. */
#define OB_CONFIG_MAX_BYTES (1024 * 1024)

typedef struct ini_ctx {
    ob_cli *c;
    FILE *f;
    const char *path;
    unsigned line;      /* lines read so far: the line the handler is called for */
    unsigned err_line;  /* 0 while no error was found */
    unsigned long_line; /* first line longer than the parser's limit */
    unsigned section;   /* the line of the last [section] header */
    unsigned relay;     /* the line of the [relay] header, 0 before it */
    char *err;
    size_t errlen;
} ini_ctx;

static ob_cli_table *section_table(ini_ctx *x, const char *section);
static int is_global_section(const char *section);

static int ini_fail(ini_ctx *x, const char *fmt, const char *a, const char *b);

static const char *line_no(unsigned line) {
    static char text[16];
    snprintf(text, sizeof(text), "%u", line);
    return text;
}

/* A [table NAME] section of that name came before. */
static int declared(const ob_cli *c, const char *section) {
    const char *name = section + strspn(section, " ");
    if (strncmp(name, "table ", 6) != 0)
        return 0;
    name += 6 + strspn(name + 6, " ");
    for (int i = 0; i < c->ntables; i++)
        if (strcmp(c->tables[i].name, name) == 0)
            return 1;
    return 0;
}

static char *ini_read_line(char *str, int num, void *stream) {
    ini_ctx *x = stream;
    char *r = fgets(str, num, x->f);
    if (r == NULL)
        return NULL;
    x->line++;
    const char *p = r + strspn(r, " \t");
    const char *close = *p == '[' ? strchr(p, ']') : NULL;
    if (close && x->err_line == 0) {
        /* A section is checked, and its table made, at its header line, so
         * that a section without keys is not silently ignored. */
        char name[128];
        snprintf(name, sizeof(name), "%.*s", (int)(close - p - 1), p + 1);
        x->section = x->line;
        if (strcmp(name, "relay") == 0 && x->relay)
            ini_fail(x, "section [relay] is repeated (first at line %s)%s", line_no(x->relay), "");
        else if (strcmp(name, "relay") == 0)
            x->relay = x->line;
        else if (!is_global_section(name) && declared(x->c, name))
            ini_fail(x, "section [%s] is repeated: give each table one section%s", name, "");
        else if (!is_global_section(name))
            section_table(x, name);
    }
    size_t n = strlen(r);
    if (n > 0 && r[n - 1] != '\n' && !feof(x->f) && x->long_line == 0)
        x->long_line = x->line;
    return r;
}

static int ini_fail(ini_ctx *x, const char *fmt, const char *a, const char *b) {
    if (x->err_line == 0) {
        char msg[256];
        snprintf(msg, sizeof(msg), fmt, a, b);
        snprintf(x->err, x->errlen, "%s:%u: %s", x->path, x->line, msg);
        x->err_line = x->line;
    }
    return 0;
}

static ob_cli_table *table_for(ini_ctx *x, const char *name) {
    ob_cli *c = x->c;
    for (int i = 0; i < c->ntables; i++)
        if (strcmp(c->tables[i].name, name) == 0)
            return &c->tables[i];
    if (c->ntables == OB_CLI_MAX_TABLES)
        return NULL;
    if (c->tables == NULL && (c->tables = calloc(OB_CLI_MAX_TABLES, sizeof(*c->tables))) == NULL)
        return NULL;
    ob_cli_table *t = &c->tables[c->ntables];
    memset(t, 0, sizeof(*t));
    if ((t->name = strdup(name)) == NULL)
        return NULL;
    c->ntables++;
    outbox_relay_options_init(&t->relay);
    t->section_line = x->section;
    /* The table a section relays is named after it unless it says otherwise. */
    const opt *to = ob_opt_find("table", 5);
    t->relay.table = t->name;
    t->src.origin[ob_opt_index(to)] = OB_FROM_FILE;
    t->src.line[ob_opt_index(to)] = x->section;
    return t;
}

static int is_global_section(const char *section) {
    return *section == '\0' || strcmp(section, "relay") == 0;
}

/* The table of a [table NAME] section, made at its first mention; NULL with
 * the error recorded when the section is not one. */
static ob_cli_table *section_table(ini_ctx *x, const char *section) {
    if (strncmp(section, "table ", 6) != 0) {
        ini_fail(x, "unknown section '[%s]' (use [relay] or [table NAME])%s", section, "");
        return NULL;
    }
    const char *tname = section + 6;
    while (*tname == ' ')
        tname++;
    if (*tname == '\0' || strspn(tname, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                        "0123456789_.-") != strlen(tname)) {
        ini_fail(x, "section '[%s]': a table name is made of A-Z a-z 0-9 _ . -%s", section, "");
        return NULL;
    }
    ob_cli_table *t = table_for(x, tname);
    if (t == NULL)
        ini_fail(x, "too many tables%s%s", "", "");
    return t;
}

/* A file named in the config file by a relative name is found beside the
 * config file, as other daemons read theirs, whatever the working folder:
 * the folder of the config file's path is put before it. */
static const char *beside_config(ini_ctx *x, const char *value) {
    const char *slash = strrchr(x->path, '/');
    if (*value == '/' || *value == '\0' || slash == NULL)
        return value;
    size_t dl = (size_t)(slash - x->path) + 1;
    char *joined = malloc(dl + strlen(value) + 1);
    if (joined == NULL)
        return NULL;
    memcpy(joined, x->path, dl);
    strcpy(joined + dl, value);
    const char *kept = ob_cli_keep(x->c, joined);
    free(joined);
    return kept;
}

static int ini_on_value(void *user, const char *section, const char *name, const char *value) {
    ini_ctx *x = user;
    ob_cli *c = x->c;
    if (x->err_line)
        return 1; /* report the first error only */
    const opt *o = ob_opt_find(name, strlen(name));
    if (o == NULL)
        return ini_fail(x, "unknown key '%s'%s", name, " (the keys are the long flag names)");
    if (!ob_opt_file_settable(o))
        return ini_fail(x, "key '%s' cannot be set in a config file%s", name, "");
    if (ob_opt_path(o) && (value = beside_config(x, value)) == NULL)
        return ini_fail(x, "key '%s': out of memory%s", name, "");
    char src[320];
    snprintf(src, sizeof(src), "key '%s'", name);
    char msg[256];
    size_t k = ob_opt_index(o);
    if (is_global_section(section)) {
        if (c->src.origin[k] == OB_FROM_FILE)
            return ini_fail(x, "key '%s' is set twice%s", name, "");
        if (ob_opt_store(c, o, (char *)c + o->off, value, src, msg, sizeof(msg)) != 0)
            return ini_fail(x, "%s%s", msg, "");
        c->src.origin[k] = OB_FROM_FILE;
        c->src.line[k] = x->line;
        return 1;
    }
    ob_cli_table *t = section_table(x, section);
    if (t == NULL)
        return 0;
    if (!ob_opt_is_relay(o))
        return ini_fail(x, "key '%s' cannot be set per table; set it before the first %s", name,
                        "[table] section");
    if (t->src.origin[k] == OB_FROM_FILE &&
        !(strcmp(name, "table") == 0 && t->src.line[k] == t->section_line))
        return ini_fail(x, "key '%s' is set twice in this table%s", name, "");
    if (ob_opt_store(c, o, ob_opt_table_field(t, o), value, src, msg, sizeof(msg)) != 0)
        return ini_fail(x, "%s%s", msg, "");
    t->src.origin[k] = OB_FROM_FILE;
    t->src.line[k] = x->line;
    return 1;
}

/* Reads the whole file into *buf (malloc'd, *len bytes). Returns 0; 1 when
 * it cannot be opened or read (permissions, a missing file: the
 * environment's fault); 2 when it is not a text file of at most 1 MiB (a
 * directory, a device, a FIFO, a NUL byte). Never blocks on a FIFO. */
static int read_whole(const char *path, char **buf, size_t *len, char *err, size_t errlen) {
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return snprintf(err, errlen, "config file %s: %s", path, strerror(errno)), 1;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return snprintf(err, errlen,
                        "config file %s: not a regular file (a directory, a device or a "
                        "FIFO): give the path of a config file",
                        path),
               2;
    }
    char *b = malloc(OB_CONFIG_MAX_BYTES + 1);
    size_t n = 0;
    ssize_t r = 1;
    while (b && n <= OB_CONFIG_MAX_BYTES &&
           (r = read(fd, b + n, OB_CONFIG_MAX_BYTES + 1 - n)) != 0) {
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            break;
        n += (size_t)r;
    }
    int why = errno;
    close(fd);
    if (b == NULL || r < 0) {
        free(b);
        return snprintf(err, errlen, "config file %s: %s", path,
                        b ? strerror(why) : "out of memory"),
               1;
    }
    if (n > OB_CONFIG_MAX_BYTES) {
        free(b);
        return snprintf(err, errlen, "config file %s: larger than 1 MiB: not a config file", path),
               2;
    }
    const char *nul = memchr(b, '\0', n);
    if (nul) {
        unsigned line = 1;
        for (const char *p = b; p < nul; p++)
            line += *p == '\n';
        free(b);
        return snprintf(err, errlen, "%s:%u: a NUL byte: not a text file", path, line), 2;
    }
    *buf = b;
    *len = n;
    return 0;
}

int ob_cli_load_config(ob_cli *c, const char *path, char *err, size_t errlen) {
    char *buf = NULL;
    size_t len = 0;
    int rc = read_whole(path, &buf, &len, err, errlen);
    if (rc != 0)
        return rc;
    ini_ctx x = {c, NULL, path, 0, 0, 0, 0, 0, err, errlen};
    if (len == 0) {
        free(buf);
        return 0;
    }
    x.f = fmemopen(buf, len, "r");
    if (x.f == NULL) {
        free(buf);
        return snprintf(err, errlen, "config file %s: %s", path, strerror(errno)), 1;
    }
    rc = ini_parse_stream(ini_read_line, &x, ini_on_value, &x);
    fclose(x.f);
    explicit_bzero(buf, len); /* it may hold a password */
    free(buf);
    if (x.long_line && (x.err_line == 0 || x.long_line <= x.err_line)) {
        snprintf(err, errlen, "%s:%u: line too long (at most %d characters)", path, x.long_line,
                 INI_MAX_LINE - 2);
        return 2;
    }
    if (rc > 0 && (x.err_line == 0 || (unsigned)rc < x.err_line)) {
        snprintf(err, errlen,
                 "%s:%d: syntax error: expected 'key = value', '[relay]' or "
                 "'[table NAME]'",
                 path, rc);
        return 2;
    }
    if (x.err_line)
        return c->unreadable ? 1 : 2;
    if (rc < 0) {
        snprintf(err, errlen, "config file %s: cannot be read", path);
        return 1;
    }
    return 0;
}

/* The section set the field of `o` itself (through `o` or another option
 * for the same field, such as db-password-file for db-password), and no
 * flag or environment variable overrides it. */
static int table_keeps(const ob_cli *c, const ob_cli_table *t, const opt *o) {
    int set = 0;
    for (size_t j = 0; j < ob_nopts; j++) {
        if (ob_opts[j].off != o->off)
            continue;
        if (c->src.origin[j] >= OB_FROM_ENV)
            return 0;
        set |= t->src.origin[j] == OB_FROM_FILE;
    }
    return set;
}

/* Every table takes the global value of each option it did not set itself,
 * and the global value always when it came from a flag or the environment. */
int ob_cli_merge_tables(ob_cli *c, char *err, size_t errlen) {
    for (int i = 0; i < c->ntables; i++) {
        ob_cli_table *t = &c->tables[i];
        for (size_t k = 0; k < ob_nopts; k++) {
            const opt *o = &ob_opts[k];
            if (!ob_opt_is_relay(o) || table_keeps(c, t, o))
                continue;
            memcpy(ob_opt_table_field(t, o), (char *)c + o->off, ob_opt_size(o));
            t->src.origin[k] = c->src.origin[k];
            t->src.line[k] = c->src.line[k];
            t->src.conv[k] = c->src.conv[k];
        }
    }
    for (int i = 0; i < c->ntables; i++)
        for (int j = 0; j < i; j++)
            if (strcmp(c->tables[i].relay.table, c->tables[j].relay.table) == 0 &&
                strcmp(c->tables[i].relay.db_url ? c->tables[i].relay.db_url : "",
                       c->tables[j].relay.db_url ? c->tables[j].relay.db_url : "") == 0) {
                snprintf(err, errlen, "%s: tables [%s] and [%s] both relay table '%s'", c->config,
                         c->tables[j].name, c->tables[i].name, c->tables[i].relay.table);
                return -1;
            }
    return 0;
}

/* With [table NAME] sections, --table (or OUTBOX_TABLE) picks one of them,
 * by the section's name or by the table it relays. A name the file does not
 * declare is an error: a command never falls back to a table of its own. */
int ob_cli_select_table(ob_cli *c, char *err, size_t errlen) {
    size_t k = ob_opt_index(ob_opt_find("table", 5));
    if (c->ntables == 0 || c->src.origin[k] < OB_FROM_ENV)
        return 0;
    const char *want = c->relay.table;
    int hit = -1;
    for (int i = 0; i < c->ntables && hit < 0; i++)
        if (strcmp(c->tables[i].name, want) == 0)
            hit = i;
    for (int i = 0; i < c->ntables && hit < 0; i++)
        if (strcmp(c->tables[i].relay.table, want) == 0)
            hit = i;
    if (hit < 0) {
        size_t o = (size_t)snprintf(err, errlen,
                                    "%s '%s': the config file %s declares no such table (its "
                                    "[table] sections:",
                                    c->src.origin[k] == OB_FROM_FLAG ? "--table" : "OUTBOX_TABLE",
                                    want, c->config ? c->config : "");
        for (int i = 0; i < c->ntables && o < errlen; i++)
            o += (size_t)snprintf(err + o, errlen - o, " %s", c->tables[i].name);
        if (o < errlen)
            snprintf(err + o, errlen - o, ")");
        return -1;
    }
    for (int i = 0; i < c->ntables; i++)
        if (i != hit)
            free(c->tables[i].name);
    if (hit != 0)
        c->tables[0] = c->tables[hit];
    c->ntables = 1;
    /* The flag chose the section; it does not rename the section's table. */
    c->src.origin[k] = OB_FROM_DEFAULT;
    c->table_selected = 1;
    return 0;
}

/* The value of --config or OUTBOX_CONFIG, read before anything else. */
const char *ob_cli_config_path(int argc, char **argv, ob_env_fn env, void *env_data) {
    const char *path = env ? env("OUTBOX_CONFIG", env_data) : NULL;
    for (int a = 1; a < argc; a++) {
        if (strcmp(argv[a], "--config") == 0 && a + 1 < argc)
            path = argv[++a];
        else if (strncmp(argv[a], "--config=", 9) == 0)
            path = argv[a] + 9;
    }
    return path && *path ? path : NULL;
}
