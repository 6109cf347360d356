/* SPDX-License-Identifier: Apache-2.0 */
/* outbox-uvrelay schema: prints the DDL of the outbox table (with --ordered
 * or --leader, with what ordered delivery needs), or with --migrate the
 * ALTER TABLE that readies an existing one for ordered delivery. With
 * [table] sections in the config file, for each declared table (or the one
 * --table chose), each after a comment naming its section. */
#include <stdio.h>
#include <stdlib.h>

#include "commands.h"

static int schema_one(const ob_cli *c, const outbox_relay_options *r, const char *label,
                      ob_logout *log) {
    outbox_schema_options o;
    outbox_schema_options_init(&o);
    o.table = r->table;
    o.partitioned = c->partitioned;
    o.monthly = c->monthly;
    o.lookahead = c->lookahead;
    o.binary = c->binary;
    o.with_function = !c->no_function;
    o.ordered = r->ordered || r->leader || r->cursor;
    char *ddl = NULL;
    char err[256];
    int rc = c->migrate ? outbox_schema_migrate_ddl(o.table, &ddl, err, sizeof(err))
                        : outbox_schema_ddl(&o, &ddl, err, sizeof(err));
    if (rc != OUTBOX_OK) {
        ob_logout_fail(log, 0, "%s%s%s%s", label ? "table [" : "", label ? label : "",
                       label ? "]: " : "", rc == OUTBOX_EINVAL ? err : outbox_strerror(rc));
        return 2;
    }
    if (label)
        printf("-- [table %s]\n", label);
    fputs(ddl, stdout);
    free(ddl);
    return 0;
}

int ob_cmd_schema(ob_cli *c, ob_logout *log) {
    if (c->ntables == 0)
        return schema_one(c, &c->relay, NULL, log);
    for (int i = 0; i < c->ntables; i++) {
        int rc = schema_one(c, &c->tables[i].relay, c->tables[i].name, log);
        if (rc != 0)
            return rc;
    }
    return 0;
}
