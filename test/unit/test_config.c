/* SPDX-License-Identifier: Apache-2.0 */
/* The config file: precedence, errors naming file, line and key, several
 * tables, --print-config with secrets masked; and the log line formats. */
#include <stdarg.h>
#include <sys/stat.h>
#include <unistd.h>

#include "args.h"
#include "check.h"
#include "log.h"
#include "logout.h"

#define OB_TEST_ERRLEN 512
#include "cli_parse.h"

static char path[64];

/* What a log callback saw of the row's fields. */
static char seen[256];

static void capture(outbox_log_level level, const char *msg, void *data) {
    (void)level;
    (void)data;
    const outbox_log_fields *f = outbox_log_fields_current();
    if (f)
        snprintf(seen, sizeof(seen), "%s|%s|%s|%d|%s", f->id, f->aggregate_type, f->aggregate_id,
                 f->attempt, msg);
    else
        snprintf(seen, sizeof(seen), "none|%s", msg);
}

static void write_file(const char *text) {
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    fputs(text, f);
    fclose(f);
}

/* The effective configuration as text. */
static char *printed(const ob_cli *c) {
    static char buf[16384];
    FILE *f = fmemopen(buf, sizeof(buf), "w");
    CHECK(f != NULL);
    ob_cli_print_config(c, f);
    fclose(f);
    return buf;
}

static void expect_error(const char *text, const char *want) {
    ob_cli c;
    char err[512], where[128];
    write_file(text);
    CHECK_EQ(parse(&c, NULL, err, 3, "--config", path), 2);
    snprintf(where, sizeof(where), "%s:", path);
    CHECK_CONTAINS(err, where);
    CHECK_CONTAINS(err, want);
    ob_cli_free(&c);
}

/* A relative file name in a config file is relative to the file's folder,
 * not the working folder; an absolute one is kept. A file the config file
 * names that cannot be read is exit 1, like the config file itself. */
static void files_beside_the_config_file(void) {
    char dir[] = "/tmp/test_config_XXXXXX", conf[96], pw[96], want[128];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(conf, sizeof(conf), "%s/relay.conf", dir);
    snprintf(pw, sizeof(pw), "%s/db-password", dir);
    FILE *f = fopen(pw, "w");
    CHECK(f != NULL);
    fputs("s3cret\n", f);
    fclose(f);
    f = fopen(conf, "w");
    CHECK(f != NULL);
    fputs("db = mysql://u@h/d\nnats = nats://h\ndb-password-file = db-password\n"
          "nats-tls-ca = tls/ca.pem\nnats-creds = /etc/absolute.creds\nlog-file = relay.log\n",
          f);
    fclose(f);
    char cwd[512];
    CHECK(getcwd(cwd, sizeof(cwd)) != NULL);
    CHECK_EQ(chdir("/"), 0);
    ob_cli c;
    char err[512];
    CHECK_EQ(parse(&c, NULL, err, 4, "--config", conf, "--print-config"), 0);
    CHECK_STR(c.relay.db_password, "s3cret");
    snprintf(want, sizeof(want), "%s/tls/ca.pem", dir);
    CHECK_STR(c.relay.nats_tls_ca, want);
    CHECK_STR(c.relay.nats_creds_file, "/etc/absolute.creds");
    snprintf(want, sizeof(want), "%s/relay.log", dir);
    CHECK_STR(c.log_file, want);
    snprintf(want, sizeof(want), "db-password-file = %s\n", pw);
    CHECK_CONTAINS(printed(&c), want);
    ob_cli_free(&c);
    /* Run for real, the missing CA file is found before anything starts. */
    CHECK_EQ(parse(&c, NULL, err, 3, "--config", conf), 1);
    CHECK_CONTAINS(err, "--nats-tls-ca: cannot read '");
    CHECK_CONTAINS(err, "/tls/ca.pem': No such file or directory");
    ob_cli_free(&c);
    /* A flag's relative name stays relative to the working folder. */
    CHECK_EQ(parse(&c, NULL, err, 6, "--config", conf, "--nats-tls-ca", "ca.pem", "--print-config"),
             0);
    CHECK_STR(c.relay.nats_tls_ca, "ca.pem");
    ob_cli_free(&c);
    f = fopen(conf, "w");
    CHECK(f != NULL);
    fputs("db = mysql://u@h/d\nnats = nats://h\ndb-password-file = missing\n", f);
    fclose(f);
    CHECK_EQ(parse(&c, NULL, err, 3, "--config", conf), 1);
    CHECK_CONTAINS(err, "relay.conf:3: key 'db-password-file': cannot read '");
    CHECK_CONTAINS(err, "/missing': No such file or directory");
    ob_cli_free(&c);
    CHECK_EQ(chdir(cwd), 0);
    unlink(conf);
    unlink(pw);
    rmdir(dir);
}

