/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Command-line and environment parsing for outbox-uvrelay. Every option of
 * the run command can also come from an OUTBOX_* environment variable; a
 * flag on the command line wins over the environment.
 */
#ifndef OB_CLI_ARGS_H
#define OB_CLI_ARGS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "outbox/outbox.h"

typedef enum ob_cli_command {
    OB_CMD_RUN = 0,
    OB_CMD_SCHEMA,
    OB_CMD_STATUS,
    OB_CMD_PARTITIONS,
    OB_CMD_CLEANUP,
    OB_CMD_DEAD,
    OB_CMD_CURSOR_RESET,
    OB_CMD_REPUBLISH,
} ob_cli_command;

#define OB_CLI_LIMIT_UNSET UINT32_MAX

/* The room reserved for options and tables. */
#define OB_CLI_MAX_OPTS 96
#define OB_CLI_MAX_TABLES 64

typedef enum ob_log_format {
    OB_LOG_TEXT = 0, /* 2026-11-23T01:02:03.456Z info  message */
    OB_LOG_LOGFMT,   /* ts=... level=info table=orders msg="message" */
    OB_LOG_JSON,     /* {"ts":"...","level":"info","table":"orders","msg":"message"} */
} ob_log_format;

/* Where an option's value came from; a higher origin wins. The relay's own
 * sources (flag, environment, config file) win over the ecosystem's
 * conventions (NATS_URL, a nats context, MYSQL_PWD, a MariaDB option file:
 * docs/configuration.md), which only fill what those leave unset. */
typedef enum ob_cli_origin {
    OB_FROM_DEFAULT = 0,
    OB_FROM_CONV, /* a convention of NATS or MariaDB; sources.conv says which */
    OB_FROM_FILE,
    OB_FROM_ENV,
    OB_FROM_FLAG,
} ob_cli_origin;

typedef struct ob_cli_sources {
    unsigned char origin[OB_CLI_MAX_OPTS]; /* ob_cli_origin, per option of the table */
    unsigned line[OB_CLI_MAX_OPTS];        /* the config file's line, for OB_FROM_FILE */
    const char *conv[OB_CLI_MAX_OPTS];     /* for OB_FROM_CONV: "environment NATS_URL", ... */
} ob_cli_sources;

/* One [table NAME] section of a config file: the relay options of one table.
 * A value set in the section wins over the file's global value; a flag or an
 * environment variable wins over both. */
typedef struct ob_cli_table {
    char *name; /* the section's NAME: the table label in logs and metrics */
    unsigned section_line;
    outbox_relay_options relay;
    ob_cli_sources src;
} ob_cli_table;

typedef struct ob_cli {
    ob_cli_command command;
    const char *subcommand; /* dead: list | replay | purge */
    outbox_relay_options relay;
    int drain;
    int progress; /* -1 auto (a terminal), 0 off, 1 on */
    int help;
    int version;
    int once;
    /* schema */
    int partitioned;
    int monthly;
    int binary;
    int no_function;
    int migrate; /* schema --migrate: the ALTER TABLE for ordered delivery */
    uint32_t lookahead;
    /* maintenance and dead letters */
    uint32_t retention;     /* partitions: periods to keep */
    uint64_t older_than_ms; /* cleanup and dead purge */
    uint32_t limit;         /* OB_CLI_LIMIT_UNSET when not given */
    int include_dead;
    const char *id; /* dead replay --id */
    int all;        /* dead replay --all */
    int json;       /* status, dead list: JSON lines on stdout */
    /* republish: the range, the pace */
    const char *since, *until; /* created_at bounds: a UTC time, or a duration ago */
    const char *seq_range;     /* "A-B" */
    const char *id_from, *id_to;
    double rate; /* rows a second; 0: no limit */
    int dry_run;
    int create_stream;
    /* configuration file, monitoring and logs */
    const char *config;         /* --config FILE */
    const char *db_option_file; /* --db-option-file FILE: a MariaDB option file */
    int print_config;
    const char *http;     /* --http ADDR:PORT */
    const char *log_file; /* --log-file PATH, reopened on SIGHUP */
    ob_log_format log_format;
    ob_cli_sources src;   /* where each global value came from */
    ob_cli_table *tables; /* [table NAME] sections; none: one table from the options */
    int ntables;
    int table_selected; /* --table or OUTBOX_TABLE chose one of the sections */
    /* the secrets read from files, and the files' names, for --print-config */
    struct {
        const char *secret, *path;
    } secret_files[16];
    int nsecret_files;
    int unreadable; /* a file named by an option cannot be opened or read: exit 1 */
    /* owned copies of strings taken from argv, the environment or the file */
    char **owned;
    int nowned, owned_cap;
} ob_cli;

/* Looks up an environment variable; getenv in the program, a table in tests. */
typedef const char *(*ob_env_fn)(const char *name, void *data);

/* Parses argv (argv[0] is the program). Returns 0 when the command should
 * run, 2 on a usage error (message in err), 1 when a file cannot be opened
 * or read, the config file or one an option names (permissions, missing:
 * the message names the path and the cause; the environment's fault, as a
 * server that is down is). --help and --version set the fields and return
 * 0. Values come from, in order of precedence: the command line, the
 * environment, the config file (--config or OUTBOX_CONFIG), then for what
 * those leave unset the conventions of NATS and MariaDB (NATS_URL and the
 * other NATS_* variables, MYSQL_PWD, then a nats context and an option file:
 * conv_nats.c, conv_mariadb.c), the defaults. A bad config file is a usage
 * error naming the file, the line and the key. */
int ob_cli_parse(ob_cli *c, int argc, char **argv, ob_env_fn env, void *env_data, char *err,
                 size_t errlen);
void ob_cli_free(ob_cli *c);

/* Copies the maintenance flags (--monthly, --lookahead, --retention,
 * --older-than, --limit, --include-dead) into relay options, where the run
 * command's timers and the one-shot commands both take them from. */
void ob_cli_maint_options(const ob_cli *c, outbox_relay_options *o);

/* Parses "250ms", "5s", "2m", "1h", "7d" or a plain number of milliseconds.
 * Returns 0 or -1. */
int ob_cli_duration_ms(const char *s, uint64_t *out);

/* The environment names of every option, for tests; returns how many. */
size_t ob_cli_env_names(const char **out, size_t max);

/* Writes the effective configuration as a config file, with secrets masked
 * and a comment saying where each value came from. */
void ob_cli_print_config(const ob_cli *c, FILE *out);

/* Copies `in` to `out` (size n, NUL-terminated) with the password of every
 * URL masked ("mysql://app:***@db/x"), and a NATS URL's lone token too. */
void ob_cli_redact(const char *in, char *out, size_t n);

/* Overwrites the secrets among the arguments (--db-password, and the
 * password or token of --db and --nats URLs) with '*', so that `ps` and
 * /proc/PID/cmdline no longer show them. Call after ob_cli_parse, which
 * keeps copies. */
void ob_cli_hide_secrets(int argc, char **argv);

/* The usage text. */
const char *ob_cli_usage(void);

/* The help of one command (`outbox-uvrelay dead --help`); the whole usage
 * text for run. */
const char *ob_cli_usage_for(ob_cli_command cmd);

#endif
