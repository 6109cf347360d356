/* SPDX-License-Identifier: Apache-2.0 */
/* Command-line flags and positional words; ob_cli_parse puts the file, the
 * environment and the flags together. */
#include "args_int.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const struct {
    const char *name;
    ob_cli_command cmd;
} commands[] = {{"run", OB_CMD_RUN},
                {"schema", OB_CMD_SCHEMA},
                {"status", OB_CMD_STATUS},
                {"partitions", OB_CMD_PARTITIONS},
                {"cleanup", OB_CMD_CLEANUP},
                {"dead", OB_CMD_DEAD},
                {"cursor-reset", OB_CMD_CURSOR_RESET},
                {"republish", OB_CMD_REPUBLISH}};

/* A word that is not an option: the command, or the dead-letter action. */
static int parse_positional(ob_cli *c, const char *arg, int positional, char *err, size_t errlen) {
    if (positional == 0) {
        size_t k;
        for (k = 0; k < sizeof(commands) / sizeof(commands[0]); k++)
            if (strcmp(arg, commands[k].name) == 0)
                break;
        if (k == sizeof(commands) / sizeof(commands[0])) {
            snprintf(err, errlen,
                     "unknown command '%s' (run, schema, status, partitions, cleanup, dead, "
                     "cursor-reset, republish)",
                     arg);
            return -1;
        }
        c->command = commands[k].cmd;
        return 0;
    }
    if (positional == 1 && c->command == OB_CMD_DEAD) {
        if (strcmp(arg, "list") != 0 && strcmp(arg, "replay") != 0 && strcmp(arg, "purge") != 0) {
            snprintf(err, errlen, "unknown dead-letter action '%s' (list, replay, purge)", arg);
            return -1;
        }
        c->subcommand = arg;
        return 0;
    }
    snprintf(err, errlen, "unexpected argument '%s'", arg);
    return -1;
}

/* One "--name[=value]" at argv[*a] (its value may be the next word). */
static int parse_flag(ob_cli *c, int argc, char **argv, int *a, const char *arg,
                      const char **set_by, char *err, size_t errlen) {
    const char *name = arg + 2;
    const char *eq = strchr(name, '=');
    size_t nl = eq ? (size_t)(eq - name) : strlen(name);
    const opt *o = ob_opt_find(name, nl);
    if (o == NULL) {
        snprintf(err, errlen, "unknown option '--%.*s'", (int)nl, name);
        return -1;
    }
    char src[64];
    snprintf(src, sizeof(src), "--%s", o->name);
    if (ob_opt_takes_value(o) &&
        ob_opt_once(ob_opts, ob_nopts, set_by, (size_t)(o - ob_opts), o->name, "--", err, errlen))
        return -1;
    const char *val = NULL;
    if (ob_opt_takes_value(o)) {
        if (eq)
            val = eq + 1;
        else if (*a + 1 < argc)
            val = argv[++*a];
        else {
            snprintf(err, errlen, "%s needs a value", src);
            return -1;
        }
    } else if (eq) {
        val = eq + 1;
    }
    if (o->off == R(table) && c->src.origin[ob_opt_index(o)] == OB_FROM_FLAG) {
        snprintf(err, errlen,
                 "--table is given more than once: to relay several tables, declare each "
                 "as a [table NAME] section of a config file (--config)");
        return -1;
    }
    if (ob_opt_store(c, o, (char *)c + o->off, val, src, err, errlen) != 0)
        return -1;
    c->src.origin[ob_opt_index(o)] = OB_FROM_FLAG;
    return 0;
}

