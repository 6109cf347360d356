/* SPDX-License-Identifier: Apache-2.0 */
/* NKey encoding, and how the relay's options become NATS security settings. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "nats_security.h"
#include "tls_options.h"

/* The seed of nats.c's own tests. Its public key below was checked against
 * nats-server 2.9.10: a server whose authorization block names that key
 * admits a client signing with this seed. */
static const char seed[] = "SUAMK2FG4MI6UE3ACF3FK3OIQBCEIEZV7NSWFFEW63UXMRLFM2XLAXK4GY";

static void nkey_public_key_from_seed(void) {
    char pub[64];
    CHECK_EQ(ob_nkey_public_from_seed(seed, strlen(seed), pub, sizeof(pub)), 0);
    CHECK_STR(pub, "UAT6BWCSCWLUKJT6K6MBJJOEOTXZ5AJDOYKNEVRFC7VNO6OA43N4TRNO");
}

static void nkey_bad_seeds_are_refused(void) {
    char pub[64], bad[sizeof(seed)];
    memcpy(bad, seed, sizeof(seed));
    bad[10] = bad[10] == 'A' ? 'B' : 'A'; /* the checksum no longer matches */
    CHECK_EQ(ob_nkey_public_from_seed(bad, strlen(bad), pub, sizeof(pub)), -1);
    CHECK_EQ(ob_nkey_public_from_seed(seed, strlen(seed) - 1, pub, sizeof(pub)), -1);
    CHECK_EQ(ob_nkey_public_from_seed("UDXU4RCSJNZOIQHZNWXHXORDPRTGNJAHAHFRGZNEEJCPQTT2M7NLCNF4",
                                      56, pub, sizeof(pub)),
             -1);
}

static void nkey_generated_seeds_round_trip(void) {
    char s[64], pub[64], again[64];
    CHECK_EQ(ob_nkey_generate(s, sizeof(s), pub, sizeof(pub)), 0);
    CHECK_EQ(strlen(s), 58);
    CHECK(strncmp(s, "SU", 2) == 0);
    CHECK_EQ(strlen(pub), 56);
    CHECK(pub[0] == 'U');
    CHECK_EQ(ob_nkey_public_from_seed(s, strlen(s), again, sizeof(again)), 0);
    CHECK_STR(again, pub);
}

static void options_turn_tls_on_and_pick_the_host(void) {
    outbox_relay_options o;
    outbox_relay_options_init(&o);
    ob_nats_url u;
    ob_nats_security sec;
    char err[256];
    CHECK_EQ(
        ob_nats_url_parse("tls://n1.example:4222,nats://n1.example:4223", &u, err, sizeof(err)), 0);
    CHECK_EQ(ob_nats_security_from_options(&sec, &o, &u, err, sizeof(err)), 0);
    CHECK_EQ(sec.tls, 1);
    CHECK_STR(sec.expected_host, "n1.example");
    CHECK_EQ(u.srv[1].tls, 1); /* one setting for the whole list */
    ob_nats_url_free(&u);

    CHECK_EQ(ob_nats_url_parse("tls://a:1,tls://b:1", &u, err, sizeof(err)), 0);
    CHECK_EQ(ob_nats_security_from_options(&sec, &o, &u, err, sizeof(err)), 0);
    CHECK(sec.expected_host == NULL); /* different names: the chain only */
    ob_nats_url_free(&u);

    CHECK_EQ(ob_nats_url_parse("nats://a:1", &u, err, sizeof(err)), 0);
    CHECK_EQ(ob_nats_security_from_options(&sec, &o, &u, err, sizeof(err)), 0);
    CHECK_EQ(sec.tls, 0);
    ob_nats_url_free(&u);
}

static void credential_conflicts_are_refused(void) {
    outbox_relay_options o;
    outbox_relay_options_init(&o);
    ob_nats_url u;
    ob_nats_security sec;
    char err[256];
    o.nats_token_file = "/dev/null";
    o.nats_nkey_file = "/dev/null";
    CHECK_EQ(ob_nats_url_parse("nats://a:1", &u, err, sizeof(err)), 0);
    CHECK_EQ(ob_nats_security_from_options(&sec, &o, &u, err, sizeof(err)), -1);
    CHECK_CONTAINS(err, "give one NATS credential");
    ob_nats_url_free(&u);

    o.nats_nkey_file = NULL;
    CHECK_EQ(ob_nats_url_parse("nats://secret-token@a:1", &u, err, sizeof(err)), 0);
    CHECK_EQ(ob_nats_security_from_options(&sec, &o, &u, err, sizeof(err)), -1);
    CHECK(strstr(err, "secret-token") == NULL);
    ob_nats_url_free(&u);

    o.nats_token_file = "/nonexistent/token";
    CHECK_EQ(ob_nats_url_parse("nats://a:1", &u, err, sizeof(err)), 0);
    CHECK_EQ(ob_nats_security_from_options(&sec, &o, &u, err, sizeof(err)), -1);
    CHECK_CONTAINS(err, "/nonexistent/token");
    ob_nats_url_free(&u);
}

static void password_file_takes_the_user_from_the_url(void) {
    outbox_relay_options o;
    outbox_relay_options_init(&o);
    ob_nats_url u;
    ob_nats_security sec;
    char err[256];
    o.nats_password_file = "/dev/null";
    CHECK_EQ(ob_nats_url_parse("nats://relay@a:1,nats://b:2", &u, err, sizeof(err)), 0);
    CHECK_EQ(ob_nats_security_from_options(&sec, &o, &u, err, sizeof(err)), 0);
    CHECK_STR(sec.user, "relay");
    CHECK(u.srv[0].user == NULL); /* nats.c would prefer the URL's empty password */
    ob_nats_url_free(&u);
    CHECK_EQ(ob_nats_url_parse("nats://relay:pw@a:1", &u, err, sizeof(err)), 0);
    CHECK_EQ(ob_nats_security_from_options(&sec, &o, &u, err, sizeof(err)), -1);
    ob_nats_url_free(&u);
}

static void db_config_follows_the_options(void) {
    outbox_relay_options o;
    outbox_relay_options_init(&o);
    ob_db_config c;
    memset(&c, 0, sizeof(c));
    ob_db_config_tls_from_options(&c, &o);
    CHECK_EQ(c.tls, 0);
    o.db_tls_ca = "/etc/ca.pem";
    ob_db_config_tls_from_options(&c, &o);
    CHECK_EQ(c.tls, 1); /* a CA implies TLS */
    CHECK_STR(c.tls_ca, "/etc/ca.pem");
    CHECK_EQ(ob_tls_options_dup(&o), 0);
    CHECK(strcmp(o.db_tls_ca, "/etc/ca.pem") == 0);
    ob_tls_options_free(&o);
    CHECK(o.db_tls_ca == NULL);
}

int main(void) {
    nkey_public_key_from_seed();
    nkey_bad_seeds_are_refused();
    nkey_generated_seeds_round_trip();
    options_turn_tls_on_and_pick_the_host();
    credential_conflicts_are_refused();
    password_file_takes_the_user_from_the_url();
    db_config_follows_the_options();
    puts("test_nats_security: ok");
    return 0;
}
