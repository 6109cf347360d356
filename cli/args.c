#include "args.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ini.h>

#include "url.h"

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
    {"db-password-file", "OUTBOX_DB_PASSWORD_FILE", T_FILE, R(db_password), 0},
    {"nats", "OUTBOX_NATS", T_STR, R(nats_url), 0},
    /* TLS and credentials */
    {"db-tls", "OUTBOX_DB_TLS", T_FLAG, R(db_tls), 1},
    {"db-tls-ca", "OUTBOX_DB_TLS_CA", T_STR, R(db_tls_ca), 0},
    {"db-tls-cert", "OUTBOX_DB_TLS_CERT", T_STR, R(db_tls_cert), 0},
    {"db-tls-key", "OUTBOX_DB_TLS_KEY", T_STR, R(db_tls_key), 0},
    {"db-tls-no-verify-host", "OUTBOX_DB_TLS_NO_VERIFY_HOST", T_FLAG, R(db_tls_no_verify_host), 1},
    {"nats-tls-ca", "OUTBOX_NATS_TLS_CA", T_STR, R(nats_tls_ca), 0},
    {"nats-tls-cert", "OUTBOX_NATS_TLS_CERT", T_STR, R(nats_tls_cert), 0},
    {"nats-tls-key", "OUTBOX_NATS_TLS_KEY", T_STR, R(nats_tls_key), 0},
    {"nats-creds", "OUTBOX_NATS_CREDS", T_STR, R(nats_creds_file), 0},
    {"nats-nkey", "OUTBOX_NATS_NKEY", T_STR, R(nats_nkey_file), 0},
    {"nats-token-file", "OUTBOX_NATS_TOKEN_FILE", T_STR, R(nats_token_file), 0},
    {"nats-password-file", "OUTBOX_NATS_PASSWORD_FILE", T_STR, R(nats_password_file), 0},
    {"stream-replicas", "OUTBOX_STREAM_REPLICAS", T_INT, R(stream_replicas), 0},
    {"table", "OUTBOX_TABLE", T_STR, R(table), 0},
    {"stream", "OUTBOX_STREAM", T_STR, R(stream), 0},
    {"subject-prefix", "OUTBOX_SUBJECT_PREFIX", T_STR, R(subject_prefix), 0},
    {"ce-source", "OUTBOX_CE_SOURCE", T_STR, R(ce_source), 0},
    {"no-cloudevents", "OUTBOX_NO_CLOUDEVENTS", T_FLAG, R(cloudevents), 0},
    {"connections", "OUTBOX_CONNECTIONS", T_INT, R(connections), 0},
    {"batch", "OUTBOX_BATCH", T_INT, R(batch_size), 0},
    {"poll-interval", "OUTBOX_POLL_INTERVAL", T_MS32, R(poll_interval_ms), 0},
    {"poll-min", "OUTBOX_POLL_MIN", T_MS32, R(poll_min_ms), 0},
    {"wake-subject", "OUTBOX_WAKE_SUBJECT", T_STR, R(wake_subject), 0},
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
    {"log-format", "OUTBOX_LOG_FORMAT", T_LOGFMT, C(log_format), 0},
    {"log-file", "OUTBOX_LOG_FILE", T_STR, C(log_file), 0},
    {"http", "OUTBOX_HTTP", T_STR, C(http), 0},
    {"config", "OUTBOX_CONFIG", T_STR, C(config), 0},
    {"print-config", NULL, T_FLAG, C(print_config), 1},
    {"drain", "OUTBOX_DRAIN", T_FLAG, C(drain), 1},
    {"progress", NULL, T_PROGRESS, C(progress), 1},
    {"no-progress", NULL, T_PROGRESS, C(progress), 0},
    {"once", NULL, T_FLAG, C(once), 1},
    {"ordered", "OUTBOX_ORDERED", T_FLAG, R(ordered), 1},
    {"leader", "OUTBOX_LEADER", T_FLAG, R(leader), 1},
    {"lease-timeout", "OUTBOX_LEASE_TIMEOUT", T_MS32, R(lease_timeout_ms), 0},
    {"partitioned", NULL, T_FLAG, C(partitioned), 1},
    {"migrate", NULL, T_FLAG, C(migrate), 1},
    {"monthly", "OUTBOX_PARTITION_MONTHLY", T_FLAG, C(monthly), 1},
    {"binary", NULL, T_FLAG, C(binary), 1},
    {"no-function", NULL, T_FLAG, C(no_function), 1},
    {"lookahead", "OUTBOX_PARTITION_LOOKAHEAD", T_U32, C(lookahead), 0},
    {"retention", "OUTBOX_PARTITION_RETENTION", T_U32, C(retention), 0},
    {"older-than", "OUTBOX_OLDER_THAN", T_MS64, C(older_than_ms), 0},
    {"limit", "OUTBOX_CLEANUP_LIMIT", T_U32, C(limit), 0},
    {"include-dead", "OUTBOX_CLEANUP_INCLUDE_DEAD", T_FLAG, C(include_dead), 1},
    {"id", NULL, T_STR, C(id), 0},
    {"all", NULL, T_FLAG, C(all), 1},
    {"json", NULL, T_FLAG, C(json), 1},
    {"help", NULL, T_FLAG, C(help), 1},
    {"version", NULL, T_FLAG, C(version), 1},
};

