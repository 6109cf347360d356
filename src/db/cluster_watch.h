/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The cluster watch: one connection of its own that finds out what the
 * relay's database is (a single server or a Galera node, see cluster.h) at
 * start, after every reconnect, and every interval in between, since a
 * Galera cluster's members come and go without any client reconnecting.
 *
 * It logs what it finds at info level once, and again only when it changes
 * (a node joined or left, the node's state moved), and tells its owner after
 * every answer. Its failures are logged at debug level only: the relay's
 * other connections report an outage of the same server.
 *
 * Life cycle: ob_cluster_watch_new -> start -> close (calls `closed` from
 * the last close callback and frees the watch); ob_cluster_watch_free for a
 * watch never started. Every function runs on the loop thread.
 */
#ifndef OB_CLUSTER_WATCH_H
#define OB_CLUSTER_WATCH_H

#include <stdint.h>
#include <uv.h>

#include "cluster.h"
#include "db.h"
#include "log.h"

typedef struct ob_cluster_watch ob_cluster_watch;

/* With several nodes, the probe's deadline (and its connect's) and the
 * longest time between probes: a node that gives no answer within it is
 * left by the watch and by every connection of the watch's group on that
 * node (db.h, ob_db_group), so a frozen node is left within twice this. */
#define OB_CLUSTER_PROBE_MS 5000

typedef struct ob_cluster_watch_callbacks {
    /* The probe answered (c->known), or failed with an error that is not a
     * lost connection (c->known is 0: what the server is cannot be told).
     * `fresh` is 1 for the first answer on a connection: at start and after
     * each reconnect. c is valid during the call only. */
    void (*seen)(void *data, const ob_cluster *c, int fresh);
    void (*closed)(void *data);
    void *data;
} ob_cluster_watch_callbacks;

/* The db config's strings are copied by the connection; interval_ms is the
 * time between probes on a live connection (0: 10000). NULL when out of
 * memory. */
ob_cluster_watch *ob_cluster_watch_new(uv_loop_t *loop, const ob_db_config *db, const ob_log *log,
                                       uint32_t interval_ms, const ob_cluster_watch_callbacks *cbs);
void ob_cluster_watch_start(ob_cluster_watch *w);
void ob_cluster_watch_close(ob_cluster_watch *w);
void ob_cluster_watch_free(ob_cluster_watch *w);

/* The last answer (known = 0 before the first). */
const ob_cluster *ob_cluster_watch_last(const ob_cluster_watch *w);

#endif
