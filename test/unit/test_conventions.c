/* SPDX-License-Identifier: Apache-2.0 */
/* The conventions of NATS and MariaDB in the CLI's parser: what each fills,
 * in which order, and what it refuses (issue 35). The environment is a
 * table; HOME points into a folder of the test's own. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "args.h"
#include "check.h"

#define OB_TEST_ERRLEN 512
#include "cli_parse.h"

static char home[64], ctx[160], mycnf[128];

static void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    fputs(text, f);
    fclose(f);
}

/* An option file is read as MariaDB reads it: quotes, escapes, comments,
 * the last password of the groups the relay reads. */
static void option_file_values(void) {
    ob_cli c;
    char err[OB_TEST_ERRLEN];
    kv env[] = {{"HOME", home}, {NULL, NULL}};
    write_file(mycnf, "# a comment\n[mysqld]\npassword = server\n[client]\nuser = u\n"
                      "password = \"a#b\\\"c\\sd\"  # the rest is a comment\n"
                      "[client-mariadb]\nhost = elsewhere\n");
    CHECK_EQ(parse(&c, env, err, 4, "status", "--db", "mysql://u@h/d"), 0);
    CHECK_STR(c.relay.db_password, "a#b\"c d");
    ob_cli_free(&c);
    write_file(mycnf, "[client]\npassword=first\n[outbox-uvrelay]\nloose_password = own\n"
                      "[client]\npassword = 'last;one'\n");
    CHECK_EQ(parse(&c, env, err, 4, "status", "--db", "mysql://u@h/d"), 0);
    CHECK_STR(c.relay.db_password, "last;one");
    ob_cli_free(&c);
    /* A password anywhere of the relay's own: the file is not consulted. */
    CHECK_EQ(parse(&c, env, err, 4, "status", "--db", "mysql://u:url@h/d"), 0);
    CHECK(c.relay.db_password == NULL);
    ob_cli_free(&c);
    /* Refused rather than ignored. */
    write_file(mycnf, "[client]\nuser = u\npassword = p\n");
    CHECK_EQ(parse(&c, env, err, 4, "status", "--db", "mysql://h/d"), 2);
    CHECK_CONTAINS(err, "names none");
    ob_cli_free(&c);
    write_file(mycnf, "!includedir /etc/mysql/conf.d\n");
    CHECK_EQ(parse(&c, env, err, 4, "status", "--db", "mysql://u@h/d"), 2);
    CHECK_CONTAINS(err, "!include");
    ob_cli_free(&c);
    write_file(mycnf, "[outbox-uvrelay]\nhost = h2\n");
    CHECK_EQ(parse(&c, env, err, 4, "status", "--db", "mysql://u@h/d"), 2);
    CHECK_CONTAINS(err, ".my.cnf:2: host");
    ob_cli_free(&c);
    /* schema connects to nothing, and reads nothing. */
    CHECK_EQ(parse(&c, env, err, 2, "schema"), 0);
    ob_cli_free(&c);
    remove(mycnf);
}

/* flags > environment > files, the relay's own before the conventions. */
static void precedence(void) {
    ob_cli c;
    char err[OB_TEST_ERRLEN];
    write_file(mycnf, "[client]\npassword = file\n");
    kv env[] = {{"HOME", home}, {"MYSQL_PWD", "env"}, {NULL, NULL}};
    CHECK_EQ(parse(&c, env, err, 4, "status", "--db", "mysql://u@h/d"), 0);
    CHECK_STR(c.relay.db_password, "env");
    ob_cli_free(&c);
    CHECK_EQ(parse(&c, env, err, 6, "status", "--db", "mysql://u@h/d", "--db-password", "flag"), 0);
    CHECK_STR(c.relay.db_password, "flag");
    ob_cli_free(&c);
    kv own[] = {{"HOME", home}, {"MYSQL_PWD", "env"}, {"OUTBOX_DB_PASSWORD", "own"}, {NULL, NULL}};
    CHECK_EQ(parse(&c, own, err, 4, "status", "--db", "mysql://u@h/d"), 0);
    CHECK_STR(c.relay.db_password, "own");
    ob_cli_free(&c);
    remove(mycnf);

    write_file(ctx, "{\"url\": \"nats://ctx:4222\", \"nkey\": \"~/seed.nk\", \"ca\": "
                    "\"file:///ca.pem\", \"description\": \"d\", \"inbox_prefix\": \"\"}");
    kv nenv[] = {
        {"HOME", home}, {"NATS_CONTEXT", "t"}, {"NATS_URL", "a:1, b:2 ,tls://c"}, {NULL, NULL}};
    CHECK_EQ(parse(&c, nenv, err, 5, "--db", "mysql://u:p@h/d", "--print-config", "--drain"), 0);
    CHECK_STR(c.relay.nats_url, "nats://a:1,nats://b:2,tls://c");
    char seed[128];
    snprintf(seed, sizeof(seed), "%s/seed.nk", home);
    CHECK_STR(c.relay.nats_nkey_file, seed);
    CHECK_STR(c.relay.nats_tls_ca, "/ca.pem");
    ob_cli_free(&c);
    /* The relay's own credentials: none of the context's. */
    CHECK_EQ(parse(&c, nenv, err, 6, "--db", "mysql://u:p@h/d", "--nats", "nats://tok@n",
                   "--print-config"),
             0);
    CHECK_STR(c.relay.nats_url, "nats://tok@n");
    CHECK(c.relay.nats_nkey_file == NULL);
    ob_cli_free(&c);
}

