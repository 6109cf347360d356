/* SPDX-License-Identifier: Apache-2.0 */
#include "db_nodes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

int ob_db_nodes_init(ob_db_nodes *l, const ob_db_node *nodes, int n, const char *host,
                     unsigned port) {
    memset(l, 0, sizeof(*l));
    l->on = l->left = l->fd = -1;
    ob_db_node one = {(char *)host, port};
    if (n <= 0) {
        nodes = &one;
        n = 1;
    }
    if (n > OB_DB_MAX_NODES)
        n = OB_DB_MAX_NODES;
    for (int i = 0; i < n; i++) {
        l->node[i].port = nodes[i].port;
        if (nodes[i].host && (l->node[i].host = strdup(nodes[i].host)) == NULL) {
            ob_db_nodes_free(l);
            return -1;
        }
        l->n = i + 1;
    }
    return 0;
}

void ob_db_nodes_free(ob_db_nodes *l) {
    for (int i = 0; i < l->n; i++)
        free(l->node[i].host);
    l->n = 0;
}

const char *ob_db_nodes_host(const ob_db_nodes *l) {
    return l->node[l->cur].host;
}

unsigned ob_db_nodes_port(const ob_db_nodes *l) {
    return l->node[l->cur].port;
}

void ob_db_nodes_round(ob_db_nodes *l) {
    l->tried = 0;
}

static void give_up(ob_db_nodes *l, const char *why) {
    l->left = l->cur;
    snprintf(l->why, sizeof(l->why), "%s", l->told[0] ? l->told : why ? why : "unknown error");
    l->told[0] = '\0';
    l->cur = (l->cur + 1) % l->n;
}

void ob_db_nodes_lost(ob_db_nodes *l, const char *why) {
    if (l->n > 1 && l->on == l->cur && !l->stay)
        give_up(l, why);
    l->stay = 0;
    l->told[0] = '\0';
}

void ob_db_nodes_answered(ob_db_nodes *l, uint64_t now) {
    if (l->group == NULL || l->on < 0)
        return;
    l->group->answered = l->on + 1;
    l->group->answered_ms = now;
}

int ob_db_nodes_busy(ob_db_nodes *l, uint64_t now, unsigned ms, char *msg, size_t len) {
    ob_db_group *g = l->group;
    if (g == NULL || l->n < 2 || l->on < 0 || l->on != l->cur || g->answered != l->on + 1 ||
        g->answered_ms + ms < now)
        return 0;
    l->stay = 1;
    char node[300];
    ob_db_nodes_name(l, l->on, node, sizeof(node));
    snprintf(msg, len,
             "database %s is busy, not dead: a statement had no answer within %u ms, but the "
             "node answered its cluster probe %llu ms ago (a long DDL or a lock holds it); the "
             "connection is made again on the same node",
             node, ms, (unsigned long long)(now - g->answered_ms));
    if (g->busy_said != 0 && now - g->busy_said < OB_DB_BUSY_SAY_MS)
        return 1;
    g->busy_said = now ? now : 1;
    return 2;
}

void ob_db_nodes_join(ob_db_nodes *l, ob_db_group *g) {
    l->group = g;
    if (g == NULL)
        return;
    l->prev = NULL;
    l->next = g->first;
    if (g->first)
        g->first->prev = l;
    g->first = l;
}

void ob_db_nodes_leave(ob_db_nodes *l) {
    if (l->group == NULL)
        return;
    if (l->prev)
        l->prev->next = l->next;
    else
        l->group->first = l->next;
    if (l->next)
        l->next->prev = l->prev;
    l->group = NULL;
}

