#include "args.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static const opt opts[] = {
    {"db", "OUTBOX_DB", T_STR, R(db_url), 0},
    {"db-password", "OUTBOX_DB_PASSWORD", T_STR, R(db_password), 0},
    {"nats", "OUTBOX_NATS", T_STR, R(nats_url), 0},
    {"table", "OUTBOX_TABLE", T_STR, R(table), 0},
    {"stream", "OUTBOX_STREAM", T_STR, R(stream), 0},
    {"subject-prefix", "OUTBOX_SUBJECT_PREFIX", T_STR, R(subject_prefix), 0},
    {"ce-source", "OUTBOX_CE_SOURCE", T_STR, R(ce_source), 0},
    {"no-cloudevents", "OUTBOX_NO_CLOUDEVENTS", T_FLAG, R(cloudevents), 0},
    {"connections", "OUTBOX_CONNECTIONS", T_INT, R(connections), 0},
    {"batch", "OUTBOX_BATCH", T_INT, R(batch_size), 0},
    {"poll-interval", "OUTBOX_POLL_INTERVAL", T_MS32, R(poll_interval_ms), 0},
    {"max-in-flight", "OUTBOX_MAX_IN_FLIGHT", T_U32, R(max_in_flight), 0},
    {"max-in-flight-bytes", "OUTBOX_MAX_IN_FLIGHT_BYTES", T_BYTES, R(max_in_flight_bytes), 0},
    {"ack-timeout", "OUTBOX_ACK_TIMEOUT", T_MS32, R(ack_timeout_ms), 0},
    {"max-attempts", "OUTBOX_MAX_ATTEMPTS", T_INT, R(max_attempts), 0},
    {"backoff", "OUTBOX_BACKOFF", T_BACKOFF, R(backoff), 0},
    {"backoff-base", "OUTBOX_BACKOFF_BASE", T_MS32, R(backoff_base_ms), 0},
    {"backoff-max", "OUTBOX_BACKOFF_MAX", T_MS32, R(backoff_max_ms), 0},
    {"backoff-jitter", "OUTBOX_BACKOFF_JITTER", T_DOUBLE, R(backoff_jitter), 0},
    {"dup-window", "OUTBOX_DUP_WINDOW", T_MS64, R(duplicate_window_ms), 0},
    {"strict-dup-window", "OUTBOX_STRICT_DUP_WINDOW", T_FLAG, R(strict_duplicate_window), 1},
    {"shutdown-timeout", "OUTBOX_SHUTDOWN_TIMEOUT", T_MS32, R(shutdown_timeout_ms), 0},
    {"delete-processed", "OUTBOX_DELETE_PROCESSED", T_FLAG, R(processing), OUTBOX_DELETE_PROCESSED},
    {"pending-interval", "OUTBOX_PENDING_INTERVAL", T_MS32, R(pending_sample_ms), 0},
    {"partition-interval", "OUTBOX_PARTITION_INTERVAL", T_MS32, R(partition_check_ms), 0},
    {"cleanup-interval", "OUTBOX_CLEANUP_INTERVAL", T_MS32, R(cleanup_check_ms), 0},
    {"log-level", "OUTBOX_LOG_LEVEL", T_LEVEL, R(log_level), 0},
    {"drain", "OUTBOX_DRAIN", T_FLAG, C(drain), 1},
    {"progress", NULL, T_PROGRESS, C(progress), 1},
    {"no-progress", NULL, T_PROGRESS, C(progress), 0},
    {"once", NULL, T_FLAG, C(once), 1},
    {"partitioned", NULL, T_FLAG, C(partitioned), 1},
    {"monthly", "OUTBOX_PARTITION_MONTHLY", T_FLAG, C(monthly), 1},
    {"binary", NULL, T_FLAG, C(binary), 1},
    {"no-function", NULL, T_FLAG, C(no_function), 1},
    {"lookahead", "OUTBOX_PARTITION_LOOKAHEAD", T_U32, C(lookahead), 0},
    {"retention", "OUTBOX_PARTITION_RETENTION", T_U32, C(retention), 0},
    {"older-than", "OUTBOX_RETENTION", T_MS64, C(older_than_ms), 0},
    {"limit", "OUTBOX_CLEANUP_LIMIT", T_U32, C(limit), 0},
    {"include-dead", "OUTBOX_CLEANUP_INCLUDE_DEAD", T_FLAG, C(include_dead), 1},
    {"id", NULL, T_STR, C(id), 0},
    {"all", NULL, T_FLAG, C(all), 1},
    {"help", NULL, T_FLAG, C(help), 1},
    {"version", NULL, T_FLAG, C(version), 1},
};

