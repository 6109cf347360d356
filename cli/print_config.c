/* SPDX-License-Identifier: Apache-2.0 */
/* --print-config: the effective configuration, as a config file that reads
 * back to the same settings. Each value's origin is a comment line of its
 * own; a secret is never shown: one read from a file is shown as the file's
 * name, one given directly (and an unset one) as a comment, and a URL's
 * password as ***. Keys only a one-shot command takes are left out. */
#include "args_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A secret given directly; a "-file" option names a file, not a secret. */
static int is_secret(const opt *o) {
    size_t n = strlen(o->name);
    if (n > 5 && strcmp(o->name + n - 5, "-file") == 0)
        return 0;
    return strstr(o->name, "password") || strstr(o->name, "token") || strstr(o->name, "secret") ||
           strstr(o->name, "seed");
}

/* The numeric types, each as a flag or a file would take it back. */
static void print_number(const opt *o, const void *field, FILE *out) {
    switch (o->type) {
    case T_MS32:
    case T_MS64: {
        /* In the largest unit that says it exactly, as a flag would take it. */
        static const struct {
            uint64_t ms;
            const char *unit;
        } units[] = {{86400000, "d"}, {3600000, "h"}, {60000, "m"}, {1000, "s"}};
        uint64_t v = o->type == T_MS32 ? *(const uint32_t *)field : *(const uint64_t *)field;
        for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
            if (v && v % units[i].ms == 0) {
                fprintf(out, "%llu%s", (unsigned long long)(v / units[i].ms), units[i].unit);
                return;
            }
        fprintf(out, "%llums", (unsigned long long)v);
        return;
    }
    case T_BYTES: {
        /* In the largest binary unit that says it exactly. */
        uint64_t v = *(const uint64_t *)field;
        if (v && v % (1024u * 1024 * 1024) == 0)
            fprintf(out, "%lluGiB", (unsigned long long)(v >> 30));
        else if (v && v % (1024u * 1024) == 0)
            fprintf(out, "%lluMiB", (unsigned long long)(v >> 20));
        else if (v && v % 1024 == 0)
            fprintf(out, "%lluKiB", (unsigned long long)(v >> 10));
        else
            fprintf(out, "%llu", (unsigned long long)v);
        return;
    }
    case T_DOUBLE: {
        /* The shortest text that reads back as the same number. */
        double d = *(const double *)field;
        char text[40];
        for (int prec = 6; prec <= 17; prec++) {
            snprintf(text, sizeof(text), "%.*g", prec, d);
            if (strtod(text, NULL) == d)
                break;
        }
        fputs(text, out);
        return;
    }
    default:
        return;
    }
}

/* names[k], or "?" for a value outside the table. */
static void print_name(int k, const char *const *names, int n, FILE *out) {
    fputs(k >= 0 && k < n ? names[k] : "?", out);
}

static void print_value(const opt *o, const void *field, FILE *out) {
    switch (o->type) {
    case T_FILE: /* print_opt shows the file's name */
        return;
    case T_STR: {
        const char *v = *(const char *const *)field;
        char red[1024];
        if (strcmp(o->name, "db") == 0 || strcmp(o->name, "nats") == 0) {
            /* The URL parser's own rules find the password (it may hold
             * '/', '?', ',' or '@'), so the mask does too. */
            fputs(outbox_url_redact(v, red, sizeof(red)) >= 0 ? red : "***", out);
        } else {
            ob_cli_redact(v, red, sizeof(red));
            fputs(red, out);
        }
        return;
    }
    case T_INT:
    case T_PROGRESS:
        fprintf(out, "%d", *(const int *)field);
        return;
    case T_U32:
        fprintf(out, "%u", *(const uint32_t *)field);
        return;
    case T_MS32:
    case T_MS64:
    case T_BYTES:
    case T_DOUBLE:
        print_number(o, field, out);
        return;
    case T_FLAG: {
        int on = o->off == R(processing)
                     ? *(const outbox_processing_mode *)field == OUTBOX_DELETE_PROCESSED
                     : *(const int *)field == o->value;
        fputs(on ? "true" : "false", out);
        return;
    }
    case T_BACKOFF:
        fputs(*(const outbox_backoff_kind *)field == OUTBOX_BACKOFF_FIXED ? "fixed" : "exponential",
              out);
        return;
    case T_LEVEL:
        fputs(outbox_log_level_name(*(const outbox_log_level *)field), out);
        return;
    case T_NATSCLI:
        print_name((int)*(const outbox_nats_client *)field,
                   (const char *[]){"auto", "loop", "threads"}, 3, out);
        return;
    case T_LOGFMT:
        print_name((int)*(const ob_log_format *)field, (const char *[]){"text", "logfmt", "json"},
                   3, out);
        return;
    }
}

static void print_origin(const ob_cli *c, const opt *o, const ob_cli_sources *src, FILE *out) {
    size_t k = ob_opt_index(o);
    switch ((ob_cli_origin)src->origin[k]) {
    case OB_FROM_DEFAULT:
        fputs("default", out);
        break;
    case OB_FROM_CONV:
        fprintf(out, "%s (read there again at start, so not set here)",
                src->conv[k] ? src->conv[k] : "a convention");
        break;
    case OB_FROM_FILE:
        fprintf(out, "%s:%u", c->config ? c->config : "config", src->line[k]);
        break;
    case OB_FROM_ENV:
        fprintf(out, "environment %s", o->env ? o->env : "");
        break;
    case OB_FROM_FLAG:
        fprintf(out, "--%s", o->name);
        break;
    }
}

/* Another option sets the same field with a higher origin (or the same
 * origin, earlier in the table): it is the one printed. */
