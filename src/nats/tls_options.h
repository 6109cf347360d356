/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The relay's TLS and credential options, turned into the settings of the
 * two kinds of connection: ob_db_config for MariaDB, ob_nats_security for
 * NATS. relay.c copies the options and hands them on with these calls, and
 * frees its copies with ob_tls_options_free().
 */
#ifndef OB_TLS_OPTIONS_H
#define OB_TLS_OPTIONS_H

#include "db.h"
#include "nats_security.h"
#include "outbox/relay.h"
#include "url.h"

/* Replaces every TLS and credential string of `o` (a copy the relay owns)
 * with a copy of its own. Returns 0, or -1 when out of memory (then the
 * strings that were not copied are NULL, so ob_tls_options_free is safe). */
int ob_tls_options_dup(outbox_relay_options *o);
void ob_tls_options_free(outbox_relay_options *o);

/* Sets the TLS fields of `cfg` from `o`: TLS is on with db_tls, a CA or a
 * client certificate. The strings are borrowed from `o`. */
void ob_db_config_tls_from_options(ob_db_config *cfg, const outbox_relay_options *o);

/* Fills `sec` from `o` for the servers of `url`: TLS is on with a tls://
 * URL or a TLS file; the host name checked is the one the URLs share (when
 * they name different hosts only the chain is verified). With a password
 * file the URL's user is moved out of every URL into sec->user, because
 * nats.c would prefer the URL's empty password. Strings are borrowed from
 * `o` and `url`. Returns 0, or -1 with a message in err. */
int ob_nats_security_from_options(ob_nats_security *sec, const outbox_relay_options *o,
                                  ob_nats_url *url, char *err, size_t errlen);

#endif
