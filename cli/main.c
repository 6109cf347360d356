/* SPDX-License-Identifier: Apache-2.0 */
/*
 * outbox-uvrelay: the bundled binary. A thin user of the library's public
 * API: it parses options, then runs one of the subcommands.
 */
#include <mysql.h>
#include <nats/nats.h>
#include <openssl/crypto.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "args.h"
#include "commands.h"
#include "logout.h"

static const char *env_lookup(const char *name, void *data) {
    (void)data;
    return getenv(name);
}

/* The log format named by --log-format or OUTBOX_LOG_FORMAT, for a line
 * written before (or instead of) a complete parse. */
static ob_log_format guess_format(int argc, char **argv) {
    const char *v = getenv("OUTBOX_LOG_FORMAT");
    for (int a = 1; a < argc; a++) {
        if (strcmp(argv[a], "--log-format") == 0 && a + 1 < argc)
            v = argv[a + 1];
        else if (strncmp(argv[a], "--log-format=", 13) == 0)
            v = argv[a] + 13;
    }
    if (v && strcmp(v, "json") == 0)
        return OB_LOG_JSON;
    if (v && strcmp(v, "logfmt") == 0)
        return OB_LOG_LOGFMT;
    return OB_LOG_TEXT;
}

int main(int argc, char **argv) {
    ob_cli c;
    char err[512];
    /* nats.c 3.4.1 frees OpenSSL's compression-method list in its final
     * cleanup after a TLS connection, and OpenSSL 3 frees it again in its
     * exit handler, which then crashes. Keep OpenSSL's exit handler off: this
     * must be the process's first OpenSSL call. */
    OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT, NULL);
#ifdef __GLIBC__
    /* The relay frees, in bursts, small objects allocated on other threads
     * (nats.c's messages and header maps) beside large ones (the result sets
     * of the fetches); with glibc's fastbins every large free then sweeps
     * them in malloc_consolidate, 6 % of the relay's CPU in a profile. Without
     * fastbins (tcache still serves small sizes) the relay spent about 8 %
     * less CPU per message in alternating drains at 4 and 8 x 500. Only the
     * binary sets this: the library leaves an embedder's allocator alone. */
    mallopt(M_MXFAST, 0);
#endif
    /* A peer closing a socket must surface as an error, not kill us. */
    signal(SIGPIPE, SIG_IGN);
    /* SIGUSR1 asks the running relay for its totals (cmd_run.c); it must
     * never kill the process, before or after the relay listens for it. */
    signal(SIGUSR1, SIG_IGN);
    ob_logout log;
    int prc = ob_cli_parse(&c, argc, argv, env_lookup, NULL, err, sizeof(err));
    if (prc != 0) {
        /* Even a usage error is a line in the chosen format, when the
         * format could be told. An unreadable config file is not bad usage
         * (exit 1, no pointer to --help). */
        ob_logout_open(&log, c.log_format ? c.log_format : guess_format(argc, argv), NULL);
        ob_logout_fail(&log, prc == 2, "%s", err);
        ob_logout_close(&log);
        ob_cli_free(&c);
        return prc;
    }
    ob_cli_hide_secrets(argc, argv);
    ob_logout_open(&log, c.log_format, NULL);
    int rc = 0;
    if (c.help) {
        fputs(ob_cli_usage_for(c.command), stdout);
    } else if (c.print_config) {
        ob_cli_print_config(&c, stdout);
    } else if (c.version) {
        printf("outbox-uvrelay %s (commit %s; libuv %s, nats.c %s, MariaDB Connector/C %s)\n",
               outbox_version(), outbox_version_commit(), uv_version_string(), nats_GetVersion(),
               mysql_get_client_info());
    } else {
        switch (c.command) {
        case OB_CMD_RUN:
            rc = ob_cmd_run(&c, &log);
            break;
        case OB_CMD_SCHEMA:
            rc = ob_cmd_schema(&c, &log);
            break;
        case OB_CMD_REPUBLISH:
            rc = ob_cmd_republish(&c, &log);
            break;
        default:
            rc = ob_cmd_ops(&c, &log);
            break;
        }
    }
    ob_logout_close(&log);
    ob_cli_free(&c);
    return rc;
}
