/* SPDX-License-Identifier: Apache-2.0 */
/*
 * outbox-uvrelay: a transactional-outbox relay from MariaDB to NATS JetStream.
 *
 * This umbrella header pulls in every public part of the library. Each part
 * can also be included on its own:
 *   outbox/common.h    status codes, logging callback, version
 *   outbox/id.h        UUIDv7 identifiers
 *   outbox/producer.h  enqueue events inside the caller's transaction
 *   outbox/relay.h     the relay, embedded on a caller-owned libuv loop
 *   outbox/maint.h     maintenance: schema text, partitions, cleanup, dead rows
 *   outbox/republish.h publishing delivered rows again, to rebuild a lost stream
 *   outbox/conn.h      a non-blocking MariaDB connection on the loop
 *   outbox/ring.h      the doorbell (needs nats.c's header: not included here)
 *   outbox/metrics.h   the stats in the Prometheus text format
 *   outbox/http.h      /metrics, /healthz and /readyz on the relay's loop
 */
#ifndef OUTBOX_OUTBOX_H
#define OUTBOX_OUTBOX_H

#include "outbox/common.h"
#include "outbox/id.h"
#include "outbox/producer.h"
#include "outbox/relay.h"
#include "outbox/maint.h"
#include "outbox/republish.h"
#include "outbox/conn.h"
#include "outbox/metrics.h"
#include "outbox/http.h"

#endif
