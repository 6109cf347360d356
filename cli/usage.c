/* SPDX-License-Identifier: Apache-2.0 */
/* The --help text. */
#include "args_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* In parts: C11 compilers need not take string literals over 4095 bytes. */
static const char *const usage_parts[] = {
    "usage: outbox-uvrelay [run] --db mysql://user:pass@host:port/db --nats "
    "nats://host:port "
    "[options]\n"
    "       outbox-uvrelay schema [--table T] [--ordered | --leader | --cursor] "
    "[--partitioned [--monthly] [--lookahead N]] [--binary] [--no-function]\n"
    "       outbox-uvrelay schema --migrate [--table T]\n"
    "       outbox-uvrelay status --db URL [--table T] [--json]\n"
    "       outbox-uvrelay partitions --once --db URL [--table T] [--monthly] "
    "[--lookahead N] [--retention N]\n"
    "       outbox-uvrelay cleanup --once --db URL [--table T] [--older-than 7d] "
    "[--limit N] [--include-dead]\n"
    "       outbox-uvrelay dead list|replay|purge --db URL [--table T] "
    "[--id ID | --all] [--older-than D] [--json]\n"
    "       outbox-uvrelay cursor-reset --db URL [--table T] [--all]\n"
    "       outbox-uvrelay republish --db URL --nats URL [--table T] [--since T] [--until T] "
    "[--seq A-B | --id-from ID --id-to ID] [--rate N] [--dry-run] [--create-stream]\n"
    "       outbox-uvrelay COMMAND --help: the help of one command\n"
    "\n"
    "Relays rows of a transactional-outbox table in MariaDB to a NATS JetStream stream.\n"
    "\n"
    "Connections (also from the environment):\n"
    "  --db URL              OUTBOX_DB             "
    "mysql://user:pass@host:port/db[?socket=PATH]\n"
    "                        a cluster: mysql://user:pass@host1:port,host2:port,.../db\n"
    "                        (nodes tried in order; a node lost, refusing or silent is\n"
    "                        left for the next)\n"
    "  --db-password-file F  OUTBOX_DB_PASSWORD_FILE  the password, from the first line "
    "of F\n"
    "  --db-password PASS    OUTBOX_DB_PASSWORD    overrides the URL's password (visible "
    "in ps)\n"
    "  --db-option-file F    OUTBOX_DB_OPTION_FILE  a MariaDB option file to take the\n"
    "                        password from, in place of ~/.my.cnf\n"
    "  --db-failback D       OUTBOX_DB_FAILBACK    with several nodes, go back to the first\n"
    "                        after D away from it, once it answers (60s; 0: never)\n"
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
    "  --stream-replicas N   OUTBOX_STREAM_REPLICAS  replicas of a stream the relay creates\n"
    "  --nats-client WHERE   OUTBOX_NATS_CLIENT    where nats.c reads and writes: loop (the\n"
    "                        relay's loop), threads (nats.c's own), or auto: the loop but\n"
    "                        over TLS, where nats.c can wait without a deadline (auto)\n",
    "Relay:\n"
    "  --table NAME          OUTBOX_TABLE          outbox table, [schema.]name (outbox)\n"
    "  --stream NAME         OUTBOX_STREAM         JetStream stream (OUTBOX)\n"
    "  --subject-prefix P    OUTBOX_SUBJECT_PREFIX subjects P.<aggregate_type>.<event_type> "
    "(outbox)\n"
    "  --ce-source S         OUTBOX_CE_SOURCE      CloudEvents source (outbox-uvrelay)\n"
    "  --no-cloudevents      OUTBOX_NO_CLOUDEVENTS leave out the ce-* headers (less CPU)\n"
    "  --connections N       OUTBOX_CONNECTIONS    MariaDB connections (2)\n"
    "  --batch N             OUTBOX_BATCH          rows per fetch (500)\n"
    "  --poll-interval D     OUTBOX_POLL_INTERVAL  longest wait between idle polls (100ms; 1s at "
    "rest)\n"
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
    "  --cursor              OUTBOX_CURSOR         as --ordered, reading without locks and\n"
    "                        writing only failed rows (needs PROCESS and outbox_cursor)\n"
    "  --cursor-trust-seq    OUTBOX_CURSOR_TRUST_SEQ  no producer writes seq: run without\n"
    "                        the trigger that sets it (else --cursor refuses to start)\n"
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
    "Exit status: 0 done, 1 runtime failure or a file that cannot be read, 2 bad usage.\n",
};

