/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One outbox row as the readers fetched it, for every broker: the fields
 * that make its message, pointing into the result that holds them. The
 * readers and the batch know rows only as this; a broker (nats/message.h)
 * makes its message of one.
 */
#ifndef OB_ROW_H
#define OB_ROW_H

#include <stddef.h>

/* One fetched row, pointing into the MYSQL_RES that holds it. */
typedef struct ob_row {
    const unsigned char *id; /* 16 bytes */
    const char *aggregate_type;
    size_t aggregate_type_len;
    const char *aggregate_id;
    size_t aggregate_id_len;
    const char *event_type;
    size_t event_type_len;
    const char *payload;
    size_t payload_len;
    const char *headers; /* NULL when the column is NULL */
    size_t headers_len;
    const char *created_at; /* "YYYY-MM-DD HH:MM:SS.ffffff", UTC session */
    size_t created_at_len;
    int attempts;       /* attempt_count before this attempt */
    int payload_binary; /* the payload column is binary (LONGBLOB): no application/json */
} ob_row;

#endif