/* In parts: C11 compilers need not take string literals over 4095 bytes. */
static const char *const usage_parts[] = {
    "usage: outbox-uvrelay [run] --db mysql://user:pass@host:port/db --nats "
    "nats://host:port "
    "[options]\n"
    "       outbox-uvrelay schema [--table T] [--partitioned [--monthly] [--lookahead N]] "
    "[--binary] [--no-function]\n"
    "       outbox-uvrelay schema --migrate [--table T]\n"
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
    "  --db URL              OUTBOX_DB             "
    "mysql://user:pass@host:port/db[?socket=PATH]\n"
    "  --db-password-file F  OUTBOX_DB_PASSWORD_FILE  the password, from the first line "
    "of F\n"
    "  --db-password PASS    OUTBOX_DB_PASSWORD    overrides the URL's password (visible "
    "in ps)\n"
    "  --nats URL            OUTBOX_NATS           nats://[user:pass@|token@]host:port"
    "[,nats://...]\n"
    "  --nats-password-file F  OUTBOX_NATS_PASSWORD_FILE  password for the URL's user\n"
    "  --nats-token-file F   OUTBOX_NATS_TOKEN_FILE  token, for a URL without a user\n"
    "                        (both files are read again at every reconnect)\n",
    "TLS and credentials:\n"
    "  --db-tls              OUTBOX_DB_TLS         require TLS to MariaDB, verify against the "
    "system CAs\n"
    "  --db-tls-ca F         OUTBOX_DB_TLS_CA      verify the server against this CA (implies "
    "--db-tls)\n"
    "  --db-tls-cert F       OUTBOX_DB_TLS_CERT    client certificate\n"
    "  --db-tls-key F        OUTBOX_DB_TLS_KEY     its key\n"
    "  --db-tls-no-verify-host  OUTBOX_DB_TLS_NO_VERIFY_HOST  skip the host-name check (the "
    "chain is still checked)\n"
    "  --nats-tls-ca F       OUTBOX_NATS_TLS_CA    verify NATS against this CA (TLS also with "
    "tls:// URLs)\n"
    "  --nats-tls-cert F     OUTBOX_NATS_TLS_CERT  NATS client certificate\n"
    "  --nats-tls-key F      OUTBOX_NATS_TLS_KEY   its key\n"
    "  --nats-creds F        OUTBOX_NATS_CREDS     JWT + NKey credentials file (.creds)\n"
    "  --nats-nkey F         OUTBOX_NATS_NKEY      NKey user seed file\n"
    "  --stream-replicas N   OUTBOX_STREAM_REPLICAS  replicas of a stream the relay creates\n",
    "Relay:\n"
    "  --table NAME          OUTBOX_TABLE          outbox table, [schema.]name (outbox)\n"
    "  --stream NAME         OUTBOX_STREAM         JetStream stream (OUTBOX)\n"
    "  --subject-prefix P    OUTBOX_SUBJECT_PREFIX subjects P.<aggregate_type>.<event_type> "
    "(outbox)\n"
    "  --ce-source S         OUTBOX_CE_SOURCE      CloudEvents source (outbox-uvrelay)\n"
    "  --no-cloudevents      OUTBOX_NO_CLOUDEVENTS leave out the ce-* headers (less CPU)\n"
    "  --connections N       OUTBOX_CONNECTIONS    MariaDB connections (2)\n"
    "  --batch N             OUTBOX_BATCH          rows per fetch (500)\n"
    "  --poll-interval D     OUTBOX_POLL_INTERVAL  longest wait between idle polls (100ms)\n"
    "  --poll-min D          OUTBOX_POLL_MIN       shortest, while rows keep coming (5ms)\n"
    "  --wake-subject S      OUTBOX_WAKE_SUBJECT   doorbell subject (outbox_wake.<table>; "
    "empty: none)\n"
    "  --max-in-flight N     OUTBOX_MAX_IN_FLIGHT  unacked publishes (8192)\n"
    "  --max-in-flight-bytes SIZE  OUTBOX_MAX_IN_FLIGHT_BYTES  bytes of claimed rows held\n"
    "                        across all connections; fewer rows are fetched when\n"
    "                        rows are large (32MiB; 0: no byte limit)\n"
    "  --ack-timeout D       OUTBOX_ACK_TIMEOUT    publish ack timeout (5s)\n"
    "  --drain               OUTBOX_DRAIN          exit 0 once no pending rows remain\n",
    "Ordering (the table needs the seq and bucket columns: schema --migrate):\n"
    "  --ordered             OUTBOX_ORDERED        each aggregate's events in insertion order;\n"
    "                        instances share the aggregates' buckets\n"
    "  --leader              OUTBOX_LEADER         one active relay per table, strict insertion\n"
    "                        order; the others stand by\n"
    "  --lease-timeout D     OUTBOX_LEASE_TIMEOUT  a silent owner's share moves within D (15s)\n"
    "Failures:\n"
    "  --max-attempts N      OUTBOX_MAX_ATTEMPTS   attempts before a row is dead (5)\n"
    "  --backoff KIND        OUTBOX_BACKOFF        exponential or fixed (exponential)\n"
    "  --backoff-base D      OUTBOX_BACKOFF_BASE   first retry delay (1s)\n"
    "  --backoff-max D       OUTBOX_BACKOFF_MAX    longest retry delay (60s)\n"
    "  --backoff-jitter F    OUTBOX_BACKOFF_JITTER 0..1 (0.2)\n"
    "  --dup-window D        OUTBOX_DUP_WINDOW     duplicate window of a created stream "
    "(2m)\n"
    "  --strict-dup-window   OUTBOX_STRICT_DUP_WINDOW  refuse to run when the stream's "
    "window\n"
    "                        is shorter than ack timeout + backoff max\n"
    "  --shutdown-timeout D  OUTBOX_SHUTDOWN_TIMEOUT  wait for in-flight acks on stop "
    "(5s)\n"
    "Maintenance (the run command's timers are off unless an interval is set):\n"
    "  --pending-interval D    OUTBOX_PENDING_INTERVAL    sample pending count and lag\n"
    "  --partition-interval D  OUTBOX_PARTITION_INTERVAL  run the partition maintainer\n"
    "  --cleanup-interval D    OUTBOX_CLEANUP_INTERVAL    delete old processed rows\n"
    "  --monthly             OUTBOX_PARTITION_MONTHLY    monthly partitions, not daily\n"
    "  --lookahead N         OUTBOX_PARTITION_LOOKAHEAD  partitions kept ready after the\n"
    "                        current period (7)\n"
    "  --retention N         OUTBOX_PARTITION_RETENTION  past partitions kept; older ones\n"
    "                        are dropped unless they hold pending rows (0: never drop)\n"
    "  --older-than D        OUTBOX_OLDER_THAN     cleanup: processed rows older than this\n"
    "                        go (7d); dead purge: dead rows created before this go\n"
    "  --limit N             OUTBOX_CLEANUP_LIMIT  cleanup: rows per round (10000);\n"
    "                        dead list: rows shown (100)\n"
    "  --include-dead        OUTBOX_CLEANUP_INCLUDE_DEAD  cleanup: old dead rows go too\n"
    "  --delete-processed    OUTBOX_DELETE_PROCESSED  delete rows once acked instead of\n"
    "                        marking them\n"
    "Output:\n"
    "  --log-level L         OUTBOX_LOG_LEVEL      error, warn, info or debug (info)\n"
    "  --progress, --no-progress  progress line on stderr (default: when a terminal)\n"
    "  --help, --version\n"
    "\n"
    "Durations: 250ms, 5s, 2m, 1h, 7d, or plain milliseconds.\n"
    "Exit status: 0 done, 1 runtime failure, 2 bad usage.\n",
};