/* What the command needs once everything is parsed. */
static int check_parsed(ob_cli *c, char *err, size_t errlen) {
    if (c->command == OB_CMD_DEAD && c->subcommand == NULL) {
        snprintf(err, errlen, "dead needs an action: list, replay or purge");
        return -1;
    }
    if (c->command == OB_CMD_DEAD && strcmp(c->subcommand, "replay") == 0 && !c->id && !c->all) {
        snprintf(err, errlen, "dead replay needs --id ID or --all");
        return -1;
    }
    if (c->print_config)
        return 0;
    for (int i = 0; i < c->ntables; i++)
        if ((c->command == OB_CMD_RUN || (c->command == OB_CMD_REPUBLISH && !c->dry_run)) &&
            (c->tables[i].relay.db_url == NULL || c->tables[i].relay.nats_url == NULL)) {
            snprintf(err, errlen, "table [%s] has no %s (set it globally or in the section)",
                     c->tables[i].name, c->tables[i].relay.db_url ? "nats URL" : "database URL");
            return -1;
        }
    if (c->command != OB_CMD_SCHEMA && c->ntables == 0 && c->relay.db_url == NULL) {
        snprintf(err, errlen, "--db is required (or OUTBOX_DB): mysql://user:pass@host:port/db");
        return -1;
    }
    if ((c->command == OB_CMD_RUN || (c->command == OB_CMD_REPUBLISH && !c->dry_run)) &&
        c->ntables == 0 && c->relay.nats_url == NULL) {
        snprintf(err, errlen,
                 "--nats is required (or OUTBOX_NATS, NATS_URL, a nats context): "
                 "nats://host:port");
        return -1;
    }
    return 0;
}

/* The commands that connect to NATS: the relay and republish. */
static int uses_nats(const ob_cli *c) {
    return c->command == OB_CMD_RUN || c->command == OB_CMD_REPUBLISH;
}

/* Every file the command will read can be opened: a missing or forbidden
 * one is the environment's fault (exit 1), found before anything starts,
 * for the files the library would otherwise report as bad options. The
 * NATS files matter to the relay only; schema connects to nothing. */
static int check_files(ob_cli *c, char *err, size_t errlen) {
    int ntables = c->ntables ? c->ntables : 1;
    for (int i = 0; i < ntables; i++) {
        for (size_t k = 0; k < ob_nopts; k++) {
            const opt *o = &ob_opts[k];
            if (ob_opt_path(o) != OB_PATH_READ || o->type == T_FILE || !ob_opt_is_relay(o) ||
                (!uses_nats(c) && strncmp(o->name, "db-", 3) != 0))
                continue;
            const char *path =
                *(const char *const *)(c->ntables ? ob_opt_table_field(&c->tables[i], o)
                                                  : (char *)c + o->off);
            const ob_cli_sources *src = c->ntables ? &c->tables[i].src : &c->src;
            const char *conv = src->origin[k] == OB_FROM_CONV ? src->conv[k] : NULL;
            if (path != NULL && access(path, R_OK) != 0) {
                snprintf(err, errlen, "%s%s%s%s%s: cannot read '%s': %s",
                         c->ntables ? "table [" : "", c->ntables ? c->tables[i].name : "",
                         c->ntables ? "]: " : "", conv ? conv : "--", conv ? "" : o->name, path,
                         strerror(errno));
                return -1;
            }
        }
    }
    return 0;
}

void ob_conv_set(ob_conv_target *t, const char *name, const char *value, const char *from) {
    const opt *o = ob_opt_find(name, strlen(name));
    size_t k = ob_opt_index(o);
    *(const char **)((char *)t->r + (o->off - offsetof(ob_cli, relay))) = value;
    t->src->origin[k] = OB_FROM_CONV;
    t->src->conv[k] = from;
}

const char *ob_conv_env(const ob_conv_target *t, const char *name) {
    const char *v = t->env ? t->env(name, t->env_data) : NULL;
    return v && *v ? v : NULL;
}

const char *ob_conv_keepf(ob_cli *c, const char *fmt, ...) {
    char text[4096];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    return n < 0 || (size_t)n >= sizeof(text) ? NULL : ob_cli_keep(c, text);
}

/* The conventions fill each table's options (or the global ones without
 * tables) after the relay's own sources are merged: a table whose section
 * gives a password takes none from ~/.my.cnf. NATS matters to the relay
 * only, the database to every command but schema. */
