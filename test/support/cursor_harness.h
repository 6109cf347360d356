/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A harness for unit tests of the cursor reader (test_cursor.c): the reader
 * made against a fake publisher, a fake owner and the fake connection
 * (fake_db.c), and helpers that answer its statements as a server would.
 * It reaches the reader through its reader table (reader.h) and cursor.h
 * only: what it observes is what the reader sends (statements, the cursor
 * values they write), publishes and tells its owner.
 *
 * The tests run the real loop: the reader's own timers pace it (reads, gap
 * checks, cursor writes); the server's clock is the test's (srv).
 */
#ifndef OB_TEST_CURSOR_HARNESS_H
#define OB_TEST_CURSOR_HARNESS_H

#include <uv.h>

#include "cursor.h"
#include "fake_db.h"

#define MAXPUB 256

/* The publisher: what was published, with the (gen, slot) to ack it. */
typedef struct fake_pub {
    int ready;
    uint32_t epoch;
    int published;
    uint32_t gen[MAXPUB], slot[MAXPUB];
    uint64_t seq[MAXPUB]; /* from the id the test made */
    uint64_t fail_seq;    /* this seq's publish fails (the row's fault); 0 none */
    uint64_t last_answer; /* loop time of the broker's last answer; 0: never */
    int checking;         /* told of a suspect failure: its check under way */
} fake_pub;

extern fake_pub fp;

/* The owner: the lease's validity and the drain, as the test sets them;
 * what the reader told it. */
typedef struct fake_owner {
    int lease_valid;
    int drain_wanted;
    int drained;
    int fatal;
    char why[1000];
    int closed;
} fake_owner;
extern fake_owner own;

extern uv_loop_t loop;
extern outbox_stats stats;
/* Called by make_reader on the reader's settings before the reader copies
 * them, then cleared: a test's changes to the defaults. */
extern void (*env_tweak)(ob_reader_env *e);
extern ob_reader rd;          /* the reader under test; rd.self is its ob_cursor */
extern double srv;            /* the server's clock, moved by each answer that reads it */
extern uint64_t counter;      /* the table's AUTO_INCREMENT, for the fit */
extern uint64_t adv[64];      /* the cursor values written, in order */
extern uint64_t adv_mask[64]; /* and the buckets each was written for */
extern int nadv;
extern char logged[4096]; /* the reader's log lines (info and above) since make_reader */

/* A reader made (publisher number 3, batches of 10, horizon 4 s), not
 * started; every fake reset, the model of the table too. */
const ob_reader *make_reader(void);
/* Stops it now, runs the loop until it closed, frees it. */
void close_reader(void);

/* One turn of the loop (UV_RUN_ONCE), waking within 5 ms at most. */
void turn(void);
/* Closes the harness's own handle: before uv_loop_close. */
void harness_end(void);

/* The kinds of statement the reader sends. */
typedef enum stmt {
    S_PROBE,   /* INNODB_TRX, the cursor table, the grants */
    S_GRANTS,  /* the grants alone */
    S_FIT,     /* the highest cursor and the counter */
    S_LOAD,    /* the owned buckets' cursors and held aggregates */
    S_MARK,    /* a bucket's initialisation: the clock and MAX(seq) */
    S_CHECK,   /* the initialisation's INNODB_TRX check */
    S_INIT,    /* the cursor rows' INSERT */
    S_READ,    /* the clock (and gap check) and the rows */
    S_LANE,    /* the retry lane's status-2 rows */
    S_ADVANCE, /* a cursor UPDATE alone */
    S_FINISH   /* a batch's writes (and maybe the cursor UPDATE) */
} stmt;
extern const char *const stmt_names[];
stmt kind_of(const char *sql);
int starts(const char *s, const char *prefix);

/* The fake connection. */
ob_db *db(void);
/* Completes the statement under way without an error. */
void ok(void);
/* Completes a read of rows: the rows to publish leave at once, unless the
 * reader's fit of about once a second takes its turn first, which this
 * answers as fitting so that they do. */
