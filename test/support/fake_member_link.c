/* SPDX-License-Identifier: Apache-2.0 */
/* The fake member connection (fake_member_link.h). */
#include "fake_member_link.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

ob_member_link *fake_links[FAKE_LINKS_MAX];
int fake_nlinks;
int fake_link_fail_next;

ob_member_link *ob_member_link_new(uv_loop_t *loop, const ob_db_config *cfg, const ob_log *log,
                                   int index, const ob_member_link_callbacks *cbs) {
    (void)loop;
    (void)log;
    if (fake_link_fail_next) {
        fake_link_fail_next = 0;
        return NULL;
    }
    CHECK(fake_nlinks < FAKE_LINKS_MAX);
    ob_member_link *l = calloc(1, sizeof(*l));
    CHECK(l != NULL);
    snprintf(l->host, sizeof(l->host), "%s", cfg->host ? cfg->host : "");
    l->port = cfg->port;
    l->op_timeout_ms = cfg->op_timeout_ms;
    l->index = index;
    l->cbs = *cbs;
    snprintf(l->why, sizeof(l->why), "not connected yet");
    fake_links[fake_nlinks++] = l;
    return l;
}

void ob_member_link_start(ob_member_link *l) {
    CHECK(!l->started);
    l->started = 1;
}

void ob_member_link_ask(ob_member_link *l) {
    CHECK(l->started && !l->closing);
    l->asks++;
}

const char *ob_member_link_why(const ob_member_link *l) {
    return l->why;
}

void ob_member_link_close(ob_member_link *l) {
    CHECK(!l->closing);
    l->closing = 1;
}

void ob_member_link_free(ob_member_link *l) {
    (void)l;
    CHECK_FAIL_("the proof frees its links by closing them");
}

ob_member_link *fake_link_of(int i) {
    for (int k = fake_nlinks - 1; k >= 0; k--)
        if (fake_links[k] && fake_links[k]->index == i && !fake_links[k]->closing)
            return fake_links[k];
    return NULL;
}

void fake_link_answer(ob_member_link *l, double now_s, double oldest_s, int synced) {
    l->cbs.sent(l->cbs.data, l->index);
    l->why[0] = '\0';
    if (!synced)
        snprintf(l->why, sizeof(l->why), "not Synced (Donor/Desynced)");
    l->cbs.answer(l->cbs.data, l->index, now_s, oldest_s, synced);
}

void fake_link_down(ob_member_link *l, unsigned err, const char *msg) {
    snprintf(l->why, sizeof(l->why), "%s (%u)", msg, err);
    l->cbs.down(l->cbs.data, l->index, err, msg);
}

int fake_links_closed(void) {
    int n = 0;
    for (int k = 0; k < fake_nlinks; k++) {
        ob_member_link *l = fake_links[k];
        if (l && l->closing && !l->done) {
            l->done = 1;
            n++;
            l->cbs.closed(l->cbs.data);
        }
    }
    return n;
}

void fake_links_reset(void) {
    for (int k = 0; k < fake_nlinks; k++) {
        CHECK(fake_links[k]->done);
        free(fake_links[k]);
        fake_links[k] = NULL;
    }
    fake_nlinks = 0;
}
