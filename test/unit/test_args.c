/* SPDX-License-Identifier: Apache-2.0 */
/* Command line and environment parsing of outbox-uvrelay. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "args.h"
#include "check.h"

#include "cli_parse.h"

static void repeated_options_are_refused(void) {
    ob_cli c;
    char err[256];
    CHECK_EQ(parse(&c, NULL, err, 9, "--db", "mysql://h/d", "--nats", "nats://h", "--table", "a",
                   "--table", "b"),
             2);
    CHECK_CONTAINS(err, "--table is given twice");
    ob_cli_free(&c);
    CHECK_EQ(parse(&c, NULL, err, 9, "--db", "mysql://h/d", "--nats", "nats://h", "--db-password",
                   "x", "--db-password-file", "/nonexistent"),
             2);
    CHECK_CONTAINS(err, "same thing");
    ob_cli_free(&c);
    kv both[] = {{"OUTBOX_DB_PASSWORD", "x"}, {"OUTBOX_DB_PASSWORD_FILE", "/f"}, {NULL, NULL}};
    CHECK_EQ(parse(&c, both, err, 1), 2);
    CHECK_CONTAINS(err, "OUTBOX_DB_PASSWORD and OUTBOX_DB_PASSWORD_FILE");
    ob_cli_free(&c);
    /* The environment and then a flag is an override, not a repetition. */
    kv table[] = {{"OUTBOX_TABLE", "e"}, {NULL, NULL}};
    CHECK_EQ(parse(&c, table, err, 7, "--db", "mysql://h/d", "--nats", "nats://h", "--table", "f"),
             0);
    CHECK_STR(c.relay.table, "f");
    ob_cli_free(&c);
    kv old[] = {{"OUTBOX_RETENTION", "7d"}, {NULL, NULL}};
    CHECK_EQ(parse(&c, old, err, 1), 2);
    CHECK_CONTAINS(err, "OUTBOX_OLDER_THAN");
    ob_cli_free(&c);
}

static void secrets_come_from_files(void) {
    char dir[] = "/tmp/test_args_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char pw[64], tok[64], empty[64];
    snprintf(pw, sizeof(pw), "%s/pw", dir);
    snprintf(tok, sizeof(tok), "%s/tok", dir);
    snprintf(empty, sizeof(empty), "%s/empty", dir);
    FILE *f = fopen(pw, "w");
    fputs("S3cr:t/@pw\r\nsecond line\n", f);
    fclose(f);
    f = fopen(tok, "w");
    fputs("T0ken", f);
    fclose(f);
    f = fopen(empty, "w");
    fputs("\n", f);
    fclose(f);
    ob_cli c;
    char err[256];
    kv env[] = {{"OUTBOX_NATS_TOKEN_FILE", tok}, {NULL, NULL}};
    CHECK_EQ(parse(&c, env, err, 7, "--db", "mysql://u@h/d", "--nats", "nats://h",
                   "--db-password-file", pw),
             0);
    CHECK_STR(c.relay.db_password, "S3cr:t/@pw");
    /* NATS secret files are read by the relay at each (re)connect. */
    CHECK_STR(c.relay.nats_token_file, tok);
    CHECK(c.relay.nats_password_file == NULL);
    ob_cli_free(&c);
    CHECK_EQ(parse(&c, NULL, err, 7, "--db", "mysql://u@h/d", "--nats", "nats://h",
                   "--db-password-file", empty),
             2);
    CHECK_CONTAINS(err, "first line");
    ob_cli_free(&c);
    /* A file that cannot be read is exit 1 (the environment's fault), one
     * that holds the wrong thing exit 2 (a bad value). */
    CHECK_EQ(parse(&c, NULL, err, 7, "--db", "mysql://u@h/d", "--nats", "nats://h",
                   "--db-password-file", "/nonexistent/pw"),
             1);
    CHECK_CONTAINS(err, "cannot read '/nonexistent/pw'");
    ob_cli_free(&c);
    CHECK_EQ(parse(&c, NULL, err, 7, "--db", "mysql://u@h/d", "--nats", "nats://h",
                   "--db-password-file", dir),
             2);
    CHECK_CONTAINS(err, "first line");
    ob_cli_free(&c);
    kv missing[] = {{"OUTBOX_DB_PASSWORD_FILE", "/nonexistent/pw"}, {NULL, NULL}};
    CHECK_EQ(parse(&c, missing, err, 5, "--db", "mysql://u@h/d", "--nats", "nats://h"), 1);
    CHECK_CONTAINS(err, "OUTBOX_DB_PASSWORD_FILE");
    ob_cli_free(&c);
    const char *file_opts[] = {"--nats-token-file", "--nats-password-file", "--nats-creds",
                               "--nats-nkey",       "--nats-tls-ca",        "--db-tls-ca",
                               "--db-tls-cert",     "--nats-tls-key"};
    for (size_t i = 0; i < sizeof(file_opts) / sizeof(file_opts[0]); i++) {
        CHECK_EQ(parse(&c, NULL, err, 7, "--db", "mysql://u@h/d", "--nats", "nats://u@h",
                       file_opts[i], "/nonexistent/f"),
                 1);
        CHECK_CONTAINS(err, file_opts[i]);
        CHECK_CONTAINS(err, ": cannot read '/nonexistent/f': No such file or directory");
        ob_cli_free(&c);
    }
    /* A one-shot command reads the database's files only; schema none. */
    CHECK_EQ(parse(&c, NULL, err, 6, "status", "--db", "mysql://u@h/d", "--nats-creds",
                   "/nonexistent/f"),
             0);
    ob_cli_free(&c);
    CHECK_EQ(
        parse(&c, NULL, err, 6, "status", "--db", "mysql://u@h/d", "--db-tls-ca", "/nonexistent/f"),
        1);
    ob_cli_free(&c);
    CHECK_EQ(parse(&c, NULL, err, 4, "schema", "--db-tls-ca", "/nonexistent/f"), 0);
    ob_cli_free(&c);
    remove(pw);
    remove(tok);
    remove(empty);
    remove(dir);
}