const char *ob_cli_usage(void) {
    return "usage: outbox-uvrelay [run] --db mysql://user:pass@host:port/db --nats "
           "nats://host:port "
           "[options]\n"
           "       outbox-uvrelay schema [--table T] [--partitioned [--monthly] [--lookahead N]] "
           "[--binary] [--no-function]\n"
           "       outbox-uvrelay status --db URL [--table T]\n"
           "       outbox-uvrelay partitions --once --db URL [--table T] [--monthly] "
           "[--lookahead N] [--retention N]\n"
           "       outbox-uvrelay cleanup --once --db URL [--table T] [--older-than 7d] "
           "[--limit N] [--include-dead]\n"
           "       outbox-uvrelay dead list|replay|purge --db URL [--table T] "
           "[--id ID | --all] [--older-than D]\n"
           "\n"
           "Relays rows of a transactional-outbox table in MariaDB to a NATS JetStream stream.\n"
           "\n"
           "Connections (also from the environment):\n"
           "  --db URL              OUTBOX_DB           "
           "mysql://user:pass@host:port/db[?socket=PATH]\n"
           "  --db-password PASS    OUTBOX_DB_PASSWORD  overrides the URL's password\n"
           "  --nats URL            OUTBOX_NATS         nats://[user:pass@]host:port[,nats://...]\n"
           "Relay:\n"
           "  --table NAME          OUTBOX_TABLE          outbox table, [schema.]name (outbox)\n"
           "  --stream NAME         OUTBOX_STREAM         JetStream stream (OUTBOX)\n"
           "  --subject-prefix P    OUTBOX_SUBJECT_PREFIX subjects P.<aggregate_type>.<event_type> "
           "(outbox)\n"
           "  --ce-source S         OUTBOX_CE_SOURCE      CloudEvents source (outbox-uvrelay)\n"
           "  --no-cloudevents      OUTBOX_NO_CLOUDEVENTS leave out the ce-* headers (less CPU)\n"
           "  --connections N       OUTBOX_CONNECTIONS    MariaDB connections (2)\n"
           "  --batch N             OUTBOX_BATCH          rows per fetch (500)\n"
           "  --poll-interval D     OUTBOX_POLL_INTERVAL  wait after an empty fetch (100ms)\n"
           "  --max-in-flight N     OUTBOX_MAX_IN_FLIGHT  unacked publishes (8192)\n"
           "  --max-in-flight-bytes SIZE  OUTBOX_MAX_IN_FLIGHT_BYTES  bytes of claimed rows held\n"
           "                        across all connections; fewer rows are fetched when\n"
           "                        rows are large (32MiB; 0: no byte limit)\n"
           "  --ack-timeout D       OUTBOX_ACK_TIMEOUT    publish ack timeout (5s)\n"
           "  --drain               OUTBOX_DRAIN          exit 0 once no pending rows remain\n"
           "Failures:\n"
           "  --max-attempts N      OUTBOX_MAX_ATTEMPTS   attempts before a row is dead (5)\n"
           "  --backoff KIND        OUTBOX_BACKOFF        exponential or fixed (exponential)\n"
           "  --backoff-base D      OUTBOX_BACKOFF_BASE   first retry delay (1s)\n"
           "  --backoff-max D       OUTBOX_BACKOFF_MAX    longest retry delay (60s)\n"
           "  --backoff-jitter F    OUTBOX_BACKOFF_JITTER 0..1 (0.2)\n"
           "  --dup-window D        OUTBOX_DUP_WINDOW     duplicate window of a created stream "
           "(2m)\n"
           "  --strict-dup-window   refuse to run when the stream's window is shorter than\n"
           "                        ack timeout + backoff max\n"
           "  --shutdown-timeout D  wait for in-flight acks on stop (5s)\n"
           "Maintenance (the run command's timers are off unless an interval is set):\n"
           "  --pending-interval D  sample pending count and lag\n"
           "  --partition-interval D  run the partition maintainer\n"
           "  --cleanup-interval D    delete old processed rows\n"
           "  --monthly             monthly partitions instead of daily\n"
           "  --lookahead N         partitions kept ready after the current period (7)\n"
           "  --retention N         past partitions kept; older ones are dropped unless they\n"
           "                        hold pending rows (0: never drop)\n"
           "  --older-than D        cleanup: processed rows older than this go (7d);\n"
           "                        dead purge: dead rows created before this go\n"
           "  --limit N             cleanup: rows per round (10000); dead list: rows shown\n"
           "  --include-dead        cleanup: old dead rows go too\n"
           "  --delete-processed    delete rows once acked instead of marking them\n"
           "Output:\n"
           "  --log-level L         error, warn, info or debug (info)\n"
           "  --progress, --no-progress  progress line on stderr (default: when a terminal)\n"
           "  --help, --version\n"
           "\n"
           "Durations: 250ms, 5s, 2m, 1h, 7d, or plain milliseconds.\n"
           "Exit status: 0 done, 1 runtime failure, 2 bad usage.\n";
}

