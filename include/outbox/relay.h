/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The relay: moves committed outbox rows into a NATS JetStream stream, at least
 * once, on a libuv loop the caller owns.
 *
 * Each of N MariaDB connections runs one batch cycle after another:
 *   1. START TRANSACTION; SELECT ... FOR UPDATE SKIP LOCKED   (one round trip)
 *   2. publish every row, with Nats-Msg-Id = the row's id
 *   3. collect the acks on the loop
 *   4. UPDATE the acked and failed rows; COMMIT               (one round trip)
 *
 * Threads: every function here must be called on the loop thread, and every
 * callback runs on it. nats.c's socket is read and written on the loop too
 * (nats_client, default), but over TLS: there nats.c runs its reader,
 * flusher and delivery threads, and what they produce is handed to the loop
 * through one uv_async_t. nats.c keeps a few threads of its own in either
 * case (timers, callbacks, its garbage collector), and the connect runs on
 * libuv's thread pool; the library itself creates no thread.
 *
 * Versions: outbox_relay_options and outbox_stats are the caller's memory, so
 * a program built against an older header hands the library smaller structs.
 * outbox_relay_options_init and outbox_relay_stats (macros) pass the size the
 * caller was built with: the library reads and writes no byte beyond it, and
 * gives an options field the caller's struct lacks its default. New fields go
 * last in both structs, and nowhere else.
 *
 * Life cycle:
 *   outbox_relay_options_init(&o);  ... set fields ...
 *   outbox_relay_create(&r, loop, &o, err, errlen);  copies the options
 *   outbox_relay_start(r);               adds handles to the loop, never blocks
 *   ... uv_run(loop) ...
 *   outbox_relay_stop(r, cb, data);      graceful; cb once every handle is closed
 *   outbox_relay_destroy(r);             only before start or after the stop cb;
 *                                        OUTBOX_ESTATE (and nothing freed) otherwise
 */
#ifndef OUTBOX_RELAY_H
#define OUTBOX_RELAY_H

#include <stdint.h>
#include <uv.h>

#include "outbox/common.h"
#include "outbox/id.h"
#include "outbox/maint.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct outbox_relay outbox_relay;

/* What went wrong with one row's publish, as given to a classifier. */
typedef enum outbox_failure_kind {
    OUTBOX_FAIL_ACK_TIMEOUT = 1,   /* no ack within ack_timeout_ms */
    OUTBOX_FAIL_NO_RESPONDERS = 2, /* no stream listens on the subject right now */
    OUTBOX_FAIL_DISCONNECTED = 3,  /* the NATS connection dropped while in flight */
    OUTBOX_FAIL_MAX_PAYLOAD = 4,   /* message larger than the server's max_payload */
    OUTBOX_FAIL_BAD_SUBJECT = 5,   /* aggregate_type/event_type give an invalid subject */
    OUTBOX_FAIL_BAD_HEADERS = 6,   /* the row's headers column is not a usable object */
    OUTBOX_FAIL_STREAM_ERROR = 7,  /* JetStream answered with an error (see err_code) */
    OUTBOX_FAIL_PUBLISH_ERROR = 8, /* the client refused the publish for another reason */
} outbox_failure_kind;

typedef struct outbox_failure {
    outbox_failure_kind kind;
    int code;            /* JetStream "code" (HTTP-like), or the nats.c status */
    int err_code;        /* JetStream "err_code", 0 when not from JetStream */
    const char *message; /* text stored in last_error; valid during the call */
    const outbox_id *id; /* the row */
    int attempt;         /* 1 for the first attempt */
} outbox_failure;

typedef enum outbox_verdict {
    OUTBOX_RETRY = 0, /* count an attempt and retry after the backoff */
    OUTBOX_DEAD = 1,  /* mark the row dead now */
} outbox_verdict;

/* Decides whether a failed publish is retried or dead. Called on the loop. */
typedef outbox_verdict (*outbox_classify_fn)(const outbox_failure *f, void *data);

