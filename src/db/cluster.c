/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The cluster probe's statement and its pure reading (see cluster.h).
 */
#include "cluster.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* information_schema names the variables in capitals. wsrep_on is read as
 * the global value: the session's could be turned off by a client, never
 * by the relay. */
const char ob_cluster_sql[] =
    "SELECT VARIABLE_NAME, VARIABLE_VALUE FROM information_schema.GLOBAL_VARIABLES "
    "WHERE VARIABLE_NAME IN ('WSREP_ON', 'WSREP_NODE_INCOMING_ADDRESS') UNION ALL "
    "SELECT VARIABLE_NAME, VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS "
    "WHERE VARIABLE_NAME IN ('WSREP_PROVIDER_NAME', 'WSREP_CLUSTER_SIZE', "
    "'WSREP_CLUSTER_STATUS', 'WSREP_LOCAL_STATE_COMMENT', 'WSREP_INCOMING_ADDRESSES', "
    "'WSREP_READY')";

void ob_cluster_init(ob_cluster *c) {
    memset(c, 0, sizeof(*c));
    c->size = -1;
    c->ready = -1;
}

/* Copies printable ASCII only: the text goes to logs and terminals. */
static void copy_text(char *dst, size_t n, const char *src) {
    size_t i = 0;
    for (; src[i] && i + 1 < n; i++)
        dst[i] = (src[i] >= 0x20 && src[i] < 0x7f) ? src[i] : '?';
    dst[i] = '\0';
}

void ob_cluster_set(ob_cluster *c, const char *name, const char *value) {
    if (name == NULL || value == NULL)
        return;
    if (strcasecmp(name, "wsrep_on") == 0) {
        c->wsrep_on = strcasecmp(value, "ON") == 0 || strcmp(value, "1") == 0;
    } else if (strcasecmp(name, "wsrep_provider_name") == 0) {
        c->provider = value[0] != '\0';
    } else if (strcasecmp(name, "wsrep_cluster_size") == 0) {
        char *end;
        long v = strtol(value, &end, 10);
        c->size = (end != value && *end == '\0' && v >= 0 && v < 1000000) ? (int)v : -1;
    } else if (strcasecmp(name, "wsrep_cluster_status") == 0) {
        copy_text(c->status, sizeof(c->status), value);
    } else if (strcasecmp(name, "wsrep_local_state_comment") == 0) {
        copy_text(c->state, sizeof(c->state), value);
    } else if (strcasecmp(name, "wsrep_ready") == 0) {
        c->ready = strcasecmp(value, "ON") == 0 || strcmp(value, "1") == 0;
    } else if (strcasecmp(name, "wsrep_incoming_addresses") == 0) {
        copy_text(c->members, sizeof(c->members), value);
    } else if (strcasecmp(name, "wsrep_node_incoming_address") == 0) {
        copy_text(c->self, sizeof(c->self), value);
    }
}

void ob_cluster_read(ob_cluster *c, MYSQL_RES *res) {
    MYSQL_ROW row;
    if (res == NULL)
        return;
    if (mysql_num_fields(res) < 2)
        return;
    while ((row = mysql_fetch_row(res)) != NULL)
        ob_cluster_set(c, row[0], row[1]);
    c->known = 1;
}

int ob_cluster_is_galera(const ob_cluster *c) {
    return c->known && c->wsrep_on && c->provider;
}

int ob_cluster_unfit(const ob_cluster *c, char *why, size_t n) {
    if (!ob_cluster_is_galera(c))
        return 0;
    if (c->ready == 0 || (c->status[0] && strcmp(c->status, "Primary") != 0)) {
        snprintf(why, n, "the node is not ready (wsrep_ready %s, cluster status %s)",
                 c->ready == 0 ? "OFF" : "ON", c->status[0] ? c->status : "not reported");
        return 1;
    }
    return 0;
}

void ob_cluster_describe(const ob_cluster *c, char *out, size_t n) {
    if (!c->known) {
        snprintf(out, n, "not known yet");
    } else if (!c->wsrep_on) {
        snprintf(out, n, "a single server (wsrep off)");
    } else if (!c->provider) {
        snprintf(out, n, "a single server (wsrep on, no provider loaded)");
    } else {
        char size[24] = "?";
        if (c->size >= 0)
            snprintf(size, sizeof(size), "%d", c->size);
        snprintf(out, n, "Galera cluster of %s node%s (%s), this node %s, members %s", size,
                 c->size == 1 ? "" : "s", c->status[0] ? c->status : "status unknown",
                 c->state[0] ? c->state : "in an unknown state",
                 c->members[0] ? c->members : "not reported");
    }
}

int ob_cluster_differs(const ob_cluster *a, const ob_cluster *b) {
    return a->known != b->known || a->wsrep_on != b->wsrep_on || a->provider != b->provider ||
           a->size != b->size || strcmp(a->status, b->status) != 0 ||
           strcmp(a->state, b->state) != 0 || strcmp(a->members, b->members) != 0;
}

/* 1 when every comma-separated entry of the list is a host:port (not AUTO)
 * or empty, and `self` is one of them. An empty entry is a Galera
 * Arbitrator (garbd): it has no client address, stores no data and runs no
 * transaction, so the gap proof has nothing to ask it; a data node without
 * wsrep_node_incoming_address reads AUTO. */
static int names_every_member(const char *list, const char *self) {
    int found = 0;
    size_t ls = strlen(self);
    for (const char *p = list;;) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n > 0 && ((n == 4 && strncmp(p, "AUTO", 4) == 0) || memchr(p, ':', n) == NULL))
            return 0;
        found |= n == ls && strncmp(p, self, n) == 0;
        if (e == NULL)
            return found;
        p = e + 1;
    }
}

/* Why the member list cannot name every other member, NULL when it can
 * (the relay's gap proof then asks each, gap_members.h). */
static const char *members_unusable(const ob_cluster *c) {
    if (c->self[0] == '\0' || strcmp(c->self, "AUTO") == 0)
        return "wsrep_node_incoming_address is not set on this node";
    if (c->members[0] == '\0')
        return "wsrep_incoming_addresses is empty";
    if (strlen(c->members) + 1 >= sizeof(c->members))
        return "wsrep_incoming_addresses is too long";
    if (!names_every_member(c->members, c->self))
        return "wsrep_incoming_addresses does not name every member by host:port (each node "
               "needs wsrep_node_incoming_address, this one among them)";
    return NULL;
}

const char *ob_cluster_refusal(const ob_cluster *c, const ob_mode *mode, char *out, size_t n) {
    /* The leases of the other modes are rows of the lease table there. */
    if (!mode->galera_needs_members || !ob_cluster_is_galera(c))
        return NULL;
    /* Cursor mode's gap proof asks every other member (gap_members.h). */
    const char *why = members_unusable(c);
    if (why == NULL)
        return NULL;
    char size[40] = "a cluster";
    if (c->size >= 0)
        snprintf(size, sizeof(size), "a cluster of %d node%s", c->size, c->size == 1 ? "" : "s");
    snprintf(out, n,
             "cursor mode on a Galera node (%s) proves its gaps on every member, which it must "
             "name: %s; set wsrep_node_incoming_address (host:port) on every node, or use "
             "--ordered or the plain mode",
             size, why);
    return out;
}
