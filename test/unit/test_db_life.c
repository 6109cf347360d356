/* SPDX-License-Identifier: Apache-2.0 */
/* The connection policy every owner of a database connection shares:
 * the gauge and the lost counter, the backoff, the verdict on a failure,
 * and an error said once. */
#include <mysqld_error.h>

#include "check.h"
#include "db_life.h"

static void up_and_down_move_the_gauge_once(void) {
    uint32_t gauge = 0;
    uint64_t lost = 0;
    ob_db_life l;
    ob_db_life_init(&l, &gauge, &lost);
    CHECK_EQ(ob_db_life_down(&l), 0); /* never up: nothing was lost */
    CHECK_EQ(lost, 0);
    ob_db_life_up(&l);
    ob_db_life_up(&l); /* said twice, counted once */
    CHECK_EQ(gauge, 1);
    CHECK_EQ(ob_db_life_down(&l), 1);
    CHECK_EQ(gauge, 0);
    CHECK_EQ(lost, 1);
    CHECK_EQ(ob_db_life_down(&l), 0); /* the loss found again: counted once */
    CHECK_EQ(lost, 1);
    ob_db_life_up(&l);
    ob_db_life_closed(&l); /* closed by its owner: not a loss */
    CHECK_EQ(gauge, 0);
    CHECK_EQ(lost, 1);
}

static void an_owner_without_counters_is_followed_all_the_same(void) {
    ob_db_life l;
    ob_db_life_init(&l, NULL, NULL);
    ob_db_life_up(&l);
    CHECK_EQ(l.up, 1);
    CHECK_EQ(ob_db_life_down(&l), 1);
    CHECK_EQ(l.up, 0);
}

static void the_backoff_grows_to_its_cap_and_starts_over_on_an_answer(void) {
    ob_db_life l;
    ob_db_life_init(&l, NULL, NULL);
    /* The first wait is the shortest: half to all of the minimum. */
    uint64_t d = ob_db_life_backoff(&l);
    CHECK_INT(d, >=, OB_DB_LIFE_MIN_MS / 2);
    CHECK_INT(d, <=, OB_DB_LIFE_MIN_MS);
    d = ob_db_life_backoff(&l);
    CHECK_INT(d, >=, OB_DB_LIFE_MIN_MS);
    CHECK_INT(d, <=, 2 * OB_DB_LIFE_MIN_MS);
    for (int i = 0; i < 200; i++) {
        d = ob_db_life_backoff(&l);
        CHECK_INT(d, <=, OB_DB_LIFE_MAX_MS);
    }
    CHECK_INT(d, >=, OB_DB_LIFE_MAX_MS / 2);
    /* Connected is not enough: a server that drops every connection at
     * once keeps the long wait. */
    ob_db_life_up(&l);
    CHECK_INT(ob_db_life_backoff(&l), >=, OB_DB_LIFE_MAX_MS / 2);
    ob_db_life_worked(&l);
    CHECK_EQ(l.failures, 0);
    CHECK_INT(ob_db_life_backoff(&l), <=, OB_DB_LIFE_MIN_MS);
}

static void a_permanent_error_is_fatal_only_before_the_owner_settled(void) {
    ob_db_life l;
    ob_db_life_init(&l, NULL, NULL);
    CHECK_EQ(ob_db_life_verdict(&l, ER_ACCESS_DENIED_ERROR), OB_DB_FATAL);
    CHECK_EQ(ob_db_life_verdict(&l, ER_BAD_DB_ERROR), OB_DB_FATAL);
    CHECK_EQ(ob_db_life_verdict(&l, 2003), OB_DB_RETRY); /* cannot connect: an outage */
    CHECK_EQ(ob_db_life_verdict(&l, ER_LOCK_DEADLOCK), OB_DB_RETRY);
    ob_db_life_up(&l);
    CHECK_EQ(ob_db_life_verdict(&l, ER_ACCESS_DENIED_ERROR), OB_DB_FATAL); /* up, not proven */
    ob_db_life_settle(&l);
    /* A grant taken away later is the database's outage, waited out. */
    CHECK_EQ(ob_db_life_verdict(&l, ER_ACCESS_DENIED_ERROR), OB_DB_RETRY);
    CHECK_EQ(ob_db_life_verdict(&l, ER_TABLEACCESS_DENIED_ERROR), OB_DB_RETRY);
}

static void a_lasting_error_is_said_once(void) {
    ob_db_life l;
    ob_db_life_init(&l, NULL, NULL);
    CHECK_EQ(ob_db_life_say(&l, 2003), 1);
    CHECK_EQ(ob_db_life_say(&l, 2003), 0);
    CHECK_EQ(ob_db_life_say(&l, 2013), 1); /* another error */
    CHECK_EQ(ob_db_life_say(&l, 2003), 1); /* and back */
    ob_db_life_up(&l);
    CHECK_EQ(ob_db_life_say(&l, 2003), 0); /* connected, nothing answered yet */
    ob_db_life_worked(&l);
    CHECK_EQ(ob_db_life_say(&l, 2003), 1); /* after an answer: said again */
    CHECK_EQ(ob_db_life_say(&l, 0), 1);    /* an error without a number is said too */
    CHECK_EQ(ob_db_life_say(&l, 0), 0);
}

int main(void) {
    up_and_down_move_the_gauge_once();
    an_owner_without_counters_is_followed_all_the_same();
    the_backoff_grows_to_its_cap_and_starts_over_on_an_answer();
    a_permanent_error_is_fatal_only_before_the_owner_settled();
    a_lasting_error_is_said_once();
    return 0;
}
