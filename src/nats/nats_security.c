/* SPDX-License-Identifier: Apache-2.0 */
#include "nats_security.h"

#include <errno.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"

/* --- NKeys: base32 text of [prefix][32 bytes][crc16 little-endian] -------- */

#define NKEY_PREFIX_SEED (18 << 3) /* 'S' */
#define NKEY_PREFIX_USER (20 << 3) /* 'U' */

static const char b32[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

/* CRC-16/XMODEM, as the NKeys encoding uses. */
static uint16_t crc16(const unsigned char *p, size_t n) {
    uint16_t crc = 0;
    for (size_t i = 0; i < n; i++) {
        crc ^= (uint16_t)(p[i] << 8);
        for (int b = 0; b < 8; b++)
            crc = (uint16_t)(crc & 0x8000 ? (crc << 1) ^ 0x1021 : crc << 1);
    }
    return crc;
}

static size_t b32_encode(const unsigned char *in, size_t n, char *out) {
    size_t o = 0;
    unsigned buf = 0;
    int bits = 0;
    for (size_t i = 0; i < n; i++) {
        buf = (buf << 8) | in[i];
        bits += 8;
        while (bits >= 5) {
            out[o++] = b32[(buf >> (bits - 5)) & 31];
            bits -= 5;
        }
    }
    if (bits > 0)
        out[o++] = b32[(buf << (5 - bits)) & 31];
    out[o] = '\0';
    return o;
}

/* Returns the number of bytes decoded, or -1 on a character outside the
 * alphabet or too much input. */
static int b32_decode(const char *in, size_t n, unsigned char *out, size_t cap) {
    size_t o = 0;
    unsigned buf = 0;
    int bits = 0;
    for (size_t i = 0; i < n; i++) {
        const char *c = memchr(b32, in[i], 32);
        if (c == NULL || in[i] == '\0')
            return -1;
        buf = (buf << 5) | (unsigned)(c - b32);
        bits += 5;
        if (bits >= 8) {
            if (o == cap)
                return -1;
            out[o++] = (unsigned char)(buf >> (bits - 8));
            bits -= 8;
        }
    }
    return (int)o;
}

static int encode_key(unsigned char prefix, const unsigned char key[32], char *out, size_t outlen) {
    unsigned char raw[35];
    raw[0] = prefix;
    memcpy(raw + 1, key, 32);
    uint16_t crc = crc16(raw, 33);
    raw[33] = (unsigned char)(crc & 0xff);
    raw[34] = (unsigned char)(crc >> 8);
    if (outlen < 57)
        return -1;
    b32_encode(raw, sizeof(raw), out);
    return 0;
}

/* Decodes a user seed into its 32 private bytes. */
static int decode_user_seed(const char *seed, size_t n, unsigned char key[32]) {
    unsigned char raw[40];
    if (n != 58 || b32_decode(seed, n, raw, sizeof(raw)) != 36)
        return -1;
    uint16_t crc = (uint16_t)(raw[34] | raw[35] << 8);
    int prefix = raw[0] & 0xf8;
    int kind = ((raw[0] & 7) << 5) | ((raw[1] & 0xf8) >> 3);
    int ok = crc == crc16(raw, 34) && prefix == NKEY_PREFIX_SEED && kind == NKEY_PREFIX_USER;
    if (ok)
        memcpy(key, raw + 2, 32);
    memset(raw, 0, sizeof(raw));
    return ok ? 0 : -1;
}

static int ed25519_public(const unsigned char priv[32], unsigned char pub[32]) {
    EVP_PKEY *k = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, priv, 32);
    size_t len = 32;
    int rc = k && EVP_PKEY_get_raw_public_key(k, pub, &len) == 1 && len == 32 ? 0 : -1;
    EVP_PKEY_free(k);
    return rc;
}