int ob_cli_duration_ms(const char *s, uint64_t *out) {
    if (s == NULL || *s < '0' || *s > '9')
        return -1;
    errno = 0;
    char *end;
    double v = strtod(s, &end);
    if (errno || end == s || v < 0)
        return -1;
    double mult;
    if (*end == '\0' || strcmp(end, "ms") == 0)
        mult = 1;
    else if (strcmp(end, "s") == 0)
        mult = 1000;
    else if (strcmp(end, "m") == 0)
        mult = 60000;
    else if (strcmp(end, "h") == 0)
        mult = 3600000;
    else if (strcmp(end, "d") == 0)
        mult = 86400000;
    else
        return -1;
    double ms = v * mult;
    if (ms > 1e15)
        return -1;
    *out = (uint64_t)(ms + 0.5);
    return 0;
}

static int parse_u64(const char *s, uint64_t *out) {
    if (s == NULL || *s < '0' || *s > '9')
        return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end != '\0')
        return -1;
    *out = v;
    return 0;
}

/* A byte size: digits with an optional K, M or G suffix (powers of 1024; "KiB",
 * "k", "KB" all mean the same). */
static int parse_bytes(const char *s, uint64_t *out) {
    if (s == NULL || *s < '0' || *s > '9')
        return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno)
        return -1;
    unsigned shift = 0;
    switch (*end) {
    case 'k':
    case 'K':
        shift = 10;
        break;
    case 'm':
    case 'M':
        shift = 20;
        break;
    case 'g':
    case 'G':
        shift = 30;
        break;
    case '\0':
        break;
    default:
        return -1;
    }
    if (shift) {
        end++;
        if (strcmp(end, "iB") != 0 && strcmp(end, "B") != 0 && strcmp(end, "") != 0)
            return -1;
        if (v > (UINT64_MAX >> shift))
            return -1;
        v <<= shift;
    } else if (*end != '\0') {
        return -1;
    }
    *out = v;
    return 0;
}

static int parse_bool(const char *s, int *out) {
    if (strcmp(s, "1") == 0 || strcmp(s, "true") == 0 || strcmp(s, "yes") == 0 ||
        strcmp(s, "on") == 0)
        *out = 1;
    else if (strcmp(s, "0") == 0 || strcmp(s, "false") == 0 || strcmp(s, "no") == 0 ||
             strcmp(s, "off") == 0 || *s == '\0')
        *out = 0;
    else
        return -1;
    return 0;
}

static const char *keep(ob_cli *c, const char *s) {
    if (c->nowned == (int)(sizeof(c->owned) / sizeof(c->owned[0])))
        return s;
    char *d = strdup(s);
    if (d == NULL)
        return s;
    c->owned[c->nowned++] = d;
    return d;
}

