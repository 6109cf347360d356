/* SPDX-License-Identifier: Apache-2.0 */
/*
 * TLS and credentials for a NATS connection: everything that turns the
 * relay's settings into natsOptions calls, in one place, so that the link
 * and the test tools configure a connection the same way.
 *
 * Secrets (token, password, seeds) are read from files and handed to nats.c;
 * they are never copied into an error message or a log line. nats.c reads a
 * credentials file again at every connect and reconnect, and an NKey seed
 * file at every signature; the seed's public key, a token and a password are
 * read when the options are built.
 */
#ifndef OB_NATS_SECURITY_H
#define OB_NATS_SECURITY_H

#include <nats/nats.h>
#include <stddef.h>

typedef struct ob_nats_security {
    int tls;                   /* use TLS (a tls:// URL, or any TLS file, turns it on) */
    const char *tls_ca;        /* CAs to trust (PEM file); NULL: the system store */
    const char *tls_cert;      /* client certificate (PEM), with tls_key */
    const char *tls_key;       /* its private key */
    const char *expected_host; /* host name the server certificate must name; NULL: chain only */
    const char *creds_file;    /* JWT + NKey seed (.creds) */
    const char *nkey_file;     /* an NKey user seed */
    const char *token_file;    /* a token, first line */
    const char *password_file; /* a password for `user`, first line */
    char user[128];            /* with password_file */
} ob_nats_security;

/* Applies `sec` to `o`. Returns 0, or -1 with a message in err that names the
 * file and the problem but never a secret. Call it from the thread that
 * builds the options; it reads the files named in `sec` and may block on
 * them (local files only). */
int ob_nats_security_apply(natsOptions *o, const ob_nats_security *sec, char *err, size_t errlen);

/* Checks what can be checked without a server: the files exist and are
 * readable, a seed file holds a user seed, cert and key come together.
 * Returns 0, or -1 with a message in err. */
int ob_nats_security_check(const ob_nats_security *sec, char *err, size_t errlen);

/* Derives the public key ("U...") of an NKey user seed ("SU..."). out needs
 * 57 bytes. Returns 0, or -1 when the seed is not a valid user seed. */
int ob_nkey_public_from_seed(const char *seed, size_t seed_len, char *out, size_t outlen);

/* Makes a new random user seed and its public key (for tests). seed needs 59
 * bytes, pub 57. Returns 0 or -1. */
int ob_nkey_generate(char *seed, size_t seedlen, char *pub, size_t publen);

#endif
