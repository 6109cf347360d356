/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Publishing rows of the outbox again, to rebuild a stream that was lost:
 * the rows the relay delivered, in the order it delivers them, made into
 * the very messages it made of them (subject, headers, Nats-Msg-Id = the
 * row's id, data), into the relay's stream or another one. It only reads
 * the table: no row's status, attempts or cursor changes.
 *
 * Which rows: those in the range (created_at, seq, id; all bounds
 * inclusive but `until`) that were delivered: status 1, and in a table
 * with a cursor table, status 0 at or below the row's bucket cursor. Dead
 * rows (status -1) only with include_dead. Pending rows never: the relay
 * sends those.
 *
 * Order: a table with a seq column (ordered and cursor modes) is read in
 * seq order, a plain one in id order (the plain relay's order), in pages
 * of 500 rows (keyset), so a large table never sits in memory.
 *
 * outbox_republish_run() BLOCKS on both servers for as long as it runs:
 * call it from a command or a thread of its own, never from a loop. nats.c
 * runs its own threads for the connection, as for outbox_nats_check().
 */
#ifndef OUTBOX_REPUBLISH_H
#define OUTBOX_REPUBLISH_H

#include <stddef.h>
#include <stdint.h>

#include "outbox/common.h"
#include "outbox/id.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Defined in outbox/relay.h. */
typedef struct outbox_relay_options outbox_relay_options;

/* Where a run stands: given to the progress callback, and at the end. */
typedef struct outbox_republish_progress {
    uint64_t total;      /* rows in the range when the run began */
    uint64_t matched;    /* rows of the range read so far (all of them after a dry run) */
    uint64_t sent;       /* published */
    uint64_t acked;      /* stored by JetStream, new or duplicate */
    uint64_t duplicates; /* of those, already in the stream (its duplicate window) */
    uint64_t skipped;    /* rows that cannot be a message (bad subject or headers) */
    int has_seq;         /* the table has seq: positions below are seq, else id */
    uint64_t last_seq;   /* the last row acked (with has_seq) */
    outbox_id last_id;
    int any_acked;
    /* The first row not acked, where a new run would resume (valid with
     * resume_valid, after a failure). */
    int resume_valid;
    uint64_t resume_seq;
    outbox_id resume_id;
    /* The oldest row of the range, and of the whole table ("" when none),
     * "YYYY-MM-DD HH:MM:SS.ffffff" UTC: how far back the table reaches
     * under cleanup's retention and dropped partitions. */
    char oldest_in_range[32];
    char oldest_in_table[32];
    uint64_t stream_window_ms; /* the target stream's duplicate window */
} outbox_republish_progress;

typedef void (*outbox_republish_progress_cb)(const outbox_republish_progress *p, void *data);

typedef struct outbox_republish_options {
    /* The database, NATS, table, stream, subject prefix and CloudEvents
     * settings; the messages go to relay->stream under
     * relay->subject_prefix, which the stream must take. */
    const outbox_relay_options *relay;
    const char *since; /* created_at >= since, "YYYY-MM-DD HH:MM[:SS[.ffffff]]" UTC; NULL: none */
    const char *until; /* created_at < until; NULL: none */
    int has_seq_range; /* seq_from <= seq <= seq_to (tables with seq only) */
    uint64_t seq_from, seq_to;
    const outbox_id *id_from; /* id >= id_from; NULL: none */
    const outbox_id *id_to;   /* id <= id_to; NULL: none */
    int include_dead;         /* dead rows too */
    int dry_run;              /* count the rows, connect to NATS not at all */
    /* Create the stream when it does not exist, on "<prefix>.>" as the
     * relay creates one (relay->duplicate_window_ms, relay->stream_replicas);
     * without it a missing stream is an error. */
    int create_stream;
    double rate;             /* rows a second at most; 0: as fast as acks come */
    uint32_t window;         /* publishes awaiting their ack at most (0: 1024) */
    uint32_t ack_timeout_ms; /* an ack not come by then fails the run (0: 10000) */
    uint32_t progress_ms;    /* between progress calls (0: 5000) */
    outbox_republish_progress_cb progress;
    void *progress_data;
} outbox_republish_options;

/* Runs the whole re-publish. Returns OUTBOX_OK with *p the totals;
 * OUTBOX_EINVAL for options or a range that cannot work (nothing
 * published); OUTBOX_ENOTFOUND when the stream does not exist and
 * OUTBOX_ESCHEMA when it takes none of the subjects (nothing published);
 * OUTBOX_EDB, OUTBOX_ENATS or OUTBOX_EREFUSED when a server failed, with
 * p->resume_* naming the first row not acked. err says what went wrong,
 * never a secret. */
OUTBOX_EXPORT int outbox_republish_run(const outbox_republish_options *o,
                                       outbox_republish_progress *p, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
