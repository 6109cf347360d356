/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A stand-in for a Galera member's connection (src/readers/gap_member_link.h)
 * in unit tests of the gap proof (gap_proof.c): no connection, no server.
 * The test sees what the proof made and asked, and plays the member's side
 * through the callbacks the proof gave (sent, answer, down). A close is
 * noted and completed by the test (fake_link_closed), as the real link
 * completes it after its handles closed.
 */
#ifndef OB_TEST_FAKE_MEMBER_LINK_H
#define OB_TEST_FAKE_MEMBER_LINK_H

#include "gap_member_link.h"

#define FAKE_LINKS_MAX 64

struct ob_member_link {
    char host[64];
    unsigned port;
    unsigned op_timeout_ms;
    int index;
    ob_member_link_callbacks cbs;
    int started;
    int asks;    /* ob_member_link_ask calls */
    int closing; /* ob_member_link_close was called */
    int done;    /* its closed callback ran */
    char why[128];
};

/* Every link made since the last fake_links_reset, in order. */
extern ob_member_link *fake_links[FAKE_LINKS_MAX];
extern int fake_nlinks;
/* The next ob_member_link_new returns NULL (out of memory). */
extern int fake_link_fail_next;

/* The links made and still open (not closing) for member index i: the
 * newest such, or NULL. */
ob_member_link *fake_link_of(int i);
/* The member's side: its statement sent, then answered. */
void fake_link_answer(ob_member_link *l, double now_s, double oldest_s, int synced);
/* The link's connection failed: the owner is told down, and why() says msg. */
void fake_link_down(ob_member_link *l, unsigned err, const char *msg);
/* Completes every close asked for: the closed callbacks run, the links are
 * freed. Returns how many. */
int fake_links_closed(void);
/* Forgets the links made (every one must be closed and completed). */
void fake_links_reset(void);

#endif