static const char usage_config[] =
    "\nConfiguration, monitoring, logs:\n"
    "  --config FILE         OUTBOX_CONFIG         options from an INI file; [table NAME]\n"
    "                        sections relay several tables in one process\n"
    "  --print-config        print the effective configuration (secrets masked) and exit\n"
    "  --http ADDR:PORT      OUTBOX_HTTP           serve /metrics, /healthz, /readyz (off)\n"
    "  --log-format F        OUTBOX_LOG_FORMAT     text, logfmt or json (text)\n"
    "  --log-file PATH       OUTBOX_LOG_FILE       append logs here; SIGHUP reopens it\n"
    "Precedence: flag > environment > config file > default.\n";

const char *ob_cli_usage(void) {
    static char text[8192];
    if (text[0] == '\0') {
        for (size_t i = 0; i < sizeof(usage_parts) / sizeof(usage_parts[0]); i++)
            strncat(text, usage_parts[i], sizeof(text) - strlen(text) - 1);
        strncat(text, usage_config, sizeof(text) - strlen(text) - 1);
    }
    return text;
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

/* A copy of `s` that lives as long as `c`, or NULL when out of memory. */
static const char *keep(ob_cli *c, const char *s) {
    if (c->nowned == c->owned_cap) {
        int cap = c->owned_cap ? c->owned_cap * 2 : 32;
        char **n = realloc(c->owned, (size_t)cap * sizeof(*n));
        if (n == NULL)
            return NULL;
        c->owned = n;
        c->owned_cap = cap;
    }
    char *d = strdup(s);
    if (d == NULL)
        return NULL;
    c->owned[c->nowned++] = d;
    return d;
}

/* Reads the secret in the first line of the file `path` (a trailing CR LF
 * or LF is not part of it). Messages name the file, never its content. */
static int store_file(ob_cli *c, void *field, const char *path, const char *src, char *err,
                      size_t errlen) {
    if (path == NULL || *path == '\0') {
        snprintf(err, errlen, "%s needs a file name", src);
        return -1;
    }
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        snprintf(err, errlen, "%s: cannot read '%s': %s", src, path, strerror(errno));
        return -1;
    }
    char buf[4096];
    size_t n = fread(buf, 1, sizeof(buf), f);
    int bad = ferror(f) || (n == sizeof(buf) && fgetc(f) != EOF);
    fclose(f);
    size_t len = 0;
    while (len < n && buf[len] != '\n' && buf[len] != '\0')
        len++;
    if (len > 0 && buf[len - 1] == '\r')
        len--;
    if (bad || len == 0 || (len < n && buf[len] == '\0')) {
        explicit_bzero(buf, sizeof(buf));
        snprintf(err, errlen, "%s: '%s' must hold the secret on its first line (under 4 KiB)", src,
                 path);
        return -1;
    }
    buf[len] = '\0';
    const char *kept = keep(c, buf);
    explicit_bzero(buf, sizeof(buf));
    if (kept == buf) {
        snprintf(err, errlen, "%s: out of memory", src);
        return -1;
    }
    *(const char **)field = kept;
    return 0;
}