int ob_nkey_public_from_seed(const char *seed, size_t seed_len, char *out, size_t outlen) {
    unsigned char priv[32], pub[32];
    int rc = decode_user_seed(seed, seed_len, priv);
    if (rc == 0)
        rc = ed25519_public(priv, pub);
    if (rc == 0)
        rc = encode_key(NKEY_PREFIX_USER, pub, out, outlen);
    memset(priv, 0, sizeof(priv));
    return rc;
}

int ob_nkey_generate(char *seed, size_t seedlen, char *pub, size_t publen) {
    unsigned char raw[36], priv[32];
    if (seedlen < 59 || RAND_bytes(priv, sizeof(priv)) != 1)
        return -1;
    raw[0] = NKEY_PREFIX_SEED | (NKEY_PREFIX_USER >> 5);
    raw[1] = (NKEY_PREFIX_USER & 31) << 3;
    memcpy(raw + 2, priv, 32);
    uint16_t crc = crc16(raw, 34);
    raw[34] = (unsigned char)(crc & 0xff);
    raw[35] = (unsigned char)(crc >> 8);
    b32_encode(raw, sizeof(raw), seed);
    memset(raw, 0, sizeof(raw));
    memset(priv, 0, sizeof(priv));
    return ob_nkey_public_from_seed(seed, strlen(seed), pub, publen);
}

/* --- files ---------------------------------------------------------------- */

/* Reads the first non-empty line of a small file, without its surrounding
 * white space, into out. The caller wipes out after use. */
static int read_secret_line(const char *what, const char *path, char *out, size_t outlen, char *err,
                            size_t errlen) {
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return ob_errf(err, errlen, -1, "%s file '%s': %s", what, path, strerror(errno));
    int found = 0;
    while (!found && fgets(out, (int)outlen, f)) {
        char *s = out;
        while (*s == ' ' || *s == '\t')
            s++;
        size_t n = strcspn(s, "\r\n");
        while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
            n--;
        if (n == 0 || *s == '#' || strncmp(s, "--", 2) == 0)
            continue;
        memmove(out, s, n);
        out[n] = '\0';
        found = 1;
    }
    fclose(f);
    if (!found) {
        out[0] = '\0';
        return ob_errf(err, errlen, -1, "%s file '%s' is empty", what, path);
    }
    return 0;
}

static int check_readable(const char *what, const char *path, char *err, size_t errlen) {
    if (path && access(path, R_OK) != 0)
        return ob_errf(err, errlen, -1, "%s file '%s': %s", what, path, strerror(errno));
    return 0;
}

int ob_nats_security_check(const ob_nats_security *sec, char *err, size_t errlen) {
    if (check_readable("NATS TLS CA", sec->tls_ca, err, errlen) ||
        check_readable("NATS TLS certificate", sec->tls_cert, err, errlen) ||
        check_readable("NATS TLS key", sec->tls_key, err, errlen) ||
        check_readable("NATS credentials", sec->creds_file, err, errlen) ||
        check_readable("NATS NKey seed", sec->nkey_file, err, errlen) ||
        check_readable("NATS token", sec->token_file, err, errlen) ||
        check_readable("NATS password", sec->password_file, err, errlen))
        return -1;
    if (!sec->tls_cert != !sec->tls_key)
        return ob_errf(err, errlen, -1,
                       "a NATS client certificate needs both --nats-tls-cert and --nats-tls-key");
    int auth = !!sec->creds_file + !!sec->nkey_file + !!sec->token_file + !!sec->password_file;
    if (auth > 1)
        return ob_errf(err, errlen, -1,
                       "give one NATS credential: --nats-creds, --nats-nkey, --nats-token-file or "
                       "--nats-password-file");
    if (sec->password_file && sec->user[0] == '\0')
        return ob_errf(err, errlen, -1,
                       "--nats-password-file needs a user in the NATS URL (nats://USER@host)");
    if (sec->nkey_file) {
        char seed[256], pub[64];
        if (read_secret_line("NATS NKey seed", sec->nkey_file, seed, sizeof(seed), err, errlen))
            return -1;
        int rc = ob_nkey_public_from_seed(seed, strlen(seed), pub, sizeof(pub));
        memset(seed, 0, sizeof(seed));
        if (rc != 0)
            return ob_errf(err, errlen, -1,
                           "NATS NKey seed file '%s' does not hold a user seed (SU...)",
                           sec->nkey_file);
    }
    return 0;
}

