/* SPDX-License-Identifier: Apache-2.0 */
/* Flow control: capacity handed out in arrival order, one scout among the
 * idle members, waking. */
#include "check.h"
#include "flow.h"

typedef struct member {
    ob_flow_member m; /* first: the callbacks cast back */
    ob_flow *f;
    int capacity_calls, wake_calls;
    int take_on_capacity; /* publishes to take when capacity comes */
    int idle_on_wake;     /* go idle again at once when woken */
} member;

static void on_capacity(ob_flow_member *fm) {
    member *x = (member *)fm;
    x->capacity_calls++;
    for (int i = 0; i < x->take_on_capacity; i++)
        if (!ob_flow_acquire(x->f, fm))
            break;
}

static void on_wake(ob_flow_member *fm) {
    member *x = (member *)fm;
    x->wake_calls++;
    if (x->idle_on_wake)
        ob_flow_idle(x->f, fm);
}

static int count(const ob_flow *f, ob_flow_list list) {
    const ob_flow_member *m = list == OB_FLOW_WAITING ? f->waiting.head : f->idle.head;
    int n = 0;
    for (; m != NULL; m = m->next)
        n++;
    return n;
}

static void init(member *x, ob_flow *f) {
    memset(x, 0, sizeof(*x));
    x->m.on_capacity = on_capacity;
    x->m.on_wake = on_wake;
    x->f = f;
}

static void capacity_goes_to_waiters_in_order(void) {
    ob_flow f;
    ob_flow_init(&f, 2, 5, 100);
    member a, b;
    init(&a, &f);
    init(&b, &f);
    CHECK_EQ(ob_flow_acquire(&f, &a.m), 1);
    CHECK_EQ(ob_flow_acquire(&f, &a.m), 1);
    CHECK_EQ(ob_flow_acquire(&f, &a.m), 0); /* a waits first */
    CHECK_EQ(ob_flow_acquire(&f, &b.m), 0);
    CHECK_EQ(ob_flow_acquire(&f, &a.m), 0); /* still once on the list */
    CHECK_EQ(count(&f, OB_FLOW_WAITING), 2);
    a.take_on_capacity = 5;
    b.take_on_capacity = 5;
    ob_flow_release(&f, 1);
    /* a took the one free slot and went back to the end of the list; b got
     * nothing because nothing was left. */
    CHECK_EQ(a.capacity_calls, 1);
    CHECK_EQ(b.capacity_calls, 0);
    CHECK_EQ(f.in_flight, 2);
    ob_flow_release(&f, 2);
    CHECK_EQ(b.capacity_calls, 1);
    CHECK_EQ(f.in_flight, 2);
    ob_flow_leave(&f, &a.m);
    ob_flow_leave(&f, &b.m);
    CHECK_EQ(count(&f, OB_FLOW_WAITING), 0);
}

static void one_scout_polls(void) {
    ob_flow f;
    ob_flow_init(&f, 10, 5, 100);
    member a, b, c;
    init(&a, &f);
    init(&b, &f);
    init(&c, &f);
    CHECK_EQ(ob_flow_idle(&f, &a.m), 1); /* the first idle member scouts */
    CHECK_EQ(ob_flow_idle(&f, &b.m), 0);
    CHECK_EQ(ob_flow_idle(&f, &c.m), 0);
    CHECK_EQ(count(&f, OB_FLOW_IDLE), 3);
    /* The scout found rows: it wakes the others but not itself. */
    ob_flow_wake_all(&f, &a.m);
    CHECK_EQ(a.wake_calls, 0);
    CHECK_EQ(b.wake_calls, 1);
    CHECK_EQ(c.wake_calls, 1);
    CHECK(f.scout == &a.m);
    /* Leaving gives up the scout's role; the next idle member takes it. */
    CHECK_EQ(ob_flow_leave(&f, &a.m), 1);
    CHECK(f.scout == NULL);
    CHECK_EQ(ob_flow_idle(&f, &b.m), 1);
}

static void a_woken_member_that_idles_again_is_not_woken_twice(void) {
    ob_flow f;
    ob_flow_init(&f, 10, 5, 100);
    member a, b;
    init(&a, &f);
    init(&b, &f);
    a.idle_on_wake = b.idle_on_wake = 1;
    ob_flow_idle(&f, &a.m);
    ob_flow_idle(&f, &b.m);
    ob_flow_wake_all(&f, NULL);
    CHECK_EQ(a.wake_calls, 1);
    CHECK_EQ(b.wake_calls, 1);
    CHECK_EQ(count(&f, OB_FLOW_IDLE), 2);
    CHECK(f.scout == &a.m); /* a went idle first again */
}

