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
#include <uv.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "args.h"
#include "commands.h"

static const char *env_lookup(const char *name, void *data) {
    (void)data;
    return getenv(name);
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
    if (ob_cli_parse(&c, argc, argv, env_lookup, NULL, err, sizeof(err)) != 0) {
        fprintf(stderr, "outbox-uvrelay: %s\nTry 'outbox-uvrelay --help'.\n", err);
        ob_cli_free(&c);
        return 2;
    }
    ob_cli_hide_secrets(argc, argv);
    int rc = 0;
    if (c.help) {
        fputs(ob_cli_usage(), stdout);
    } else if (c.print_config) {
        ob_cli_print_config(&c, stdout);
    } else if (c.version) {
        printf("outbox-uvrelay %s (libuv %s, nats.c %s, MariaDB Connector/C %s)\n",
               outbox_version(), uv_version_string(), nats_GetVersion(), mysql_get_client_info());
    } else {
        switch (c.command) {
        case OB_CMD_RUN:
            rc = ob_cmd_run(&c);
            break;
        case OB_CMD_SCHEMA:
            rc = ob_cmd_schema(&c);
            break;
        default:
            rc = ob_cmd_ops(&c);
            break;
        }
    }
    ob_cli_free(&c);
    return rc;
}