/* A word from a fixed list into an enum field of type T (its index). */
#define STORE_NAME(T, names, what)                                                                 \
    do {                                                                                           \
        for (size_t i_ = 0; i_ < sizeof(names) / sizeof(names[0]); i_++)                           \
            if (val && strcmp(val, names[i_]) == 0) {                                              \
                *(T *)field = (T)i_;                                                               \
                return 0;                                                                          \
            }                                                                                      \
        snprintf(err, errlen, "%s: '%s' must be " what, src, val ? val : "");                      \
        return -1;                                                                                 \
    } while (0)

/* The numeric types: whole numbers, durations, decimals. */
static int store_number(const opt *o, void *field, const char *val, const char *src, char *err,
                        size_t errlen) {
    uint64_t u;
    switch (o->type) {
    case T_INT:
        if (parse_u64(val, &u) != 0 || u < 1 || u > 1000000000) {
            snprintf(err, errlen, "%s: '%s' is not a positive whole number", src, val ? val : "");
            return -1;
        }
        *(int *)field = (int)u;
        return 0;
    case T_U32:
        if (parse_u64(val, &u) != 0 || u > UINT32_MAX) {
            snprintf(err, errlen, "%s: '%s' is not a whole number", src, val ? val : "");
            return -1;
        }
        *(uint32_t *)field = (uint32_t)u;
        return 0;
    case T_MS32:
    case T_MS64:
        if (ob_cli_duration_ms(val, &u) != 0 || (o->type == T_MS32 && u > UINT32_MAX)) {
            snprintf(err, errlen, "%s: '%s' is not a duration (like 250ms, 5s, 2m, 1h, 7d)", src,
                     val ? val : "");
            return -1;
        }
        if (o->type == T_MS32)
            *(uint32_t *)field = (uint32_t)u;
        else
            *(uint64_t *)field = u;
        return 0;
    case T_BYTES:
        if (parse_bytes(val, &u) != 0) {
            snprintf(err, errlen, "%s: '%s' is not a size (like 1048576, 512KiB, 32MiB, 1GiB)", src,
                     val ? val : "");
            return -1;
        }
        *(uint64_t *)field = u;
        return 0;
    default: {
        char *end = NULL;
        double d = val ? strtod(val, &end) : 0;
        if (val == NULL || end == val || *end != '\0') {
            snprintf(err, errlen, "%s: '%s' is not a number", src, val ? val : "");
            return -1;
        }
        *(double *)field = d;
        return 0;
    }
    }
}

static int store_flag(const opt *o, void *field, const char *val, const char *src, char *err,
                      size_t errlen) {
    int on = 1;
    if (val != NULL && parse_bool(val, &on) != 0) {
        snprintf(err, errlen, "%s: '%s' is not a boolean (1/0, true/false)", src, val);
        return -1;
    }
    if (o->type != T_PROGRESS && o->off == R(processing))
        *(outbox_processing_mode *)field = on ? OUTBOX_DELETE_PROCESSED : OUTBOX_KEEP_PROCESSED;
    else /* value 0 marks a --no-... flag, which clears the field */
        *(int *)field = on ? o->value : !o->value;
    return 0;
}

/* Stores `val` (from `src`, "--name" or "NAME=") into `field`, the field of
 * `o` in the ob_cli or in a table's relay options. */