/* The built-in classifier: payload too large, bad subject, bad headers and
 * JetStream 400-class rejections are dead at once; the rest is retried. */
OUTBOX_EXPORT outbox_verdict outbox_classify_default(const outbox_failure *f, void *data);

typedef enum outbox_backoff_kind {
    OUTBOX_BACKOFF_EXPONENTIAL = 0, /* base * 2^(attempt-1), capped */
    OUTBOX_BACKOFF_FIXED = 1,       /* always base */
} outbox_backoff_kind;

typedef enum outbox_processing_mode {
    OUTBOX_KEEP_PROCESSED = 0,   /* mark rows status=1 with processed_at (audit trail) */
    OUTBOX_DELETE_PROCESSED = 1, /* delete rows once acked */
} outbox_processing_mode;

/* Where nats.c reads and writes (outbox_relay_options.nats_client). */
typedef enum outbox_nats_client {
    /* nats.c's socket on the relay's loop, but over TLS (a tls:// URL or
     * any nats_tls_* file): there nats.c's own threads, since nats.c 3.4.1
     * waits in poll() without a deadline for the rest of a TLS record it has
     * begun to read, which on the loop would stop the relay while a server
     * or the network is frozen mid-record. */
    OUTBOX_NATS_CLIENT_AUTO = 0,
    /* On the relay's loop, even over TLS (that wait included). */
    OUTBOX_NATS_CLIENT_LOOP = 1,
    /* On nats.c's own threads (reader, flusher, pings, reconnects, delivery),
     * acks handed to the loop through a mailbox. */
    OUTBOX_NATS_CLIENT_THREADS = 2,
} outbox_nats_client;

