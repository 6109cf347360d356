/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A stand-in for the members' gap proof (src/readers/gap_proof.h) in unit
 * tests of the cursor reader on a Galera cluster: no member connection. The
 * test reads the rounds the reader began and says which one every member
 * proved.
 */
#ifndef OB_TEST_FAKE_GAP_PROOF_H
#define OB_TEST_FAKE_GAP_PROOF_H

#include "gap_proof.h"

struct ob_gap_proof {
    uint64_t round;  /* the latest round begun */
    uint64_t proven; /* the round every member proved, as the test says */
    int needed;      /* rounds begun for a gap or mark waiting for its bound */
    int idle;        /* calls with nothing to bound */
    int refuse_set;  /* ob_gap_proof_set refuses the member list, as the test says */
    const char *why; /* what ob_gap_proof_why says, as the test says (NULL: nothing) */
};

/* How many proofs were closed. */
int fake_gap_proof_closes(void);

#endif
