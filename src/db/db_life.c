/* SPDX-License-Identifier: Apache-2.0 */
#include "db_life.h"

#include "db.h"

void ob_db_life_init(ob_db_life *l, uint32_t *gauge, uint64_t *lost) {
    *l = (ob_db_life){.gauge = gauge, .lost = lost};
    ob_retry_init(&l->retry, OB_DB_LIFE_MIN_MS, OB_DB_LIFE_MAX_MS);
}

void ob_db_life_up(ob_db_life *l) {
    if (l->up)
        return;
    l->up = 1;
    if (l->gauge)
        (*l->gauge)++;
}

void ob_db_life_worked(ob_db_life *l) {
    l->failures = 0;
    l->has_said = 0;
}

void ob_db_life_settle(ob_db_life *l) {
    l->settled = 1;
    ob_db_life_worked(l);
}

int ob_db_life_down(ob_db_life *l) {
    if (!l->up)
        return 0;
    ob_db_life_closed(l);
    if (l->lost)
        (*l->lost)++;
    return 1;
}

void ob_db_life_closed(ob_db_life *l) {
    if (!l->up)
        return;
    l->up = 0;
    if (l->gauge)
        (*l->gauge)--;
}

ob_db_verdict ob_db_life_verdict(const ob_db_life *l, unsigned err) {
    return !l->settled && ob_db_errno_is_permanent(err) ? OB_DB_FATAL : OB_DB_RETRY;
}

uint64_t ob_db_life_backoff(ob_db_life *l) {
    uint64_t ms = ob_retry_delay(&l->retry, l->failures);
    if (l->failures < 64)
        l->failures++;
    return ms;
}

int ob_db_life_say(ob_db_life *l, unsigned err) {
    if (l->has_said && err == l->said)
        return 0;
    l->has_said = 1;
    l->said = err;
    return 1;
}

static void handle_closed(ob_db_life *l) {
    if (--l->closing > 0)
        return;
    l->on_closed(l->closed_data); /* may free l */
}

static void timer_closed(uv_handle_t *h) {
    handle_closed(h->data);
}

static void db_closed(void *data) {
    handle_closed(data);
}

void ob_db_life_close(ob_db_life *l, uv_timer_t *timer, ob_db *db, void (*on_closed)(void *data),
                      void *data) {
    ob_db_life_closed(l);
    l->closing = db ? 2 : 1;
    l->on_closed = on_closed;
    l->closed_data = data;
    timer->data = l;
    uv_close((uv_handle_t *)timer, timer_closed);
    if (db)
        ob_db_close(db, db_closed, l);
}