static void waiting_and_idle_are_exclusive(void) {
    ob_flow f;
    ob_flow_init(&f, 1, 5, 100);
    member a;
    init(&a, &f);
    ob_flow_idle(&f, &a.m);
    CHECK_EQ(ob_flow_acquire(&f, &a.m), 1);
    CHECK_EQ(ob_flow_acquire(&f, &a.m), 0);
    CHECK_EQ(count(&f, OB_FLOW_IDLE), 0);
    CHECK_EQ(count(&f, OB_FLOW_WAITING), 1);
    CHECK(f.scout == NULL);
}

static void polling_is_fast_while_rows_come_then_decays(void) {
    ob_flow f;
    ob_flow_init(&f, 10, 5, 100);
    CHECK_EQ(ob_flow_poll_delay(&f, 0), 100); /* the poll interval from the start */
    ob_flow_activity(&f, 1000);
    CHECK_EQ(ob_flow_poll_delay(&f, 1001), 5);
    CHECK_EQ(ob_flow_poll_delay(&f, 1999), 5);
    /* A second after the last rows, each empty poll doubles the wait. */
    CHECK_EQ(ob_flow_poll_delay(&f, 2000), 5);
    CHECK_EQ(ob_flow_poll_delay(&f, 2005), 10);
    CHECK_EQ(ob_flow_poll_delay(&f, 2015), 20);
    CHECK_EQ(ob_flow_poll_delay(&f, 2035), 40);
    CHECK_EQ(ob_flow_poll_delay(&f, 2075), 80);
    CHECK_EQ(ob_flow_poll_delay(&f, 2155), 100);
    CHECK_EQ(ob_flow_poll_delay(&f, 2255), 100);
    /* A minute after the last rows it goes on doubling up to a second. */
    CHECK_EQ(ob_flow_poll_delay(&f, 1000 + OB_FLOW_WARM_MS - 1), 100);
    CHECK_EQ(ob_flow_poll_delay(&f, 1000 + OB_FLOW_WARM_MS), 100);
    CHECK_EQ(ob_flow_poll_delay(&f, 1000 + OB_FLOW_WARM_MS + 100), 200);
    CHECK_EQ(ob_flow_poll_delay(&f, 1000 + OB_FLOW_WARM_MS + 300), 400);
    CHECK_EQ(ob_flow_poll_delay(&f, 1000 + OB_FLOW_WARM_MS + 700), 800);
    CHECK_EQ(ob_flow_poll_delay(&f, 1000 + OB_FLOW_WARM_MS + 1500), OB_FLOW_IDLE_POLL_MS);
    CHECK_EQ(ob_flow_poll_delay(&f, 1000 + OB_FLOW_WARM_MS + 2500), OB_FLOW_IDLE_POLL_MS);
    /* Rows again: fast at once. */
    ob_flow_activity(&f, 70000);
    CHECK_EQ(ob_flow_poll_delay(&f, 70001), 5);
}

static void a_relay_at_rest_polls_once_a_second(void) {
    ob_flow f;
    ob_flow_init(&f, 10, 5, 100);
    /* A start counts as rows: a minute at the poll interval first. */
    CHECK_EQ(ob_flow_poll_delay(&f, 500), 100);
    CHECK_EQ(ob_flow_poll_delay(&f, 500 + OB_FLOW_WARM_MS - 1), 100);
    uint32_t d = 0;
    for (int i = 0; i < 10; i++)
        d = ob_flow_poll_delay(&f, 500 + OB_FLOW_WARM_MS + (uint64_t)i * 1000);
    CHECK_EQ(d, OB_FLOW_IDLE_POLL_MS);
    /* A poll interval longer than that is kept as it is. */
    ob_flow_init(&f, 10, 5, 10000);
    for (int i = 0; i < 3; i++)
        CHECK_EQ(ob_flow_poll_delay(&f, (uint64_t)i * 10000), 10000);
}

static void a_ring_with_nobody_idle_is_kept(void) {
    ob_flow f;
    ob_flow_init(&f, 10, 5, 100);
    ob_flow_ring(&f);
    CHECK_EQ(ob_flow_take_wake(&f), 1);
    CHECK_EQ(ob_flow_take_wake(&f), 0);
    member a;
    init(&a, &f);
    member b;
    init(&b, &f);
    ob_flow_idle(&f, &a.m);
    ob_flow_idle(&f, &b.m);
    ob_flow_ring(&f); /* one idle member is enough for one ring */
    CHECK_EQ(a.wake_calls, 1);
    CHECK_EQ(b.wake_calls, 0);
    CHECK_EQ(ob_flow_take_wake(&f), 0);
}

int main(void) {
    capacity_goes_to_waiters_in_order();
    one_scout_polls();
    a_woken_member_that_idles_again_is_not_woken_twice();
    waiting_and_idle_are_exclusive();
    polling_is_fast_while_rows_come_then_decays();
    a_relay_at_rest_polls_once_a_second();
    a_ring_with_nobody_idle_is_kept();
    printf("ok\n");
    return 0;
}