static int store(ob_cli *c, const opt *o, void *field, const char *val, const char *src, char *err,
                 size_t errlen) {
    static const char *const backoffs[] = {"exponential", "fixed"};
    static const char *const levels[] = {"error", "warn", "info", "debug"};
    static const char *const formats[] = {"text", "logfmt", "json"};
    switch (o->type) {
    case T_STR: {
        if (val == NULL || *val == '\0') {
            snprintf(err, errlen, "%s needs a value", src);
            return -1;
        }
        const char *copy = keep(c, val);
        if (copy == NULL) {
            snprintf(err, errlen, "%s: out of memory", src);
            return -1;
        }
        *(const char **)field = copy;
        return 0;
    }
    case T_INT:
    case T_U32:
    case T_MS32:
    case T_MS64:
    case T_BYTES:
    case T_DOUBLE:
        return store_number(o, field, val, src, err, errlen);
    case T_FLAG:
    case T_PROGRESS:
        return store_flag(o, field, val, src, err, errlen);
    case T_FILE:
        return store_file(c, field, val, src, err, errlen);
    case T_BACKOFF:
        STORE_NAME(outbox_backoff_kind, backoffs, "'fixed' or 'exponential'");
    case T_LEVEL:
        STORE_NAME(outbox_log_level, levels, "error, warn, info or debug");
    case T_LOGFMT:
        STORE_NAME(ob_log_format, formats, "text, logfmt or json");
    }
    return -1;
}

static int takes_value(const opt *o) {
    return o->type != T_FLAG && o->type != T_PROGRESS;
}

/* Records that option i was given (as `name`); -1 with a message when it,
 * or another option for the same setting, was given already. */
static int once(const opt *all, size_t n, const char **set_by, size_t i, const char *name,
                const char *dash, char *err, size_t errlen) {
    for (size_t k = 0; k < n; k++) {
        if (set_by[k] == NULL || all[k].off != all[i].off)
            continue;
        if (k == i)
            snprintf(err, errlen, "%s%s is given twice; give it once", dash, name);
        else
            snprintf(err, errlen, "%s%s and %s%s set the same thing; give one", dash, set_by[k],
                     dash, name);
        return -1;
    }
    set_by[i] = name;
    return 0;
}

size_t ob_cli_env_names(const char **out, size_t max) {
    size_t k = 0;
    for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++)
        if (opts[i].env && k < max)
            out[k++] = opts[i].env;
    return k;
}

static const struct {
    const char *name;
    ob_cli_command cmd;
} commands[] = {{"run", OB_CMD_RUN},         {"schema", OB_CMD_SCHEMA},
                {"status", OB_CMD_STATUS},   {"partitions", OB_CMD_PARTITIONS},
                {"cleanup", OB_CMD_CLEANUP}, {"dead", OB_CMD_DEAD}};

static const size_t nopts = sizeof(opts) / sizeof(opts[0]);
_Static_assert(sizeof(opts) / sizeof(opts[0]) <= OB_CLI_MAX_OPTS, "raise OB_CLI_MAX_OPTS");

static size_t index_of(const opt *o) {
    return (size_t)(o - opts);
}

static const opt *find_opt(const char *name, size_t len) {
    for (size_t i = 0; i < nopts; i++)
        if (strlen(opts[i].name) == len && strncmp(opts[i].name, name, len) == 0)
            return &opts[i];
    return NULL;
}

/* Options of the relay itself, which a [table] section may set. */
static int is_relay_opt(const opt *o) {
    return o->off >= offsetof(ob_cli, relay) &&
           o->off < offsetof(ob_cli, relay) + sizeof(outbox_relay_options);
}

/* Options that make no sense inside a config file. */
static int file_settable(const opt *o) {
    return strcmp(o->name, "config") != 0 && strcmp(o->name, "help") != 0 &&
           strcmp(o->name, "version") != 0 && strcmp(o->name, "print-config") != 0;
}

static size_t field_size(const opt *o) {
    switch (o->type) {
    case T_STR:
    case T_FILE:
        return sizeof(const char *);
    case T_MS64:
    case T_BYTES:
        return sizeof(uint64_t);
    case T_MS32:
    case T_U32:
        return sizeof(uint32_t);
    case T_DOUBLE:
        return sizeof(double);
    case T_BACKOFF:
        return sizeof(outbox_backoff_kind);
    case T_LEVEL:
        return sizeof(outbox_log_level);
    case T_LOGFMT:
        return sizeof(ob_log_format);
    case T_FLAG:
        if (o->off == R(processing))
            return sizeof(outbox_processing_mode);
        return sizeof(int);
    case T_INT:
    case T_PROGRESS:
        return sizeof(int);
    }
    return 0;
}

/* The field of option `o` in the table's relay options. */
static void *table_field(ob_cli_table *t, const opt *o) {
    return (char *)&t->relay + (o->off - offsetof(ob_cli, relay));
}

/* --- the config file -------------------------------------------------------- */

