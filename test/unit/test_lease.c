/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The lease's state machine without a server: a fake connection (fake_db.c)
 * whose every statement the test answers by hand. The fake's session id is
 * 42. Covers the takeover of a silent holder (its workers' sessions ended
 * before it), the validity window that fences a silent owner, the mode
 * check at start and while running, the halts, and a lost connection.
 */
#include <mysqld_error.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "check.h"
#include "fake_db.h"
#include "lease.h"
#include "sql.h"

typedef struct seen {
    int changed;
    uint64_t owned;
    int fatal;
    char why[512];
    int closed;
} seen;

static seen sn;
static uv_loop_t loop;
static int mode_warnings, left_out;

static void log_line(outbox_log_level level, const char *line, void *data) {
    (void)level;
    (void)data;
    if (strstr(line, "mode started on table"))
        mode_warnings++;
    if (strstr(line, "silent lock holders listed; session"))
        left_out++;
}
static ob_log lg = {log_line, NULL, OUTBOX_LOG_WARN};

static void on_changed(void *d, uint64_t owned) {
    (void)d;
    sn.changed++;
    sn.owned = owned;
}
static void on_fatal(void *d, const char *why) {
    (void)d;
    sn.fatal++;
    snprintf(sn.why, sizeof(sn.why), "%s", why);
}
static void on_closed(void *d) {
    (void)d;
    sn.closed++;
}

/* The lock name prefix of the tests' table. */
static const char *base(void) {
    static char b[32];
    ob_lease_base(b, "db", "outbox");
    return b;
}

static ob_lease *make(int leader, int plain) {
    memset(&sn, 0, sizeof(sn));
    ob_lease_config c;
    memset(&c, 0, sizeof(c));
    c.loop = &loop;
    c.log = &lg;
    c.qtable = "`db`.`outbox`";
    c.table = "outbox";
    ob_lease_base(c.base, "db", "outbox");
    c.mode = plain ? &ob_mode_plain : leader ? &ob_mode_leader : &ob_mode_ordered;
    c.takeover_ms = 3000; /* stale after 2 s, valid for 1 s, rounds every 500 ms */
    ob_lease_callbacks cb = {on_changed, on_fatal, on_closed, NULL};
    ob_lease *l = ob_lease_new(&c, &cb);
    CHECK(l != NULL);
    return l;
}

/* Runs the loop until the fake has a statement pending (a round's timer). */
static ob_db *next_query(void) {
    for (int i = 0; i < 400; i++) {
        ob_db *db = fake_db_last();
        if (db && fake_db_pending(db) == FAKE_QUERY)
            return db;
        uv_run(&loop, UV_RUN_ONCE);
    }
    CHECK_FAIL_("no statement came");
    return NULL;
}

static void row(ob_db *db, int result, const char *a, const char *b, const char *c, const char *d) {
    char *cols[8] = {(char *)a, (char *)b, (char *)c, (char *)d};
    unsigned long lens[8] = {0};
    for (int i = 0; i < 4; i++)
        lens[i] = cols[i] ? strlen(cols[i]) : 0;
    fake_db_add_row(db, result, cols, lens);
}

/* The mode check's results: the mode lock claim (1) and the counts (2). */
static void modes(ob_db *db, const char *plain, const char *ordered, const char *leader) {
    row(db, 1, "1", NULL, NULL, NULL);
    row(db, 2, plain, ordered, leader, NULL);
}

static void connect_ok(ob_lease *l) {
    ob_lease_start(l);
    ob_db *db = fake_db_last();
    CHECK_EQ(fake_db_pending(db), FAKE_CONNECT);
    fake_db_complete(db, 1, 0, NULL, 0);
}

/* Connects and answers the cluster probe (a single server: no rows) and the
 * check of the ordering columns. */
static void connect_checked(ob_lease *l) {
    connect_ok(l);
    fake_db_complete(next_query(), 1, 0, NULL, 0);
}

/* Answers a leader-mode round: the lock is this session's ("1") or not. */
static void answer_leader(ob_db *db, const char *got) {
    row(db, 0, got, "42", NULL, NULL);
    modes(db, "0", "0", "1");
    fake_db_complete(db, 1, 0, NULL, 0);
}

