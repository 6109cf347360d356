/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The output of the operator commands (status, partitions, cleanup, dead):
 * text for people and scripts on stdout, or with --json (status and dead
 * list) one JSON object per line. With [table] sections every result names
 * its section.
 */
#ifndef OB_CLI_OPS_PRINT_H
#define OB_CLI_OPS_PRINT_H

#include "outbox/outbox.h"

typedef struct ob_ops_out {
    const char *label; /* the [table NAME] section; NULL without sections */
    const char *table; /* the table the job ran on */
    int json;          /* --json */
    int first, last;   /* the first and the last table of the command */
} ob_ops_out;

/* Prints a successful result. */
void ob_ops_print(const ob_ops_out *out, const outbox_maint_result *r);

/* Says that the round was skipped (another instance holds the lock). */
void ob_ops_print_skipped(const ob_ops_out *out, const outbox_maint_result *r);

#endif