/* The system's CA file, for when no CA is named: nats.c's own context is
 * built without the default verify paths. */
static const char *system_ca_file(void) {
    const char *f = getenv(X509_get_default_cert_file_env());
    if (f == NULL || *f == '\0')
        f = X509_get_default_cert_file();
    return access(f, R_OK) == 0 ? f : NULL;
}

static int nats_fail(natsStatus s, const char *what, char *err, size_t errlen) {
    return ob_errf(err, errlen, -1, "%s: %s", what, natsStatus_GetText(s));
}

int ob_nats_security_apply(natsOptions *o, const ob_nats_security *sec, char *err, size_t errlen) {
    natsStatus s;
    if (ob_nats_security_check(sec, err, errlen) != 0)
        return -1;
    if (sec->tls || sec->tls_ca || sec->tls_cert) {
        if ((s = natsOptions_SetSecure(o, true)) != NATS_OK)
            return nats_fail(s, "NATS TLS", err, errlen);
        const char *ca = sec->tls_ca ? sec->tls_ca : system_ca_file();
        if (ca && (s = natsOptions_LoadCATrustedCertificates(o, ca)) != NATS_OK)
            return ob_errf(err, errlen, -1, "NATS TLS CA file '%s' cannot be loaded: %s", ca,
                           natsStatus_GetText(s));
        if (sec->tls_cert &&
            (s = natsOptions_LoadCertificatesChain(o, sec->tls_cert, sec->tls_key)) != NATS_OK)
            return ob_errf(err, errlen, -1,
                           "NATS TLS client certificate '%s' or key '%s' cannot be loaded: %s",
                           sec->tls_cert, sec->tls_key, natsStatus_GetText(s));
        if (sec->expected_host &&
            (s = natsOptions_SetExpectedHostname(o, sec->expected_host)) != NATS_OK)
            return nats_fail(s, "NATS TLS host name", err, errlen);
    }
    if (sec->creds_file &&
        (s = natsOptions_SetUserCredentialsFromFiles(o, sec->creds_file, NULL)) != NATS_OK)
        return ob_errf(err, errlen, -1, "NATS credentials file '%s': %s", sec->creds_file,
                       natsStatus_GetText(s));
    if (sec->nkey_file) {
        char seed[256], pub[64];
        int rc =
            read_secret_line("NATS NKey seed", sec->nkey_file, seed, sizeof(seed), err, errlen);
        if (rc == 0)
            rc = ob_nkey_public_from_seed(seed, strlen(seed), pub, sizeof(pub));
        memset(seed, 0, sizeof(seed));
        if (rc != 0)
            return ob_errf(err, errlen, -1, "NATS NKey seed file '%s' does not hold a user seed",
                           sec->nkey_file);
        if ((s = natsOptions_SetNKeyFromSeed(o, pub, sec->nkey_file)) != NATS_OK)
            return nats_fail(s, "NATS NKey", err, errlen);
    }
    if (sec->token_file || sec->password_file) {
        char secret[1024];
        const char *what = sec->token_file ? "NATS token" : "NATS password";
        const char *path = sec->token_file ? sec->token_file : sec->password_file;
        if (read_secret_line(what, path, secret, sizeof(secret), err, errlen) != 0)
            return -1;
        s = sec->token_file ? natsOptions_SetToken(o, secret)
                            : natsOptions_SetUserInfo(o, sec->user, secret);
        memset(secret, 0, sizeof(secret));
        if (s != NATS_OK)
            return nats_fail(s, what, err, errlen);
    }
    return 0;
}