typedef struct outbox_relay_options {
    /* The size of the struct the caller was built with, set by
     * outbox_relay_options_init; create refuses options without it. */
    size_t size;

    /* --- where --- */
    /* db_url may name several nodes, mysql://user:pass@h1:p1,h2:p2/db: each
     * connection tries them in order and moves to the next when its node is
     * lost, refuses it (1047) or falls silent (docs/galera.md). */
    const char *db_url;         /* mysql://user:pass@host:port/db[?socket=/path] (required) */
    const char *db_password;    /* overrides the URL's password when not NULL */
    const char *nats_url;       /* nats://[user:pass@]host:port[,nats://...] (required) */
    const char *table;          /* "outbox"; optionally "schema.table" */
    const char *stream;         /* JetStream stream, "OUTBOX" */
    const char *subject_prefix; /* "outbox": subjects are <prefix>.<aggregate_type>.<event_type> */
    const char *ce_source;      /* CloudEvents ce-source, "outbox-uvrelay" */
    int cloudevents;            /* add the ce-* headers (1); 0 sends Nats-Msg-Id and the
                                   row's headers only, which costs less CPU per message */

    /* --- how much --- */
    int connections;           /* MariaDB connections, each a batch cycle (2) */
    int batch_size;            /* rows per fetch (500) */
    uint32_t poll_interval_ms; /* idle polling: the longest wait between polls within a minute
                                  of rows (100); at rest max(this, 1000) */
    uint32_t poll_min_ms;      /* the shortest, used while rows keep coming (5); see
                                  docs/producing.md, "Prompt delivery" */
    uint32_t max_in_flight;    /* unacked publishes across all connections (8192) */
    uint32_t ack_timeout_ms;   /* a publish without ack by then has failed (5000) */

    /* --- failures --- */
    int max_attempts;            /* attempts before a row is dead (5) */
    outbox_backoff_kind backoff; /* exponential */
    uint32_t backoff_base_ms;    /* first retry delay (1000) */
    uint32_t backoff_max_ms;     /* cap (60000) */
    double backoff_jitter;       /* 0..1: delay *= 1 - jitter*rand (0.2) */
    outbox_classify_fn classify; /* NULL: outbox_classify_default */
    void *classify_data;

    /* --- stream --- */
    uint64_t duplicate_window_ms; /* for a stream the relay creates (120000) */
    int strict_duplicate_window;  /* refuse to run when the window is shorter than
                                     ack_timeout + backoff_max (0: only warn) */

    /* --- shutdown and drain --- */
    uint32_t shutdown_timeout_ms; /* how long stop waits for in-flight acks (5000) */
    /* Called once when no pending row is due (status=0 rows due now or
     * within the longest backoff, so including rows waiting for a retry);
     * rows scheduled later than that are logged, not waited for. The relay
     * keeps running; call stop from here to drain-and-exit. */
    void (*on_drained)(outbox_relay *r, void *data);
    void *drained_data;
    /* Called when the relay cannot go on (for example a strict duplicate-window
     * check failed). The relay stops claiming rows; the caller should stop it. */
    void (*on_fatal)(outbox_relay *r, const char *why, void *data);
    void *fatal_data;

    /* --- processing mode --- */
    outbox_processing_mode processing; /* keep processed rows (default) or delete them */

    /* --- maintenance timers (0 disables each) --- */
    uint32_t pending_sample_ms;  /* sample pending count and lag (0) */
    uint32_t partition_check_ms; /* run the partition maintainer (0) */
    uint32_t cleanup_check_ms;   /* run the cleanup maintainer (0) */
    /* What the jobs do (partition period, lookahead and retention; cleanup
     * retention and limit), as described in outbox/maint.h. Its database,
     * table and logging fields are ignored: the relay's own are used. Its
     * size is fixed (new maintenance fields take its reserved space), so the
     * fields after it keep their offsets. */
    outbox_maint_options maint;

    /* --- prompt delivery --- */
    /* Core NATS subject of the doorbell: any message there makes the relay
     * fetch at once. NULL: "outbox_wake.<table>"; "": no doorbell. It may not
     * fall under <subject_prefix>.> (the stream's subjects). */
    const char *wake_subject;

    /* --- logging --- */
    outbox_log_fn log; /* NULL: silent */
    void *log_data;
    outbox_log_level log_level; /* lines above this level are dropped (info) */

    /* --- TLS to MariaDB. Whenever TLS is on the server's certificate is
     * verified; a connection that fails the check is refused. Connector/C
     * performs the handshake with a blocking wait bounded by the connect
     * timeout, once per connection (see docs/security.md). --- */
    int db_tls;                /* require TLS, verify against the system CA store (0) */
    const char *db_tls_ca;     /* PEM file of the CAs to trust; implies db_tls */
    const char *db_tls_cert;   /* client certificate (PEM); implies db_tls */
    const char *db_tls_key;    /* its private key (PEM) */
    int db_tls_no_verify_host; /* do not check the host name (the chain still is) (0) */

    /* --- TLS and credentials for NATS. tls:// URLs, or any of these
     * files, turn TLS on; the server's certificate is then verified. The
     * contents of these files never appear in a log line or an error. --- */
    const char *nats_tls_ca;        /* PEM file of the CAs to trust (else the system store) */
    const char *nats_tls_cert;      /* client certificate (PEM) */
    const char *nats_tls_key;       /* its private key (PEM) */
    const char *nats_creds_file;    /* JWT + NKey seed (.creds); read at every (re)connect */
    const char *nats_nkey_file;     /* NKey user seed ("SU...") */
    const char *nats_token_file;    /* authentication token, first line */
    const char *nats_password_file; /* password for the URL's user, first line */

    /* --- stream --- */
    int stream_replicas; /* replicas of a stream the relay creates; 0 = server default (0) */

    /* --- ordering (the table needs the seq and bucket columns; see
     * outbox_schema_migrate_ddl). The relay refuses to start without them. --- */
    /* Each aggregate's events reach the stream in insertion (seq) order.
     * Instances on one table share the 64 hash buckets of the aggregates
     * through GET_LOCK leases on one extra connection; a dead instance's
     * buckets move to the survivors within a lease round (about 1 s) of the
     * server seeing its session end. (0) */
    int ordered;
    /* One active relay per table, holding a GET_LOCK leadership lease, in
     * strict seq order over one connection (`connections` is ignored); the
     * others stand by and take over within about a second. Implies ordered. (0) */
    int leader;
    /* --- memory --- */
    /* Bytes of claimed rows held at once across all connections (32 MiB):
     * each connection fetches at most its share divided by the row size it
     * has seen, at least one row and at most batch_size; a row is never
     * split. 0: no byte limit, every fetch asks for batch_size rows. */
    uint64_t max_in_flight_bytes;
    /* --- ordered and leader modes --- */
    /* A silent owner (frozen, paused, cut off from the database) loses its
     * buckets or the leadership within this; it stops publishing before
     * another instance may take them. 3 s to 1 hour (15 s). */
    uint32_t lease_timeout_ms;
    /* --- cursor mode --- */
    /* Each owned bucket is read in seq order without locks and its progress
     * kept in one durable cursor per bucket (table outbox_cursor, made by
     * `schema --migrate`): a delivered row is never written. Needs the
     * ordering columns and the PROCESS privilege (to see which transactions
     * may still commit a missing seq); shares the buckets through the same
     * leases as `ordered`, with which it cannot be combined. See
     * docs/modes.md, "Cursor mode". (0) */
    int cursor;
    /* --- NATS --- */
    /* Where nats.c reads and writes: on the relay's loop, or on nats.c's
     * threads (see outbox_nats_client; the connect line of the log says
     * which). (OUTBOX_NATS_CLIENT_AUTO: the loop, but threads over TLS) */
    outbox_nats_client nats_client;
    /* Cursor mode: the operator's word that no producer writes seq, so that
     * the relay runs without the BEFORE INSERT trigger that `schema` makes
     * to set it (without either it refuses to start). (0) */
    int cursor_trust_seq;
    /* --- database nodes --- */
    /* With several nodes in db_url, a connection that moved off the first
     * (the preferred node) goes back to it after this long away, between
     * two batches, once the first node takes a session again (one
     * connection of the relay tries it per period). 0: never, a connection
     * stays where it moved until that node fails. 0 or 1 s to 1 day (60 s). */
    uint32_t db_failback_ms;
    /* --- new fields here, last: a caller built before them gets their
     * defaults. --- */
} outbox_relay_options;

