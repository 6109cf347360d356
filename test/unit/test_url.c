/* SPDX-License-Identifier: Apache-2.0 */
/* Database and NATS URL parsing, and redaction for logs. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "outbox/common.h"
#include "url.h"

static void db_url_full(void) {
    ob_db_url u;
    char err[256];
    CHECK_EQ(ob_db_url_parse("mysql://app:p%40ss@db.example:3307/shop", &u, err, sizeof(err)), 0);
    CHECK_STR(u.user, "app");
    CHECK_STR(u.password, "p@ss");
    CHECK_STR(u.host, "db.example");
    CHECK_EQ(u.port, 3307);
    CHECK_STR(u.database, "shop");
    CHECK(u.socket == NULL);
    ob_db_url_free(&u);
}

static void db_url_defaults_and_variants(void) {
    ob_db_url u;
    char err[256];
    CHECK_EQ(ob_db_url_parse("mariadb://root@localhost/app", &u, err, sizeof(err)), 0);
    CHECK_EQ(u.port, 3306);
    CHECK(u.password == NULL);
    ob_db_url_free(&u);
    CHECK_EQ(
        ob_db_url_parse("mysql://u:p@[::1]:3310/d?socket=/run/my%20sock", &u, err, sizeof(err)), 0);
    CHECK_STR(u.host, "::1");
    CHECK_EQ(u.port, 3310);
    CHECK_STR(u.socket, "/run/my sock");
    ob_db_url_free(&u);
    CHECK_EQ(ob_db_url_parse("mysql://u:a:b@h/d", &u, err, sizeof(err)), 0);
    CHECK_STR(u.password, "a:b");
    ob_db_url_free(&u);
}

static void db_url_errors_say_what_is_wrong(void) {
    ob_db_url u;
    char err[256];
    CHECK_EQ(ob_db_url_parse("postgres://u@h/d", &u, err, sizeof(err)), -1);
    CHECK_CONTAINS(err, "mysql://");
    CHECK_EQ(ob_db_url_parse("mysql://u@h:99999/d", &u, err, sizeof(err)), -1);
    CHECK_CONTAINS(err, "port");
    CHECK_EQ(ob_db_url_parse("mysql://u@h:12ab/d", &u, err, sizeof(err)), -1);
    CHECK_CONTAINS(err, "port");
    CHECK_EQ(ob_db_url_parse("mysql://u@h:3306", &u, err, sizeof(err)), -1);
    CHECK_CONTAINS(err, "database");
    CHECK_EQ(ob_db_url_parse("mysql://u@/d", &u, err, sizeof(err)), -1);
    CHECK_CONTAINS(err, "host");
    CHECK_EQ(ob_db_url_parse("mysql://u@h/d?ssl=1", &u, err, sizeof(err)), -1);
    CHECK_CONTAINS(err, "unknown parameter");
    CHECK_EQ(ob_db_url_parse("mysql://u:%zz@h/d", &u, err, sizeof(err)), -1);
    CHECK_CONTAINS(err, "percent");
    CHECK_EQ(ob_db_url_parse("", &u, err, sizeof(err)), -1);
    CHECK_EQ(ob_db_url_parse(NULL, &u, err, sizeof(err)), -1);
}

static void db_url_several_hosts(void) {
    ob_db_url u;
    char err[256];
    CHECK_EQ(ob_db_url_parse("mysql://app:s,e@cr@et@10.0.0.1:3307,db2,[::1]:3309/shop", &u, err,
                             sizeof(err)),
             0);
    CHECK_STR(u.password, "s,e@cr@et");
    CHECK_EQ(u.n_nodes, 3);
    CHECK_STR(u.nodes[0].host, "10.0.0.1");
    CHECK_EQ(u.nodes[0].port, 3307);
    CHECK_STR(u.nodes[1].host, "db2");
    CHECK_EQ(u.nodes[1].port, 3306);
    CHECK_STR(u.nodes[2].host, "::1");
    CHECK_EQ(u.nodes[2].port, 3309);
    CHECK_STR(u.host, "10.0.0.1"); /* the first node, for single-server users */
    CHECK_EQ(u.port, 3307);
    CHECK_STR(u.database, "shop");
    ob_db_url_free(&u);
    CHECK_EQ(ob_db_url_parse("mysql://u@h/d", &u, err, sizeof(err)), 0);
    CHECK_EQ(u.n_nodes, 1);
    ob_db_url_free(&u);
    /* Errors name the host's place in the list, never its text. */
    CHECK_EQ(ob_db_url_parse("mysql://u:pw@h1,,h3/d", &u, err, sizeof(err)), -1);
    CHECK_CONTAINS(err, "host 2 of the list is empty");
    CHECK_EQ(ob_db_url_parse("mysql://u:pw@h1,/d", &u, err, sizeof(err)), -1);
    CHECK_CONTAINS(err, "host 2 of the list is empty");
    CHECK_EQ(ob_db_url_parse("mysql://u:pw@h1,h2:0/d", &u, err, sizeof(err)), -1);
    CHECK_CONTAINS(err, "host 2 of the list: the port");
    CHECK_EQ(ob_db_url_parse("mysql://u:pw@h1,h2/d?socket=/s", &u, err, sizeof(err)), -1);
    CHECK_CONTAINS(err, "socket");
    CHECK_EQ(ob_db_url_parse("mysql://u@1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17/d", &u, err,
                             sizeof(err)),
             -1);
    CHECK_CONTAINS(err, "more than 16 hosts");
    static const char *bad[] = {
        "mysql://admin:Sup3rSe@h1,,h2/d",        "mysql://admin:Sup3rSe@h1,h2:x/d",
        "mysql://admin:Sup3rSe@h1,[h2/d",        "mysql://admin:Sup3rSe,h2/d",
        "mysql://admin:Sup3rSe@h1,h2?socket=/s",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        CHECK_EQ(ob_db_url_parse(bad[i], &u, err, sizeof(err)), -1);
        if (strstr(err, "Sup3r") != NULL || strstr(err, "admin") != NULL)
            CHECK_FAIL_("message for '%s' quotes the credentials: %s", bad[i], err);
    }
    char *r = ob_url_redact("mysql://app:Sup3rSe@h1:1,h2:2/d");
    CHECK_STR(r, "mysql://app:***@h1:1,h2:2/d");
    free(r);
}

