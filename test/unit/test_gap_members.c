/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The gap proof across a Galera cluster's members (src/readers/gap_members.c)
 * with fake answers: a round is proven on a member only by an answer past
 * the margin after the clock of a statement that started once the member
 * had applied the round's write-sets, with no transaction as old as that
 * bound; never while a member is down, not Synced or missing.
 */
#include "check.h"
#include "gap_members.h"

#define NONE -1.0

static void the_list(void) {
    ob_members ms, ar;
    ob_members_init(&ms);
    ob_members_init(&ar);
    CHECK_EQ(ob_members_set(&ms, "10.0.0.1:3306,10.0.0.2:3306,10.0.0.3:3306", 3, "10.0.0.2:3306"),
             0);
    CHECK_EQ(ms.n, 2);
    CHECK_STR(ms.m[0].addr, "10.0.0.1:3306");
    CHECK_STR(ms.m[1].addr, "10.0.0.3:3306");
    CHECK_EQ(ms.usable, 1);
    /* without wsrep_node_incoming_address a node lists AUTO */
    CHECK_EQ(ob_members_set(&ms, "AUTO,AUTO,AUTO", 3, "10.0.0.2:3306"), -1);
    CHECK_EQ(ms.usable, 0);
    CHECK_EQ(ob_members_proven(&ms), 0);
    /* the relay's node must be one of them */
    CHECK_EQ(ob_members_set(&ms, "10.0.0.1:3306,10.0.0.3:3306", 2, "10.0.0.2:3306"), -1);
    /* a one-node cluster: nothing to ask, every round proven */
    CHECK_EQ(ob_members_set(&ms, "10.0.0.2:3306", 1, "10.0.0.2:3306"), 0);
    CHECK_EQ(ob_members_begin(&ms), 1);
    CHECK_EQ(ob_members_proven(&ms), 1);
    /* an empty entry is an arbitrator (garbd): counted in the size, asked
     * nothing; the other data member is still needed for a proof */
    CHECK_EQ(ob_members_set(&ar, "10.0.0.1:3306,,10.0.0.2:3306", 3, "10.0.0.2:3306"), 0);
    CHECK_EQ(ar.n, 1);
    CHECK_EQ(ar.arbiters, 1);
    CHECK_EQ(ob_members_missing(&ar), 1); /* 10.0.0.1 not connected yet */
    CHECK_EQ(ob_members_set(&ar, "10.0.0.2:3306,", 2, "10.0.0.2:3306"), 0);
    CHECK_EQ(ar.n, 0);
    CHECK_EQ(ob_members_missing(&ar), 0);
    CHECK_EQ(ob_members_begin(&ar), 1);
    CHECK_EQ(ob_members_proven(&ar), 1); /* one data node and an arbitrator */
    /* a data member left out of the list while the size counts it */
    CHECK_EQ(ob_members_set(&ar, "10.0.0.2:3306,", 3, "10.0.0.2:3306"), 0);
    CHECK_EQ(ob_members_missing(&ar), 1);
    CHECK_EQ(ob_members_proven(&ar), 0);
}

/* One statement on member i: sent now, answered at now_s. */
static void ask(ob_members *ms, int i, double now_s, double oldest_s) {
    ob_members_asked(ms, i);
    ob_members_answer(ms, i, now_s, oldest_s, 1);
}

static void a_round_proven(void) {
    ob_members ms;
    ob_members_init(&ms);
    CHECK_EQ(ob_members_set(&ms, "a:1,b:1", 2, "a:1"), 0);
    CHECK_EQ(ob_members_missing(&ms), 1); /* not connected yet */
    ask(&ms, 0, 99.0, NONE);
    CHECK_EQ(ob_members_missing(&ms), 0);
    CHECK_EQ(ob_members_begin(&ms), 1); /* a read completed */
    /* the first statement after the read makes b apply its write-sets; its
     * own clock may come before that, so it bounds nothing */
    ask(&ms, 0, 100.0, NONE);
    CHECK_EQ(ms.m[0].round, 0);
    CHECK_EQ(ob_members_due(&ms, 0), 0.0);
    ask(&ms, 0, 100.5, NONE); /* the bound */
    CHECK_EQ(ms.m[0].round, 1);
    CHECK(ob_members_due(&ms, 0) > 100.69 && ob_members_due(&ms, 0) < 100.71);
    ask(&ms, 0, 100.6, NONE); /* within the margin */
    CHECK_EQ(ob_members_proven(&ms), 0);
    ask(&ms, 0, 101.2, 100.0); /* a transaction from the bound's second is alive */
    CHECK_EQ(ob_members_proven(&ms), 0);
    ask(&ms, 0, 101.3, 101.0); /* the oldest started after FLOOR(bound) */
    CHECK_EQ(ob_members_proven(&ms), 1);
    CHECK_EQ(ob_members_due(&ms, 0), 0.0);
}

