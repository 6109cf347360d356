/* SPDX-License-Identifier: Apache-2.0 */
/* The option table: every flag, its environment variable and its field. */
#include "args_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const opt ob_opts[] = {
    {"db", "OUTBOX_DB", T_STR, R(db_url), 0},
    {"db-password", "OUTBOX_DB_PASSWORD", T_STR, R(db_password), 0},
    {"db-password-file", "OUTBOX_DB_PASSWORD_FILE", T_FILE, R(db_password), 0},
    {"db-option-file", "OUTBOX_DB_OPTION_FILE", T_STR, C(db_option_file), 0},
    {"db-failback", "OUTBOX_DB_FAILBACK", T_MS32, R(db_failback_ms), 0},
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
    {"nats-client", "OUTBOX_NATS_CLIENT", T_NATSCLI, R(nats_client), 0},
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
    {"cursor", "OUTBOX_CURSOR", T_FLAG, R(cursor), 1},
    {"cursor-trust-seq", "OUTBOX_CURSOR_TRUST_SEQ", T_FLAG, R(cursor_trust_seq), 1},
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
    {"since", NULL, T_STR, C(since), 0},
    {"until", NULL, T_STR, C(until), 0},
    {"seq", NULL, T_STR, C(seq_range), 0},
    {"id-from", NULL, T_STR, C(id_from), 0},
    {"id-to", NULL, T_STR, C(id_to), 0},
    {"rate", NULL, T_DOUBLE, C(rate), 0},
    {"dry-run", NULL, T_FLAG, C(dry_run), 1},
    {"create-stream", NULL, T_FLAG, C(create_stream), 1},
    {"help", NULL, T_FLAG, C(help), 1},
    {"version", NULL, T_FLAG, C(version), 1},
};

const size_t ob_nopts = sizeof(ob_opts) / sizeof(ob_opts[0]);
_Static_assert(sizeof(ob_opts) / sizeof(ob_opts[0]) <= OB_CLI_MAX_OPTS, "raise OB_CLI_MAX_OPTS");

size_t ob_opt_index(const opt *o) {
    return (size_t)(o - ob_opts);
}

const opt *ob_opt_find(const char *name, size_t len) {
    for (size_t i = 0; i < ob_nopts; i++)
        if (strlen(ob_opts[i].name) == len && strncmp(ob_opts[i].name, name, len) == 0)
            return &ob_opts[i];
    return NULL;
}

/* Options of the relay itself, which a [table] section may set. */
int ob_opt_is_relay(const opt *o) {
    return o->off >= offsetof(ob_cli, relay) &&
           o->off < offsetof(ob_cli, relay) + sizeof(outbox_relay_options);
}

/* Options a config file may set. */
int ob_opt_file_settable(const opt *o) {
    /* Keys without an environment variable belong to one-shot commands
     * (--once, --id, --json, ...), except the progress line's. */
    return (o->env != NULL || o->type == T_PROGRESS) && strcmp(o->name, "config") != 0;
}

size_t ob_opt_size(const opt *o) {
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
    case T_NATSCLI:
        return sizeof(outbox_nats_client);
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
void *ob_opt_table_field(ob_cli_table *t, const opt *o) {
    return (char *)&t->relay + (o->off - offsetof(ob_cli, relay));
}

int ob_opt_path(const opt *o) {
    static const char *const read[] = {
        "db-password-file", "db-option-file", "db-tls-ca",       "db-tls-cert",
        "db-tls-key",       "nats-tls-ca",    "nats-tls-cert",   "nats-tls-key",
        "nats-creds",       "nats-nkey",      "nats-token-file", "nats-password-file",
    };
    for (size_t i = 0; i < sizeof(read) / sizeof(read[0]); i++)
        if (strcmp(o->name, read[i]) == 0)
            return OB_PATH_READ;
    return strcmp(o->name, "log-file") == 0 ? OB_PATH_WRITTEN : 0;
}

int ob_opt_takes_value(const opt *o) {
    return o->type != T_FLAG && o->type != T_PROGRESS;
}

int ob_opt_once(const opt *all, size_t n, const char **set_by, size_t i, const char *name,
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
    for (size_t i = 0; i < ob_nopts; i++)
        if (ob_opts[i].env && k < max)
            out[k++] = ob_opts[i].env;
    return k;
}

/* The sane range of the bounded numbers (docs/configuration.md lists them); the others
 * take any positive int (T_INT) or any uint32_t (T_U32). */
static const struct {
    const char *name;
    uint64_t min, max;
} ranges[] = {
    {"connections", 1, 256},   {"batch", 1, 10000},           {"max-attempts", 1, 1000000},
    {"stream-replicas", 1, 5}, {"max-in-flight", 1, 1048576}, {"lookahead", 0, 1000},
    {"retention", 0, 100000},  {"limit", 1, 100000000},
};

void ob_opt_range(const opt *o, uint64_t *min, uint64_t *max) {
    *min = o->type == T_INT ? 1 : 0;
    *max = o->type == T_INT ? 1000000000 : UINT32_MAX;
    for (size_t i = 0; i < sizeof(ranges) / sizeof(ranges[0]); i++)
        if (strcmp(ranges[i].name, o->name) == 0) {
            *min = ranges[i].min;
            *max = ranges[i].max;
        }
}
