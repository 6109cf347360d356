/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What MariaDB's error numbers mean to the relay: a lost connection, a
 * misconfiguration that retrying cannot heal, and what to tell the operator.
 */
#include "db.h"

#include <errmsg.h>
#include <mysqld_error.h>
#include <string.h>

int ob_db_errno_is_lost(unsigned e) {
    switch (e) {
    case CR_SERVER_GONE_ERROR:
    case CR_SERVER_LOST:
    case CR_CONNECTION_ERROR:
    case CR_CONN_HOST_ERROR:
    case CR_UNKNOWN_HOST:
    case CR_COMMANDS_OUT_OF_SYNC:
    case CR_SERVER_LOST_EXTENDED:
    case ER_CONNECTION_KILLED:
    case ER_SERVER_SHUTDOWN:
    case ER_NET_READ_INTERRUPTED:
    case ER_NET_WRITE_INTERRUPTED:
    case ER_NET_READ_ERROR:
    case ER_NET_ERROR_ON_WRITE:
    case ER_QUERY_INTERRUPTED:
    /* 1047: a Galera node outside the primary component ("WSREP has not
     * yet prepared node for application use") refuses every statement,
     * ROLLBACK included, until it joins again: the session is of no use,
     * as if the server were gone. (Elsewhere 1047 is an unknown protocol
     * command: a session out of step, which a fresh one cures too.) */
    case ER_UNKNOWN_COM_ERROR:
        return 1;
    default:
        return 0;
    }
}

int ob_db_errno_is_permanent(unsigned e) {
    switch (e) {
    case CR_SSL_CONNECTION_ERROR:
    case ER_ACCESS_DENIED_ERROR:
    case ER_DBACCESS_DENIED_ERROR:
    case ER_ACCESS_DENIED_NO_PASSWORD_ERROR:
    case ER_BAD_DB_ERROR:
    case ER_NO_SECURE_TRANSPORTS_CONFIGURED:
    case OB_ER_ACCOUNT_LOCKED:
    case ER_NO_SUCH_TABLE:
    case ER_BAD_FIELD_ERROR:
    case ER_TABLEACCESS_DENIED_ERROR:
    case ER_COLUMNACCESS_DENIED_ERROR:
    case ER_SPECIFIC_ACCESS_DENIED_ERROR:
    case ER_KEY_DOES_NOT_EXISTS:
        return 1;
    default:
        return 0;
    }
}

int ob_db_errno_is_refusal(unsigned e) {
    switch (e) {
    case ER_TABLEACCESS_DENIED_ERROR:  /* 1142: SELECT/UPDATE/DELETE command denied */
    case ER_COLUMNACCESS_DENIED_ERROR: /* 1143: on a column */
    case ER_SPECIFIC_ACCESS_DENIED_ERROR:
    case ER_OPTION_PREVENTS_STATEMENT: /* 1290: the server runs --read-only */
    case ER_READ_ONLY_MODE:
    case ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION:
    case ER_OPEN_AS_READONLY:
    case ER_DISK_FULL:
    case ER_RECORD_FILE_FULL: /* 1114: the table is full */
    case ER_NO_SUCH_TABLE:
    case ER_BAD_FIELD_ERROR:
        return 1;
    default:
        return 0;
    }
}

const char *ob_db_error_hint(unsigned e) {
    switch (e) {
    case ER_NO_SUCH_TABLE:
        return " (create the table: outbox-uvrelay schema | mariadb ...)";
    case ER_BAD_FIELD_ERROR:
        return " (the table lacks a column the relay needs: compare with sql/outbox.sql)";
    case ER_ACCESS_DENIED_ERROR:
    case ER_ACCESS_DENIED_NO_PASSWORD_ERROR:
        return " (check the user and password of the database URL)";
    case ER_BAD_DB_ERROR:
        return " (the database named in the URL does not exist)";
    case OB_ER_ACCOUNT_LOCKED:
        return " (unlock it on this server: ALTER USER ... ACCOUNT UNLOCK)";
    case ER_TABLEACCESS_DENIED_ERROR:
    case ER_COLUMNACCESS_DENIED_ERROR:
        return " (grant the relay's user the privilege named, on the table named; on the outbox "
               "table it needs SELECT and UPDATE, and DELETE with --delete-processed: GRANT "
               "SELECT, UPDATE ON <database>.<table> TO <user>; docs/security.md lists what "
               "each mode and command needs)";
    case ER_OPTION_PREVENTS_STATEMENT:
    case ER_READ_ONLY_MODE:
        return " (the server is read-only: point the relay at the primary)";
    case ER_KEY_DOES_NOT_EXISTS:
        return " (the table lacks an index the relay reads by: ordered delivery on a Galera "
               "cluster needs idx_aggregate_wait; add what is missing with: outbox-uvrelay schema "
               "--migrate --table <table> | mariadb <database>)";
    default:
        return "";
    }
}

const char *ob_db_connect_error_text(unsigned no, const char *msg, int tls, char *buf, size_t len) {
    if (no == CR_SSL_CONNECTION_ERROR && tls &&
        (strstr(msg, "certificate") || strstr(msg, "issuer") || strstr(msg, "Validation"))) {
        snprintf(buf, len,
                 "TLS: the server certificate check failed (%s); trust the server's CA with "
                 "--db-tls-ca, and check that its certificate names the host",
                 msg);
        return buf;
    }
    if (no == CR_SSL_CONNECTION_ERROR && tls) {
        snprintf(buf, len, "TLS: the handshake with the database failed (%s)", msg);
        return buf;
    }
    if (no == CR_SSL_CONNECTION_ERROR) {
        snprintf(buf, len, "TLS: %s", msg);
        return buf;
    }
    if (!tls && no == ER_ACCESS_DENIED_ERROR) {
        /* A user created REQUIRE SSL, or any user of a server run with
         * --require-secure-transport=ON, is refused without TLS with a
         * plain access-denied error: say that TLS may be what is missing. */
        snprintf(buf, len, "%s (if the account requires TLS, use --db-tls or --db-tls-ca)", msg);
        return buf;
    }
    return msg;
}
