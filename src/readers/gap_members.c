/* SPDX-License-Identifier: Apache-2.0 */
/* The gap proof across a Galera cluster's members (see gap_members.h). */
#include "gap_members.h"

#include <string.h>

#include "cursor_sql.h"
#include "gaps.h"

void ob_members_init(ob_members *ms) {
    memset(ms, 0, sizeof(*ms));
    ms->size = -1;
}

/* The state of `addr` in the old list, or a fresh one (down). */
static ob_member carry(const ob_members *old, const char *addr) {
    for (int i = 0; i < old->n; i++)
        if (strcmp(old->m[i].addr, addr) == 0)
            return old->m[i];
    ob_member m;
    memset(&m, 0, sizeof(m));
    strcpy(m.addr, addr); /* the caller checked its length */
    return m;
}

int ob_members_set(ob_members *ms, const char *list, int size, const char *self) {
    ob_members old = *ms;
    ms->n = 0;
    ms->arbiters = 0;
    ms->usable = 0;
    ms->size = size;
    int seen_self = 0;
    const char *p = list ? list : "";
    for (;;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char addr[sizeof(ms->m[0].addr)];
        if (len >= sizeof(addr))
            return -1;
        if (len == 0) { /* an arbitrator: nothing to ask */
            ms->arbiters++;
            if (!end)
                break;
            p = end + 1;
            continue;
        }
        memcpy(addr, p, len);
        addr[len] = '\0';
        if (strcmp(addr, "AUTO") == 0)
            return -1;
        if (self && strcmp(addr, self) == 0) {
            seen_self = 1;
        } else {
            if (ms->n == OB_MEMBERS_MAX)
                return -1;
            ms->m[ms->n++] = carry(&old, addr);
        }
        if (!end)
            break;
        p = end + 1;
    }
    if (!seen_self)
        return -1;
    ms->usable = 1;
    return 0;
}

uint64_t ob_members_begin(ob_members *ms) {
    return ++ms->round;
}

void ob_members_asked(ob_members *ms, int i) {
    ms->m[i].asked = ms->round;
}

void ob_members_down(ob_members *ms, int i) {
    ob_member *m = &ms->m[i];
    m->up = 0;
    m->asked = m->synced = m->round = 0;
    m->bound_s = 0;
}

void ob_members_answer(ob_members *ms, int i, double now_s, double oldest_s, int synced) {
    ob_member *m = &ms->m[i];
    if (!synced) {
        ob_members_down(ms, i);
        return;
    }
    m->up = 1;
    if (m->round > m->proven && ob_gaps_proves(m->bound_s, now_s, oldest_s))
        m->proven = m->round;
    /* This statement started after the previous one ended, which had
     * applied the write-sets of round `synced`: its clock bounds them. */
    if (m->proven >= m->round && m->synced > m->round) {
        m->round = m->synced;
        m->bound_s = now_s;
    }
    m->synced = m->asked;
}

uint64_t ob_members_proven(const ob_members *ms) {
    if (!ms->usable || ms->size - ms->arbiters < 1 || ms->n != ms->size - ms->arbiters - 1)
        return 0;
    uint64_t r = ms->round;
    /* A member down keeps what it proved (those holders ended) and proves
     * no later round until it answers again. */
    for (int i = 0; i < ms->n; i++)
        if (ms->m[i].proven < r)
            r = ms->m[i].proven;
    return r;
}

double ob_members_due(const ob_members *ms, int i) {
    const ob_member *m = &ms->m[i];
    return m->round > m->proven ? m->bound_s + OB_GAPS_CACHE_MARGIN_S : 0;
}

int ob_members_missing(const ob_members *ms) {
    int data = ms->size - ms->arbiters;
    int missing = data > 1 + ms->n ? data - 1 - ms->n : 0;
    for (int i = 0; i < ms->n; i++)
        missing += !ms->m[i].up;
    return missing;
}

void ob_members_sql_probe(ob_buf *b) {
    ob_buf_puts(b, "SELECT UNIX_TIMESTAMP(NOW(6)), (SELECT UNIX_TIMESTAMP(MIN(trx_started)) FROM "
                   "information_schema.INNODB_TRX WHERE trx_mysql_thread_id <> CONNECTION_ID()), "
                   "(SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE "
                   "VARIABLE_NAME = 'WSREP_LOCAL_STATE_COMMENT')");
}

void ob_members_sql_advance(ob_buf *b, const char *ctable, const char *table, const char *ltable,
                            const char *key, uint64_t me, uint64_t mask, uint64_t seq) {
    ob_buf_puts(b, "UPDATE ");
    ob_buf_puts(b, ctable);
    ob_buf_puts(b, " AS c_ JOIN ");
    ob_buf_puts(b, ltable);
    ob_buf_printf(b,
                  " AS p_ ON p_.lease_key = '%s' AND p_.kind = 'i' AND p_.slot = %llu SET c_.seq "
                  "= %llu, p_.epoch = p_.epoch + 1 WHERE c_.table_name = '%s' AND c_.bucket IN ",
                  key, (unsigned long long)me, (unsigned long long)seq, table);
    ob_cursor_sql_buckets(b, mask);
    ob_buf_printf(b, " AND c_.seq < %llu", (unsigned long long)seq);
}
