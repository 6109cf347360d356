/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The lease connection's state machine (see lease.h for what leases are).
 *
 *   NEW ----------start--> CONNECTING
 *    |  no memory for the connection --> HALTED (fatal)
 *   CONNECTING ------ok--> CHECKING (the cluster probe; ordered: SELECT seq, bucket LIMIT 0)
 *    |              fail--> CONNECT_WAIT --timer--> CONNECTING
 *   CHECKING -------- ok--> SURVEYING
 *    |   permanent error--> HALTED (fatal: the ordering columns are missing)
 *   SURVEYING ------------> RESTING (nothing to change)
 *    |                  --> CLAIMING (free buckets below the fair share, or some above it)
 *    |                  --> FENCING (a lock holder's session is silent)
 *    |                  --> HALTED (fatal: another mode at start, or a permanent error
 *    |                              before a round ever worked; unordered, such an
 *    |                              error only ends the check, with a warning)
 *   FENCING --------------> KILLING (its worker sessions, found by their locks)
 *   KILLING --------------> KILLING (the next session) --> RESTING at 0 ms (the holder, last)
 *   CLAIMING -------------> RESTING
 *    |                  --> HALTED (fatal: as from SURVEYING)
 *   RESTING -------timer--> SURVEYING (the leader: CLAIMING, its check)
 *   any query state -lost-> CONNECT_WAIT (every lease goes with the session, at once)
 *   RESTING -------lost---> CONNECT_WAIT (the server closed the idle connection)
 *    |       other error--> RESTING (warned once per distinct error)
 *   any state ----close---> CLOSING (on the lease table, a round's state: LEAVING)
 *   a round's state, lease table --close--> LEAVING
 *   LEAVING ---answered---> CLOSING (the round under way first, then the leave)
 *
 * Leader mode: a standby's survey asks for the leadership lock (and lists
 * the idle sessions); while leading, CLAIMING checks that the lock is still
 * this session's.
 *
 * A lost connection loses every lock with it: the owned set becomes empty at
 * once, before reconnecting. On a Galera node (the probe says) the same
 * rounds run on the lease table (lease_table.h): no FENCING, no KILLING.
 */
#include "lease.h"

#include <mysqld_error.h>
#include <stdio.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "cluster.h"
#include "db_life.h"
#include "lease_backend.h"
#include "lease_locks.h"
#include "lease_table.h"

typedef enum lease_state {
    LS_NEW,          /* created, not started */
    LS_CONNECTING,   /* waiting for the connection */
    LS_CONNECT_WAIT, /* waiting before connecting again */
    LS_CHECKING,     /* waiting for the check of the ordering columns */
    LS_SURVEYING,    /* waiting for the lock holders and the idle sessions */
    LS_FENCING,      /* waiting for the worker sessions of a stale holder */
    LS_KILLING,      /* waiting for KILL CONNECTION of one of them */
    LS_CLAIMING,     /* waiting for GET_LOCK / RELEASE_LOCK */
    LS_RESTING,      /* waiting for the next round */
    LS_HALTED,       /* the table cannot be used; waiting for the close */
    LS_LEAVING,      /* a clean stop on the table: waiting for its rows to go */
    LS_CLOSING       /* waiting for the timer and the connection to close */
} lease_state;

/* The most sessions of one stale holder ended: its workers and itself. */
#define OB_MAX_KILLS 258

/* A clean stop on the lease table waits this long at most for its rows to go. */
#define OB_LEASE_LEAVE_MS 2000

typedef enum lease_event {
    LSE_START,
    LSE_DB_OK,
    LSE_DB_FAILED,
    LSE_DB_LOST, /* the connection died between rounds (ob_db_watch) */
    LSE_TIMER
} lease_event;

struct ob_lease {
    ob_lease_config cfg;
    ob_lease_callbacks cbs;
    lease_state state;
    const ob_lease_backend *be; /* named locks, or the lease table on a Galera node */
    ob_lease_ctx ctx;           /* what the backend reads and writes */
    uv_timer_t timer;
    ob_db_life life;      /* settled once a survey or claim succeeded: later errors are not
                             start-up's; not in the gauge of connections up: it reads no rows */
    int presence;         /* the presence slot held, -1 none */
    int mode_warned;      /* another mode's relay was warned of (until it leaves) */
    uint64_t owned;       /* buckets held */
    uint64_t leaving;     /* cursor mode: held, given up, released at the next round */
    uint64_t shown;       /* the set last told to the owner */
    uint32_t stale_ms;    /* a holder idle this long is ended */
    uint32_t valid_ms;    /* the lease holds this long after a round was sent */
    uint64_t sent_ns;     /* uv_hrtime() when the statement under way was sent */
    uint64_t proven_ns;   /* sent_ns of the last answered round, 0 never */
    unsigned long victim; /* the stale holder being ended */
    unsigned long kills[OB_MAX_KILLS]; /* its sessions, workers first */
    int nkills, killed;
    uint32_t interval0; /* the configured interval between rounds */
    int leave_tries;    /* LEAVING: the leave's statements sent */
};

static void dispatch(ob_lease *l, lease_event ev);

static const char *const state_names[] = {
    [LS_NEW] = "new",           [LS_CONNECTING] = "connecting", [LS_CONNECT_WAIT] = "connect-wait",
    [LS_CHECKING] = "checking", [LS_SURVEYING] = "surveying",   [LS_FENCING] = "fencing",
    [LS_KILLING] = "killing",   [LS_CLAIMING] = "claiming",     [LS_RESTING] = "resting",
    [LS_HALTED] = "halted",     [LS_CLOSING] = "closing",       [LS_LEAVING] = "leaving",
};

static void set_state(ob_lease *l, lease_state s) {
    if (l->state != s)
        OB_DEBUG(l->cfg.log, "lease: %s -> %s", state_names[l->state], state_names[s]);
    l->state = s;
}

/* Result i of a round (the lease table's first five are its own). */
static int res(const ob_lease *l, int i) {
    return l->be->first + i;
}

static int leadership(const ob_lease *l) {
    return l->cfg.mode->lease == OB_MODE_LEASE_LEADERSHIP;
}

void ob_lease_base(char *out, const char *database, const char *table) {
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    const char *parts[3] = {database ? database : "", ".", table ? table : ""};
    for (int i = 0; i < 3; i++)
        for (const unsigned char *p = (const unsigned char *)parts[i]; *p; p++)
            h = (h ^ *p) * 1099511628211ULL;
    snprintf(out, 32, "obx:%016llx", (unsigned long long)h);
}

/* --- callbacks ----------------------------------------------------------- */

static void on_db(ob_db *db, int ok, void *data) {
    (void)db;
    dispatch(data, ok ? LSE_DB_OK : LSE_DB_FAILED);
}

static void on_db_lost(ob_db *db, int ok, void *data) {
    (void)db;
    (void)ok;
    dispatch(data, LSE_DB_LOST);
}

static void on_timer(uv_timer_t *t) {
    dispatch(t->data, LSE_TIMER);
}

/* --- actions ------------------------------------------------------------- */

static void tell(ob_lease *l) {
    if (l->owned == l->shown)
        return;
    int was = ob_bucket_count(l->shown), now = ob_bucket_count(l->owned);
    l->shown = l->owned;
    if (leadership(l))
        OB_INFO(l->cfg.log, l->owned ? "lease: leading (session %lu)" : "lease: standing by",
                ob_db_thread_id(l->ctx.db));
    else
        OB_INFO(l->cfg.log, "lease: %d of %d buckets owned (was %d)", now, OB_BUCKETS, was);
    l->cbs.changed(l->cbs.data, l->owned);
}

static void rest(ob_lease *l, uint64_t ms) {
    set_state(l, LS_RESTING);
    uv_timer_start(&l->timer, on_timer, ms, 0);
}

static void query(ob_lease *l, lease_state s) {
    set_state(l, s);
    l->sent_ns = uv_hrtime();
    if (l->ctx.sql.oom || ob_db_query(l->ctx.db, l->ctx.sql.p, l->ctx.sql.len, on_db, l) != 0) {
        OB_WARN(l->cfg.log, "lease: cannot send a statement; trying again");
        rest(l, l->cfg.interval_ms);
    }
}

static void connect_db(ob_lease *l) {
    set_state(l, LS_CONNECTING);
    if (ob_db_connect(l->ctx.db, on_db, l) != 0) {
        set_state(l, LS_CONNECT_WAIT);
        uv_timer_start(&l->timer, on_timer, ob_db_life_backoff(&l->life), 0);
    }
}

/* Reads results 1 and 2 of a round. Returns -1 when another mode runs on
 * the table before this relay ever settled: it must not start. */
static int check_modes(ob_lease *l) {
    char **row = ob_db_next_row(l->ctx.db, res(l, 1), NULL);
    if (row && row[0] && strcmp(row[0], "1") == 0)
        l->ctx.mode_lock = 1;
    row = ob_db_next_row(l->ctx.db, res(l, 2), NULL);
    if (row == NULL)
        return 0;
    const ob_mode *mine = l->cfg.mode, *other = NULL;
    long n = 0;
    for (int i = 0; i < OB_MODE_COUNT; i++) /* the counts come in ob_modes' order */
        if (ob_modes[i] != mine && row[i] && atol(row[i]) > 0 && other == NULL) {
            other = ob_modes[i];
            n = atol(row[i]);
        }
    if (other == NULL) {
        l->mode_warned = 0;
        return 0;
    }
    if (!l->life.settled) {
        char why[320];
        snprintf(why, sizeof(why),
                 "table %s is already relayed in %s mode by %ld relay(s); every relay on one "
                 "table must run in the same mode (this one: %s)",
                 l->cfg.table, other->name, n, mine->name);
        set_state(l, LS_HALTED);
        if (l->be->leave)
            (void)l->be->leave(&l->ctx, NULL, NULL);
        l->cbs.fatal(l->cbs.data, why);
        return -1;
    }
    if (!l->mode_warned)
        OB_WARN(l->cfg.log,
                "lease: %ld relay(s) in %s mode started on table %s beside this %s one: every "
                "relay on one table must run in the same mode; stop one of them",
                n, other->name, l->cfg.table, mine->name);
    l->mode_warned = 1;
    return 0;
}

/* The start of a round (the backend writes it): who holds what, or the
 * leadership's claim (its check, while leading); with either, the sessions
 * that went silent, and the mode check. */
static void survey(ob_lease *l) {
    int leading = leadership(l) && l->owned;
    l->ctx.nclaims = leading;
    l->ctx.claims[0] = (ob_lease_claim){'l', 0};
    l->be->survey(&l->ctx, leading);
    query(l, leading ? LS_CLAIMING : LS_SURVEYING);
}

/* Asks for the sessions of the stale holder's workers, by their locks. */
static void fence(ob_lease *l, unsigned long victim) {
    if (l->be->fence == NULL) { /* its rounds name no silent holder */
        rest(l, l->cfg.interval_ms);
        return;
    }
    l->victim = victim;
    l->nkills = l->killed = 0;
    l->be->fence(&l->ctx, victim, OB_MAX_KILLS - 2);
    query(l, LS_FENCING);
}

/* Ends the next session of the stale holder; the holder itself last, so that
 * an instance interrupted here finds the holder, and so its workers, again. */
static void kill_next(ob_lease *l) {
    if (l->killed == l->nkills) {
        OB_WARN(l->cfg.log,
                "lease: session %lu held %s and was silent for over %" PRIu32
                " ms; ended it and %d worker session(s)",
                l->victim, leadership(l) ? "the leadership" : "buckets", l->stale_ms,
                l->nkills - 1);
        rest(l, 0); /* its locks are free now: survey again at once */
        return;
    }
    ob_buf_reset(&l->ctx.sql);
    ob_buf_printf(&l->ctx.sql, "KILL CONNECTION %lu", l->kills[l->killed++]);
    query(l, LS_KILLING);
}

static void fenced(ob_lease *l) {
    char **row;
    while ((row = ob_db_next_row(l->ctx.db, 0, NULL)) != NULL)
        if (row[0] && l->nkills < OB_MAX_KILLS - 1)
            l->kills[l->nkills++] = strtoul(row[0], NULL, 10);
    l->kills[l->nkills++] = l->victim;
    kill_next(l);
}

/* The silent holders a round can list: one per lock at most (buckets and
 * presence locks), so the survey's filter never yields more. */
#define OB_MAX_IDLE (2 * OB_BUCKETS)

/* Keeps a silent holder read from a survey; says so if one must be left
 * out (the survey's filter makes that impossible, so it is worth a line). */
static void add_idle(ob_lease *l, unsigned long *idle, int *nidle, const char *id) {
    if (*nidle < OB_MAX_IDLE) {
        idle[(*nidle)++] = strtoul(id, NULL, 10);
        return;
    }
    OB_WARN(l->cfg.log,
            "lease: more than %d silent lock holders listed; session %s was not looked at "
            "this round",
            OB_MAX_IDLE, id);
}

/* A holder of one of this table's leases among the silent sessions, or 0. */
static unsigned long stale_holder(const unsigned long *idle, int nidle, const unsigned long *held,
                                  int nheld) {
    for (int i = 0; i < nidle; i++)
        for (int j = 0; j < nheld; j++)
            if (idle[i] == held[j])
                return idle[i];
    return 0;
}

/* The standby's survey: the leadership if it was free, else whether its
 * holder went silent. */
static void decide_leader(ob_lease *l) {
    unsigned long idle[OB_MAX_IDLE], holder = 0;
    int nidle = 0, got = 0;
    char **row;
    while ((row = ob_db_next_row(l->ctx.db, res(l, 0), NULL)) != NULL) {
        if (row[2] != NULL) {
            add_idle(l, idle, &nidle, row[2]);
        } else {
            got = row[0] && strcmp(row[0], "1") == 0;
            holder = row[1] ? strtoul(row[1], NULL, 10) : 0;
        }
    }
    l->owned = got ? OB_ALL_BUCKETS : 0;
    tell(l);
    unsigned long victim = got ? 0 : stale_holder(idle, nidle, &holder, holder != 0);
    if (victim)
        fence(l, victim);
    else
        rest(l, l->cfg.interval_ms);
}

/* A lock (or row) for the backend's claim statement. */
static void add_claim(ob_lease *l, char kind, int k) {
    l->ctx.claims[l->ctx.nclaims++] = (ob_lease_claim){(uint8_t)kind, (uint8_t)k};
}

/* Reads the survey and claims or releases buckets towards the fair share. */
static void decide(ob_lease *l) {
    unsigned long me = l->be->me(&l->ctx);
    uint64_t free_b = 0, mine = 0;
    int live = 0, free_m = -1, nidle = 0, nheld = 0;
    unsigned long idle[OB_MAX_IDLE], held[2 * OB_BUCKETS];
    char **row;
    while ((row = ob_db_next_row(l->ctx.db, res(l, 0), NULL)) != NULL) {
        if (row[0] == NULL) { /* a silent holder */
            if (row[3])
                add_idle(l, idle, &nidle, row[3]);
            continue;
        }
        int k = atoi(row[0]);
        if (k < 0 || k >= OB_BUCKETS)
            continue;
        if (row[1] == NULL)
            free_b |= 1ULL << k;
        else if (strtoul(row[1], NULL, 10) == me)
            mine |= 1ULL << k;
        else
            held[nheld++] = strtoul(row[1], NULL, 10);
        if (row[2] != NULL) {
            live++;
            if (strtoul(row[2], NULL, 10) != me)
                held[nheld++] = strtoul(row[2], NULL, 10);
        } else if (free_m < 0) {
            free_m = k;
        }
    }
    /* The server's word is the truth, but for the buckets leaving (cursor
     * mode): their owner was told they are gone; their locks go now. */
    uint64_t leaving = l->leaving & mine;
    l->leaving = 0;
    l->owned = mine & ~leaving;
    unsigned long victim = stale_holder(idle, nidle, held, nheld);
    if (victim) {
        tell(l);
        fence(l, victim);
        return;
    }
    if (l->presence < 0 || live == 0) /* table mode: its row was just deleted */
        live++;
    int target = (OB_BUCKETS + live - 1) / live, have = ob_bucket_count(mine & ~leaving);
    l->ctx.nclaims = 0;
    for (int k = 0; k < OB_BUCKETS; k++)
        if (leaving >> k & 1)
            add_claim(l, 'r', k);
    if (l->presence < 0 && free_m >= 0)
        add_claim(l, 'm', free_m);
    /* Start the search at a point of our own, so that instances taking free
     * buckets at the same time mostly ask for different ones. */
    int start = (int)(me % OB_BUCKETS);
    for (int i = 0; i < OB_BUCKETS && have < target; i++) {
        int k = (start + i) % OB_BUCKETS;
        if (free_b >> k & 1) {
            add_claim(l, 'b', k);
            have++;
        }
    }
    for (int k = OB_BUCKETS - 1; k >= 0 && have > target; k--) {
        if (l->owned >> k & 1) {
            l->owned &= ~(1ULL << k); /* dropped before its lock goes */
            /* Cursor mode: the lock goes at the next round, so that the
             * owner can write the bucket's last cursor while it holds it. */
            if (l->cfg.mode->release_late || l->be->releases_late)
                l->leaving |= 1ULL << k;
            else
                add_claim(l, 'r', k);
            have--;
        }
    }
    tell(l);
    if (l->ctx.nclaims == 0) {
        rest(l, l->cfg.interval_ms);
        return;
    }
    l->be->claims(&l->ctx);
    query(l, LS_CLAIMING);
}

static void claimed(ob_lease *l) {
    if (l->be->held && !leadership(l)) {
        /* A bucket leaving is held until the next round, not owned. */
        l->owned = l->be->held(&l->ctx) & ~l->leaving;
        tell(l);
        rest(l, l->cfg.interval_ms);
        return;
    }
    char **row = ob_db_next_row(l->ctx.db, res(l, 0), NULL);
    for (int i = 0; row && i < l->ctx.nclaims; i++) {
        int got = row[i] && strcmp(row[i], "1") == 0;
        ob_lease_claim c = l->ctx.claims[i];
        if (c.kind == 'm' && got)
            l->presence = c.k;
        else if (c.kind == 'b' && got)
            l->owned |= 1ULL << c.k;
        else if (c.kind == 'l')
            l->owned = got ? OB_ALL_BUCKETS : 0;
    }
    tell(l);
    rest(l, l->cfg.interval_ms);
}

static void lose_all(ob_lease *l) {
    l->owned = 0;
    l->leaving = 0;
    l->presence = -1;
    tell(l);
}

/* The backend's verdict (the lease table's): a lost race waits for the
 * next round; a misconfiguration is fatal. */
static int backend_failed(ob_lease *l) {
    char why[640];
    int v = l->be->failed(&l->ctx, l->life.settled, why, sizeof(why));
    if (v == 1)
        rest(l, l->cfg.interval_ms);
    if (v == 2) {
        set_state(l, LS_HALTED);
        l->cbs.fatal(l->cbs.data, why);
    }
    return v != 0;
}

static void db_failed(ob_lease *l) {
    unsigned no = ob_db_errno(l->ctx.db);
    if (l->state == LS_KILLING && no == ER_NO_SUCH_THREAD && !ob_db_lost(l->ctx.db)) {
        kill_next(l); /* it ended meanwhile (another instance was quicker) */
        return;
    }
    if (ob_db_lost(l->ctx.db)) {
        if (l->state != LS_CONNECTING)
            OB_WARN(l->cfg.log, "lease: connection lost (%s); every lease goes with it",
                    ob_db_error(l->ctx.db));
        ob_db_life_down(&l->life);
        lose_all(l);
        set_state(l, LS_CONNECT_WAIT);
        uv_timer_start(&l->timer, on_timer, ob_db_life_backoff(&l->life), 0);
        return;
    }
    if (l->be->failed && l->state != LS_CHECKING && backend_failed(l))
        return;
    /* A permanent error before the lease ever worked is a misconfiguration:
     * the relay stops with its cause rather than retry it forever. */
    if (ob_db_life_verdict(&l->life, no) == OB_DB_FATAL &&
        l->cfg.mode->lease == OB_MODE_LEASE_NONE) {
        OB_WARN(l->cfg.log,
                "lease: cannot check that every relay on table %s runs unordered: %u %s",
                l->cfg.table, no, ob_db_error(l->ctx.db));
        l->life.settled = 1; /* the relay runs without the check, as it did before it existed */
        set_state(l, LS_HALTED);
        return;
    }
    if (ob_db_life_verdict(&l->life, no) == OB_DB_FATAL) {
        char why[512];
        if (l->state == LS_CHECKING && (no == ER_BAD_FIELD_ERROR || no == ER_NO_SUCH_TABLE))
            snprintf(why, sizeof(why),
                     "ordered delivery needs the seq and bucket columns in table %s (%u %s); add "
                     "them with: outbox-uvrelay schema --migrate --table %s | mariadb <database>",
                     l->cfg.table, no, ob_db_error(l->ctx.db), l->cfg.table);
        else
            snprintf(why, sizeof(why), "the lease's %s statement failed: %u %s%s",
                     state_names[l->state], no, ob_db_error(l->ctx.db), ob_db_error_hint(no));
        set_state(l, LS_HALTED);
        l->cbs.fatal(l->cbs.data, why);
        return;
    }
    /* Warned once per distinct error: a lasting one does not fill the log. */
    if (ob_db_life_say(&l->life, no))
        OB_WARN(l->cfg.log, "lease: %s failed: %u %s; trying again every %u ms",
                state_names[l->state], no, ob_db_error(l->ctx.db), l->cfg.interval_ms);
    rest(l, l->cfg.interval_ms);
}

/* --- the states ---------------------------------------------------------- */

/* GET_LOCK on a single server, the lease table on a Galera node (where
 * GET_LOCK is node-local), as the cluster probe in result 0 says; a
 * renewed presence's rounds come 4 times a stale time. */
static void choose(ob_lease *l) {
    ob_cluster c;
    ob_cluster_init(&c);
    char **row;
    while ((row = ob_db_next_row(l->ctx.db, 0, NULL)) != NULL) {
        ob_cluster_set(&c, row[0], row[1]);
        c.known = 1;
    }
    const ob_lease_backend *be =
        ob_cluster_is_galera(&c) ? &ob_lease_table_backend : &ob_lease_locks_backend;
    if (be != l->be)
        OB_INFO(l->cfg.log, "lease: %s", be->says);
    l->be = be;
    if (be->connected)
        be->connected(&l->ctx);
    l->cfg.interval_ms = l->interval0;
    if (be->renews) {
        l->presence = 0; /* the presence row is written by the rounds */
        if (l->cfg.interval_ms > l->stale_ms / 4)
            l->cfg.interval_ms = l->stale_ms / 4 > 0 ? l->stale_ms / 4 : 1;
    }
}

/* Only looks (the mode check alone). */
static void look_only(ob_lease *l) {
    rest(l, l->cfg.interval_ms);
}

/* What a round's answer leads to, by what the mode holds. */
static void (*const decides[])(ob_lease *l) = {
    [OB_MODE_LEASE_NONE] = look_only,
    [OB_MODE_LEASE_BUCKETS] = decide,
    [OB_MODE_LEASE_LEADERSHIP] = decide_leader,
};

static void on_ok(ob_lease *l) {
    switch (l->state) {
    case LS_CONNECTING:
        ob_db_life_up(&l->life);
        l->presence = -1;
        l->ctx.mode_lock = 0;
        /* What the server is decides the mechanism, at every connect. */
        ob_buf_reset(&l->ctx.sql);
        ob_buf_puts(&l->ctx.sql, ob_cluster_sql);
        if (l->cfg.mode->ordering_columns)
            ob_buf_printf(&l->ctx.sql, "; SELECT seq, bucket FROM %s LIMIT 0", l->cfg.qtable);
        query(l, LS_CHECKING);
        return;
    case LS_CHECKING:
        choose(l);
        survey(l);
        return;
    case LS_SURVEYING:
        if (l->be->surveyed)
            l->be->surveyed(&l->ctx);
        if (check_modes(l) != 0)
            return;
        ob_db_life_settle(&l->life);
        l->proven_ns = l->sent_ns;
        decides[l->cfg.mode->lease](l);
        return;
    case LS_CLAIMING:
        /* The leadership's check is its round. */
        if (leadership(l) && l->be->surveyed)
            l->be->surveyed(&l->ctx);
        if (leadership(l) && l->owned && check_modes(l) != 0)
            return;
        ob_db_life_settle(&l->life);
        /* The lease table's bucket claims renew nothing: the round proved. */
        if (l->be->claims_prove || leadership(l))
            l->proven_ns = l->sent_ns;
        claimed(l);
        return;
    case LS_FENCING:
        l->proven_ns = l->sent_ns;
        fenced(l);
        return;
    case LS_KILLING:
        l->proven_ns = l->sent_ns;
        kill_next(l);
        return;
    default:
        return;
    }
}

static void close_now(ob_lease *l);

/* A clean stop on the table: the round under way answers, then this
 * instance's rows go (a lost race is tried again); whatever else happens,
 * or the time is up, it closes and its rows go stale as a killed one's. */
static void leaving(ob_lease *l, lease_event ev) {
    int lost = ev == LSE_DB_LOST || ev == LSE_TIMER || ob_db_lost(l->ctx.db);
    int raced = ev == LSE_DB_FAILED && ob_db_errno(l->ctx.db) == ER_LOCK_DEADLOCK;
    if (!lost && (l->leave_tries == 0 || raced) && l->leave_tries < 3 &&
        l->be->leave(&l->ctx, on_db, l) == 0) {
        l->leave_tries++;
        return;
    }
    if (ev == LSE_DB_OK && l->leave_tries)
        OB_INFO(l->cfg.log,
                "lease: stopped cleanly; its buckets and presence row in %s are "
                "given up",
                l->ctx.tbl.name);
    close_now(l);
}

static void dispatch(ob_lease *l, lease_event ev) {
    if (l->state == LS_LEAVING) {
        leaving(l, ev);
        return;
    }
    switch (ev) {
    case LSE_START:
        if (l->state == LS_NEW)
            connect_db(l);
        return;
    case LSE_DB_OK:
        on_ok(l);
        return;
    case LSE_DB_FAILED:
        if (l->state == LS_CONNECTING || l->state == LS_CHECKING || l->state == LS_SURVEYING ||
            l->state == LS_FENCING || l->state == LS_KILLING || l->state == LS_CLAIMING)
            db_failed(l);
        return;
    case LSE_DB_LOST: /* every lease goes at once, not at the next round */
        if (l->state == LS_RESTING) {
            uv_timer_stop(&l->timer);
            db_failed(l);
        }
        return;
    case LSE_TIMER:
        if (l->state == LS_CONNECT_WAIT)
            connect_db(l);
        else if (l->state == LS_RESTING)
            survey(l);
        return;
    }
}

/* --- life cycle ---------------------------------------------------------- */

ob_lease *ob_lease_new(const ob_lease_config *cfg, const ob_lease_callbacks *cbs) {
    ob_lease *l = calloc(1, sizeof(*l));
    if (l == NULL)
        return NULL;
    l->cfg = *cfg;
    if (l->cfg.interval_ms == 0)
        l->cfg.interval_ms = 1000;
    if (l->cfg.takeover_ms == 0)
        l->cfg.takeover_ms = 15000;
    l->stale_ms = l->cfg.takeover_ms / 3 * 2;
    l->valid_ms = l->stale_ms / 2;
    /* A lease that owns something proves it often enough to be fenced in
     * time; a plain one owns nothing. */
    if (l->cfg.mode->lease != OB_MODE_LEASE_NONE && l->cfg.interval_ms > l->stale_ms / 4)
        l->cfg.interval_ms = l->stale_ms / 4 > 0 ? l->stale_ms / 4 : 1;
    l->cbs = *cbs;
    l->presence = -1;
    l->interval0 = l->cfg.interval_ms;
    l->be = &ob_lease_locks_backend; /* until the first connect's probe */
    l->ctx.mode = l->cfg.mode;
    l->ctx.base = l->cfg.base;
    l->ctx.table = l->cfg.table;
    l->ctx.log = l->cfg.log;
    l->ctx.stale_ms = l->stale_ms;
    ob_lease_tbl_init(&l->ctx.tbl, l->cfg.table, l->cfg.base, l->cfg.mode->lock, l->stale_ms);
    ob_db_life_init(&l->life, NULL, NULL);
    return l;
}

void ob_lease_free(ob_lease *l) {
    if (l == NULL)
        return;
    ob_buf_free(&l->ctx.sql);
    free(l);
}

void ob_lease_start(ob_lease *l) {
    l->ctx.db = ob_db_new(l->cfg.loop, &l->cfg.db, l->cfg.log, "lease");
    uv_timer_init(l->cfg.loop, &l->timer);
    l->timer.data = l;
    if (l->ctx.db)
        ob_db_watch(l->ctx.db, on_db_lost, l);
    if (l->ctx.db == NULL) {
        set_state(l, LS_HALTED);
        l->cbs.fatal(l->cbs.data, "out of memory for the lease's connection");
        return;
    }
    dispatch(l, LSE_START);
}

int ob_lease_valid(const ob_lease *l) {
    return l && l->owned && l->proven_ns &&
           uv_hrtime() - l->proven_ns < (uint64_t)l->valid_ms * 1000000u;
}

int ob_lease_on_table(const ob_lease *l) {
    return l && l->be == &ob_lease_table_backend;
}

int ob_lease_presence(const ob_lease *l, const char **table, const char **key, uint64_t *me) {
    if (!ob_lease_on_table(l))
        return 0;
    *table = l->ctx.tbl.name;
    *key = l->ctx.tbl.key;
    *me = l->ctx.tbl.registered ? l->ctx.tbl.me : 0;
    return 1;
}

int ob_lease_checked(const ob_lease *l) {
    return l && l->life.settled;
}

unsigned long ob_lease_session(const ob_lease *l) {
    return l && l->ctx.db ? ob_db_thread_id(l->ctx.db) : 0;
}

void ob_lease_worker_lock(char *out, const char *base, unsigned long session, int index) {
    snprintf(out, 64, "'%s:w%lu.%d'", base, session, index);
}

uint32_t ob_lease_stale_ms(const ob_lease *l) {
    return l->stale_ms;
}

uint32_t ob_lease_valid_ms(const ob_lease *l) {
    return l->valid_ms;
}

/* Frees the lease and tells the owner, the last thing it does. */
static void lease_closed(void *data) {
    ob_lease *l = data;
    ob_lease_callbacks cbs = l->cbs;
    ob_lease_free(l);
    if (cbs.closed)
        cbs.closed(cbs.data);
}

static void close_now(ob_lease *l) {
    set_state(l, LS_CLOSING);
    ob_db_life_close(&l->life, &l->timer, l->ctx.db, lease_closed, l);
    l->ctx.db = NULL;
}

void ob_lease_close(ob_lease *l) {
    if (l->state == LS_NEW) {
        lease_closed(l);
        return;
    }
    /* The owner is told nothing more: it is stopping. */
    l->owned = 0;
    lease_state s = l->state;
    if (l->be->has_rows == NULL || !l->be->has_rows(&l->ctx) ||
        (s != LS_RESTING && s != LS_SURVEYING && s != LS_CLAIMING)) {
        close_now(l);
        return;
    }
    /* The owner closes it once nothing of its own can still be published:
     * its rows go now, not after the stale time, within a bound of its own. */
    set_state(l, LS_LEAVING);
    uv_timer_start(&l->timer, on_timer, OB_LEASE_LEAVE_MS, 0);
    if (s == LS_RESTING)
        leaving(l, LSE_DB_OK);
}