int ob_cli_conventions(ob_cli *c, ob_env_fn env, void *env_data, char *err, size_t errlen) {
    int n = c->ntables ? c->ntables : 1;
    int nats = uses_nats(c) || c->print_config;
    int db = c->command != OB_CMD_SCHEMA || c->print_config;
    for (int i = 0; i < n; i++) {
        ob_conv_target t = {c, c->ntables ? &c->tables[i].relay : &c->relay,
                            c->ntables ? &c->tables[i].src : &c->src, env, env_data};
        err[0] = '\0';
        int rc = nats ? ob_conv_nats(&t, err, errlen) : 0;
        if (rc == 0 && db)
            rc = ob_conv_db(&t, err, errlen);
        if (rc != 0)
            return rc;
    }
    return 0;
}

int ob_cli_parse(ob_cli *c, int argc, char **argv, ob_env_fn env, void *env_data, char *err,
                 size_t errlen) {
    memset(c, 0, sizeof(*c));
    outbox_relay_options_init(&c->relay);
    c->progress = -1;
    c->lookahead = 7;
    c->limit = OB_CLI_LIMIT_UNSET;
    c->older_than_ms = 7ULL * 86400000ULL;

    /* The file first, then the environment, then the flags: each overrides
     * what came before. */
    const char *path = ob_cli_config_path(argc, argv, env, env_data);
    if (path) {
        c->config = ob_cli_keep(c, path);
        if (c->config == NULL)
            return 1;
        int rc = ob_cli_load_config(c, c->config, err, errlen);
        if (rc != 0)
            return rc;
    }
    if (ob_cli_parse_env(c, env, env_data, err, errlen) != 0)
        return c->unreadable ? 1 : 2;
    /* A flag given twice on the command line is a mistake too. */
    const char *set_by[OB_CLI_MAX_OPTS] = {0};
    int positional = 0;
    for (int a = 1; a < argc; a++) {
        const char *arg = strcmp(argv[a], "-h") == 0 ? "--help" : argv[a];
        int rc = strncmp(arg, "--", 2) != 0 || arg[2] == '\0'
                     ? parse_positional(c, arg, positional++, err, errlen)
                     : parse_flag(c, argc, argv, &a, arg, set_by, err, errlen);
        if (rc != 0)
            return c->unreadable ? 1 : 2;
    }
    if (c->help || c->version)
        return 0;
    if (ob_cli_select_table(c, err, errlen) != 0 || ob_cli_merge_tables(c, err, errlen) != 0)
        return 2;
    int crc = ob_cli_conventions(c, env, env_data, err, errlen);
    if (crc != 0)
        return crc;
    if (check_parsed(c, err, errlen) != 0)
        return 2;
    if (!c->print_config && c->command != OB_CMD_SCHEMA && check_files(c, err, errlen) != 0)
        return 1;
    return 0;
}

void ob_cli_maint_options(const ob_cli *c, outbox_relay_options *o) {
    o->maint.partition_period = c->monthly ? OUTBOX_PARTITION_MONTH : OUTBOX_PARTITION_DAY;
    o->maint.partition_lookahead = c->lookahead;
    o->maint.partition_retention = c->retention;
    o->maint.cleanup_retention_ms = c->older_than_ms;
    o->maint.cleanup_limit = c->limit == OB_CLI_LIMIT_UNSET ? 10000 : c->limit;
    o->maint.cleanup_include_dead = c->include_dead;
}

void ob_cli_free(ob_cli *c) {
    for (int i = 0; i < c->nowned; i++) {
        explicit_bzero(c->owned[i], strlen(c->owned[i])); /* secrets among them */
        free(c->owned[i]);
    }
    free(c->owned);
    c->owned = NULL;
    c->nowned = c->owned_cap = 0;
    for (int i = 0; i < c->ntables; i++)
        free(c->tables[i].name);
    free(c->tables);
    c->tables = NULL;
    c->ntables = 0;
}