/* Stores `val` (from `src`, "--name" or "NAME=") into the field of `o`. */
static int store(ob_cli *c, const opt *o, const char *val, const char *src, char *err,
                 size_t errlen) {
    char *base = (char *)c;
    uint64_t u;
    switch (o->type) {
    case T_STR:
        if (val == NULL || *val == '\0') {
            snprintf(err, errlen, "%s needs a value", src);
            return -1;
        }
        *(const char **)(base + o->off) = keep(c, val);
        return 0;
    case T_INT:
        if (parse_u64(val, &u) != 0 || u < 1 || u > 1000000000) {
            snprintf(err, errlen, "%s: '%s' is not a positive whole number", src, val ? val : "");
            return -1;
        }
        *(int *)(base + o->off) = (int)u;
        return 0;
    case T_U32:
        if (parse_u64(val, &u) != 0 || u > UINT32_MAX) {
            snprintf(err, errlen, "%s: '%s' is not a whole number", src, val ? val : "");
            return -1;
        }
        *(uint32_t *)(base + o->off) = (uint32_t)u;
        return 0;
    case T_MS32:
    case T_MS64:
        if (ob_cli_duration_ms(val, &u) != 0 || (o->type == T_MS32 && u > UINT32_MAX)) {
            snprintf(err, errlen, "%s: '%s' is not a duration (like 250ms, 5s, 2m, 1h, 7d)", src,
                     val ? val : "");
            return -1;
        }
        if (o->type == T_MS32)
            *(uint32_t *)(base + o->off) = (uint32_t)u;
        else
            *(uint64_t *)(base + o->off) = u;
        return 0;
    case T_BYTES:
        if (parse_bytes(val, &u) != 0) {
            snprintf(err, errlen, "%s: '%s' is not a size (like 1048576, 512KiB, 32MiB, 1GiB)", src,
                     val ? val : "");
            return -1;
        }
        *(uint64_t *)(base + o->off) = u;
        return 0;
    case T_DOUBLE: {
        char *end = NULL;
        double d = val ? strtod(val, &end) : 0;
        if (val == NULL || end == val || *end != '\0') {
            snprintf(err, errlen, "%s: '%s' is not a number", src, val ? val : "");
            return -1;
        }
        *(double *)(base + o->off) = d;
        return 0;
    }
    case T_FLAG:
    case T_PROGRESS: {
        int on = 1;
        if (val != NULL && parse_bool(val, &on) != 0) {
            snprintf(err, errlen, "%s: '%s' is not a boolean (1/0, true/false)", src, val);
            return -1;
        }
        if (o->type == T_PROGRESS)
            *(int *)(base + o->off) = o->value;
        else if (o->off == R(processing))
            *(outbox_processing_mode *)(base + o->off) =
                on ? OUTBOX_DELETE_PROCESSED : OUTBOX_KEEP_PROCESSED;
        else /* value 0 marks a --no-... flag, which clears the field */
            *(int *)(base + o->off) = on ? o->value : !o->value;
        return 0;
    }
    case T_BACKOFF:
        if (val && strcmp(val, "fixed") == 0)
            *(outbox_backoff_kind *)(base + o->off) = OUTBOX_BACKOFF_FIXED;
        else if (val && strcmp(val, "exponential") == 0)
            *(outbox_backoff_kind *)(base + o->off) = OUTBOX_BACKOFF_EXPONENTIAL;
        else {
            snprintf(err, errlen, "%s: '%s' must be 'fixed' or 'exponential'", src, val ? val : "");
            return -1;
        }
        return 0;
    case T_LEVEL: {
        static const char *names[] = {"error", "warn", "info", "debug"};
        for (int i = 0; i < 4; i++)
            if (val && strcmp(val, names[i]) == 0) {
                *(outbox_log_level *)(base + o->off) = (outbox_log_level)i;
                return 0;
            }
        snprintf(err, errlen, "%s: '%s' must be error, warn, info or debug", src, val ? val : "");
        return -1;
    }
    }
    return -1;
}

static int takes_value(const opt *o) {
    return o->type != T_FLAG && o->type != T_PROGRESS;
}

static const struct {
    const char *name;
    ob_cli_command cmd;
} commands[] = {{"run", OB_CMD_RUN},         {"schema", OB_CMD_SCHEMA},
                {"status", OB_CMD_STATUS},   {"partitions", OB_CMD_PARTITIONS},
                {"cleanup", OB_CMD_CLEANUP}, {"dead", OB_CMD_DEAD}};