typedef struct ini_ctx {
    ob_cli *c;
    FILE *f;
    const char *path;
    unsigned line;      /* lines read so far: the line the handler is called for */
    unsigned err_line;  /* 0 while no error was found */
    unsigned long_line; /* first line longer than the parser's limit */
    unsigned section;   /* the line of the last [section] header */
    char *err;
    size_t errlen;
} ini_ctx;

static ob_cli_table *section_table(ini_ctx *x, const char *section);
static int is_global_section(const char *section);

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
        if (!is_global_section(name))
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
    const opt *to = find_opt("table", 5);
    t->relay.table = t->name;
    t->src.origin[index_of(to)] = OB_FROM_FILE;
    t->src.line[index_of(to)] = x->section;
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

static int ini_on_value(void *user, const char *section, const char *name, const char *value) {
    ini_ctx *x = user;
    ob_cli *c = x->c;
    if (x->err_line)
        return 1; /* report the first error only */
    const opt *o = find_opt(name, strlen(name));
    if (o == NULL)
        return ini_fail(x, "unknown key '%s'%s", name, " (the keys are the long flag names)");
    if (!file_settable(o))
        return ini_fail(x, "key '%s' cannot be set in a config file%s", name, "");
    char src[320];
    snprintf(src, sizeof(src), "key '%s'", name);
    char msg[256];
    size_t k = index_of(o);
    if (is_global_section(section)) {
        if (c->src.origin[k] == OB_FROM_FILE)
            return ini_fail(x, "key '%s' is set twice%s", name, "");
        if (store(c, o, (char *)c + o->off, value, src, msg, sizeof(msg)) != 0)
            return ini_fail(x, "%s%s", msg, "");
        c->src.origin[k] = OB_FROM_FILE;
        c->src.line[k] = x->line;
        return 1;
    }
    ob_cli_table *t = section_table(x, section);
    if (t == NULL)
        return 0;
    if (!is_relay_opt(o))
        return ini_fail(x, "key '%s' cannot be set per table; set it before the first %s", name,
                        "[table] section");
    if (t->src.origin[k] == OB_FROM_FILE &&
        !(strcmp(name, "table") == 0 && t->src.line[k] == t->section_line))
        return ini_fail(x, "key '%s' is set twice in this table%s", name, "");
    if (store(c, o, table_field(t, o), value, src, msg, sizeof(msg)) != 0)
        return ini_fail(x, "%s%s", msg, "");
    t->src.origin[k] = OB_FROM_FILE;
    t->src.line[k] = x->line;
    return 1;
}

static int load_config(ob_cli *c, const char *path, char *err, size_t errlen) {
    ini_ctx x = {c, NULL, path, 0, 0, 0, 0, err, errlen};
    x.f = fopen(path, "r");
    if (x.f == NULL) {
        snprintf(err, errlen, "config file %s: %s", path, strerror(errno));
        return -1;
    }
    int rc = ini_parse_stream(ini_read_line, &x, ini_on_value, &x);
    fclose(x.f);
    if (x.long_line && (x.err_line == 0 || x.long_line <= x.err_line)) {
        snprintf(err, errlen, "%s:%u: line too long (at most %d characters)", path, x.long_line,
                 INI_MAX_LINE - 2);
        return -1;
    }
    if (rc > 0 && (x.err_line == 0 || (unsigned)rc < x.err_line)) {
        snprintf(err, errlen,
                 "%s:%d: syntax error: expected 'key = value', '[relay]' or "
                 "'[table NAME]'",
                 path, rc);
        return -1;
    }
    if (x.err_line)
        return -1;
    if (rc < 0) {
        snprintf(err, errlen, "config file %s: cannot be read", path);
        return -1;
    }
    return 0;
}

/* Every table takes the global value of each option it did not set itself,
 * and the global value always when it came from a flag or the environment. */