void ob_db_nodes_silent(ob_db_nodes *l, unsigned ms, int others) {
    char why[96];
    snprintf(why, sizeof(why), "no answer within %u ms", ms);
    snprintf(l->told, sizeof(l->told), "%s", why);
    if (!others || l->group == NULL || l->n < 2 || l->on != l->cur)
        return;
    for (ob_db_nodes *m = l->group->first; m; m = m->next) {
        int fd = m == l ? -1 : m->fd;
        if (fd < 0 || m->on != l->on || m->n != l->n)
            continue;
        snprintf(m->told, sizeof(m->told), "%s (found by another connection)", why);
        shutdown(fd, SHUT_RDWR);
    }
}

void ob_db_nodes_round_failed(const ob_db_nodes *l, char *err, size_t len) {
    static const char pre[] = "no database node answered; the last tried: ";
    if (l->n < 2 || len <= sizeof(pre))
        return;
    size_t n = strlen(err);
    if (n + sizeof(pre) > len)
        n = len - sizeof(pre);
    memmove(err + sizeof(pre) - 1, err, n);
    memcpy(err, pre, sizeof(pre) - 1);
    err[sizeof(pre) - 1 + n] = '\0';
}

int ob_db_nodes_failed(ob_db_nodes *l, const char *why) {
    if (l->n == 1)
        return 0;
    give_up(l, why);
    return ++l->tried < l->n;
}

void ob_db_nodes_name(const ob_db_nodes *l, int i, char *out, size_t len) {
    const ob_db_node *d = &l->node[i];
    int v6 = d->host && strchr(d->host, ':') != NULL;
    if (l->n == 1)
        snprintf(out, len, "%s%s%s:%u", v6 ? "[" : "", d->host ? d->host : "", v6 ? "]" : "",
                 d->port);
    else
        snprintf(out, len, "node %d of %d (%s%s%s:%u)", i + 1, l->n, v6 ? "[" : "", d->host,
                 v6 ? "]" : "", d->port);
}

int ob_db_nodes_up(ob_db_nodes *l, uint64_t now, char *msg, size_t len) {
    int was = l->on < 0 ? 0 : l->on, back = l->back;
    uint64_t away = l->away_ms;
    l->on = l->cur;
    l->back = 0;
    if (l->cur == 0) {
        l->away_ms = 0;
        if (l->group)
            l->group->first_up_ms = now ? now : 1;
    } else if (l->away_ms == 0) {
        l->away_ms = now ? now : 1;
        l->retry_ms = 0;
    }
    if (l->n == 1 || l->cur == was)
        return 0;
    char to[300], from[300];
    ob_db_nodes_name(l, l->cur, to, sizeof(to));
    if (back && l->cur == 0) {
        ob_db_nodes_name(l, was, from, sizeof(from));
        if (l->group)
            l->group->failbacks++;
        snprintf(msg, len, "back on database %s, the first listed, after %llu s on %s", to,
                 (unsigned long long)(now - away) / 1000, from);
    } else if (l->left >= 0) {
        ob_db_nodes_name(l, l->left, from, sizeof(from));
        snprintf(msg, len, "on database %s; %s given up: %s", to, from, l->why);
    } else {
        snprintf(msg, len, "on database %s", to);
    }
    return 1;
}

int ob_db_nodes_failback_due(const ob_db_nodes *l, uint64_t now, uint32_t hold_ms) {
    if (hold_ms == 0 || l->n < 2 || l->on <= 0 || l->away_ms == 0 || now < l->away_ms + hold_ms ||
        now < l->retry_ms)
        return 0;
    const ob_db_group *g = l->group;
    if (g && g->first_up_ms > l->away_ms)
        return 2;
    return g == NULL || now >= g->retry_first_ms;
}

void ob_db_nodes_failback(ob_db_nodes *l, uint64_t now, uint32_t hold_ms) {
    l->cur = 0;
    l->tried = 0;
    l->back = 1;
    l->stay = 0;
    l->told[0] = '\0';
    l->retry_ms = now + hold_ms; /* a failed try waits a hold-down again */
    if (l->group)
        l->group->retry_first_ms = now + hold_ms;
}