/* Reads complete faster than the margin: the bound waits for its proof. */
static void rounds_faster_than_the_margin(void) {
    ob_members ms;
    ob_members_init(&ms);
    CHECK_EQ(ob_members_set(&ms, "a:1,b:1", 2, "a:1"), 0);
    double t = 200.0;
    uint64_t proven = 0;
    for (int k = 0; k < 100; k++, t += 0.05) {
        ob_members_begin(&ms);
        ask(&ms, 0, t, NONE);
        uint64_t p = ob_members_proven(&ms);
        CHECK(p >= proven);
        CHECK(p < ms.round); /* never the round just begun */
        proven = p;
    }
    CHECK(proven >= 80);
}

static void down_missing_and_not_synced(void) {
    ob_members ms;
    ob_members_init(&ms);
    CHECK_EQ(ob_members_set(&ms, "a:1,b:1,c:1", 3, "a:1"), 0);
    ob_members_begin(&ms);
    for (int i = 0; i < 2; i++) {
        ask(&ms, i, 300.0, NONE);
        ask(&ms, i, 300.1, NONE);
        ask(&ms, i, 301.5, NONE);
    }
    CHECK_EQ(ob_members_proven(&ms), 1);
    /* c lost: what it proved stands, no later round until it answers again
     * through a whole one */
    ob_members_down(&ms, 1);
    CHECK_EQ(ob_members_missing(&ms), 1);
    ob_members_begin(&ms);
    ask(&ms, 0, 302.0, NONE);
    ask(&ms, 0, 302.1, NONE);
    ask(&ms, 0, 303.0, NONE);
    CHECK_EQ(ob_members_proven(&ms), 1);
    ask(&ms, 1, 302.0, NONE);
    CHECK_EQ(ob_members_proven(&ms), 1);
    ask(&ms, 1, 302.1, NONE);
    ask(&ms, 1, 303.0, NONE);
    CHECK_EQ(ob_members_proven(&ms), 2);
    /* b not Synced: down, its bound void, round 3 not proven there */
    ob_members_begin(&ms);
    ask(&ms, 1, 304.0, NONE);
    ask(&ms, 1, 304.1, NONE);
    ask(&ms, 1, 305.0, NONE);
    ob_members_answer(&ms, 0, 304.0, NONE, 0);
    CHECK_EQ(ms.m[0].up, 0);
    ask(&ms, 0, 305.0, NONE); /* Synced again: a new bound first */
    CHECK_EQ(ob_members_proven(&ms), 2);
    /* c leaves: the cluster of 2 keeps b's state */
    CHECK_EQ(ob_members_set(&ms, "a:1,b:1", 2, "a:1"), 0);
    CHECK_EQ(ms.n, 1);
    CHECK_EQ(ms.m[0].proven, 2);
    CHECK_EQ(ms.m[0].up, 1);
    /* the probe says 3 while the list names 2: one is missing */
    CHECK_EQ(ob_members_set(&ms, "a:1,b:1", 3, "a:1"), 0);
    ask(&ms, 0, 305.0, NONE);
    CHECK_EQ(ob_members_missing(&ms), 1);
    CHECK_EQ(ob_members_proven(&ms), 0);
}

static void statements(void) {
    ob_buf b = {0};
    ob_members_sql_probe(&b);
    CHECK(strstr(b.p, "UNIX_TIMESTAMP(NOW(6))") == b.p + 7);
    CHECK(strstr(b.p, "trx_mysql_thread_id <> CONNECTION_ID()") != NULL);
    CHECK(strstr(b.p, "'WSREP_LOCAL_STATE_COMMENT'") != NULL);
    ob_buf_reset(&b);
    ob_members_sql_advance(&b, "`outbox_cursor`", "outbox", "`outbox_lease`", "outbox:t", 42,
                           (1ull << 3) | (1ull << 7), 900);
    CHECK_STR(b.p, "UPDATE `outbox_cursor` AS c_ JOIN `outbox_lease` AS p_ ON p_.lease_key = "
                   "'outbox:t' AND p_.kind = 'i' AND p_.slot = 42 SET c_.seq = 900, p_.epoch = "
                   "p_.epoch + 1 WHERE c_.table_name = 'outbox' AND c_.bucket IN (3,7) AND "
                   "c_.seq < 900");
    ob_buf_free(&b);
}

int main(void) {
    the_list();
    a_round_proven();
    rounds_faster_than_the_margin();
    down_missing_and_not_synced();
    statements();
    return 0;
}
