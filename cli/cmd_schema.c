/* outbox-uvrelay schema: prints the DDL of the outbox table (with --ordered
 * or --leader, with what ordered delivery needs), or with --migrate the
 * ALTER TABLE that readies an existing one for ordered delivery. */
#include <stdio.h>
#include <stdlib.h>

#include "commands.h"

int ob_cmd_schema(ob_cli *c) {
    outbox_schema_options o;
    outbox_schema_options_init(&o);
    o.table = c->relay.table;
    o.partitioned = c->partitioned;
    o.monthly = c->monthly;
    o.lookahead = c->lookahead;
    o.binary = c->binary;
    o.with_function = !c->no_function;
    o.ordered = c->relay.ordered || c->relay.leader;
    char *ddl = NULL;
    char err[256];
    int rc = c->migrate ? outbox_schema_migrate_ddl(o.table, &ddl, err, sizeof(err))
                        : outbox_schema_ddl(&o, &ddl, err, sizeof(err));
    if (rc != OUTBOX_OK) {
        fprintf(stderr, "outbox-uvrelay: %s\n", rc == OUTBOX_EINVAL ? err : outbox_strerror(rc));
        return 2;
    }
    fputs(ddl, stdout);
    free(ddl);
    return 0;
}
