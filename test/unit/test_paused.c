/* SPDX-License-Identifier: Apache-2.0 */
/* Subjects paused by their per-subject limit (paused.h), without servers:
 * the back-off, the end of a pause, what is said, the bound. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "paused.h"

static int lines;
static char last[1024];

static void on_log(outbox_log_level level, const char *msg, void *data) {
    (void)level;
    (void)data;
    lines++;
    snprintf(last, sizeof(last), "%s", msg);
}

static ob_row row(const char *type, const char *event) {
    ob_row r;
    memset(&r, 0, sizeof(r));
    r.aggregate_type = type;
    r.aggregate_type_len = strlen(type);
    r.event_type = event;
    r.event_type_len = strlen(event);
    return r;
}

/* A refusal pauses the subject; its rows wait until the retry, the others
 * flow; a refused retry doubles the back-off up to 5 s; a row stored that
 * left after the pause began ends it, one that left before does not. */
static void pause_backoff_resume(void) {
    ob_log log = {on_log, NULL, OUTBOX_LOG_DEBUG};
    ob_paused p;
    ob_paused_init(&p, "app", &log);
    ob_row inv = row("invoice", "created"), ord = row("order", "created");
    uint64_t wait;
    lines = 0;
    CHECK_EQ(ob_paused_wait(&p, &inv, 1000), 0);
    CHECK_EQ(ob_paused_refused(&p, &inv, 1000, &wait), OB_PAUSE_NEW);
    CHECK_EQ(wait, 1000);
    CHECK_EQ(lines, 1);
    CHECK(strstr(last, "subject 'app.invoice.created' is full") != NULL);
    CHECK_EQ(ob_paused_count(&p), 1);
    /* Rows sent before the refusal came back are refused too: no change. */
    CHECK_EQ(ob_paused_refused(&p, &inv, 1100, &wait), OB_PAUSE_AGAIN);
    CHECK_EQ(wait, 900);
    CHECK_EQ(ob_paused_wait(&p, &inv, 1500), 500);
    CHECK_EQ(ob_paused_wait(&p, &ord, 1500), 0);
    /* The retry at 2000 is refused: 2 s, then 4, then 5 at most. */
    CHECK_EQ(ob_paused_wait(&p, &inv, 2000), 0);
    CHECK_EQ(ob_paused_refused(&p, &inv, 2000, &wait), OB_PAUSE_AGAIN);
    CHECK_EQ(wait, 2000);
    CHECK_EQ(ob_paused_refused(&p, &inv, 4000, &wait), OB_PAUSE_AGAIN);
    CHECK_EQ(wait, 4000);
    CHECK_EQ(ob_paused_refused(&p, &inv, 8000, &wait), OB_PAUSE_AGAIN);
    CHECK_EQ(wait, 5000);
    CHECK_EQ(lines, 1); /* said once */
    char why[400];
    CHECK(ob_paused_why(&p, why, sizeof(why)) != NULL);
    CHECK(strstr(why, "1 subject(s) paused") != NULL);
    CHECK(strstr(why, "'app.invoice.created'") != NULL);
    /* A row that left before the pause began does not end it. */
    CHECK_EQ(ob_paused_stored(&p, &inv, 900, 9000), 0);
    CHECK_EQ(ob_paused_stored(&p, &ord, 13000, 13100), 0);
    CHECK_EQ(ob_paused_stored(&p, &inv, 13000, 13100), 1);
    CHECK_EQ(ob_paused_count(&p), 0);
    CHECK_EQ(lines, 2);
    CHECK(strstr(last, "takes messages again") != NULL);
    CHECK(ob_paused_why(&p, why, sizeof(why)) == NULL);
    CHECK_EQ(ob_paused_wait(&p, &inv, 13200), 0);
    ob_paused_free(&p);
}

/* "a.b" + "c" and "a" + "b.c" are one NATS subject, a.b.c: one pause. */
static void subject_not_fields(void) {
    ob_paused p;
    ob_paused_init(&p, "app", NULL);
    ob_row x = row("a.b", "c"), y = row("a", "b.c"), z = row("a", "bc");
    uint64_t wait;
    CHECK_EQ(ob_paused_refused(&p, &x, 10, &wait), OB_PAUSE_NEW);
    CHECK_EQ(ob_paused_wait(&p, &y, 20), 990);
    CHECK_EQ(ob_paused_wait(&p, &z, 20), 0);
    ob_paused_free(&p);
}

/* At most OB_PAUSED_MAX subjects are tracked; past that a refused row
 * still waits (5 s), untracked, said once. Ending pauses in any order
 * keeps the others findable (the table's deletions). Subjects not met for
 * a minute are forgotten. */
static void bound_and_forget(void) {
    ob_log log = {on_log, NULL, OUTBOX_LOG_DEBUG};
    ob_paused p;
    ob_paused_init(&p, "app", &log);
    char names[OB_PAUSED_MAX + 2][16];
    uint64_t wait;
    lines = 0;
    for (int i = 0; i < OB_PAUSED_MAX; i++) {
        snprintf(names[i], sizeof(names[i]), "t%d", i);
        ob_row r = row(names[i], "e");
        CHECK_EQ(ob_paused_refused(&p, &r, 100, &wait), OB_PAUSE_NEW);
    }
    /* One line a second at most: the first said, the others counted. */
    CHECK_EQ(lines, 1);
    CHECK_EQ(ob_paused_count(&p), OB_PAUSED_MAX);
    ob_row more = row("more", "e");
    CHECK_EQ(ob_paused_refused(&p, &more, 100, &wait), OB_PAUSE_UNTRACKED);
    CHECK_EQ(wait, OB_PAUSE_MAX_MS);
    CHECK_EQ(ob_paused_refused(&p, &more, 100, &wait), OB_PAUSE_UNTRACKED);
    CHECK_EQ(lines, 2);
    /* End every other pause, then find each of the rest. */
    for (int i = 0; i < OB_PAUSED_MAX; i += 2) {
        ob_row r = row(names[i], "e");
        CHECK_EQ(ob_paused_stored(&p, &r, 200, 300), 1);
    }
    CHECK_EQ(ob_paused_count(&p), OB_PAUSED_MAX / 2);
    for (int i = 0; i < OB_PAUSED_MAX; i++) {
        ob_row r = row(names[i], "e");
        CHECK_EQ(ob_paused_wait(&p, &r, 500), i % 2 ? 600 : 0);
    }
    /* Not refused nor waited for a minute past their retry: forgotten. */
    ob_row r1 = row(names[1], "e");
    CHECK_EQ(ob_paused_wait(&p, &r1, 500 + OB_PAUSE_FORGET_MS + 2000), 0);
    CHECK_EQ(ob_paused_count(&p), 0);
    ob_paused_free(&p);
}

int main(void) {
    pause_backoff_resume();
    subject_not_fields();
    bound_and_forget();
    printf("test_paused: ok\n");
    return 0;
}