/* A context's user and password go into every server of the list, encoded;
 * keys the relay cannot honour are refused. */
static void contexts(void) {
    ob_cli c;
    char err[OB_TEST_ERRLEN];
    kv env[] = {{"XDG_CONFIG_HOME", home}, {"NATS_CONTEXT", "t"}, {NULL, NULL}};
    char dir[128];
    snprintf(dir, sizeof(dir), "%s/nats", home);
    mkdir(dir, 0700);
    snprintf(dir, sizeof(dir), "%s/nats/context", home);
    mkdir(dir, 0700);
    char path[160];
    snprintf(path, sizeof(path), "%s/t.json", dir);
    write_file(path, "{\"url\": \"h1,h2:4223\", \"user\": \"u\", \"password\": \"p@s:s,/\", "
                     "\"tls_first\": false, \"token\": \"\"}");
    CHECK_EQ(parse(&c, env, err, 4, "--db", "mysql://u:p@h/d", "--print-config"), 0);
    CHECK_STR(c.relay.nats_url, "nats://u:p%40s%3As%2C%2F@h1,nats://u:p%40s%3As%2C%2F@h2:4223");
    ob_cli_free(&c);
    write_file(path, "{\"url\": \"h1\", \"tls_first\": true}");
    CHECK_EQ(parse(&c, env, err, 4, "--db", "mysql://u:p@h/d", "--print-config"), 2);
    CHECK_CONTAINS(err, "key 'tls_first' is set");
    ob_cli_free(&c);
    write_file(path, "{\"url\": \"h1\", \"user\": \"u\"}");
    CHECK_EQ(parse(&c, env, err, 4, "--db", "mysql://u:p@h/d", "--print-config"), 2);
    CHECK_CONTAINS(err, "without a password");
    ob_cli_free(&c);
    write_file(path, "{\"url\": \"h1\", \"creds\": \"nsc://op/acc/user\"}");
    CHECK_EQ(parse(&c, env, err, 4, "--db", "mysql://u:p@h/d", "--print-config"), 2);
    CHECK_CONTAINS(err, "only a file path");
    ob_cli_free(&c);
    remove(path);
    /* The selected context only when nothing else names a server. */
    kv sel[] = {{"XDG_CONFIG_HOME", home}, {NULL, NULL}};
    snprintf(path, sizeof(path), "%s/nats/context.txt", home);
    write_file(path, "gone\n");
    CHECK_EQ(parse(&c, sel, err, 5, "--db", "mysql://u:p@h/d", "--nats", "nats://n"), 0);
    ob_cli_free(&c);
    CHECK_EQ(parse(&c, sel, err, 4, "--db", "mysql://u:p@h/d", "--print-config"), 1);
    CHECK_CONTAINS(err, "nats context 'gone': cannot read");
    ob_cli_free(&c);
    remove(path);
}

int main(void) {
    snprintf(home, sizeof(home), "/tmp/test_conv_XXXXXX");
    CHECK(mkdtemp(home) != NULL);
    snprintf(mycnf, sizeof(mycnf), "%s/.my.cnf", home);
    char dir[128];
    snprintf(dir, sizeof(dir), "%s/.config", home);
    mkdir(dir, 0700);
    snprintf(dir, sizeof(dir), "%s/.config/nats", home);
    mkdir(dir, 0700);
    snprintf(dir, sizeof(dir), "%s/.config/nats/context", home);
    mkdir(dir, 0700);
    snprintf(ctx, sizeof(ctx), "%s/t.json", dir);
    option_file_values();
    precedence();
    contexts();
    remove(ctx);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", home);
    CHECK_EQ(system(cmd), 0);
    return 0;
}