/* Upper bounds, in seconds, of the buckets of every histogram in the stats;
 * a last bucket (+Inf) takes what is above the largest. */
#define OUTBOX_HIST_BOUNDS 15
OUTBOX_EXPORT extern const double outbox_hist_bounds[OUTBOX_HIST_BOUNDS];

/* A histogram of durations in seconds. bucket[i] counts the observations
 * in (bound[i-1], bound[i]]: per bucket, not cumulative; bucket[OUTBOX_HIST_BOUNDS]
 * is the +Inf bucket. */
typedef struct outbox_histogram {
    uint64_t bucket[OUTBOX_HIST_BOUNDS + 1];
    uint64_t count;
    double sum; /* seconds */
} outbox_histogram;

/* The number of outbox_failure_kind values, plus one for index 0 (unused). */
#define OUTBOX_FAIL_KINDS 9

/* Counters since start. Gauges are marked. */
typedef struct outbox_stats {
    uint64_t batches;    /* batch cycles that fetched at least one row */
    uint64_t fetched;    /* rows fetched */
    uint64_t published;  /* publishes handed to the NATS client */
    uint64_t acked;      /* rows acked by JetStream and committed */
    uint64_t duplicates; /* acks that JetStream marked duplicate (already stored) */
    uint64_t failed;     /* failed publishes that were retried later */
    uint64_t dead;       /* rows marked dead */
    uint64_t released;   /* rows given back untouched (outage, shutdown) */
    uint64_t db_errors;  /* failed database operations */
    uint64_t db_reconnects;
    uint64_t broker_outages;
    uint32_t in_flight;             /* gauge: publishes awaiting an ack */
    uint32_t db_connected;          /* gauge: connections up */
    int broker_ready;               /* gauge: 1 when NATS and the stream answer */
    int64_t pending;                /* gauge: status=0 rows at the last sample, -1 unknown */
    int64_t oldest_pending_ms;      /* gauge: age of the oldest pending row, -1 unknown */
    uint64_t pending_sampled_at_ms; /* loop time of that sample, 0 never */
    /* Fields below were added for the metrics endpoint. */
    outbox_histogram batch_duration;      /* fetch to commit of each batch that fetched rows */
    outbox_histogram delivery_lag;        /* created_at to ack, per acked row */
    uint64_t failures[OUTBOX_FAIL_KINDS]; /* failed publishes by outbox_failure_kind */
    /* ordered and leader modes */
    uint32_t buckets_owned; /* gauge: buckets this instance holds (all 64 when leading) */
    uint32_t buckets_total; /* 64 in ordered and leader modes, 0 otherwise */
    int leader;             /* gauge: 1 while this instance leads (leader mode) */
    uint64_t held_back;     /* rows left for a later batch to keep their aggregate's order */
    /* memory: bytes of the rows of each connection's last fetched batch, as
     * max_in_flight_bytes counts them (column bytes and a per-row overhead) */
    uint64_t claimed_bytes;      /* gauge */
    uint64_t claimed_bytes_peak; /* the highest claimed_bytes since start */
    /* cursor mode */
    double cursor_gap_age_s; /* gauge: age of the oldest unresolved seq gap, 0 if none */
    /* gauge: 1 while a cursor of the table is at or above its AUTO_INCREMENT
     * counter (the table was reset): nothing is published until
     * `outbox-uvrelay cursor-reset` */
    int cursor_mismatch;
    /* gauge: on a Galera cluster, the other members missing from the list,
     * not connected or not Synced: their gaps wait (cursor mode) */
    uint32_t cursor_members_down;
    /* gauge: 1 while the relay's database node, as its last probe found it,
     * is a Galera node outside the primary component or not ready: it
     * refuses every statement, so nothing is delivered through it */
    int db_node_unready;
    /* times the pending sample found the table re-created or renamed (its
     * CREATE_TIME changed: a RENAME TABLE swap, a table dropped and created
     * again): rows left in a table swapped out are not delivered */
    uint64_t table_replaced;
    /* gauge: 1 while the stream, once seen, is missing (deleted under the
     * relay): nothing is published until it exists again */
    int stream_missing;
    uint64_t stream_losses; /* times the stream seen was found missing */
    /* gauge: the relay's clock minus the database's, in seconds, as the
     * pending sampler measured it (0 until it did); delivery_lag is taken on
     * the database's clock by subtracting it. clock_skew_error_s bounds its
     * error (half the fastest sample's round trip), -1 until measured. */
    double clock_skew_s;
    double clock_skew_error_s;
    /* gauge: subjects the stream refuses for themselves alone (full with
     * max_msgs_per_subject and discard new per subject): their rows wait
     * without attempts while the other subjects flow */
    uint32_t subjects_paused;
    uint64_t deferred; /* rows that waited for their paused subject (each time) */
    /* database connections moved back to the first node of db_url's list
     * (db_failback_ms) */
    uint64_t db_failbacks;
    /* --- new fields here, last --- */
} outbox_stats;