void ok_read(void);
/* One row of result `res` with n text columns (NULL for SQL NULL). */
void row_n(int res, int n, char *const *cols);
/* An outbox row as a read (lane = 0) or the retry lane returns it, in
 * result `res`; the id carries the seq. `last` is the read's status ("0",
 * "2") or the lane's "due only after the horizon" ("0", "1"); `waiting` is
 * the lane's "not due yet" (NULL in a read). */
void outbox_row(int res, uint64_t seq, int bucket, const char *agg, const char *last,
                const char *waiting);
/* The lane's "a row past the LIMIT is due within the horizon" ("0", "1"),
 * added to every lane row (a row with `waiting`); "0" at make_reader. */
extern const char *lane_soon_past;
/* 1 when the read under way carries the gap check. */
int read_checks(void);
/* A read's first result: the clock, the oldest other transaction when it
 * carries the check (`oldest`; NULL: none), MAX(seq) = max when asked. */
void read_clock(const char *oldest, uint64_t max);
/* Answers a fit: the highest cursor `top` (0: none) and `counter`. */
void answer_fit(uint64_t top);
/* Answers the statement under way as empty (a read of no row, an empty
 * lane, a write). */
void answer_empty(void);
/* The highest cursor value written so far. */
uint64_t max_written(void);

/* Runs the loop until a statement is pending and returns its kind (-1: a
 * connect); fits met on the way are answered as fitting when auto_fit.
 * Cursor values written by the statement are noted in adv. */
stmt next_stmt_(int auto_fit, int line);
#define next_stmt() next_stmt_(1, __LINE__)
/* The next statement is of kind k. */
void expect_(stmt k, int line);
#define expect(k) expect_(k, __LINE__)
/* Answers reads, lanes and cursor writes as empty until one of kind k is
 * pending; fails on any other kind. */
void serve_until_(stmt k, int line);
#define serve_until(k) serve_until_(k, __LINE__)

/* Starts the reader owning `owned` with every cursor at `floor`: connect,
 * probe, fit, load. Leaves the first lane read pending. */
void start_lane(uint64_t owned, uint64_t floor);
/* The connect under way made, then as start_lane: probe, fit, load (every
 * cursor of `owned` at `floor`); leaves the first lane read pending. */
void connect_and_load(uint64_t owned, uint64_t floor);
/* The same, the lane empty: leaves the first read pending. */
void start_reading(uint64_t owned, uint64_t floor);
/* Acks every publish from index `from` on as stored. */
void ack_from(int from);

/* A model of the outbox table for the hand-over's cases: its rows as the
 * reads see them (contiguous seqs, no gap), and which are done (acked by
 * the broker, or written status 2 by the reader: the lane's). A cursor may
 * pass a row only once it is done. */
#define TABROWS 16
typedef struct tab_row {
    uint64_t seq;
    int bucket;
    const char *agg;
    int done;
} tab_row;
extern tab_row tab[TABROWS];
extern int ntab;
/* Empties the table (and what was acked and checked of it). */
void tab_reset(void);
void tab_add(uint64_t seq, int bucket, const char *agg);
/* The index of the row with this seq (fails when none). */
int tab_at(uint64_t seq);
/* The broker stores every row published since the last call: done. */
void ack_new(void);
/* Bucket k's cursor as the table holds it: the highest value written for
 * it (the UPDATE moves a cursor only up), or `floor`. */
uint64_t cursor_of(int k, uint64_t floor);
/* Fails when a cursor write sent since the last call passes a row of its
 * buckets that is not done: that row would be lost. */
void check_cursor_writes(void);
/* Fails unless each publish of an aggregate's row came after a publish of
 * each of its rows below it. */
void check_order(void);
/* Answers the pending statement from the table: a read with its rows above
 * the read's top (none in a stop's read of the gaps), a load with each
 * bucket's cursor as written (cursor_of), the rest empty; each cursor
 * write is checked. Returns its kind. */
stmt serve_one(uint64_t floor);
/* Serves the reader, the broker storing every row as it leaves, until every
 * row of `mask`'s buckets is done, then checks the order. */
void serve_until_done(uint64_t floor, uint64_t mask);

#endif