static void nats_urls(void) {
    ob_nats_url n;
    char err[256];
    CHECK_EQ(ob_nats_url_parse("nats://127.0.0.1:4333", &n, err, sizeof(err)), 0);
    CHECK_EQ(n.n, 1);
    CHECK_STR(n.srv[0].host, "127.0.0.1");
    CHECK_EQ(n.srv[0].port, 4333);
    char *s = ob_nats_server_url(&n.srv[0], "10.0.0.1");
    CHECK_STR(s, "nats://10.0.0.1:4333");
    free(s);
    ob_nats_url_free(&n);
    CHECK_EQ(ob_nats_url_parse("nats://u:p@a,nats://b:5000", &n, err, sizeof(err)), 0);
    CHECK_EQ(n.n, 2);
    CHECK_STR(n.srv[0].user, "u");
    CHECK_STR(n.srv[0].password, "p");
    CHECK_EQ(n.srv[0].port, 4222);
    CHECK_STR(n.srv[1].host, "b");
    s = ob_nats_server_url(&n.srv[0], "::1");
    CHECK_STR(s, "nats://u:p@[::1]:4222");
    free(s);
    ob_nats_url_free(&n);
    CHECK_EQ(ob_nats_url_parse("tls://h:4443,nats://g", &n, err, sizeof(err)), 0);
    CHECK_EQ(n.srv[0].tls, 1);
    CHECK_EQ(n.srv[1].tls, 0);
    CHECK_EQ(ob_nats_url_tls(&n), 1);
    s = ob_nats_server_url(&n.srv[0], "10.0.0.2");
    CHECK_STR(s, "tls://10.0.0.2:4443");
    free(s);
    ob_nats_url_free(&n);
    CHECK_EQ(ob_nats_url_parse("http://h:4222", &n, err, sizeof(err)), -1);
    CHECK_CONTAINS(err, "nats://");
    CHECK_CONTAINS(err, "tls://");
    CHECK_EQ(ob_nats_url_parse("nats://h:0", &n, err, sizeof(err)), -1);
    CHECK_CONTAINS(err, "port");
    CHECK_EQ(ob_nats_url_parse("nats://h/x", &n, err, sizeof(err)), -1);
}

static void redaction_hides_passwords(void) {
    char *r = ob_url_redact("mysql://app:secret@h:1/d");
    CHECK_STR(r, "mysql://app:***@h:1/d");
    free(r);
    r = ob_url_redact("nats://a:b@h1:1,nats://h2:2,nats://c:d@h3");
    CHECK_STR(r, "nats://a:***@h1:1,nats://h2:2,nats://c:***@h3");
    free(r);
    r = ob_url_redact("mysql://app@h/d");
    CHECK_STR(r, "mysql://app@h/d");
    free(r);
    /* The public API the binary uses: the same rules, a caller's buffer. */
    char out[64], small[12];
    CHECK_EQ(outbox_url_redact("mysql://admin:12/3@4@h/d", out, sizeof(out)), 21);
    CHECK_STR(out, "mysql://admin:***@h/d");
    CHECK_EQ(outbox_url_redact("nats://T0k3n@h:4222", small, sizeof(small)), 17);
    CHECK_STR(small, "nats://***@");
    char argv_copy[] = "nats://u:pw@h:1";
    outbox_url_mask(argv_copy);
    CHECK_STR(argv_copy, "nats://u:**@h:1");
}

/* Every error message for URLs holding a secret: none may quote any part of
 * the secret, and passwords with '/', '@', ':', '?' or ',' parse. */