int ob_cli_parse(ob_cli *c, int argc, char **argv, ob_env_fn env, void *env_data, char *err,
                 size_t errlen) {
    memset(c, 0, sizeof(*c));
    outbox_relay_options_init(&c->relay);
    c->progress = -1;
    c->lookahead = 7;
    c->limit = 10000;
    c->older_than_ms = 7ULL * 86400000ULL;
    const size_t nopts = sizeof(opts) / sizeof(opts[0]);

    /* The environment first, so that flags override it. */
    for (size_t i = 0; env && i < nopts; i++) {
        if (opts[i].env == NULL)
            continue;
        const char *v = env(opts[i].env, env_data);
        if (v == NULL || (*v == '\0' && takes_value(&opts[i])))
            continue;
        char src[64];
        snprintf(src, sizeof(src), "environment variable %s", opts[i].env);
        if (store(c, &opts[i], v, src, err, errlen) != 0)
            return 2;
    }

    int positional = 0;
    for (int a = 1; a < argc; a++) {
        const char *arg = argv[a];
        if (strcmp(arg, "-h") == 0)
            arg = "--help";
        if (strncmp(arg, "--", 2) != 0 || arg[2] == '\0') {
            if (positional == 0) {
                size_t k;
                for (k = 0; k < sizeof(commands) / sizeof(commands[0]); k++)
                    if (strcmp(arg, commands[k].name) == 0)
                        break;
                if (k == sizeof(commands) / sizeof(commands[0])) {
                    snprintf(err, errlen,
                             "unknown command '%s' (run, schema, status, partitions, cleanup, "
                             "dead)",
                             arg);
                    return 2;
                }
                c->command = commands[k].cmd;
            } else if (positional == 1 && c->command == OB_CMD_DEAD) {
                if (strcmp(arg, "list") != 0 && strcmp(arg, "replay") != 0 &&
                    strcmp(arg, "purge") != 0) {
                    snprintf(err, errlen, "unknown dead-letter action '%s' (list, replay, purge)",
                             arg);
                    return 2;
                }
                c->subcommand = arg;
            } else {
                snprintf(err, errlen, "unexpected argument '%s'", arg);
                return 2;
            }
            positional++;
            continue;
        }
        const char *name = arg + 2;
        const char *eq = strchr(name, '=');
        size_t nl = eq ? (size_t)(eq - name) : strlen(name);
        const opt *o = NULL;
        for (size_t i = 0; i < nopts; i++)
            if (strlen(opts[i].name) == nl && strncmp(opts[i].name, name, nl) == 0)
                o = &opts[i];
        if (o == NULL) {
            snprintf(err, errlen, "unknown option '--%.*s' (see --help)", (int)nl, name);
            return 2;
        }
        char src[64];
        snprintf(src, sizeof(src), "--%s", o->name);
        const char *val = NULL;
        if (takes_value(o)) {
            if (eq)
                val = eq + 1;
            else if (a + 1 < argc)
                val = argv[++a];
            else {
                snprintf(err, errlen, "%s needs a value", src);
                return 2;
            }
        } else if (eq) {
            val = eq + 1;
        }
        if (store(c, o, val, src, err, errlen) != 0)
            return 2;
    }
    if (c->help || c->version)
        return 0;
    if (c->command == OB_CMD_DEAD && c->subcommand == NULL) {
        snprintf(err, errlen, "dead needs an action: list, replay or purge");
        return 2;
    }
    if (c->command == OB_CMD_DEAD && strcmp(c->subcommand, "replay") == 0 && !c->id && !c->all) {
        snprintf(err, errlen, "dead replay needs --id ID or --all");
        return 2;
    }
    if (c->command != OB_CMD_SCHEMA && c->relay.db_url == NULL) {
        snprintf(err, errlen, "--db is required (or OUTBOX_DB): mysql://user:pass@host:port/db");
        return 2;
    }
    if (c->command == OB_CMD_RUN && c->relay.nats_url == NULL) {
        snprintf(err, errlen, "--nats is required (or OUTBOX_NATS): nats://host:port");
        return 2;
    }
    return 0;
}

void ob_cli_maint_options(const ob_cli *c, outbox_relay_options *o) {
    o->maint.partition_period = c->monthly ? OUTBOX_PARTITION_MONTH : OUTBOX_PARTITION_DAY;
    o->maint.partition_lookahead = c->lookahead;
    o->maint.partition_retention = c->retention;
    o->maint.cleanup_retention_ms = c->older_than_ms;
    o->maint.cleanup_limit = c->limit;
    o->maint.cleanup_include_dead = c->include_dead;
}

void ob_cli_free(ob_cli *c) {
    for (int i = 0; i < c->nowned; i++)
        free(c->owned[i]);
    c->nowned = 0;
}
