/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One blocking connection to NATS with the relay's URL, TLS and
 * credentials, for what runs before a loop or without one: the start-up
 * check (outbox_nats_check) and the one-shot commands that publish.
 */
#ifndef OB_NATS_CHECK_H
#define OB_NATS_CHECK_H

#include <nats/nats.h>
#include <stddef.h>
#include <stdint.h>

#include "outbox/relay.h"

/* Connects to the servers of o->nats_url in turn, without reconnects. It
 * BLOCKS, up to timeout_ms a server (0: 5000). send_asap: every publish is
 * written at once (no flusher thread; for a connection this brief). Returns
 * OUTBOX_OK with *out to be destroyed with natsConnection_Destroy(), or the
 * status of outbox_nats_check() with the cause in errbuf (never a secret). */
int ob_nats_connect_blocking(const outbox_relay_options *o, uint32_t timeout_ms, int send_asap,
                             natsConnection **out, char *errbuf, size_t errlen);

#endif