static void help_names_every_environment_variable(void) {
    const char *names[128];
    size_t n = ob_cli_env_names(names, 128);
    CHECK_INT(n, >, 30);
    for (size_t i = 0; i < n; i++)
        if (strstr(ob_cli_usage(), names[i]) == NULL)
            CHECK_FAIL_("--help does not name %s", names[i]);
}

/* `COMMAND --help` prints that command's help only (issue 20); schema's
 * usage line names --ordered (issue 21). */
static void help_per_command(void) {
    ob_cli c;
    char err[256];
    CHECK_EQ(parse(&c, NULL, err, 3, "dead", "--help"), 0);
    CHECK(c.help && c.command == OB_CMD_DEAD);
    const char *h = ob_cli_usage_for(c.command);
    CHECK_CONTAINS(h, "outbox-uvrelay dead replay");
    CHECK(strstr(h, "--max-in-flight") == NULL && strstr(h, "schema") == NULL);
    int lines = 0;
    for (const char *p = h; *p; p++)
        lines += *p == '\n';
    CHECK(lines < 30);
    ob_cli_free(&c);
    CHECK_CONTAINS(ob_cli_usage_for(OB_CMD_SCHEMA), "--ordered");
    CHECK_CONTAINS(ob_cli_usage_for(OB_CMD_STATUS), "--json");
    CHECK_CONTAINS(ob_cli_usage(), "schema [--table T] [--ordered | --leader | --cursor]");
    CHECK_CONTAINS(ob_cli_usage_for(OB_CMD_SCHEMA), "[--ordered | --leader | --cursor]");
    CHECK_CONTAINS(ob_cli_usage(), "1 runtime failure or a file that cannot be read");
    CHECK_STR(ob_cli_usage_for(OB_CMD_RUN), ob_cli_usage());
}

/* Where nats.c reads and writes: a flag, its variable, and the binary's
 * first spelling of it (OUTBOX_NATS_EVENT_LOOP: 0 is threads, 1 the loop). */
