/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The relay's delivery modes as data: one descriptor per mode, read by the
 * lease (its locks and rounds), the cluster refusal (what a Galera node
 * refuses) and the relay (its readers, its start). The code asks a
 * descriptor what the mode needs instead of testing the mode's flags, so
 * that a new mode is a new row here and a look at each field's readers.
 *
 * The options name a mode with three ints (ordered, leader, cursor; the
 * public header keeps them); ob_mode_pick() turns them into a descriptor
 * once, after the options were checked (--cursor with another is refused).
 */
#ifndef OB_MODE_H
#define OB_MODE_H

/* The modes, in the order of their lock letters' counts (p, m, s, c) in
 * the lease's mode check: the index of each in ob_modes. */
typedef enum ob_mode_id {
    OB_MODE_PLAIN,   /* unordered: SKIP LOCKED, any instance takes any row */
    OB_MODE_ORDERED, /* a fair share of the buckets per instance */
    OB_MODE_LEADER,  /* one instance owns every bucket */
    OB_MODE_CURSOR,  /* bucket leases, each bucket read by a cursor without locks */
    OB_MODE_COUNT
} ob_mode_id;

/* What the lease holds for the mode. */
typedef enum ob_mode_lease {
    OB_MODE_LEASE_NONE,      /* the mode lock alone: the rounds only look */
    OB_MODE_LEASE_BUCKETS,   /* a fair share of the buckets, and a presence lock that is the
                                mode lock */
    OB_MODE_LEASE_LEADERSHIP /* one leadership: every bucket or none */
} ob_mode_lease;

typedef struct ob_mode {
    ob_mode_id id;
    const char *name;  /* as the operator writes it: "unordered", "--ordered", ... */
    const char *about; /* the start line's words, after a comma ("" unordered) */
    char lock;         /* the mode lock's letter ('<base>:<lock><k>'), the lease table's mode */
    ob_mode_lease lease;
    /* A bucket given up is released a round later, so that its owner can
     * still write the bucket's last cursor while it holds it. */
    int release_late;
    /* The lease's rounds between two looks, before any cap by the stale
     * time (a lease that owns nothing is not capped on a single server). */
    unsigned interval_ms;
    int ordering_columns; /* needs the table's seq and bucket columns */
    int cursor_reader;    /* one cursor reader (and the cursor table) in place of the workers */
    int one_reader;       /* one worker, whatever --connections says: strict seq order */
    int switches_cursor;  /* converts owned buckets out of cursor mode before reading them */
    /* Starts its lease only once the cluster watch answered (a mode that
     * Galera may refuse, or whose leases depend on what the server is). */
    int waits_for_watch;
    /* On a Galera node: refused unless the probe names every member (the
     * gap proof asks each, gap_members.h). */
    int galera_needs_members;
} ob_mode;

/* Indexed by ob_mode_id. */
extern const ob_mode *const ob_modes[OB_MODE_COUNT];
extern const ob_mode ob_mode_plain, ob_mode_ordered, ob_mode_leader, ob_mode_cursor;

/* The mode of a relay's options (outbox_relay_options' ints); cursor wins,
 * then leader (which implies ordered). Never NULL. */
const ob_mode *ob_mode_pick(int ordered, int leader, int cursor);
/* The mode whose lock letter is `lock`, NULL for none. */
const ob_mode *ob_mode_by_lock(char lock);

#endif
