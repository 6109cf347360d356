/* SPDX-License-Identifier: Apache-2.0 */
/*
 * outbox_nats_check: one blocking connection to NATS with the relay's URL,
 * TLS and credentials, made before a loop runs, to tell a refusal that
 * retrying cannot cure from a server that is only down. The same connect
 * serves the one-shot commands that publish (nats_check.h).
 */
#include "nats_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "nats_security.h"
#include "outbox/relay.h"
#include "tls_options.h"
#include "url.h"

static int refused(natsStatus s) {
    return s == NATS_SSL_ERROR || s == NATS_CONNECTION_AUTH_FAILED || s == NATS_NOT_PERMITTED ||
           s == NATS_SECURE_CONNECTION_REQUIRED || s == NATS_SECURE_CONNECTION_WANTED;
}

static const char *hint(natsStatus s) {
    switch (s) {
    case NATS_SSL_ERROR:
        return "TLS: the NATS server's certificate check or handshake failed (trust its CA "
               "with --nats-tls-ca; its certificate must name the host)";
    case NATS_SECURE_CONNECTION_REQUIRED:
        return "the NATS server requires TLS: use tls:// URLs or --nats-tls-ca";
    case NATS_SECURE_CONNECTION_WANTED:
        return "TLS is configured but the NATS server does not offer it";
    default:
        return "the NATS server refused the credentials";
    }
}

int ob_nats_connect_blocking(const outbox_relay_options *o, uint32_t timeout_ms, int send_asap,
                             natsConnection **out, char *errbuf, size_t errlen) {
    *out = NULL;
    char err[512];
    ob_nats_url url;
    ob_nats_security sec;
    if (o == NULL || ob_nats_url_parse(o->nats_url, &url, err, sizeof(err)) != 0)
        return ob_errf(errbuf, errlen, OUTBOX_EINVAL, "%s", o ? err : "options are required");
    if (ob_nats_security_from_options(&sec, o, &url, err, sizeof(err)) != 0) {
        ob_nats_url_free(&url);
        return ob_errf(errbuf, errlen, OUTBOX_EINVAL, "%s", err);
    }
    char *servers[OB_NATS_MAX_SERVERS] = {0};
    natsOptions *no = NULL;
    natsConnection *nc = NULL;
    natsStatus s = natsOptions_Create(&no);
    for (int i = 0; s == NATS_OK && i < url.n; i++)
        if ((servers[i] = ob_nats_server_url(&url.srv[i], url.srv[i].host)) == NULL)
            s = NATS_NO_MEMORY;
    if (s == NATS_OK)
        s = natsOptions_SetServers(no, (const char **)servers, url.n);
    if (s == NATS_OK)
        s = natsOptions_SetNoRandomize(no, true);
    if (s == NATS_OK)
        s = natsOptions_SetTimeout(no, timeout_ms ? (int64_t)timeout_ms : 5000);
    if (s == NATS_OK)
        s = natsOptions_SetAllowReconnect(no, false);
    if (s == NATS_OK && send_asap)
        s = natsOptions_SetSendAsap(no, true); /* no flusher thread for a connection this brief */
    int rc = OUTBOX_OK;
    if (s == NATS_OK && ob_nats_security_apply(no, &sec, err, sizeof(err)) != 0)
        rc = ob_errf(errbuf, errlen, OUTBOX_EINVAL, "%s", err);
    if (rc == OUTBOX_OK && s == NATS_OK)
        s = natsConnection_Connect(&nc, no);
    if (rc == OUTBOX_OK && s != NATS_OK) {
        /* nats.c's own text says which check failed ("certificate verify
         * failed", "Authorization Violation"); it never holds a secret. */
        const char *detail = nats_GetLastError(NULL);
        const char *at = detail && *detail == '(' ? strstr(detail, "): ") : NULL;
        if (at)
            detail = at + 3; /* drop nats.c's "(file.c:line): " */
        if (refused(s))
            rc = ob_errf(errbuf, errlen, OUTBOX_EREFUSED, "%s (%s)", hint(s),
                         detail && *detail ? detail : natsStatus_GetText(s));
        else
            rc = ob_errf(errbuf, errlen, OUTBOX_ENATS, "cannot connect to NATS: %s",
                         natsStatus_GetText(s));
    }
    if (rc == OUTBOX_OK)
        *out = nc;
    else
        natsConnection_Destroy(nc);
    natsOptions_Destroy(no);
    for (int i = 0; i < url.n; i++)
        free(servers[i]);
    ob_nats_url_free(&url);
    return rc;
}

int outbox_nats_check(const outbox_relay_options *o, uint32_t timeout_ms, char *errbuf,
                      size_t errlen) {
    natsConnection *nc = NULL;
    int rc = ob_nats_connect_blocking(o, timeout_ms, 1, &nc, errbuf, errlen);
    natsConnection_Destroy(nc);
    return rc;
}