static void nats_client_is_an_option(void) {
    ob_cli c;
    char err[256];
    CHECK_EQ(parse(&c, NULL, err, 5, "--db", "mysql://h/d", "--nats", "nats://h"), 0);
    CHECK_EQ(c.relay.nats_client, OUTBOX_NATS_CLIENT_AUTO);
    ob_cli_free(&c);
    CHECK_EQ(parse(&c, NULL, err, 7, "--db", "mysql://h/d", "--nats", "nats://h", "--nats-client",
                   "threads"),
             0);
    CHECK_EQ(c.relay.nats_client, OUTBOX_NATS_CLIENT_THREADS);
    ob_cli_free(&c);
    CHECK_EQ(parse(&c, NULL, err, 7, "--db", "mysql://h/d", "--nats", "nats://h", "--nats-client",
                   "fast"),
             2);
    CHECK_CONTAINS(err, "auto, loop or threads");
    ob_cli_free(&c);
    kv off[] = {{"OUTBOX_NATS_EVENT_LOOP", "0"}, {NULL, NULL}};
    CHECK_EQ(parse(&c, off, err, 5, "--db", "mysql://h/d", "--nats", "nats://h"), 0);
    CHECK_EQ(c.relay.nats_client, OUTBOX_NATS_CLIENT_THREADS);
    ob_cli_free(&c);
    kv on[] = {{"OUTBOX_NATS_EVENT_LOOP", "1"}, {NULL, NULL}};
    CHECK_EQ(parse(&c, on, err, 5, "--db", "mysql://h/d", "--nats", "nats://h"), 0);
    CHECK_EQ(c.relay.nats_client, OUTBOX_NATS_CLIENT_LOOP);
    ob_cli_free(&c);
    /* The flag overrides the environment, as for every option. */
    CHECK_EQ(
        parse(&c, on, err, 7, "--db", "mysql://h/d", "--nats", "nats://h", "--nats-client", "auto"),
        0);
    CHECK_EQ(c.relay.nats_client, OUTBOX_NATS_CLIENT_AUTO);
    ob_cli_free(&c);
    kv both[] = {{"OUTBOX_NATS_EVENT_LOOP", "0"}, {"OUTBOX_NATS_CLIENT", "loop"}, {NULL, NULL}};
    CHECK_EQ(parse(&c, both, err, 5, "--db", "mysql://h/d", "--nats", "nats://h"), 2);
    CHECK_CONTAINS(err, "OUTBOX_NATS_EVENT_LOOP and OUTBOX_NATS_CLIENT");
    ob_cli_free(&c);
}

