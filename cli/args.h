/*
 * Command-line and environment parsing for outbox-uvrelay. Every option of
 * the run command can also come from an OUTBOX_* environment variable; a
 * flag on the command line wins over the environment.
 */
#ifndef OB_CLI_ARGS_H
#define OB_CLI_ARGS_H

#include <stddef.h>
#include <stdint.h>

#include "outbox/outbox.h"

typedef enum ob_cli_command {
    OB_CMD_RUN = 0,
    OB_CMD_SCHEMA,
    OB_CMD_STATUS,
    OB_CMD_PARTITIONS,
    OB_CMD_CLEANUP,
    OB_CMD_DEAD,
} ob_cli_command;

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
    uint32_t limit;
    int include_dead;
    const char *id; /* dead replay --id */
    int all;        /* dead replay --all */
    /* owned copies of strings taken from argv or the environment */
    char *owned[32];
    int nowned;
} ob_cli;

/* Looks up an environment variable; getenv in the program, a table in tests. */
typedef const char *(*ob_env_fn)(const char *name, void *data);

/* Parses argv (argv[0] is the program). Returns 0 when the command should
 * run, 2 on a usage error (message in err). --help and --version set the
 * fields and return 0. */
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

/* The usage text, and its part on TLS and credentials. */
const char *ob_cli_usage(void);
const char *ob_cli_usage_tls(void);
const char *ob_cli_usage_ordering(void);

#endif