/* Waits for the close callback (at most `ms`, UV_RUN_ONCE a step). */
static void closed_within(int ms) {
    uint64_t until = uv_hrtime() + (uint64_t)ms * 1000000u;
    while (!sn.closed && uv_hrtime() < until)
        uv_run(&loop, ms > 0 ? UV_RUN_ONCE : UV_RUN_NOWAIT);
    for (int i = 0; i < 10 && !sn.closed; i++)
        uv_run(&loop, UV_RUN_NOWAIT);
    CHECK_EQ(sn.closed, 1);
    /* Each test leaves no handle behind: the loop closes, and opens anew for
     * the next test. */
    CHECK_EQ(uv_loop_close(&loop), 0);
    CHECK_EQ(uv_loop_init(&loop), 0);
}

static void finish(ob_lease *l) {
    ob_lease_close(l);
    closed_within(0);
}

/* The statement of a clean stop on the lease table: buckets and leadership
 * set free, then the presence row deleted. */
static void check_leave(ob_db *db) {
    CHECK(strstr(fake_db_sql(db), "UPDATE `outbox_lease` SET holder = NULL, epoch = epoch + 1 "
                                  "WHERE lease_key = '") != NULL);
    CHECK(strstr(fake_db_sql(db), "kind IN ('b', 'l') AND holder = ") != NULL);
    CHECK(strstr(fake_db_sql(db), "; DELETE FROM `outbox_lease` WHERE lease_key = '") != NULL);
    CHECK(strstr(fake_db_sql(db), "AND kind = 'i' AND slot = ") != NULL);
}

/* A standby finds the leader's session silent: it asks for the leader's
 * workers by their locks, ends them, then the leader (one of them already
 * gone), and takes the leadership in the next survey. */
static void test_takeover(void) {
    ob_lease *l = make(1, 0);
    CHECK_EQ(ob_lease_stale_ms(l), 2000);
    CHECK_EQ(ob_lease_valid_ms(l), 1000);
    connect_ok(l);
    ob_db *db = next_query(); /* the check of the ordering columns */
    CHECK(strstr(fake_db_sql(db), "SELECT seq, bucket FROM `db`.`outbox` LIMIT 0") != NULL);
    fake_db_complete(db, 1, 0, NULL, 0);
    db = next_query(); /* the standby's survey */
    CHECK(strstr(fake_db_sql(db), "GET_LOCK(") != NULL);
    CHECK(strstr(fake_db_sql(db), "PROCESSLIST WHERE COMMAND = 'Sleep' AND TIME_MS > 2000") !=
          NULL);
    /* Only the holder of the leadership is read, whatever else is idle. */
    char want[160];
    snprintf(want, sizeof(want), "TIME_MS > 2000 AND ID IN (SELECT IS_USED_LOCK('%s:leader'))",
             base());
    CHECK(strstr(fake_db_sql(db), want) != NULL);
    row(db, 0, "0", "7", NULL, NULL);   /* held by session 7 */
    row(db, 0, NULL, NULL, "7", NULL);  /* which is silent */
    row(db, 0, NULL, NULL, "99", NULL); /* a silent session holding nothing of ours */
    modes(db, "0", "0", "2");
    fake_db_complete(db, 1, 0, NULL, 0);
    CHECK_EQ(sn.owned, 0);
    db = next_query();
    CHECK(strstr(fake_db_sql(db), ":w7.'") != NULL);
    row(db, 0, "8", NULL, NULL, NULL);
    row(db, 0, "9", NULL, NULL, NULL);
    fake_db_complete(db, 1, 0, NULL, 0);
    db = next_query();
    CHECK_STR(fake_db_sql(db), "KILL CONNECTION 8");
    fake_db_complete(db, 1, 0, NULL, 0);
    db = next_query();
    CHECK_STR(fake_db_sql(db), "KILL CONNECTION 9");
    fake_db_complete(db, 0, ER_NO_SUCH_THREAD, "Unknown thread id: 9", 0); /* ended meanwhile */
    db = next_query();
    CHECK_STR(fake_db_sql(db), "KILL CONNECTION 7"); /* the holder last */
    fake_db_complete(db, 1, 0, NULL, 0);
    CHECK_EQ(sn.fatal, 0);
    db = next_query(); /* at once: the leadership is free now */
    CHECK(strstr(fake_db_sql(db), "GET_LOCK(") != NULL);
    answer_leader(db, "1");
    CHECK_EQ(sn.owned, OB_ALL_BUCKETS);
    CHECK(ob_lease_valid(l));
    CHECK_EQ(ob_lease_session(l), 42);
    finish(l);
}

/* The owner's own fence: a round not answered within the validity (a third
 * of the takeover time) makes the lease invalid while still owned; its late
 * answer does not help (the proof dates from the sending), the next prompt
 * one does. A lost connection drops everything at once. */
static void test_validity(void) {
    ob_lease *l = make(1, 0);
    connect_checked(l);
    answer_leader(next_query(), "1");
    CHECK(ob_lease_valid(l));
    ob_db *db = next_query(); /* the leader's check, left unanswered */
    CHECK(strstr(fake_db_sql(db), "= CONNECTION_ID()") != NULL);
    usleep(1100 * 1000);
    CHECK(!ob_lease_valid(l));
    CHECK_EQ(sn.owned, OB_ALL_BUCKETS); /* still owned as far as it knows */
    answer_leader(db, "1");
    CHECK(!ob_lease_valid(l)); /* the proof counts from when the round was sent */
    answer_leader(next_query(), "1");
    CHECK(ob_lease_valid(l)); /* a round sent and answered at once */
    db = next_query();
    fake_db_complete(db, 0, 2013, "Lost connection to server during query", 1);
    CHECK_EQ(sn.owned, 0);
    CHECK(!ob_lease_valid(l));
    finish(l);
}

/* The server closes the lease's connection between rounds (the idle watch
 * tells it): every bucket goes at once, not at the next round, and the
 * lease connects again. */
static void test_lost_between_rounds(void) {
    ob_lease *l = make(1, 0);
    connect_checked(l);
    answer_leader(next_query(), "1");
    CHECK_EQ(sn.owned, OB_ALL_BUCKETS);
    fake_db_lose_idle(fake_db_last(), "the server closed the connection while it was idle");
    CHECK_EQ(sn.owned, 0);
    CHECK(!ob_lease_valid(l));
    for (int i = 0; i < 400 && fake_db_pending(fake_db_last()) != FAKE_CONNECT; i++)
        uv_run(&loop, UV_RUN_ONCE);
    CHECK_EQ(fake_db_pending(fake_db_last()), FAKE_CONNECT);
    finish(l);
}

/* Ordered mode: a silent holder of buckets is ended too; a live one is not. */
static void test_ordered_stale(void) {
    ob_lease *l = make(0, 0);
    connect_checked(l);
    ob_db *db = next_query();
    CHECK(strstr(fake_db_sql(db), "SELECT seq FROM s_) s_ UNION ALL SELECT NULL, NULL, NULL, ID") !=
          NULL);
    /* The idle sessions read are the holders of buckets and presence locks
     * alone (issue 29: 64 other idle sessions hid a frozen owner). */
    char want[512];
    snprintf(want, sizeof(want),
             "AND ID IN (SELECT IS_USED_LOCK(CONCAT('%s:b', seq)) FROM " OB_SQL_SEQ_0_TO
             " UNION SELECT IS_USED_LOCK(CONCAT('%s:m', seq)) FROM " OB_SQL_SEQ_0_TO ")",
             base(), 63, base(), 63);
    CHECK(strstr(fake_db_sql(db), want) != NULL);
    row(db, 0, "0", "5", "5", NULL); /* bucket 0 and a presence lock: session 5, live */
    row(db, 0, "1", "6", "6", NULL); /* bucket 1: session 6, silent */
    row(db, 0, "2", NULL, NULL, NULL);
    row(db, 0, NULL, NULL, NULL, "6");
    modes(db, "0", "2", "0");
    fake_db_complete(db, 1, 0, NULL, 0);
    db = next_query();
    CHECK(strstr(fake_db_sql(db), ":w6.'") != NULL);
    fake_db_complete(db, 1, 0, NULL, 0); /* no worker sessions */
    db = next_query();
    CHECK_STR(fake_db_sql(db), "KILL CONNECTION 6");
    fake_db_complete(db, 1, 0, NULL, 0);
    db = next_query();
    CHECK(strstr(fake_db_sql(db), "IS_USED_LOCK(CONCAT(") != NULL); /* the next survey */
    finish(l);
}

/* More silent holders listed than a round keeps (the survey's filter makes
 * it impossible; a server that answered so anyway): the ones left out are
 * named in a line, and the holder among the kept ones is still ended. */
static void test_many_silent(void) {
    ob_lease *l = make(0, 0);
    connect_checked(l);
    ob_db *db = next_query();
    row(db, 0, "0", "6", "6", NULL); /* bucket 0: session 6 */
    char id[16];
    for (int i = 0; i < 2 * OB_BUCKETS + 2; i++) {
        snprintf(id, sizeof(id), "%d", i == 3 ? 6 : 1000 + i);
        row(db, 0, NULL, NULL, NULL, id);
    }
    modes(db, "0", "2", "0");
    left_out = 0;
    fake_db_complete(db, 1, 0, NULL, 0);
    CHECK_EQ(left_out, 2);
    db = next_query();
    CHECK(strstr(fake_db_sql(db), ":w6.'") != NULL);
    finish(l);
}

/* A plain lease (unordered relay) beside an ordered relay: fatal at start,
 * naming the mode. */
static void test_mode_at_start(void) {
    ob_lease *l = make(0, 1);
    connect_checked(l); /* the cluster probe: a single server */
    ob_db *db = next_query();
    CHECK(strstr(fake_db_sql(db), "DO 0; SELECT GET_LOCK(CONCAT(") != NULL);
    modes(db, "1", "3", "0");
    fake_db_complete(db, 1, 0, NULL, 0);
    CHECK_EQ(sn.fatal, 1);
    CHECK(strstr(sn.why, "already relayed in --ordered mode by 3 relay(s)") != NULL);
    CHECK(!ob_lease_checked(l));
    finish(l);
}

/* Once running, another mode that appears is warned of, not fatal; the
 * relay keeps its rounds. */
static void test_mode_later(void) {
    ob_lease *l = make(0, 1);
    connect_checked(l);
    ob_db *db = next_query();
    modes(db, "1", "0", "0");
    fake_db_complete(db, 1, 0, NULL, 0);
    CHECK(ob_lease_checked(l));
    for (int i = 0; i < 2; i++) {
        db = next_query();
        CHECK(strstr(fake_db_sql(db), "DO 0; DO 0; SELECT SUM(") != NULL); /* lock held */
        row(db, 2, "1", "0", "1", NULL);
        fake_db_complete(db, 1, 0, NULL, 0);
    }
    CHECK_EQ(sn.fatal, 0);
    CHECK_EQ(mode_warnings, 1); /* once, not every round */
    CHECK_EQ(sn.owned, 0);
    finish(l);
}

/* The halts: a table without the ordering columns (CHECKING) and a survey
 * refused before the lease ever worked (SURVEYING) stop the relay with the
 * cause. */
static void test_halts(void) {
    ob_lease *l = make(0, 0);
    connect_ok(l);
    ob_db *db = next_query();
    fake_db_complete(db, 0, ER_NO_SUCH_TABLE, "Table 'db.outbox' doesn't exist", 0);
    CHECK_EQ(sn.fatal, 1);
    CHECK(strstr(sn.why, "schema --migrate --table outbox") != NULL);
    finish(l);

    l = make(0, 0);
    connect_checked(l);
    fake_db_complete(next_query(), 0, ER_NO_SUCH_TABLE, "Table 'db.outbox' doesn't exist", 0);
    CHECK_EQ(sn.fatal, 1);
    CHECK(strstr(sn.why, "the lease's surveying statement failed") != NULL);
    finish(l);
}

/* Connects to a Galera node: the probe says wsrep is on with a provider. */
static void connect_galera(ob_lease *l) {
    connect_ok(l);
    ob_db *db = next_query();
    CHECK(strstr(fake_db_sql(db), "information_schema.GLOBAL_VARIABLES") != NULL);
    row(db, 0, "WSREP_ON", "ON", NULL, NULL);
    row(db, 0, "WSREP_PROVIDER_NAME", "Galera", NULL, NULL);
    fake_db_complete(db, 1, 0, NULL, 0);
}

/* On a Galera node the leases are rows of the lease table: the first round
 * registers the presence row and reads the buckets, the claim takes free
 * ones by compare-and-set, a lost race (1213) is quiet, and a presence row
 * found deleted loses everything and registers anew. */
static void test_table_mode(void) {
    ob_lease *l = make(0, 0);
    connect_galera(l);
    ob_db *db = next_query();
    CHECK(strstr(fake_db_sql(db), "SET SESSION wsrep_sync_wait = 1; INSERT INTO `outbox_lease`") !=
          NULL);
    CHECK(strstr(fake_db_sql(db), "DELETE FROM `outbox_lease`") != NULL);
    CHECK(strstr(fake_db_sql(db), "GET_LOCK") == NULL);
    for (int k = 0; k < 64; k++) {
        char s[8];
        snprintf(s, sizeof(s), "%d", k);
        row(db, 5, s, NULL, k == 0 ? "7" : NULL, NULL); /* one live instance: this one */
    }
    row(db, 7, "0", "1", "0", "0");
    fake_db_complete(db, 1, 0, NULL, 0);
    db = next_query(); /* the claim of every bucket */
    CHECK(strstr(fake_db_sql(db), "INSERT IGNORE INTO `outbox_lease`") != NULL);
    CHECK(strstr(fake_db_sql(db), "UPDATE `outbox_lease` AS x SET x.holder = ") != NULL);
    row(db, 5, "3", NULL, NULL, NULL);
    row(db, 5, "5", NULL, NULL, NULL);
    fake_db_complete(db, 1, 0, NULL, 0);
    CHECK_EQ(sn.owned, (1ULL << 3) | (1ULL << 5));
    db = next_query(); /* the next round renews, and loses a race */
    CHECK(strstr(fake_db_sql(db), "UPDATE `outbox_lease` SET renewed = NOW(6)") != NULL);
    int warned = mode_warnings;
    fake_db_complete(db, 0, ER_LOCK_DEADLOCK, "Deadlock found when trying to get lock", 0);
    CHECK_EQ(sn.fatal, 0);
    CHECK_EQ(mode_warnings, warned);
    db = next_query(); /* renewed nothing: the presence row was deleted */
    CHECK(strstr(fake_db_sql(db), "SET renewed = NOW(6)") != NULL);
    row(db, 7, "0", "1", "0", "0");
    fake_db_complete(db, 1, 0, NULL, 0);
    CHECK_EQ(sn.owned, 0);
    db = next_query();
    CHECK(strstr(fake_db_sql(db), "INSERT INTO `outbox_lease`") != NULL); /* registers again */
    fake_db_complete(db, 1, 0, NULL, 0);
    /* A clean stop between rounds gives its rows up at once, then closes;
     * a lost race (1213) is tried again. */
    uv_run(&loop, UV_RUN_NOWAIT);
    ob_lease_close(l);
    db = fake_db_last();
    CHECK_EQ(fake_db_pending(db), FAKE_QUERY);
    check_leave(db);
    fake_db_complete(db, 0, ER_LOCK_DEADLOCK, "Deadlock found when trying to get lock", 0);
    CHECK_EQ(sn.closed, 0);
    db = next_query();
    check_leave(db);
    fake_db_complete(db, 1, 0, NULL, 0);
    closed_within(0);
}

/* Leader mode on the lease table: a standby's round takes the leadership
 * row by compare-and-set; a leader's round checks it is still its own. */
static void test_table_leader(void) {
    ob_lease *l = make(1, 0);
    connect_galera(l);
    ob_db *db = next_query();
    CHECK(strstr(fake_db_sql(db), "INSERT IGNORE INTO `outbox_lease` (lease_key, kind, slot) "
                                  "VALUES (") != NULL);
    CHECK(strstr(fake_db_sql(db), "UPDATE `outbox_lease` AS x SET x.holder = ") != NULL);
    row(db, 5, "1", "7", NULL, NULL);
    row(db, 7, "0", "0", "1", "0");
    fake_db_complete(db, 1, 0, NULL, 0);
    CHECK_EQ(sn.owned, OB_ALL_BUCKETS);
    CHECK(ob_lease_valid(l));
    db = next_query(); /* leading: the check alone */
    CHECK(strstr(fake_db_sql(db), "SELECT COUNT(*) FROM `outbox_lease` x JOIN") != NULL);
    CHECK(strstr(fake_db_sql(db), "INSERT IGNORE") == NULL);
    fake_db_set_affected(db, 1, 1);    /* renewed */
    row(db, 5, "0", NULL, NULL, NULL); /* another holds it now */
    row(db, 7, "0", "0", "2", "0");
    fake_db_complete(db, 1, 0, NULL, 0);
    CHECK_EQ(sn.owned, 0);
    CHECK(!ob_lease_valid(l));
    CHECK_EQ(sn.fatal, 0);
    /* A clean stop during a round: the round answers first, then the rows
     * go; a database that never answers is left after the bound (about 2 s),
     * the rows to go stale as a killed instance's. */
    db = next_query();
    ob_lease_close(l);
    CHECK_EQ(fake_db_pending(db), FAKE_QUERY);
    CHECK(strstr(fake_db_sql(db), "SET SESSION wsrep_sync_wait = 1") != NULL);
    fake_db_complete(db, 1, 0, NULL, 0);
    db = next_query();
    check_leave(db);
    CHECK_EQ(sn.closed, 0);
    closed_within(5000);
}

/* The owner's own fence on the lease table, as on the server's locks: a
 * leader whose round is not answered within the validity (its node cut off
 * or frozen) may no longer publish, though it still owns the leadership as
 * far as it knows; the late answer does not prove the lease again, the next
 * prompt one does. */
static void test_table_validity(void) {
    ob_lease *l = make(1, 0);
    connect_galera(l);
    ob_db *db = next_query();
    row(db, 5, "1", "7", NULL, NULL);
    row(db, 7, "0", "0", "1", "0");
    fake_db_complete(db, 1, 0, NULL, 0);
    CHECK(ob_lease_valid(l));
    db = next_query(); /* the leader's check, left unanswered */
    CHECK(strstr(fake_db_sql(db), "SELECT COUNT(*) FROM `outbox_lease` x JOIN") != NULL);
    usleep(1100 * 1000);
    CHECK(!ob_lease_valid(l));
    CHECK_EQ(sn.owned, OB_ALL_BUCKETS);
    fake_db_set_affected(db, 1, 1);
    row(db, 5, "1", NULL, NULL, NULL);
    row(db, 7, "0", "0", "1", "0");
    fake_db_complete(db, 1, 0, NULL, 0);
    CHECK(!ob_lease_valid(l)); /* the proof counts from when the round was sent */
    db = next_query();
    fake_db_set_affected(db, 1, 1);
    row(db, 5, "1", NULL, NULL, NULL);
    row(db, 7, "0", "0", "1", "0");
    fake_db_complete(db, 1, 0, NULL, 0);
    CHECK(ob_lease_valid(l));
    db = next_query();
    fake_db_complete(db, 0, 2013, "Lost connection to server during query", 1);
    CHECK_EQ(sn.owned, 0);
    CHECK(!ob_lease_valid(l));
    finish(l);
}

/* A Galera node without the lease table: the relay stops, naming it. */
static void test_table_missing(void) {
    ob_lease *l = make(0, 1);
    connect_galera(l);
    fake_db_complete(next_query(), 0, ER_NO_SUCH_TABLE, "Table 'db.outbox_lease' doesn't exist", 0);
    CHECK_EQ(sn.fatal, 1);
    CHECK(strstr(sn.why, "lease table `outbox_lease`") != NULL);
    CHECK(strstr(sn.why, "schema --no-function --table outbox") != NULL);
    finish(l);
}

int main(void) {
    uv_loop_init(&loop);
    test_takeover();
    test_validity();
    test_lost_between_rounds();
    test_ordered_stale();
    test_many_silent();
    test_mode_at_start();
    test_mode_later();
    test_halts();
    test_table_mode();
    test_table_leader();
    test_table_validity();
    test_table_missing();
    CHECK_EQ(uv_loop_close(&loop), 0);
    printf("test_lease: ok\n");
    return 0;
}
