/* SPDX-License-Identifier: Apache-2.0 */
/* The fake members' gap proof (fake_gap_proof.h). */
#include "fake_gap_proof.h"

#include <stdlib.h>

ob_gap_proof *ob_gap_proof_new(uv_loop_t *loop, const ob_db_config *db, const ob_log *log) {
    (void)loop;
    (void)db;
    (void)log;
    return calloc(1, sizeof(ob_gap_proof));
}

int ob_gap_proof_set(ob_gap_proof *p, const char *list, int size, const char *self) {
    (void)list;
    (void)size;
    (void)self;
    return p->refuse_set ? -1 : 0;
}

/* As the real one, but an idle read never begins a round: the test's rounds
 * are the reads that need one. */
uint64_t ob_gap_proof_round(ob_gap_proof *p, int needed) {
    if (!needed && p->round != 0) {
        p->idle++;
        return p->round;
    }
    p->needed += needed != 0;
    return ++p->round;
}

uint64_t ob_gap_proof_proven(const ob_gap_proof *p) {
    return p->proven;
}

int ob_gap_proof_missing(const ob_gap_proof *p) {
    return p->proven < p->round;
}

const char *ob_gap_proof_why(ob_gap_proof *p) {
    return p->why;
}

static int closes;

int fake_gap_proof_closes(void) {
    return closes;
}

void ob_gap_proof_close(ob_gap_proof *p, void (*closed)(void *data), void *data) {
    free(p);
    closes++;
    if (closed)
        closed(data);
}