/* Fills the first `size` bytes of `o` with the defaults given in the
 * comments above and sets o->size. Call it through outbox_relay_options_init,
 * which passes the caller's sizeof. */
OUTBOX_EXPORT void outbox_relay_options_init_sized(outbox_relay_options *o, size_t size);
#define outbox_relay_options_init(o)                                                               \
    outbox_relay_options_init_sized((o), sizeof(outbox_relay_options))

/* Checks and copies the options (every string is duplicated), and prepares
 * the relay without touching the loop or the network. On success *out owns
 * the relay. On error *out is NULL; when `errbuf` is not NULL it receives a
 * message saying what was wrong. */
OUTBOX_EXPORT int outbox_relay_create(outbox_relay **out, uv_loop_t *loop,
                                      const outbox_relay_options *o, char *errbuf, size_t errlen);

/* Adds the relay's handles to the loop and starts connecting. Never blocks:
 * unreachable servers are retried with backoff and logged. */
OUTBOX_EXPORT int outbox_relay_start(outbox_relay *r);

typedef void (*outbox_relay_stop_cb)(outbox_relay *r, void *data);

/* Graceful stop: claim no more rows, wait up to shutdown_timeout_ms for the
 * acks of what is in flight, commit what was acked, give back the rest, close
 * every handle, then call `cb` (may be NULL). What still waits on the
 * database 0.6 s after the shutdown timeout (a frozen server) is dropped,
 * so a stop ends within about shutdown_timeout_ms + 1 s whatever the
 * servers do. Calling it again while a stop is under way stops at once: open transactions are
 * dropped (the server rolls them back, and the rows are delivered again later, absorbed by Msg-Id
 * dedup). Returns OUTBOX_ESTATE when the relay was never started. */
