/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The unit tests' way into ob_cli_parse: an environment given as a
 * NULL-terminated table of name/value pairs, and arguments as a list.
 * The includer may define OB_TEST_ERRLEN (default 256), the size of the
 * error buffers it passes.
 */
#ifndef OB_TEST_CLI_PARSE_H
#define OB_TEST_CLI_PARSE_H

#include <stdarg.h>
#include <string.h>

#include "args.h"

#ifndef OB_TEST_ERRLEN
#define OB_TEST_ERRLEN 256
#endif

typedef struct kv {
    const char *k, *v;
} kv;

static const char *table_env(const char *name, void *data) {
    for (const kv *e = data; e && e->k; e++)
        if (strcmp(e->k, name) == 0)
            return e->v;
    return NULL;
}

/* Parses argv = {"outbox-uvrelay", the argc - 1 strings that follow}. */
static int parse(ob_cli *c, kv *env, char *err, int argc, ...) {
    char *argv[32];
    va_list ap;
    va_start(ap, argc);
    argv[0] = "outbox-uvrelay";
    for (int i = 1; i < argc; i++)
        argv[i] = va_arg(ap, char *);
    va_end(ap);
    return ob_cli_parse(c, argc, argv, table_env, env, err, OB_TEST_ERRLEN);
}

#endif
