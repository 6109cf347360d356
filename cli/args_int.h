/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The option table shared by the parts of the command-line parser: flags
 * (args.c), the environment (env.c), the config file (config_file.c),
 * --print-config (print_config.c), value parsing (values.c) and redaction
 * (redact.c). Internal to the binary.
 */
#ifndef OB_CLI_ARGS_INT_H
#define OB_CLI_ARGS_INT_H

#include <stddef.h>

#include "args.h"

typedef enum opt_type {
    T_STR,      /* const char * */
    T_INT,      /* int, >= 1 */
    T_U32,      /* uint32_t */
    T_MS32,     /* uint32_t milliseconds from a duration */
    T_MS64,     /* uint64_t milliseconds from a duration */
    T_DOUBLE,   /* double */
    T_BYTES,    /* uint64_t bytes from a size: 1048576, 512KiB, 32MiB, 1GiB */
    T_FLAG,     /* int set to 1; the environment accepts 1/0/true/false */
    T_BACKOFF,  /* fixed | exponential */
    T_LEVEL,    /* error | warn | info | debug */
    T_PROGRESS, /* --progress / --no-progress */
    T_FILE,     /* const char *: the first line of the named file (a secret) */
    T_LOGFMT,   /* text | logfmt | json */
    T_NATSCLI,  /* auto | loop | threads */
} opt_type;

typedef struct opt {
    const char *name;
    const char *env; /* NULL: flag only */
    opt_type type;
    size_t off;
    int value; /* for flags that store a fixed value */
} opt;

#define R(f) offsetof(ob_cli, relay.f)
#define C(f) offsetof(ob_cli, f)

/* Every option; ob_nopts of them. */
extern const opt ob_opts[];
extern const size_t ob_nopts;

size_t ob_opt_index(const opt *o);
const opt *ob_opt_find(const char *name, size_t len);
/* Options of the relay itself, which a [table] section may set. */
int ob_opt_is_relay(const opt *o);
/* Options a config file may set. */
int ob_opt_file_settable(const opt *o);
size_t ob_opt_size(const opt *o);
/* The field of option `o` in the table's relay options. */
void *ob_opt_table_field(ob_cli_table *t, const opt *o);
int ob_opt_takes_value(const opt *o);
/* Whether option `o` names a file: one the relay reads (a secret, a
 * certificate, credentials) or writes (the log file), or 0. In a config
 * file a relative name is relative to the file's folder. */
enum { OB_PATH_READ = 1, OB_PATH_WRITTEN = 2 };
int ob_opt_path(const opt *o);
/* The range a whole-number option (T_INT, T_U32) accepts. */
void ob_opt_range(const opt *o, uint64_t *min, uint64_t *max);
/* Records that option i was given (as `name`); -1 with a message when it,
 * or another option for the same setting, was given already. */
int ob_opt_once(const opt *all, size_t n, const char **set_by, size_t i, const char *name,
                const char *dash, char *err, size_t errlen);

/* values.c: a copy of `s` that lives as long as `c` (NULL: out of memory),
 * a boolean, and a value stored into an option's field. */
const char *ob_cli_keep(ob_cli *c, const char *s);
int ob_parse_bool(const char *s, int *out);
int ob_opt_store(ob_cli *c, const opt *o, void *field, const char *val, const char *src, char *err,
                 size_t errlen);

/* env.c */
int ob_cli_parse_env(ob_cli *c, ob_env_fn env, void *env_data, char *err, size_t errlen);

/* config_file.c */
const char *ob_cli_config_path(int argc, char **argv, ob_env_fn env, void *env_data);
/* Returns 0, 1 when the file, or a file one of its keys names, cannot be
 * read (the message says why), or 2 when it is not a valid config file (the
 * message names file and line). */
int ob_cli_load_config(ob_cli *c, const char *path, char *err, size_t errlen);
int ob_cli_select_table(ob_cli *c, char *err, size_t errlen);
int ob_cli_merge_tables(ob_cli *c, char *err, size_t errlen);

/* The ecosystem's conventions (conv_nats.c, conv_mariadb.c): what they
 * fill, in one table's relay options (or the global ones without tables).
 * Each returns 0, or the exit status with a message, as for every file: 1
 * when a file cannot be opened or read (missing, forbidden: the
 * environment's fault), 2 when it is read but holds what the relay cannot
 * use (not JSON, a key it cannot honour, a directory). */
typedef struct ob_conv_target {
    ob_cli *c;
    outbox_relay_options *r;
    ob_cli_sources *src;
    ob_env_fn env;
    void *env_data;
} ob_conv_target;
/* Sets the string option `name` to `value` (kept by the caller), from the
 * convention `from`. */
void ob_conv_set(ob_conv_target *t, const char *name, const char *value, const char *from);
/* The value of a variable of the environment; NULL when unset or empty. */
const char *ob_conv_env(const ob_conv_target *t, const char *name);
/* A copy of the formatted text that lives as long as the ob_cli. */
const char *ob_conv_keepf(ob_cli *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int ob_conv_nats(ob_conv_target *t, char *err, size_t errlen);
int ob_conv_db(ob_conv_target *t, char *err, size_t errlen);
/* Runs both for every table: 0, 1 or 2 as above. */
int ob_cli_conventions(ob_cli *c, ob_env_fn env, void *env_data, char *err, size_t errlen);

#endif
