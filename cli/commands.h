/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The subcommands of outbox-uvrelay. Each returns the process exit status:
 * 0 done, 1 runtime failure, 2 bad usage.
 */
#ifndef OB_CLI_COMMANDS_H
#define OB_CLI_COMMANDS_H

#include "args.h"
#include "logout.h"

/* err_log: where a failure before the run's own log output is open goes
 * (stderr, in the chosen format). */
int ob_cmd_run(ob_cli *c, ob_logout *err_log);
int ob_cmd_schema(ob_cli *c, ob_logout *log);
int ob_cmd_ops(ob_cli *c, ob_logout *log); /* status, partitions, cleanup, dead */
int ob_cmd_republish(ob_cli *c, ob_logout *log);

#endif
