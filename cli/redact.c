/* SPDX-License-Identifier: Apache-2.0 */
/* Secrets out of sight: URL passwords masked in log lines, and in argv. */
#include "args_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ob_cli_redact(const char *in, char *out, size_t n) {
    if (n == 0)
        return;
    size_t o = 0;
    const char *p = in;
    while (*p && o + 1 < n) {
        const char *scheme = strstr(p, "://");
        if (scheme == NULL) {
            while (*p && o + 1 < n)
                out[o++] = *p++;
            break;
        }
        const char *auth = scheme + 3;
        while (p < auth && o + 1 < n)
            out[o++] = *p++;
        size_t alen = strcspn(auth, "/?# \t\"',");
        const char *at = NULL;
        for (const char *q = auth; q < auth + alen; q++)
            if (*q == '@')
                at = q;
        if (at == NULL)
            continue;
        const char *colon = memchr(auth, ':', (size_t)(at - auth));
        /* user:password@ keeps the user. A lone user name is a token in a
         * NATS URL (nats://token@host), and goes; elsewhere it stays. */
        int nats = (scheme - in >= 4 && strncmp(scheme - 4, "nats", 4) == 0) ||
                   (scheme - in >= 3 && strncmp(scheme - 3, "tls", 3) == 0);
        if (colon == NULL && !nats)
            continue;
        const char *keep_end = colon ? colon + 1 : auth;
        while (p < keep_end && o + 1 < n)
            out[o++] = *p++;
        for (const char *m = "***"; *m && o + 1 < n; m++)
            out[o++] = *m;
        p = at;
    }
    out[o] = '\0';
}

void ob_cli_hide_secrets(int argc, char **argv) {
    for (int a = 1; a < argc; a++) {
        const char *names[] = {"--db-password", "--db", "--nats"};
        for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
            size_t n = strlen(names[k]);
            char *val = NULL;
            if (strcmp(argv[a], names[k]) == 0 && a + 1 < argc)
                val = argv[a + 1];
            else if (strncmp(argv[a], names[k], n) == 0 && argv[a][n] == '=')
                val = argv[a] + n + 1;
            if (val == NULL)
                continue;
            if (k == 0)
                memset(val, '*', strlen(val));
            else
                outbox_url_mask(val);
            break;
        }
    }
}
