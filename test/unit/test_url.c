/* Database and NATS URL parsing, and redaction for logs. */
#include <stdlib.h>

#include "check.h"
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
    CHECK_STR(n.srv[0].userinfo, "u:p");
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
}

int main(void) {
    db_url_full();
    db_url_defaults_and_variants();
    db_url_errors_say_what_is_wrong();
    nats_urls();
    redaction_hides_passwords();
    puts("test_url: ok");
    return 0;
}