static void no_message_quotes_a_secret(void) {
    static const char *db_bad[] = {
        "mysq://admin:Sup3rSe@h/d",     "mysql://admin:Sup3rSe",
        "mysql://admin:Sup3rSe/d",      "mysql://admin:Sup3rSe@h:Sup3rSe/d",
        "mysql://admin:Sup3rSe%zz@h/d", "mysql://admin:Sup3rSe@h",
        "mysql://admin:Sup3rSe@/d",     "Sup3rSe",
        "mysql://admin:Sup3rSe@[h/d",
    };
    char err[256];
    for (size_t i = 0; i < sizeof(db_bad) / sizeof(db_bad[0]); i++) {
        ob_db_url u;
        CHECK_EQ(ob_db_url_parse(db_bad[i], &u, err, sizeof(err)), -1);
        if (strstr(err, "Sup3r") != NULL || strstr(err, "admin") != NULL)
            CHECK_FAIL_("message for '%s' quotes the credentials: %s", db_bad[i], err);
    }
    static const char *nats_bad[] = {
        "nats://T0kenS3cret@h:Sup3rSe", "nats://user:Sup3rSe/Word@127.0.0.1:4222/x",
        "nats://user:Sup3rSe",          "nats://user:Sup3rSe@",
        "nat://user:Sup3rSe@h",         "nats://h,nat://user:Sup3rSe@h",
        "nats://user:Sup3r%zz@h",       "nats://:Sup3rSe@h",
    };
    for (size_t i = 0; i < sizeof(nats_bad) / sizeof(nats_bad[0]); i++) {
        ob_nats_url n;
        CHECK_EQ(ob_nats_url_parse(nats_bad[i], &n, err, sizeof(err)), -1);
        if (strstr(err, "Sup3r") != NULL || strstr(err, "T0ken") != NULL)
            CHECK_FAIL_("message for '%s' quotes the credentials: %s", nats_bad[i], err);
    }
}

static void passwords_with_url_characters(void) {
    ob_db_url u;
    char err[256];
    CHECK_EQ(
        ob_db_url_parse("mysql://admin:12345/Secret@127.0.0.1:3306/shop", &u, err, sizeof(err)), 0);
    CHECK_STR(u.user, "admin");
    CHECK_STR(u.password, "12345/Secret");
    CHECK_STR(u.host, "127.0.0.1");
    CHECK_EQ(u.port, 3306);
    CHECK_STR(u.database, "shop");
    ob_db_url_free(&u);
    CHECK_EQ(ob_db_url_parse("mysql://a:p@s:s/w?x@h/d?socket=/s", &u, err, sizeof(err)), 0);
    CHECK_STR(u.password, "p@s:s/w?x");
    CHECK_STR(u.host, "h");
    CHECK_STR(u.socket, "/s");
    ob_db_url_free(&u);
    CHECK_EQ(ob_db_settings("mysql://a:old@h/d", "n/e@w", &u, err, sizeof(err)), 0);
    CHECK_STR(u.password, "n/e@w");
    ob_db_url_free(&u);

    ob_nats_url n;
    CHECK_EQ(
        ob_nats_url_parse("nats://u:Pa/ss@w,rd:x@h:4223,nats://T%40k@h2", &n, err, sizeof(err)), 0);
    CHECK_EQ(n.n, 2);
    CHECK_STR(n.srv[0].user, "u");
    CHECK_STR(n.srv[0].password, "Pa/ss@w,rd:x");
    CHECK_EQ(n.srv[0].port, 4223);
    CHECK_STR(n.srv[1].user, "T@k");
    CHECK(n.srv[1].password == NULL);
    char *s = ob_nats_server_url(&n.srv[1], "127.0.0.1");
    CHECK_STR(s, "nats://T@k@127.0.0.1:4222");
    free(s);
    ob_nats_url_free(&n);

    CHECK_EQ(ob_nats_url_parse("tls://u:p@h:1,nats://h2", &n, err, sizeof(err)), 0);
    CHECK_EQ(ob_nats_url_tls(&n), 1);
    s = ob_nats_server_url(&n.srv[0], "127.0.0.1");
    CHECK_STR(s, "tls://u:p@127.0.0.1:1");
    free(s);
    ob_nats_url_free(&n);
}

static void redaction_hides_tokens(void) {
    char *r = ob_url_redact("nats://T0kenS3cret@h:4222,nats://u:p,w@h2");
    CHECK_STR(r, "nats://***@h:4222,nats://u:***@h2");
    free(r);
    r = ob_url_redact("mysql://admin:12345/Secret@h/d");
    CHECK_STR(r, "mysql://admin:***@h/d");
    free(r);
}

int main(void) {
    db_url_full();
    db_url_defaults_and_variants();
    db_url_errors_say_what_is_wrong();
    db_url_several_hosts();
    nats_urls();
    redaction_hides_passwords();
    no_message_quotes_a_secret();
    passwords_with_url_characters();
    redaction_hides_tokens();
    puts("test_url: ok");
    return 0;
}
