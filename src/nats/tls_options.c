/* SPDX-License-Identifier: Apache-2.0 */
#include "tls_options.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

/* The string options this file owns in the relay's copy. */
static const size_t tls_strings[] = {
    offsetof(outbox_relay_options, db_tls_ca),
    offsetof(outbox_relay_options, db_tls_cert),
    offsetof(outbox_relay_options, db_tls_key),
    offsetof(outbox_relay_options, nats_tls_ca),
    offsetof(outbox_relay_options, nats_tls_cert),
    offsetof(outbox_relay_options, nats_tls_key),
    offsetof(outbox_relay_options, nats_creds_file),
    offsetof(outbox_relay_options, nats_nkey_file),
    offsetof(outbox_relay_options, nats_token_file),
    offsetof(outbox_relay_options, nats_password_file),
};

#define NSTRINGS (sizeof(tls_strings) / sizeof(tls_strings[0]))

static char **field(outbox_relay_options *o, size_t i) {
    return (char **)((char *)o + tls_strings[i]);
}

int ob_tls_options_dup(outbox_relay_options *o) {
    int rc = 0;
    for (size_t i = 0; i < NSTRINGS; i++) {
        char **f = field(o, i);
        if (*f && (*f = strdup(*f)) == NULL)
            rc = -1;
    }
    return rc;
}

void ob_tls_options_free(outbox_relay_options *o) {
    for (size_t i = 0; i < NSTRINGS; i++) {
        char **f = field(o, i);
        free(*f);
        *f = NULL;
    }
}

void ob_db_config_tls_from_options(ob_db_config *cfg, const outbox_relay_options *o) {
    cfg->tls = o->db_tls || o->db_tls_ca || o->db_tls_cert;
    cfg->tls_ca = o->db_tls_ca;
    cfg->tls_cert = o->db_tls_cert;
    cfg->tls_key = o->db_tls_key;
    cfg->tls_no_verify_host = o->db_tls_no_verify_host;
}

int ob_nats_security_from_options(ob_nats_security *sec, const outbox_relay_options *o,
                                  ob_nats_url *url, char *err, size_t errlen) {
    memset(sec, 0, sizeof(*sec));
    sec->tls_ca = o->nats_tls_ca;
    sec->tls_cert = o->nats_tls_cert;
    sec->tls_key = o->nats_tls_key;
    sec->creds_file = o->nats_creds_file;
    sec->nkey_file = o->nats_nkey_file;
    sec->token_file = o->nats_token_file;
    sec->password_file = o->nats_password_file;
    sec->tls = ob_nats_url_tls(url) || o->nats_tls_ca || o->nats_tls_cert;
    if (sec->tls && url->n > 0) {
        sec->expected_host = url->srv[0].host;
        for (int i = 1; i < url->n; i++)
            if (strcmp(url->srv[i].host, url->srv[0].host) != 0)
                sec->expected_host = NULL;
        for (int i = 0; i < url->n; i++)
            url->srv[i].tls = 1; /* one setting for the whole list */
    }
    if (sec->password_file) {
        for (int i = 0; i < url->n; i++) {
            const char *ui = url->srv[i].user;
            if (url->srv[i].password)
                return ob_errf(err, errlen, -1,
                               "the NATS URL has a password and --nats-password-file gives "
                               "another: give one");
            if (ui && sec->user[0] == '\0' && strlen(ui) < sizeof(sec->user))
                memcpy(sec->user, ui, strlen(ui) + 1);
            free(url->srv[i].user);
            url->srv[i].user = NULL;
        }
    }
    if ((sec->creds_file || sec->nkey_file || sec->token_file)) {
        for (int i = 0; i < url->n; i++)
            if (url->srv[i].user)
                return ob_errf(err, errlen, -1,
                               "the NATS URL carries credentials and a credentials file is given "
                               "too: give one");
    }
    return ob_nats_security_check(sec, err, errlen);
}