static int outranked(const opt *o, const ob_cli_sources *src) {
    size_t k = ob_opt_index(o);
    for (size_t i = 0; i < ob_nopts; i++)
        if (i != k && ob_opts[i].off == o->off && ob_opt_file_settable(&ob_opts[i]) &&
            (src->origin[i] > src->origin[k] || (src->origin[i] == src->origin[k] && i < k)))
            return 1;
    return 0;
}

/* The file a secret was read from (T_FILE), or NULL. */
static const char *secret_path(const ob_cli *c, const char *secret) {
    for (int i = 0; i < c->nsecret_files; i++)
        if (c->secret_files[i].secret == secret)
            return c->secret_files[i].path;
    return NULL;
}

/* The settings that are not plain values: unset strings, secrets, --limit
 * when not given, the doorbell's default subject, --progress. Returns 1
 * when it printed the option. */
static int print_special(const ob_cli *c, const opt *o, const void *field, const char *table,
                         FILE *out) {
    const char *v = o->type == T_STR || o->type == T_FILE ? *(const char *const *)field : NULL;
    if (o->type == T_PROGRESS) {
        if (c->progress < 0)
            fprintf(out, "# progress: auto (shown when stderr is a terminal)\n");
        else
            fprintf(out, "%s = true\n", c->progress ? "progress" : "no-progress");
        return 1;
    }
    if (o->off == C(limit) && c->limit == OB_CLI_LIMIT_UNSET) {
        fprintf(out, "# limit is not set: cleanup deletes up to 10000 rows per round, dead list "
                     "shows 100\n");
        return 1;
    }
    if (o->off == R(wake_subject) && v == NULL) {
        fprintf(out, "# default: outbox_wake.<table>\nwake-subject = outbox_wake.%s\n",
                table ? table : "outbox");
        return 1;
    }
    if ((o->type == T_STR || o->type == T_FILE) && v == NULL) {
        fprintf(out, "# %s is not set\n", o->name);
        return 1;
    }
    if (o->type == T_FILE) {
        const char *path = secret_path(c, v);
        if (path)
            fprintf(out, "%s = %s\n", o->name, path);
        else
            fprintf(out, "# %s: set (the secret is not shown)\n", o->name);
        return 1;
    }
    if (o->type == T_STR && is_secret(o)) {
        fprintf(out, "# %s is set (not shown); give it again, or read it from a file (%s-file)\n",
                o->name, o->name);
        return 1;
    }
    return 0;
}

/* A setting left unset: one comment line says so, without an origin. */
static int unset(const ob_cli *c, const opt *o, const void *field) {
    if (o->type == T_STR || o->type == T_FILE)
        return *(const char *const *)field == NULL && o->off != R(wake_subject);
    if (o->type == T_INT && *(const int *)field == 0) /* --stream-replicas */
        return 1;
    return (o->type == T_PROGRESS && c->progress < 0) ||
           (o->off == C(limit) && c->limit == OB_CLI_LIMIT_UNSET);
}

static void print_opt(const ob_cli *c, const opt *o, const void *field, const ob_cli_sources *src,
                      const char *table, FILE *out) {
    if (o->type == T_PROGRESS && o->value == 0)
        return; /* --no-progress: printed with --progress */
    if (o->type != T_PROGRESS && outranked(o, src))
        return;
    if (o->type == T_INT && *(const int *)field == 0) {
        fprintf(out, "# %s is not set\n", o->name);
        return;
    }
    if (unset(c, o, field)) {
        print_special(c, o, field, table, out);
        return;
    }
    /* --progress and --no-progress share a field: the origin is the one
     * that set it. */
    const opt *from = o;
    for (size_t j = 0; o->type == T_PROGRESS && j < ob_nopts; j++)
        if (ob_opts[j].off == o->off && src->origin[j] > src->origin[ob_opt_index(from)])
            from = &ob_opts[j];
    fputs("# ", out);
    print_origin(c, from, src, out);
    fputc('\n', out);
    if (src->origin[ob_opt_index(o)] == OB_FROM_CONV) {
        /* A comment only: the printed file, read back, takes it from the
         * same place again; a secret is never shown. */
        if (is_secret(o)) {
            fprintf(out, "# %s is set (not shown)\n", o->name);
            return;
        }
        fprintf(out, "# %s = ", o->name);
        print_value(o, field, out);
        fputc('\n', out);
        return;
    }
    if (print_special(c, o, field, table, out))
        return;
    fprintf(out, "%s = ", o->name);
    print_value(o, field, out);
    fputc('\n', out);
}

void ob_cli_print_config(const ob_cli *c, FILE *out) {
    fprintf(out, "# outbox-uvrelay: the effective configuration, readable as a config file;\n"
                 "# secrets are not shown (a URL's password is ***: give it again).\n"
                 "# Precedence: flag > environment > config file > the conventions of NATS\n"
                 "# and MariaDB (NATS_* variables and MYSQL_PWD > a nats context and an option\n"
                 "# file) > default.\n[relay]\n");
    for (size_t k = 0; k < ob_nopts; k++) {
        const opt *o = &ob_opts[k];
        if (!ob_opt_file_settable(o) || (c->ntables && ob_opt_is_relay(o)))
            continue;
        print_opt(c, o, (const char *)c + o->off, &c->src, c->relay.table, out);
    }
    for (int i = 0; i < c->ntables; i++) {
        ob_cli_table *t = &c->tables[i];
        fprintf(out, "\n[table %s]\n", t->name);
        for (size_t k = 0; k < ob_nopts; k++)
            if (ob_opt_is_relay(&ob_opts[k]))
                print_opt(c, &ob_opts[k], ob_opt_table_field(t, &ob_opts[k]), &t->src,
                          t->relay.table, out);
    }
}