OUTBOX_EXPORT int outbox_relay_stop(outbox_relay *r, outbox_relay_stop_cb cb, void *data);

/* Frees the relay, before start or once the stop callback ran; NULL is a
 * no-op. Returns OUTBOX_ESTATE, freeing nothing, while the relay is still on
 * the loop (stop it, and destroy it from the stop callback). */
OUTBOX_EXPORT int outbox_relay_destroy(outbox_relay *r);

/* Copies the counters into the first `size` bytes of `out` (a caller built
 * against a newer header gets zeros in the fields this library lacks). Cheap;
 * safe to call at any time on the loop thread. Call it through
 * outbox_relay_stats, which passes the caller's sizeof. */
OUTBOX_EXPORT void outbox_relay_stats_sized(const outbox_relay *r, outbox_stats *out, size_t size);
#define outbox_relay_stats(r, out) outbox_relay_stats_sized((r), (out), sizeof(outbox_stats))

/* Rows were just committed: fetch at once instead of waiting for the next
 * poll (an in-process doorbell). Cheap; bursts coalesce. Loop thread only. */
OUTBOX_EXPORT void outbox_relay_notify(outbox_relay *r);

/* Connects once to NATS with the URL, TLS and credentials of `o`, then
 * disconnects. It BLOCKS (up to timeout_ms per server, 0: 5000): call it
 * before the loop runs, never from a loop callback. The relay itself retries
 * every NATS failure; this tells the two kinds apart at start-up. Returns
 * OUTBOX_OK; OUTBOX_EREFUSED when the server refused the connection for a
 * reason retrying cannot cure (a certificate that does not verify, TLS
 * required or missing, credentials refused); OUTBOX_ENATS when no server
 * answered; OUTBOX_EINVAL for bad options. errbuf gets the cause, never a
 * secret. */
OUTBOX_EXPORT int outbox_nats_check(const outbox_relay_options *o, uint32_t timeout_ms,
                                    char *errbuf, size_t errlen);

/* The detail message of the last error on the relay. Never NULL. */
OUTBOX_EXPORT const char *outbox_relay_errmsg(const outbox_relay *r);

/* Why the relay pauses although its servers are up, or NULL: JetStream
 * refusing every message (a full store, a resource limit) or the database
 * refusing what every row needs (a privilege taken away), the NATS server
 * refusing the relay's connection after a first success (its credentials
 * changed), or the database node outside a Galera cluster's primary
 * component. Valid until the loop
 * runs again. */
OUTBOX_EXPORT const char *outbox_relay_paused(const outbox_relay *r);

/* What the relay holds back while it is ready and the rest flows, or NULL:
 * subjects the stream refuses for themselves alone (full with
 * max_msgs_per_subject and discard new per subject), whose rows wait
 * without attempts. Written into buf (len bytes), which is returned. */
OUTBOX_EXPORT const char *outbox_relay_degraded(const outbox_relay *r, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif
