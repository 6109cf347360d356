/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A member's connection for the gap proof (src/readers/gap_member_link.c)
 * against the fake connection: the statement runs in a causal session when
 * asked, one at a time (an ask while it runs sends it again after), its
 * answer is told (clock, oldest transaction, Synced); a refused statement
 * or a lost connection tells the owner the member is down, and the link
 * connects again and asks again by itself. A refusal (the account locked
 * there) is said once however often it comes back, and named by the link's
 * why; the member serving again is said once, and a state that is not
 * Synced once per state.
 */
#include <mysqld_error.h>
#include <stdio.h>
#include <string.h>
#include <uv.h>

#include "check.h"
#include "fake_db.h"
#include "gap_member_link.h"

static uv_loop_t loop;
static int sent, answers, downs, closed, synced;
static double now, oldest;
static unsigned down_err;

static void on_sent(void *d, int i) {
    (void)d;
    CHECK_EQ(i, 2);
    sent++;
}
static void on_answer(void *d, int i, double n, double o, int s) {
    (void)d;
    CHECK_EQ(i, 2);
    answers++;
    now = n;
    oldest = o;
    synced = s;
}
static void on_down(void *d, int i, unsigned err, const char *msg) {
    (void)d;
    (void)msg;
    CHECK_EQ(i, 2);
    downs++;
    down_err = err;
}
static void on_closed(void *d) {
    (void)d;
    closed++;
}

static ob_db *next(fake_op op) {
    ob_db *db = fake_db_await(&loop, op);
    if (db == NULL)
        CHECK_FAIL_("nothing came");
    return db;
}

static void answer(ob_db *db, const char *n, const char *o, const char *state) {
    char *cols[3] = {(char *)n, (char *)o, (char *)state};
    unsigned long lens[3] = {strlen(n), o ? strlen(o) : 0, strlen(state)};
    fake_db_no_result(db, 0);
    fake_db_add_row_n(db, 1, 3, cols, lens);
    fake_db_complete(db, 1, 0, NULL, 0);
}

/* The log's lines since the last reset, one after another. */
static char said[4096];
static void keep_log(outbox_log_level level, const char *line, void *data) {
    (void)level;
    (void)data;
    size_t n = strlen(said);
    snprintf(said + n, sizeof(said) - n, "%s\n", line);
}
static ob_log lg = {keep_log, NULL, OUTBOX_LOG_INFO};

/* How many lines of the log contain `what`. */
static int lines_with(const char *what) {
    int n = 0;
    for (const char *p = said; (p = strstr(p, what)) != NULL; p++)
        n++;
    return n;
}

int main(void) {
    uv_loop_init(&loop);
    ob_db_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.host = "10.0.0.3";
    cfg.port = 3306;
    ob_member_link_callbacks cbs = {on_sent, on_answer, on_down, on_closed, NULL};
    ob_member_link *l = ob_member_link_new(&loop, &cfg, &lg, 2, &cbs);
    CHECK(l != NULL);
    ob_member_link_start(l);
    ob_member_link_ask(l); /* asked while connecting: sent once connected */
    ob_db *db = next(FAKE_CONNECT);
    CHECK_EQ(sent, 0);
    fake_db_complete(db, 1, 0, NULL, 0);
    db = next(FAKE_QUERY);
    CHECK_EQ(sent, 1);
    CHECK(strncmp(fake_db_sql(db), "SET SESSION wsrep_sync_wait = 1; SELECT UNIX_TIMESTAMP(NOW(6))",
                  62) == 0);
    /* asked again while it runs: once more after the answer, not twice */
    ob_member_link_ask(l);
    ob_member_link_ask(l);
    answer(db, "100.5", NULL, "Synced");
    CHECK_EQ(answers, 1);
    CHECK(now > 100.49 && now < 100.51);
    CHECK(oldest < 0);
    CHECK_EQ(synced, 1);
    db = next(FAKE_QUERY);
    CHECK_EQ(sent, 2);
    answer(db, "101.0", "99", "Donor/Desynced");
    CHECK_EQ(answers, 2);
    CHECK_EQ(synced, 0);
    CHECK(oldest > 98.9 && oldest < 99.1);
    uv_run(&loop, UV_RUN_NOWAIT);
    CHECK_EQ(fake_db_pending(db), FAKE_NONE); /* nothing asked: idle */

    /* PROCESS missing there: down, and after the backoff connected and
     * asked again */
    ob_member_link_ask(l);
    db = next(FAKE_QUERY);
    fake_db_complete(db, 0, ER_SPECIFIC_ACCESS_DENIED_ERROR, "Access denied; you need PROCESS", 0);
    CHECK_EQ(downs, 1);
    CHECK_EQ(down_err, ER_SPECIFIC_ACCESS_DENIED_ERROR);
    db = next(FAKE_CONNECT);
    fake_db_complete(db, 1, 0, NULL, 0);
    db = next(FAKE_QUERY);
    answer(db, "102.0", NULL, "Synced");
    CHECK_EQ(answers, 3);

    /* lost while running: down, reconnected, asked again */
    ob_member_link_ask(l);
    db = next(FAKE_QUERY);
    fake_db_complete(db, 0, 2013, "Lost connection to server during query", 1);
    CHECK_EQ(downs, 2);
    db = next(FAKE_CONNECT);
    fake_db_complete(db, 0, 2003, "Can't connect", 1); /* still away: no second down */
    CHECK_EQ(downs, 2);
    db = next(FAKE_CONNECT);
    fake_db_complete(db, 1, 0, NULL, 0);
    db = next(FAKE_QUERY);
    answer(db, "103.0", NULL, "Synced");
    CHECK_EQ(answers, 4);
    CHECK_EQ(ob_member_link_why(l)[0], '\0');

    /* killed there, then its account locked: down once, the refusal said
     * once however often it comes back, and named by why */
    said[0] = '\0';
    ob_member_link_ask(l);
    db = next(FAKE_QUERY);
    fake_db_complete(db, 0, ER_CONNECTION_KILLED, "Connection was killed", 1);
    CHECK_EQ(downs, 3);
    for (int i = 0; i < 2; i++) {
        db = next(FAKE_CONNECT);
        fake_db_complete(db, 0, 4151, "Access denied, this account is locked", 0);
    }
    CHECK_EQ(downs, 3);
    CHECK(strncmp(ob_member_link_why(l), "4151 Access denied, this account is locked", 42) == 0);
    CHECK_EQ(lines_with("cluster member 10.0.0.3:3306 cannot serve the gap proof: 4151"), 1);
    CHECK_EQ(lines_with("cannot serve"), 2);
    CHECK_EQ(lines_with("again"), 0);
    /* unlocked: it serves again, said once */
    db = next(FAKE_CONNECT);
    fake_db_complete(db, 1, 0, NULL, 0);
    db = next(FAKE_QUERY);
    answer(db, "104.0", NULL, "Synced");
    CHECK_EQ(answers, 5);
    CHECK_EQ(ob_member_link_why(l)[0], '\0');
    CHECK_EQ(lines_with("cluster member 10.0.0.3:3306 serves the gap proof again"), 1);
    ob_member_link_ask(l);
    db = next(FAKE_QUERY);
    answer(db, "105.0", NULL, "Synced");
    CHECK_EQ(lines_with("again"), 1);

    /* not Synced twice: said once, named by why; Synced again: said once */
    said[0] = '\0';
    for (int i = 0; i < 2; i++) {
        ob_member_link_ask(l);
        db = next(FAKE_QUERY);
        answer(db, "106.0", NULL, "Donor/Desynced");
    }
    CHECK(strcmp(ob_member_link_why(l), "not Synced (Donor/Desynced)") == 0);
    CHECK_EQ(lines_with("cannot serve the gap proof: not Synced (Donor/Desynced)"), 1);
    ob_member_link_ask(l);
    db = next(FAKE_QUERY);
    answer(db, "107.0", NULL, "Synced");
    CHECK_EQ(lines_with("serves the gap proof again"), 1);

    ob_member_link_close(l);
    while (uv_run(&loop, UV_RUN_ONCE))
        ;
    CHECK_EQ(closed, 1);
    CHECK_EQ(uv_loop_close(&loop), 0);

    /* closed before it started: freed, told */
    l = ob_member_link_new(&loop, &cfg, &lg, 2, &cbs);
    ob_member_link_close(l);
    CHECK_EQ(closed, 2);
    return 0;
}