int main(void) {
    ob_cli c;
    char err[512], line[512];
    int fd;
    snprintf(path, sizeof(path), "/tmp/outbox-config-test.XXXXXX");
    CHECK((fd = mkstemp(path)) >= 0);
    close(fd);

    /* flag > environment > file > default */
    write_file("# comment\n"
               "db = mysql://app:s3cret@db.internal/shop\n"
               "db-password = hunter2\n"
               "nats = nats://tok3n@n1:4222,nats://u:pw@n2:4222\n"
               "batch = 10\n"
               "connections = 3\n"
               "stream = FROM_FILE\n"
               "poll-interval = 1s\n"
               "no-cloudevents = true\n"
               "log-format = json\n"
               "http = 127.0.0.1:9464\n");
    kv env[] = {{"OUTBOX_BATCH", "20"}, {"OUTBOX_STREAM", "FROM_ENV"}, {NULL, NULL}};
    CHECK_EQ(parse(&c, env, err, 5, "--config", path, "--batch", "30"), 0);
    CHECK_EQ(c.relay.batch_size, 30);
    CHECK_STR(c.relay.stream, "FROM_ENV");
    CHECK_EQ(c.relay.connections, 3);
    CHECK_EQ(c.relay.poll_interval_ms, 1000);
    CHECK_EQ(c.relay.cloudevents, 0);
    CHECK_EQ(c.relay.max_attempts, 5);
    CHECK_EQ(c.log_format, OB_LOG_JSON);
    CHECK_STR(c.http, "127.0.0.1:9464");
    CHECK_STR(c.relay.db_password, "hunter2");
    char *text = printed(&c);
    CHECK_CONTAINS(text, "# --batch\nbatch = 30\n");
    CHECK_CONTAINS(text, "# environment OUTBOX_STREAM\nstream = FROM_ENV\n");
    snprintf(line, sizeof(line), "# %s:6\nconnections = 3\n", path);
    CHECK_CONTAINS(text, line);
    CHECK_CONTAINS(text, "# default\nmax-attempts = 5\n");
    CHECK_CONTAINS(text, "db = mysql://app:***@db.internal/shop");
    CHECK_CONTAINS(text, "# db-password is set (not shown)");
    CHECK_CONTAINS(text, "# limit is not set");
    CHECK(strstr(text, "4294967295") == NULL);
    CHECK_CONTAINS(text, "wake-subject = outbox_wake.outbox\n");
    CHECK_CONTAINS(text, "nats = nats://***@n1:4222,nats://u:***@n2:4222");
    CHECK(strstr(text, "s3cret") == NULL);
    CHECK(strstr(text, "hunter2") == NULL);
    CHECK(strstr(text, "tok3n") == NULL);
    ob_cli_free(&c);

    /* OUTBOX_CONFIG names the file too. */
    kv cfgenv[] = {{"OUTBOX_CONFIG", path}, {NULL, NULL}};
    CHECK_EQ(parse(&c, cfgenv, err, 1), 0);
    CHECK_EQ(c.relay.batch_size, 10);
    ob_cli_free(&c);

    /* Errors name the file, the line and the key; nothing runs. */
    expect_error("db = mysql://h/d\nnats = nats://n\nbacth = 5\n", ":3: unknown key 'bacth'");
    expect_error("batch = many\n", ":1: key 'batch': 'many' is not a positive whole number");
    expect_error("\n\npoll-interval = soon\n", ":3: key 'poll-interval': 'soon' is not a duration");
    expect_error("backoff = random\n", "key 'backoff': 'random' must be 'fixed' or 'exponential'");
    expect_error("log-format = xml\n", ":1: key 'log-format': 'xml' must be text, logfmt or json");
    expect_error("drain = maybe\n", "key 'drain': 'maybe' is not a boolean");
    expect_error("batch = 5\nbatch = 6\n", ":2: key 'batch' is set twice");
    expect_error("this is not ini\n", ":1: syntax error");
    expect_error("[server]\nbatch = 5\n", ":1: unknown section '[server]'");
    expect_error("batch = 5\n\n[relays]\n", ":3: unknown section '[relays]'");
    expect_error("config = /etc/other.conf\n", ":1: key 'config' cannot be set in a config file");
    expect_error("[table orders]\nhttp = :9464\n", ":2: key 'http' cannot be set per table");
    expect_error("[table bad/name]\nbatch = 5\n", "a table name is made of");
    expect_error("db = mysql://h/d\nnats = nats://n\n[table a]\ntable = same\n[table b]\n"
                 "table = same\n",
                 "tables [a] and [b] both relay table 'same'");
    {
        char longline[400];
        memset(longline, 'x', sizeof(longline));
        memcpy(longline, "db = ", 5);
        longline[sizeof(longline) - 2] = '\n';
        longline[sizeof(longline) - 1] = '\0';
        expect_error(longline, ":1: line too long");
    }
    /* A file that cannot be read is not bad usage: exit 1, path and cause. */
    CHECK_EQ(parse(&c, NULL, err, 3, "--config", "/nonexistent/outbox.conf"), 1);
    CHECK_CONTAINS(err, "/nonexistent/outbox.conf: No such file or directory");
    ob_cli_free(&c);
    /* Not a config file at all: a directory, a device, a FIFO (never waited
     * on), a NUL byte; a repeated section; numbers out of range. */
    {
        char fifo[96];
        snprintf(fifo, sizeof(fifo), "%s.fifo", path);
        CHECK(mkfifo(fifo, 0600) == 0);
        const char *odd[] = {"/tmp", "/dev/zero", fifo};
        for (size_t i = 0; i < sizeof(odd) / sizeof(odd[0]); i++) {
            CHECK_EQ(parse(&c, NULL, err, 3, "--config", odd[i]), 2);
            snprintf(line, sizeof(line), "config file %s: not a regular file", odd[i]);
            CHECK_CONTAINS(err, line);
            ob_cli_free(&c);
        }
        unlink(fifo);
        FILE *f = fopen(path, "w");
        CHECK(f != NULL);
        fwrite("batch = 5\nstream = A\0B\n", 1, 24, f);
        fclose(f);
        CHECK_EQ(parse(&c, NULL, err, 3, "--config", path), 2);
        snprintf(line, sizeof(line), "%s:2: a NUL byte", path);
        CHECK_CONTAINS(err, line);
        ob_cli_free(&c);
    }
    expect_error("batch = 5\n[relay]\nstream = A\n[relay]\n", ":4: section [relay] is repeated");
    expect_error("[table a]\nbatch = 5\n[table b]\n[table a]\n",
                 ":4: section [table a] is repeated");
    expect_error("connections = 100000\n",
                 ":1: key 'connections': '100000' is out of range (1 to 256)");
    expect_error("batch = 10001\n", "out of range (1 to 10000)");
    expect_error("stream-replicas = 7\n", "out of range (1 to 5)");
    expect_error("max-in-flight = 0\n", "out of range (1 to 1048576)");

    /* Several tables: each section inherits the global values, sets its
     * own, and a flag still wins over both. */
    write_file("db = mysql://app:pw@db/shop\n"
               "nats = nats://n:4222\n"
               "batch = 100\n"
               "[table orders]\n"
               "stream = ORDERS\n"
               "subject-prefix = orders\n"
               "batch = 200\n"
               "[table billing]\n"
               "table = billing_outbox\n"
               "stream = BILLING\n"
               "connections = 1\n");
    CHECK_EQ(parse(&c, NULL, err, 3, "--config", path), 0);
    CHECK_EQ(c.ntables, 2);
    CHECK_STR(c.tables[0].name, "orders");
    CHECK_STR(c.tables[0].relay.table, "orders");
    CHECK_STR(c.tables[0].relay.stream, "ORDERS");
    CHECK_STR(c.tables[0].relay.subject_prefix, "orders");
    CHECK_EQ(c.tables[0].relay.batch_size, 200);
    CHECK_EQ(c.tables[0].relay.connections, 2);
    CHECK_STR(c.tables[1].name, "billing");
    CHECK_STR(c.tables[1].relay.table, "billing_outbox");
    CHECK_STR(c.tables[1].relay.stream, "BILLING");
    CHECK_STR(c.tables[1].relay.subject_prefix, "outbox");
    CHECK_EQ(c.tables[1].relay.batch_size, 100);
    CHECK_EQ(c.tables[1].relay.connections, 1);
    CHECK_STR(c.tables[1].relay.db_url, "mysql://app:pw@db/shop");
    text = printed(&c);
    CHECK_CONTAINS(text, "[table orders]");
    CHECK_CONTAINS(text, "[table billing]");
    snprintf(line, sizeof(line), "# %s:9\ntable = billing_outbox\n", path);
    CHECK_CONTAINS(text, line);
    ob_cli_free(&c);
    CHECK_EQ(parse(&c, NULL, err, 5, "--config", path, "--batch", "7"), 0);
    CHECK_EQ(c.tables[0].relay.batch_size, 7);
    CHECK_EQ(c.tables[1].relay.batch_size, 7);
    ob_cli_free(&c);

    /* --table picks one section, by its name or by its table; the flag
     * does not rename the section's table. A name the file does not declare
     * is an error, never a table of its own (issue 20). */
    CHECK_EQ(parse(&c, NULL, err, 5, "--config", path, "--table", "billing_outbox"), 0);
    CHECK_EQ(c.ntables, 1);
    CHECK_STR(c.tables[0].name, "billing");
    CHECK_STR(c.tables[0].relay.table, "billing_outbox");
    CHECK_STR(c.tables[0].relay.stream, "BILLING");
    ob_cli_free(&c);
    kv tenv[] = {{"OUTBOX_TABLE", "orders"}, {NULL, NULL}};
    CHECK_EQ(parse(&c, tenv, err, 4, "status", "--config", path), 0);
    CHECK_EQ(c.ntables, 1);
    CHECK_STR(c.tables[0].relay.table, "orders");
    ob_cli_free(&c);
    CHECK_EQ(parse(&c, NULL, err, 7, "dead", "purge", "--config", path, "--table", "outbox"), 2);
    CHECK_CONTAINS(err, "--table 'outbox': the config file");
    CHECK_CONTAINS(err, "declares no such table");
    CHECK_CONTAINS(err, "orders billing");
    ob_cli_free(&c);

    /* --print-config reads back as a config file with the same settings:
     * its keys and values print the same again (the origins, comment lines
     * of their own, say the file now). A secret from a file is shown as the
     * file's name; command-only keys are left out. */
    {
        char secret[96], again[96];
        snprintf(secret, sizeof(secret), "%s.secret", path);
        snprintf(again, sizeof(again), "%s.again", path);
        FILE *f = fopen(secret, "w");
        CHECK(f != NULL);
        fputs("hunter2\n", f);
        fclose(f);
        kv renv[] = {{"OUTBOX_DB_PASSWORD_FILE", secret}, {NULL, NULL}};
        CHECK_EQ(parse(&c, renv, err, 10, "--config", path, "--batch", "7", "--backoff-jitter",
                       "0.123456789", "--limit", "50", "--no-progress"),
                 0);
        static char first[16384];
        snprintf(first, sizeof(first), "%s", printed(&c));
        ob_cli_free(&c);
        CHECK_CONTAINS(first, "db-password-file = ");
        CHECK_CONTAINS(first, secret);
        CHECK(strstr(first, "hunter2") == NULL);
        CHECK(strstr(first, "\nonce") == NULL && strstr(first, "\njson") == NULL);
        f = fopen(again, "w");
        CHECK(f != NULL);
        fputs(first, f);
        fclose(f);
        CHECK_EQ(parse(&c, NULL, err, 3, "--config", again), 0);
        CHECK_STR(c.tables[1].relay.db_password, "hunter2");
        CHECK(c.tables[0].relay.backoff_jitter == 0.123456789);
        CHECK_EQ(c.limit, 50);
        CHECK_EQ(c.progress, 0);
        const char *second = printed(&c);
        /* The same lines, once the comments are left out. */
        const char *p = first, *q = second;
        while (*p || *q) {
            while (*p == '#')
                p = strchr(p, '\n') + 1;
            while (*q == '#')
                q = strchr(q, '\n') + 1;
            size_t lp = strcspn(p, "\n"), lq = strcspn(q, "\n");
            if (lp != lq || strncmp(p, q, lp) != 0) {
                fprintf(stderr, "print-config differs: '%.*s' then '%.*s'\n", (int)lp, p, (int)lq,
                        q);
                CHECK(0);
            }
            p += lp + (p[lp] == '\n');
            q += lq + (q[lq] == '\n');
        }
        ob_cli_free(&c);
        unlink(secret);
        unlink(again);
    }
    expect_error("once = true\n", ":1: key 'once' cannot be set in a config file");
    expect_error("json = true\n", ":1: key 'json' cannot be set in a config file");

    /* A section without keys is a table with the global settings. */
    write_file("db = mysql://h/d\nnats = nats://n\n[table lonely]\n");
    CHECK_EQ(parse(&c, NULL, err, 3, "--config", path), 0);
    CHECK_EQ(c.ntables, 1);
    CHECK_STR(c.tables[0].relay.table, "lonely");
    CHECK_STR(c.tables[0].relay.db_url, "mysql://h/d");
    ob_cli_free(&c);

    /* A repeated --table is an error, never silently the last one. */
    CHECK_EQ(parse(&c, NULL, err, 9, "--db", "mysql://h/d", "--nats", "nats://n", "--table", "a",
                   "--table", "b"),
             2);
    CHECK_CONTAINS(err, "--table is given");
    ob_cli_free(&c);

    /* Redaction of URLs anywhere in a line. */
    ob_cli_redact("connect mysql://u:pw@h:3306/d failed; nats://t@n:1 and http://h/x@y", line,
                  sizeof(line));
    CHECK_STR(line, "connect mysql://u:***@h:3306/d failed; nats://***@n:1 and http://h/x@y");

    /* Log line formats. */
    ob_logout_format(OB_LOG_JSON, "T", OUTBOX_LOG_WARN, "orders", NULL, "a \"quoted\"\nline\x01",
                     line, sizeof(line));
    CHECK_STR(line, "{\"ts\":\"T\",\"level\":\"warn\",\"table\":\"orders\",\"msg\":\"a "
                    "\\\"quoted\\\"\\nline\\u0001\"}");
    ob_logout_format(OB_LOG_LOGFMT, "T", OUTBOX_LOG_INFO, NULL, NULL, "x=1 y", line, sizeof(line));
    CHECK_STR(line, "ts=T level=info msg=\"x=1 y\"");
    ob_logout_format(OB_LOG_TEXT, "T", OUTBOX_LOG_ERROR, "b", NULL, "boom", line, sizeof(line));
    CHECK_STR(line, "T error [b] boom");
    /* A line about one row carries its id, aggregate and attempt as fields. */
    outbox_log_fields rf = {"019a6f1e-7c2b-7d3e-8f00-0123456789ab", "order", "4\"2", 3};
    ob_logout_format(OB_LOG_JSON, "T", OUTBOX_LOG_WARN, "orders", &rf, "dead", line, sizeof(line));
    CHECK_STR(line, "{\"ts\":\"T\",\"level\":\"warn\",\"table\":\"orders\",\"id\":"
                    "\"019a6f1e-7c2b-7d3e-8f00-0123456789ab\",\"aggregate_type\":\"order\","
                    "\"aggregate_id\":\"4\\\"2\",\"attempt\":3,\"msg\":\"dead\"}");
    ob_logout_format(OB_LOG_LOGFMT, "T", OUTBOX_LOG_WARN, NULL, &rf, "dead", line, sizeof(line));
    CHECK_STR(line, "ts=T level=warn id=\"019a6f1e-7c2b-7d3e-8f00-0123456789ab\" "
                    "aggregate_type=\"order\" aggregate_id=\"4\\\"2\" attempt=3 msg=\"dead\"");
    /* Outside a row's line, the library gives no fields. */
    CHECK(outbox_log_fields_current() == NULL);
    ob_log lg = {capture, NULL, OUTBOX_LOG_INFO};
    unsigned char rid[16] = {0x01, 0x9a, 0x6f, 0x1e, 0x7c, 0x2b, 0x7d, 0x3e,
                             0x8f, 0x00, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab};
    ob_log_row lr = {rid, "order", 5, "42xyz", 2, 2};
    OB_ROW_WARN(&lg, &lr, "row %d", 7);
    CHECK_STR(seen, "019a6f1e-7c2b-7d3e-8f00-0123456789ab|order|42|2|row 7");
    CHECK(outbox_log_fields_current() == NULL);
    OB_WARN(&lg, "plain");
    CHECK_STR(seen, "none|plain");

    files_beside_the_config_file();
    unlink(path);
    puts("test_config: ok");
    return 0;
}
