/* SPDX-License-Identifier: Apache-2.0 */
/* The environment: the OUTBOX_* variable of every option. */
#include "args_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* OUTBOX_NATS_EVENT_LOOP, the binary's first spelling of --nats-client:
 * 0 is `threads`, any other value `loop`. With OUTBOX_NATS_CLIENT set too,
 * which one holds would be a matter of order: refused. */
static int old_event_loop(ob_cli *c, ob_env_fn env, void *env_data, const char **set_by, char *err,
                          size_t errlen) {
    const char *v = env ? env("OUTBOX_NATS_EVENT_LOOP", env_data) : NULL;
    if (v == NULL || *v == '\0')
        return 0;
    for (size_t i = 0; i < ob_nopts; i++) {
        if (strcmp(ob_opts[i].name, "nats-client") != 0)
            continue;
        if (set_by[i] != NULL) {
            snprintf(err, errlen,
                     "OUTBOX_NATS_EVENT_LOOP and OUTBOX_NATS_CLIENT are both set: keep "
                     "OUTBOX_NATS_CLIENT");
            return -1;
        }
        const char *name = strcmp(v, "0") == 0 ? "threads" : "loop";
        if (ob_opt_store(c, &ob_opts[i], (char *)c + ob_opts[i].off, name,
                         "environment variable OUTBOX_NATS_EVENT_LOOP", err, errlen) != 0)
            return -1;
        c->src.origin[i] = OB_FROM_ENV;
    }
    return 0;
}

/* The environment: every option's variable. Two sources of one setting in
 * the environment are a mistake: the one kept would be a matter of order. */
int ob_cli_parse_env(ob_cli *c, ob_env_fn env, void *env_data, char *err, size_t errlen) {
    const char *set_by[OB_CLI_MAX_OPTS] = {0};
    if (env && env("OUTBOX_RETENTION", env_data) != NULL) {
        snprintf(err, errlen, "OUTBOX_RETENTION is now OUTBOX_OLDER_THAN (--older-than)");
        return -1;
    }
    for (size_t i = 0; env && i < ob_nopts; i++) {
        if (ob_opts[i].env == NULL)
            continue;
        const char *v = env(ob_opts[i].env, env_data);
        if (v == NULL || (*v == '\0' && ob_opt_takes_value(&ob_opts[i])))
            continue;
        char src[64];
        snprintf(src, sizeof(src), "environment variable %s", ob_opts[i].env);
        if (ob_opt_once(ob_opts, ob_nopts, set_by, i, ob_opts[i].env, "", err, errlen) != 0 ||
            ob_opt_store(c, &ob_opts[i], (char *)c + ob_opts[i].off, v, src, err, errlen) != 0)
            return -1;
        c->src.origin[i] = OB_FROM_ENV;
    }
    return old_event_loop(c, env, env_data, set_by, err, errlen);
}
