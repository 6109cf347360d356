/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The doorbell, for producers that hold a NATS connection: after committing
 * events, ring the relay so that it fetches at once instead of at its next
 * poll. Separate from outbox.h because it needs nats.c's header.
 *
 * Producers in other languages publish an empty core NATS message to
 * "outbox_wake.<table>" (or the relay's --wake-subject); see docs/producing.md.
 */
#ifndef OUTBOX_RING_H
#define OUTBOX_RING_H

#include <nats/nats.h>

#include "outbox/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Publishes an empty message on "outbox_wake.<table>" (table as given to
 * the relay, "outbox" when NULL). Never waits for the server: the message
 * is buffered by nats.c and sent by its flusher. Ring after the commit, not
 * before. Returns OUTBOX_OK, OUTBOX_EINVAL for a bad table name, or
 * OUTBOX_ENATS when nats.c refused the publish (closed connection, say). */
OUTBOX_EXPORT int outbox_ring(natsConnection *nc, const char *table);

#ifdef __cplusplus
}
#endif

#endif
