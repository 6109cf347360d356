/* SPDX-License-Identifier: Apache-2.0 */
/* The blocking connection of the one-shot commands (db_blocking.h): the
 * same handle options as the relay's connections (db_socket.c), connected
 * with Connector/C's blocking call. */
#include "db_blocking.h"

#include <stdio.h>

#include "db_socket.h"

MYSQL *ob_db_connect_blocking(const ob_db_config *cfg, char *err, size_t errlen) {
    MYSQL *m = ob_db_mysql_new(cfg);
    if (m == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    const char *host = cfg->n_nodes > 0 ? cfg->nodes[0].host : cfg->host;
    unsigned port = cfg->n_nodes > 0 ? cfg->nodes[0].port : cfg->port;
    if (mysql_real_connect(m, cfg->socket ? NULL : host, cfg->user, cfg->password,
                           cfg->database && *cfg->database ? cfg->database : NULL, port,
                           cfg->socket, 0) == NULL) {
        snprintf(err, errlen, "cannot connect to MariaDB: %s (error %u)", mysql_error(m),
                 mysql_errno(m));
        mysql_close(m);
        return NULL;
    }
    return m;
}
