/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A blocking MariaDB connection with the relay's settings (URL, TLS,
 * timeouts, init command), for the one-shot commands that run no loop
 * (outbox/republish.h). Never for code on a loop: every call waits on the
 * network.
 */
#ifndef OB_DB_BLOCKING_H
#define OB_DB_BLOCKING_H

#include <mysql.h>
#include <stddef.h>

#include "db_config.h"

/* Connects to the server of cfg (its first node). Returns the handle, to be
 * closed with mysql_close(), or NULL with the cause in err (never the
 * password). */
MYSQL *ob_db_connect_blocking(const ob_db_config *cfg, char *err, size_t errlen);

#endif