int main(void) {
    help_per_command();
    nats_client_is_an_option();
    ob_cli c;
    char err[256];

    CHECK_EQ(parse(&c, NULL, err, 9, "--db", "mysql://u:p@h/d", "--nats", "nats://n:1",
                   "--connections=4", "--batch", "200", "--drain"),
             0);
    CHECK_EQ(c.command, OB_CMD_RUN);
    CHECK_STR(c.relay.db_url, "mysql://u:p@h/d");
    CHECK_EQ(c.relay.connections, 4);
    CHECK_EQ(c.relay.batch_size, 200);
    CHECK_EQ(c.drain, 1);
    CHECK_STR(c.relay.table, "outbox");
    ob_cli_free(&c);

    /* The environment fills in; flags win over it. */
    kv env[] = {{"OUTBOX_DB", "mysql://e@h/d"},
                {"OUTBOX_NATS", "nats://e:1"},
                {"OUTBOX_DB_PASSWORD", "from-env"},
                {"OUTBOX_POLL_INTERVAL", "2s"},
                {"OUTBOX_BATCH", "50"},
                {"OUTBOX_DRAIN", "true"},
                {"OUTBOX_DELETE_PROCESSED", "1"},
                {NULL, NULL}};
    CHECK_EQ(parse(&c, env, err, 3, "--batch", "75"), 0);
    CHECK_STR(c.relay.db_url, "mysql://e@h/d");
    CHECK_STR(c.relay.db_password, "from-env");
    CHECK_EQ(c.relay.poll_interval_ms, 2000);
    CHECK_EQ(c.relay.batch_size, 75);
    CHECK_EQ(c.drain, 1);
    CHECK_EQ(c.relay.processing, OUTBOX_DELETE_PROCESSED);
    CHECK_EQ(c.relay.cloudevents, 1);
    ob_cli_free(&c);
    CHECK_EQ(parse(&c, env, err, 2, "--no-cloudevents"), 0);
    CHECK_EQ(c.relay.cloudevents, 0);
    ob_cli_free(&c);
    kv ceenv[] = {{"OUTBOX_DB", "mysql://e@h/d"},
                  {"OUTBOX_NATS", "nats://e:1"},
                  {"OUTBOX_NO_CLOUDEVENTS", "0"},
                  {NULL, NULL}};
    CHECK_EQ(parse(&c, ceenv, err, 1), 0);
    CHECK_EQ(c.relay.cloudevents, 1);
    ob_cli_free(&c);

    /* The byte budget: a default, sizes with a suffix, from a flag or the environment. */
    CHECK_EQ(parse(&c, ceenv, err, 1), 0);
    CHECK_EQ(c.relay.max_in_flight_bytes, 32u * 1024 * 1024);
    ob_cli_free(&c);
    CHECK_EQ(parse(&c, ceenv, err, 3, "--max-in-flight-bytes", "64MiB"), 0);
    CHECK_EQ(c.relay.max_in_flight_bytes, 64u * 1024 * 1024);
    ob_cli_free(&c);
    CHECK_EQ(parse(&c, ceenv, err, 2, "--max-in-flight-bytes=512k"), 0);
    CHECK_EQ(c.relay.max_in_flight_bytes, 512u * 1024);
    ob_cli_free(&c);
    CHECK_EQ(parse(&c, ceenv, err, 2, "--max-in-flight-bytes=0"), 0);
    CHECK_EQ(c.relay.max_in_flight_bytes, 0);
    ob_cli_free(&c);
    CHECK_INT(parse(&c, ceenv, err, 2, "--max-in-flight-bytes=12q"), !=, 0);
    CHECK_CONTAINS(err, "is not a size");
    ob_cli_free(&c);
    kv benv[] = {{"OUTBOX_DB", "mysql://e@h/d"},
                 {"OUTBOX_NATS", "nats://e:1"},
                 {"OUTBOX_MAX_IN_FLIGHT_BYTES", "1GiB"},
                 {NULL, NULL}};
    CHECK_EQ(parse(&c, benv, err, 1), 0);
    CHECK_EQ(c.relay.max_in_flight_bytes, 1024u * 1024 * 1024);
    ob_cli_free(&c);

    /* TLS and credentials: flags and variables. */
    kv tlsenv[] = {{"OUTBOX_DB", "mysql://e@h/d"},        {"OUTBOX_NATS", "tls://e:1"},
                   {"OUTBOX_DB_TLS_CA", "/env/ca.pem"},   {"OUTBOX_NATS_TOKEN_FILE", "/env/token"},
                   {"OUTBOX_DB_TLS_NO_VERIFY_HOST", "1"}, {NULL, NULL}};
    CHECK_EQ(parse(&c, tlsenv, err, 3, "--stream-replicas", "0"), 2);
    CHECK_CONTAINS(err, "--stream-replicas");
    ob_cli_free(&c);
    /* (--print-config: these files do not exist, which a run would refuse.) */
    CHECK_EQ(parse(&c, tlsenv, err, 12, "--db-tls-cert", "/c.pem", "--db-tls-key", "/k.pem",
                   "--nats-tls-ca", "/n.pem", "--nats-nkey", "/u.nk", "--stream-replicas", "3",
                   "--print-config"),
             0);
    CHECK_STR(c.relay.db_tls_ca, "/env/ca.pem");
    CHECK_STR(c.relay.db_tls_cert, "/c.pem");
    CHECK_STR(c.relay.db_tls_key, "/k.pem");
    CHECK_EQ(c.relay.db_tls_no_verify_host, 1);
    CHECK_STR(c.relay.nats_tls_ca, "/n.pem");
    CHECK_STR(c.relay.nats_nkey_file, "/u.nk");
    CHECK_STR(c.relay.nats_token_file, "/env/token");
    CHECK_EQ(c.relay.stream_replicas, 3);
    CHECK_EQ(c.relay.db_tls, 0); /* --db-tls itself was not given; a CA implies it */
    ob_cli_free(&c);
    CHECK_EQ(parse(&c, NULL, err, 6, "--db", "mysql://h/d", "--nats", "nats://h", "--db-tls"), 0);
    CHECK_EQ(c.relay.db_tls, 1);
    ob_cli_free(&c);

    uint64_t ms;
    CHECK_EQ(ob_cli_duration_ms("250ms", &ms), 0);
    CHECK_EQ(ms, 250);
    CHECK_EQ(ob_cli_duration_ms("1.5s", &ms), 0);
    CHECK_EQ(ms, 1500);
    CHECK_EQ(ob_cli_duration_ms("7d", &ms), 0);
    CHECK_EQ(ms, 7ULL * 86400000);
    CHECK_EQ(ob_cli_duration_ms("42", &ms), 0);
    CHECK_EQ(ms, 42);
    CHECK_EQ(ob_cli_duration_ms("5 s", &ms), -1);
    CHECK_EQ(ob_cli_duration_ms("-1s", &ms), -1);
    CHECK_EQ(ob_cli_duration_ms("soon", &ms), -1);

    /* Bad input: exit status 2 and a message that names the problem. */
    CHECK_EQ(parse(&c, NULL, err, 2, "--bogus"), 2);
    CHECK_CONTAINS(err, "unknown option '--bogus'");
    ob_cli_free(&c);
    CHECK_EQ(parse(&c, NULL, err, 7, "--db", "x", "--nats", "y", "--batch", "many"), 2);
    CHECK_CONTAINS(err, "--batch: 'many'");
    ob_cli_free(&c);
    CHECK_EQ(parse(&c, NULL, err, 7, "--db", "x", "--nats", "y", "--poll-interval", "soon"), 2);
    CHECK_CONTAINS(err, "duration");
    ob_cli_free(&c);
    CHECK_EQ(parse(&c, NULL, err, 3, "--nats", "nats://h"), 2);
    CHECK_CONTAINS(err, "--db is required");
    ob_cli_free(&c);
    CHECK_EQ(parse(&c, NULL, err, 3, "--db", "mysql://h/d"), 2);
    CHECK_CONTAINS(err, "--nats is required");
    ob_cli_free(&c);
    CHECK_EQ(parse(&c, NULL, err, 2, "--batch"), 2);
    CHECK_CONTAINS(err, "needs a value");
    ob_cli_free(&c);
    kv badenv[] = {{"OUTBOX_CONNECTIONS", "zero"}, {NULL, NULL}};
    CHECK_EQ(parse(&c, badenv, err, 1), 2);
    CHECK_CONTAINS(err, "OUTBOX_CONNECTIONS");
    ob_cli_free(&c);
    CHECK_EQ(parse(&c, NULL, err, 2, "frobnicate"), 2);
    CHECK_CONTAINS(err, "unknown command");
    ob_cli_free(&c);

    /* Subcommands. */
    CHECK_EQ(parse(&c, NULL, err, 4, "schema", "--partitioned", "--binary"), 0);
    CHECK_EQ(c.command, OB_CMD_SCHEMA);
    CHECK_EQ(c.partitioned, 1);
    CHECK_EQ(c.binary, 1);
    ob_cli_free(&c);
    CHECK_EQ(parse(&c, NULL, err, 5, "dead", "replay", "--db", "mysql://h/d"), 2);
    CHECK_CONTAINS(err, "--id");
    ob_cli_free(&c);
    CHECK_EQ(parse(&c, NULL, err, 6, "dead", "replay", "--all", "--db", "mysql://h/d"), 0);
    CHECK_EQ(c.command, OB_CMD_DEAD);
    CHECK_STR(c.subcommand, "replay");
    ob_cli_free(&c);
    CHECK_EQ(parse(&c, NULL, err, 2, "--help"), 0);
    CHECK_EQ(c.help, 1);
    ob_cli_free(&c);

    repeated_options_are_refused();
    secrets_come_from_files();
    help_names_every_environment_variable();
    puts("test_args: ok");
    return 0;
}
