/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The modes' descriptors (see mode.h).
 */
#include "mode.h"

#include <stddef.h>

const ob_mode ob_mode_plain = {
    .id = OB_MODE_PLAIN,
    .name = "unordered",
    .about = "",
    .lock = 'p',
    .lease = OB_MODE_LEASE_NONE,
    /* It only looks for relays of another mode, which are refused at their
     * own start: its rounds can be rare, and an idle relay wakes less. */
    .interval_ms = 5000,
};

const ob_mode ob_mode_ordered = {
    .id = OB_MODE_ORDERED,
    .name = "--ordered",
    .about = ", ordered per aggregate (bucket leases)",
    .lock = 'm',
    .lease = OB_MODE_LEASE_BUCKETS,
    .interval_ms = 1000,
    .ordering_columns = 1,
    .switches_cursor = 1,
    .waits_for_watch = 1,
};

const ob_mode ob_mode_leader = {
    .id = OB_MODE_LEADER,
    .name = "--leader",
    .about = ", leader mode (strict seq order while leading)",
    .lock = 's',
    .lease = OB_MODE_LEASE_LEADERSHIP,
    .interval_ms = 1000,
    .ordering_columns = 1,
    .one_reader = 1,
    .switches_cursor = 1,
    .waits_for_watch = 1,
};

const ob_mode ob_mode_cursor = {
    .id = OB_MODE_CURSOR,
    .name = "--cursor",
    .about = ", cursor mode (bucket leases, reads without locks)",
    .lock = 'c',
    .lease = OB_MODE_LEASE_BUCKETS,
    .release_late = 1,
    .interval_ms = 1000,
    .ordering_columns = 1,
    .cursor_reader = 1,
    .waits_for_watch = 1,
    .galera_needs_members = 1,
};

const ob_mode *const ob_modes[OB_MODE_COUNT] = {
    [OB_MODE_PLAIN] = &ob_mode_plain,
    [OB_MODE_ORDERED] = &ob_mode_ordered,
    [OB_MODE_LEADER] = &ob_mode_leader,
    [OB_MODE_CURSOR] = &ob_mode_cursor,
};

const ob_mode *ob_mode_pick(int ordered, int leader, int cursor) {
    if (cursor)
        return &ob_mode_cursor;
    if (leader)
        return &ob_mode_leader;
    return ordered ? &ob_mode_ordered : &ob_mode_plain;
}

const ob_mode *ob_mode_by_lock(char lock) {
    for (int i = 0; i < OB_MODE_COUNT; i++)
        if (ob_modes[i]->lock == lock)
            return ob_modes[i];
    return NULL;
}
