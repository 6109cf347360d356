/*
 * Schema text for the outbox table and its variants.
 */
#ifndef OUTBOX_MAINT_H
#define OUTBOX_MAINT_H

#include <stddef.h>
#include <stdint.h>

#include "outbox/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct outbox_schema_options {
    const char *table;   /* "outbox"; optionally "schema.table" */
    int partitioned;     /* PARTITION BY RANGE COLUMNS(id) with a pmax tail */
    int monthly;         /* with partitioned: month partitions instead of days */
    uint32_t lookahead;  /* with partitioned: periods created ahead of today (7) */
    int binary;          /* payload LONGBLOB instead of JSON */
    int with_function;   /* also emit the outbox_uuid_v7() SQL function (1) */
    uint64_t now_ms;     /* the "today" for partition bounds; 0 = the clock */
} outbox_schema_options;

void outbox_schema_options_init(outbox_schema_options *o);

/* Builds the DDL text for the options. On success *out is a malloc'd,
 * NUL-terminated string the caller frees. Returns OUTBOX_EINVAL for a bad
 * table name (with a message in errbuf when it is not NULL). */
int outbox_schema_ddl(const outbox_schema_options *o, char **out, char *errbuf, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