static int merge_tables(ob_cli *c, char *err, size_t errlen) {
    for (int i = 0; i < c->ntables; i++) {
        ob_cli_table *t = &c->tables[i];
        for (size_t k = 0; k < nopts; k++) {
            const opt *o = &opts[k];
            if (!is_relay_opt(o))
                continue;
            if (t->src.origin[k] == OB_FROM_FILE && c->src.origin[k] < OB_FROM_ENV)
                continue;
            memcpy(table_field(t, o), (char *)c + o->off, field_size(o));
            t->src.origin[k] = c->src.origin[k];
            t->src.line[k] = c->src.line[k];
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
static int select_table(ob_cli *c, char *err, size_t errlen) {
    size_t k = index_of(find_opt("table", 5));
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
static const char *config_path(int argc, char **argv, ob_env_fn env, void *env_data) {
    const char *path = env ? env("OUTBOX_CONFIG", env_data) : NULL;
    for (int a = 1; a < argc; a++) {
        if (strcmp(argv[a], "--config") == 0 && a + 1 < argc)
            path = argv[++a];
        else if (strncmp(argv[a], "--config=", 9) == 0)
            path = argv[a] + 9;
    }
    return path && *path ? path : NULL;
}

/* The environment: every option's variable. Two sources of one setting in
 * the environment are a mistake: the one kept would be a matter of order. */
static int parse_env(ob_cli *c, ob_env_fn env, void *env_data, char *err, size_t errlen) {
    const char *set_by[sizeof(opts) / sizeof(opts[0])] = {0};
    if (env && env("OUTBOX_RETENTION", env_data) != NULL) {
        snprintf(err, errlen, "OUTBOX_RETENTION is now OUTBOX_OLDER_THAN (--older-than)");
        return -1;
    }
    for (size_t i = 0; env && i < nopts; i++) {
        if (opts[i].env == NULL)
            continue;
        const char *v = env(opts[i].env, env_data);
        if (v == NULL || (*v == '\0' && takes_value(&opts[i])))
            continue;
        char src[64];
        snprintf(src, sizeof(src), "environment variable %s", opts[i].env);
        if (once(opts, nopts, set_by, i, opts[i].env, "", err, errlen) != 0 ||
            store(c, &opts[i], (char *)c + opts[i].off, v, src, err, errlen) != 0)
            return -1;
        c->src.origin[i] = OB_FROM_ENV;
    }
    return 0;
}

/* A word that is not an option: the command, or the dead-letter action. */
static int parse_positional(ob_cli *c, const char *arg, int positional, char *err, size_t errlen) {
    if (positional == 0) {
        size_t k;
        for (k = 0; k < sizeof(commands) / sizeof(commands[0]); k++)
            if (strcmp(arg, commands[k].name) == 0)
                break;
        if (k == sizeof(commands) / sizeof(commands[0])) {
            snprintf(err, errlen,
                     "unknown command '%s' (run, schema, status, partitions, cleanup, dead)", arg);
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
    const opt *o = find_opt(name, nl);
    if (o == NULL) {
        snprintf(err, errlen, "unknown option '--%.*s' (see --help)", (int)nl, name);
        return -1;
    }
    char src[64];
    snprintf(src, sizeof(src), "--%s", o->name);
    if (takes_value(o) && once(opts, nopts, set_by, (size_t)(o - opts), o->name, "--", err, errlen))
        return -1;
    const char *val = NULL;
    if (takes_value(o)) {
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
    if (o->off == R(table) && c->src.origin[index_of(o)] == OB_FROM_FLAG) {
        snprintf(err, errlen,
                 "--table is given more than once: to relay several tables, declare each "
                 "as a [table NAME] section of a config file (--config)");
        return -1;
    }
    if (store(c, o, (char *)c + o->off, val, src, err, errlen) != 0)
        return -1;
    c->src.origin[index_of(o)] = OB_FROM_FLAG;
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
        if (c->command == OB_CMD_RUN &&
            (c->tables[i].relay.db_url == NULL || c->tables[i].relay.nats_url == NULL)) {
            snprintf(err, errlen, "table [%s] has no %s (set it globally or in the section)",
                     c->tables[i].name, c->tables[i].relay.db_url ? "nats URL" : "database URL");
            return -1;
        }
    if (c->command != OB_CMD_SCHEMA && c->ntables == 0 && c->relay.db_url == NULL) {
        snprintf(err, errlen, "--db is required (or OUTBOX_DB): mysql://user:pass@host:port/db");
        return -1;
    }
    if (c->command == OB_CMD_RUN && c->ntables == 0 && c->relay.nats_url == NULL) {
        snprintf(err, errlen, "--nats is required (or OUTBOX_NATS): nats://host:port");
        return -1;
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
    const char *path = config_path(argc, argv, env, env_data);
    if (path) {
        c->config = keep(c, path);
        if (c->config == NULL || load_config(c, c->config, err, errlen) != 0)
            return 2;
    }
    if (parse_env(c, env, env_data, err, errlen) != 0)
        return 2;
    /* A flag given twice on the command line is a mistake too. */
    const char *set_by[sizeof(opts) / sizeof(opts[0])] = {0};
    int positional = 0;
    for (int a = 1; a < argc; a++) {
        const char *arg = strcmp(argv[a], "-h") == 0 ? "--help" : argv[a];
        int rc = strncmp(arg, "--", 2) != 0 || arg[2] == '\0'
                     ? parse_positional(c, arg, positional++, err, errlen)
                     : parse_flag(c, argc, argv, &a, arg, set_by, err, errlen);
        if (rc != 0)
            return 2;
    }
    if (c->help || c->version)
        return 0;
    if (select_table(c, err, errlen) != 0 || merge_tables(c, err, errlen) != 0 ||
        check_parsed(c, err, errlen) != 0)
        return 2;
    return 0;
}

/* --- the effective configuration ------------------------------------------- */

void ob_cli_redact(const char *in, char *out, size_t n) {
    if (n == 0)
        return;
    size_t o = 0;
    const char *p = in;
    while (*p && o + 1 < n) {
        const char *scheme = strstr(p, "://");
        if (scheme == NULL) {
            while (*p && o + 1 < n)
                out[o++] = *p++;
            break;
        }
        const char *auth = scheme + 3;
        while (p < auth && o + 1 < n)
            out[o++] = *p++;
        size_t alen = strcspn(auth, "/?# \t\"',");
        const char *at = NULL;
        for (const char *q = auth; q < auth + alen; q++)
            if (*q == '@')
                at = q;
        if (at == NULL)
            continue;
        const char *colon = memchr(auth, ':', (size_t)(at - auth));
        /* user:password@ keeps the user. A lone user name is a token in a
         * NATS URL (nats://token@host), and goes; elsewhere it stays. */
        int nats = (scheme - in >= 4 && strncmp(scheme - 4, "nats", 4) == 0) ||
                   (scheme - in >= 3 && strncmp(scheme - 3, "tls", 3) == 0);
        if (colon == NULL && !nats)
            continue;
        const char *keep_end = colon ? colon + 1 : auth;
        while (p < keep_end && o + 1 < n)
            out[o++] = *p++;
        for (const char *m = "***"; *m && o + 1 < n; m++)
            out[o++] = *m;
        p = at;
    }
    out[o] = '\0';
}

static int is_secret(const opt *o) {
    return strstr(o->name, "password") || strstr(o->name, "token") || strstr(o->name, "secret") ||
           strstr(o->name, "seed");
}

static void print_value(const opt *o, const void *field, FILE *out) {
    switch (o->type) {
    case T_FILE: /* the secret read from the file */
        fputs("***", out);
        return;
    case T_STR: {
        const char *v = *(const char *const *)field;
        char red[1024];
        if (is_secret(o)) {
            fputs("***", out);
        } else if (strcmp(o->name, "db") == 0 || strcmp(o->name, "nats") == 0) {
            /* The URL parser's own rules find the password (it may hold
             * '/', '?', ',' or '@'), so the mask does too. */
            char *r = ob_url_redact(v);
            fputs(r ? r : "***", out);
            free(r);
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
    case T_DOUBLE:
        fprintf(out, "%g", *(const double *)field);
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
    case T_LOGFMT: {
        static const char *names[] = {"text", "logfmt", "json"};
        ob_log_format f = *(const ob_log_format *)field;
        fputs((int)f >= 0 && (int)f < 3 ? names[f] : "?", out);
        return;
    }
    }
}

static void print_origin(const ob_cli *c, const opt *o, const ob_cli_sources *src, FILE *out) {
    size_t k = index_of(o);
    switch ((ob_cli_origin)src->origin[k]) {
    case OB_FROM_DEFAULT:
        fputs("default", out);
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

static void print_opt(const ob_cli *c, const opt *o, const void *field, const ob_cli_sources *src,
                      FILE *out) {
    if (o->type == T_STR && *(const char *const *)field == NULL) {
        fprintf(out, "# %s is not set\n", o->name);
        return;
    }
    fprintf(out, "%s = ", o->name);
    print_value(o, field, out);
    fputs("    # ", out);
    print_origin(c, o, src, out);
    fputc('\n', out);
}

void ob_cli_print_config(const ob_cli *c, FILE *out) {
    fprintf(out, "# outbox-uvrelay: the effective configuration; secrets are masked.\n"
                 "# Precedence: flag > environment > config file > default.\n[relay]\n");
    for (size_t k = 0; k < nopts; k++) {
        const opt *o = &opts[k];
        if (!file_settable(o) || o->type == T_PROGRESS || (c->ntables && is_relay_opt(o)))
            continue;
        print_opt(c, o, (const char *)c + o->off, &c->src, out);
    }
    fprintf(out, "# progress = %s\n",
            c->progress < 0 ? "auto (when stderr is a terminal)"
            : c->progress   ? "on"
                            : "off");
    if (c->ntables == 0) {
        return;
    }
    for (int i = 0; i < c->ntables; i++) {
        ob_cli_table *t = &c->tables[i];
        fprintf(out, "\n[table %s]\n", t->name);
        for (size_t k = 0; k < nopts; k++)
            if (is_relay_opt(&opts[k]))
                print_opt(c, &opts[k], table_field(t, &opts[k]), &t->src, out);
    }
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

void ob_cli_hide_secrets(int argc, char **argv) {
    for (int a = 1; a < argc; a++) {
        const char *names[] = {"--db-password", "--db", "--nats"};
        for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
            size_t n = strlen(names[k]);
            char *val = NULL;
            if (strcmp(argv[a], names[k]) == 0 && a + 1 < argc)
                val = argv[a + 1];
            else if (strncmp(argv[a], names[k], n) == 0 && argv[a][n] == '=')
                val = argv[a] + n + 1;
            if (val == NULL)
                continue;
            if (k == 0)
                memset(val, '*', strlen(val));
            else
                ob_url_mask(val);
            break;
        }
    }
}
