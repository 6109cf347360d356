/*
 * MariaDB server and client error numbers the project reacts to, by name.
 * The server's own names (mysqld_error.h) are not part of Connector/C's
 * headers on every system, so the few used here are written down once.
 */
#ifndef OB_MYSQL_ERRORS_H
#define OB_MYSQL_ERRORS_H

/* Server errors */
#define OB_ER_BAD_FIELD 1054             /* unknown column: the table is not an outbox */
#define OB_ER_NO_SUCH_TABLE 1146         /* the table does not exist */
#define OB_ER_LOCK_WAIT_TIMEOUT 1205     /* lock_wait_timeout or innodb_lock_wait_timeout */
#define OB_ER_LOCK_DEADLOCK 1213         /* a deadlock: the transaction was rolled back */
#define OB_ER_BINLOG_CREATE_ROUTINE 1419 /* creating a function needs SUPER with the binlog on */
#define OB_ER_RANGE_NOT_INCREASING 1493  /* ADD PARTITION with a MAXVALUE partition present */
#define OB_ER_CONSTRAINT_FAILED 4025     /* a CHECK constraint such as json_valid() failed */

/* Client errors (errmsg.h) */
#define OB_CR_SERVER_GONE_ERROR 2006    /* the connection is gone */
#define OB_CR_SERVER_LOST 2013          /* lost during a query (read timeout included) */
#define OB_CR_COMMANDS_OUT_OF_SYNC 2014 /* a call while another is in progress */

#endif