static const char usage_config[] =
    "\nConfiguration, monitoring, logs:\n"
    "  --config FILE         OUTBOX_CONFIG         options from an INI file; [table NAME]\n"
    "                        sections relay several tables in one process\n"
    "  --print-config        print the effective configuration (secrets masked) and exit\n"
    "  --http ADDR:PORT      OUTBOX_HTTP           serve /metrics, /healthz, /readyz (off)\n"
    "  --log-format F        OUTBOX_LOG_FORMAT     text, logfmt or json (text)\n"
    "  --log-file PATH       OUTBOX_LOG_FILE       append logs here; SIGHUP reopens it\n"
    "Signals: SIGTERM, SIGINT stop (a second one at once); SIGHUP reopens --log-file;\n"
    "SIGUSR1 logs the totals.\n"
    "Precedence: flag > environment > config file > default.\n"
    "Conventions of NATS and MariaDB, for what the above leave unset:\n"
    "  NATS_URL              servers, comma-separated, as the nats CLI takes them\n"
    "  NATS_USER, NATS_PASSWORD  a user and password for every server\n"
    "  NATS_CREDS, NATS_NKEY, NATS_CERT, NATS_KEY, NATS_CA  files, as the nats CLI\n"
    "                        reads them (credentials when the relay is given none)\n"
    "  NATS_CONTEXT NAME     then a nats CLI context: ~/.config/nats/context/NAME.json\n"
    "                        (under $XDG_CONFIG_HOME when set); without it, and when\n"
    "                        nothing names a server, the one `nats context select` chose\n"
    "  MYSQL_PWD             the password, for a database URL without one\n"
    "  ~/.my.cnf             then the last password of an option file (--db-option-file,\n"
    "                        else ~/.my.cnf) in [client], [client-server],\n"
    "                        [client-mariadb] or [outbox-uvrelay]\n"
    "Variables win over files; --print-config says where each value came from.\n";

const char *ob_cli_usage(void) {
    static char text[12288];
    if (text[0] == '\0') {
        for (size_t i = 0; i < sizeof(usage_parts) / sizeof(usage_parts[0]); i++)
            strncat(text, usage_parts[i], sizeof(text) - strlen(text) - 1);
        strncat(text, usage_config, sizeof(text) - strlen(text) - 1);
    }
    return text;
}

/* What every one-shot command takes besides its own options. */
static const char usage_common[] =
    "\nCommon options: --db URL (OUTBOX_DB), --db-password-file F, --config FILE (with\n"
    "[table NAME] sections: each declared table, or the one --table NAME picks; a\n"
    "name the file does not declare is an error), --log-format text|logfmt|json.\n"
    "TLS and the other connection options: outbox-uvrelay --help.\n"
    "Exit status: 0 done, 1 runtime failure or a file that cannot be read, 2 bad usage\n"
    "(nothing changed).\n";

static const char usage_schema[] =
    "usage: outbox-uvrelay schema [--table T] [--ordered | --leader | --cursor]\n"
    "                             [--partitioned [--monthly] [--lookahead N]]\n"
    "                             [--binary] [--no-function]\n"
    "       outbox-uvrelay schema --migrate [--table T]\n"
    "\n"
    "Prints the outbox table's DDL on stdout, and the lease table's (outbox_lease,\n"
    "used on a Galera cluster); connects to nothing. With a config file that declares\n"
    "[table NAME] sections, the DDL of each (or of the one --table picks).\n"
    "  --table NAME          [schema.]name (outbox)\n"
    "  --ordered, --leader, --cursor  with the seq and bucket columns ordered delivery\n"
    "                        needs, and the cursor table (outbox_cursor)\n"
    "  --partitioned         PARTITION BY RANGE COLUMNS(id), daily (--monthly: monthly)\n"
    "  --lookahead N         partitions made ready after the current period (7)\n"
    "  --binary              payload LONGBLOB instead of JSON\n"
    "  --no-function         without the outbox_uuid_v7() SQL function\n"
    "  --migrate             the ALTER TABLE that readies an existing table for\n"
    "                        --ordered, --leader and --cursor, the cursor table and\n"
    "                        the lease table\n"
    "Exit status: 0 done, 2 bad usage.\n";

static const char usage_status[] =
    "usage: outbox-uvrelay status --db URL [--table T] [--json]\n"
    "\n"
    "Pending, processed and dead rows, the age of the oldest pending row, the\n"
    "maintenance lock's holder, the ordered modes' bucket owners and the partitions.\n"
    "  --json                one JSON object per table, one per line\n";

