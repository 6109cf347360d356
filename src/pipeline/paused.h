/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Subjects the broker refuses for themselves alone: a stream with
 * max_msgs_per_subject and "discard new per subject" refuses a message whose
 * subject is full while it takes every other. That is the broker's
 * configuration, not the row's: the subject pauses (its rows wait, without
 * an attempt, written due again when the pause lets them try), and the other
 * subjects flow. The pause tries the subject again after a back-off (1 s,
 * doubling to 5 s), and ends when a message of it sent after the pause began
 * is stored (the operator raised the limit, or messages aged out).
 *
 * A subject is <prefix>.<aggregate_type>.<event_type> (nats/message.h): the
 * table keys on "aggregate_type.event_type", which is the subject whatever
 * tokens each part holds. The text comes from rows (untrusted): it is only
 * hashed and compared, and said in the log once the broker named it refused
 * (a subject that passed the relay's checks). The table holds at most
 * OB_PAUSED_MAX subjects; past that, refused rows still wait without an
 * attempt, at the longest back-off, untracked. A subject neither refused nor
 * met for OB_PAUSE_FORGET_MS past its retry is forgotten (its rows are gone).
 *
 * Shared by every reader of a relay (reader_env.h), owned by the relay. Pure
 * bookkeeping on loop times given by the caller; loop thread only.
 */
#ifndef OB_PAUSED_H
#define OB_PAUSED_H

#include <stddef.h>
#include <stdint.h>

#include "log.h"
#include "row.h"

#define OB_PAUSED_MAX 1024
#define OB_PAUSE_FIRST_MS 1000
#define OB_PAUSE_MAX_MS 5000
#define OB_PAUSE_FORGET_MS 60000

typedef struct ob_paused_subject {
    char *key; /* "aggregate_type.event_type", NUL-terminated; NULL: empty slot */
    size_t len;
    uint32_t hash;
    uint32_t backoff_ms;
    uint64_t since;     /* loop time of the refusal that paused it */
    uint64_t retry_at;  /* loop time from which its rows may be published again */
    uint64_t last_seen; /* loop time it was last refused, or a row of it waited */
    uint64_t rows;      /* rows that waited since it paused (each time they waited) */
} ob_paused_subject;

typedef struct ob_paused {
    char prefix[256];     /* the relay's subject prefix, for the log and /readyz */
    ob_paused_subject *e; /* OB_PAUSED_MAX * 2 slots, allocated at the first pause */
    size_t n;             /* subjects paused */
    uint64_t swept_at;    /* loop time of the last look for subjects to forget */
    uint64_t untracked;   /* refusals of subjects the full table could not hold */
    const ob_log *log;
    uint64_t said_at; /* loop time of the last line said */
    int unsaid;       /* changes not said since (at most one line a second) */
} ob_paused;

/* What a refusal did. */
typedef enum ob_pause_result {
    OB_PAUSE_NEW,      /* the subject paused now */
    OB_PAUSE_AGAIN,    /* it was paused already (its retry refused, or a row sent before) */
    OB_PAUSE_UNTRACKED /* the table is full (or out of memory): the row waits untracked */
} ob_pause_result;

/* Sets up an empty table; `prefix` is copied, `log` borrowed (may be NULL). */
void ob_paused_init(ob_paused *p, const char *prefix, const ob_log *log);
void ob_paused_free(ob_paused *p);

/* 0 when row r may be published at `now`; else the ms until its subject's
 * pause lets it try (the row is counted as waiting). */
uint64_t ob_paused_wait(ob_paused *p, const ob_row *r, uint64_t now);

/* The broker refused row r for its subject at `now`: the subject pauses (or
 * stays paused; a refusal of its retry doubles the back-off), said once.
 * *delay_ms gets how long the row waits. */
ob_pause_result ob_paused_refused(ob_paused *p, const ob_row *r, uint64_t now, uint64_t *delay_ms);

/* Row r, published at `sent_at`, was stored at `now`: when its subject is
 * paused and the row left after the pause began, the pause ends (said).
 * Returns 1 when it ended. */
int ob_paused_stored(ob_paused *p, const ob_row *r, uint64_t sent_at, uint64_t now);

/* Subjects paused now. */
size_t ob_paused_count(const ob_paused *p);

/* For /readyz: "N subject(s) paused, full per subject (max_msgs_per_subject):
 * <one of them>", or NULL when none is. `buf` holds it. */
const char *ob_paused_why(const ob_paused *p, char *buf, size_t n);

#endif