static const char usage_partitions[] =
    "usage: outbox-uvrelay partitions --once --db URL [--table T] [--monthly] [--lookahead N]\n"
    "                                 [--retention N]\n"
    "\n"
    "One round of the partition maintainer (the relay runs it every --partition-interval).\n"
    "  --monthly             monthly partitions, not daily\n"
    "  --lookahead N         partitions kept ready after the current period (7)\n"
    "  --retention N         past partitions kept; older ones are dropped unless they\n"
    "                        hold pending rows (0: never drop)\n";

static const char usage_cleanup[] =
    "usage: outbox-uvrelay cleanup --once --db URL [--table T] [--older-than 7d] [--limit N]\n"
    "                              [--include-dead]\n"
    "\n"
    "One round of cleanup (the relay runs it every --cleanup-interval): deletes\n"
    "processed rows of a plain table.\n"
    "  --older-than D        processed rows older than this go (7d)\n"
    "  --limit N             rows per round (10000)\n"
    "  --include-dead        old dead rows go too\n";

static const char usage_dead[] =
    "usage: outbox-uvrelay dead list   --db URL [--table T] [--limit N] [--json]\n"
    "       outbox-uvrelay dead replay --db URL [--table T] --id ID | --all\n"
    "       outbox-uvrelay dead purge  --db URL [--table T] [--id ID] [--older-than D]\n"
    "\n"
    "Dead letters: rows with status -1 (out of attempts, or refused outright).\n"
    "  list                  TSV on stdout (100 rows; --limit N), a summary on stderr;\n"
    "                        --json: one JSON object per row, one per line\n"
    "  replay                pending again with attempts reset: one row (--id) or all\n"
    "  purge                 deletes dead rows created before --older-than D (7d), or\n"
    "                        the one --id names\n";

static const char usage_cursor_reset[] =
    "usage: outbox-uvrelay cursor-reset --db URL [--table T] [--all]\n"
    "\n"
    "Cursor mode: sets the table's cursors back to 0 when one is at or above the\n"
    "table's AUTO_INCREMENT counter (after a TRUNCATE, say), so that cursor relays\n"
    "read the table again from its start; else changes nothing.\n"
    "  --all                 reset them even when they agree with the counter\n";

static const char usage_republish[] =
    "usage: outbox-uvrelay republish --db URL --nats URL [--table T] [--stream S]\n"
    "           [--subject-prefix P] [--since T] [--until T] [--seq A-B] [--id-from ID]\n"
    "           [--id-to ID] [--include-dead] [--rate N] [--dry-run] [--create-stream]\n"
    "\n"
    "Publishes the delivered rows again, to rebuild a lost stream: the messages the\n"
    "relay sent (same subject, headers and Nats-Msg-Id), in its order (seq, or id in\n"
    "a plain table). Only reads the table: no row changes. docs/recovery.md.\n"
    "  --since T, --until T  created_at from T, and before T: UTC 'YYYY-MM-DD HH:MM:SS',\n"
    "                        or a duration ago (2h, 7d)\n"
    "  --seq A-B             seq from A to B (ordered and cursor tables)\n"
    "  --id-from ID, --id-to ID  ids from, to (inclusive)\n"
    "  --include-dead        dead rows too (never by default)\n"
    "  --stream S, --subject-prefix P  the target (the relay's by default); the stream\n"
    "                        must exist and take P's subjects\n"
    "  --create-stream       create the stream when it is missing, as the relay would\n"
    "  --rate N              rows a second at most (default: as fast as acks come)\n"
    "  --dry-run             count the rows and show how far back the table reaches\n";

const char *ob_cli_usage_for(ob_cli_command cmd) {
    static char text[4096];
    const char *own;
    switch (cmd) {
    case OB_CMD_SCHEMA:
        return usage_schema;
    case OB_CMD_STATUS:
        own = usage_status;
        break;
    case OB_CMD_PARTITIONS:
        own = usage_partitions;
        break;
    case OB_CMD_CLEANUP:
        own = usage_cleanup;
        break;
    case OB_CMD_DEAD:
        own = usage_dead;
        break;
    case OB_CMD_CURSOR_RESET:
        own = usage_cursor_reset;
        break;
    case OB_CMD_REPUBLISH:
        own = usage_republish;
        break;
    default:
        return ob_cli_usage();
    }
    snprintf(text, sizeof(text), "%s%s", own, usage_common);
    return text;
}
