/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The cursor reader on a Galera cluster without servers: the harness of
 * test_cursor.c (fake connection, publisher and owner), a lease on the lease
 * table (the real lease, on its own fake connection, told by the cluster
 * probe that the node is a Galera member), and a fake members' gap proof
 * (fake_gap_proof.c) whose proven round the test sets. It proves that every
 * cursor move is fenced by the relay's presence row (the advance joins the
 * lease table in the same statement), that every session reads with
 * wsrep_sync_wait, and that a gap proven on the relay's node alone is not
 * passed until the members proved the round begun after the read that
 * found it.
 */
#include <string.h>
#include <uv.h>

#include "check.h"
#include "cursor_harness.h"
#include "fake_gap_proof.h"
#include "lease.h"

static const ob_log quiet_lease = {NULL, NULL, OUTBOX_LOG_ERROR};
static ob_lease *lease;
static ob_db *lease_db;
static int lease_closed;
static char key[32];

static void l_changed(void *d, uint64_t owned) {
    (void)d;
    (void)owned;
}
static void l_fatal(void *d, const char *why) {
    (void)d;
    CHECK_FAIL_("the lease is fatal: %s", why);
}
static void l_closed(void *d) {
    (void)d;
    lease_closed++;
}

/* A cursor-mode lease whose connection's probe found a Galera node: its
 * leases are rows of the lease table, and the relay's presence row fences
 * the cursors. Its first round stays pending. */
static void galera_lease(void) {
    ob_lease_config c;
    memset(&c, 0, sizeof(c));
    c.loop = &loop;
    c.log = &quiet_lease;
    c.qtable = "`outbox`";
    c.table = "outbox";
    ob_lease_base(c.base, "db", "outbox");
    snprintf(key, sizeof(key), "%s", c.base);
    c.mode = &ob_mode_cursor;
    c.takeover_ms = 15000;
    ob_lease_callbacks cb = {l_changed, l_fatal, l_closed, NULL};
    lease = ob_lease_new(&c, &cb);
    CHECK(lease != NULL);
    lease_closed = 0;
    ob_lease_start(lease);
    lease_db = fake_db_last();
    CHECK_EQ(fake_db_pending(lease_db), FAKE_CONNECT);
    fake_db_complete(lease_db, 1, 0, NULL, 0);
    CHECK(fake_db_await(&loop, FAKE_QUERY) == lease_db);
    CHECK_CONTAINS(fake_db_sql(lease_db), "information_schema.GLOBAL_VARIABLES");
    char *on[8] = {"WSREP_ON", "ON"}, *provider[8] = {"WSREP_PROVIDER_NAME", "Galera"};
    unsigned long on_lens[8] = {8, 2}, provider_lens[8] = {19, 6};
    fake_db_add_row(lease_db, 0, on, on_lens);
    fake_db_add_row(lease_db, 0, provider, provider_lens);
    fake_db_complete(lease_db, 1, 0, NULL, 0);
    CHECK(ob_lease_on_table(lease));
}

/* The reader made with the lease and the fake proof; returns the proof. */
static ob_gap_proof *galera_reader(void) {
    galera_lease();
    make_reader();
    ob_gap_proof *p = ob_gap_proof_new(&loop, NULL, NULL);
    CHECK(p != NULL);
    ob_cursor_members(rd.self, p, lease);
    return p;
}

static void close_all(ob_gap_proof *p) {
    close_reader();
    int gone = fake_db_closed_count();
    ob_lease_close(lease);
    for (int n = 0; n < 5000 && !lease_closed; n++) {
        if (fake_db_closed_count() == gone && fake_db_pending(lease_db) == FAKE_QUERY)
            fake_db_complete(lease_db, 1, 0, NULL, 0);
        turn();
    }
    CHECK_EQ(lease_closed, 1);
    ob_gap_proof_close(p, NULL, NULL);
}

/* Checks the pending advance is the fenced one, moving `mask`'s cursors to
 * `seq`. */
static void check_fenced(uint64_t mask, uint64_t seq) {
    const char *sql = fake_db_sql(db());
    char want[512], list[200] = "";
    for (int k = 0; k < 64; k++)
        if (mask >> k & 1)
            snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%d", list[0] ? "," : "",
                     k);
    snprintf(want, sizeof(want),
             "UPDATE `outbox_cursor` AS c_ JOIN `outbox_lease` AS p_ ON p_.lease_key = '%s' AND "
             "p_.kind = 'i' AND p_.slot = ",
             key);
    CHECK_CONTAINS(sql, want);
    snprintf(want, sizeof(want),
             "SET c_.seq = %llu, p_.epoch = p_.epoch + 1 WHERE c_.table_name = 'outbox' AND "
             "c_.bucket IN (%s) AND c_.seq < %llu",
             (unsigned long long)seq, list, (unsigned long long)seq);
    CHECK_CONTAINS(sql, want);
    CHECK(strstr(sql, "UPDATE `outbox_cursor` SET seq") == NULL);
}

static void every_cursor_move_is_fenced_by_the_presence_row(void) {
    ob_gap_proof *p = galera_reader();
    rd.ops->start(rd.self);
    ob_cursor_owned(rd.self, 0x3);
    ok();
    expect(S_PROBE);
    ok();
    CHECK_EQ(next_stmt_(0, __LINE__), S_FIT);
    answer_fit(100);
    expect(S_LOAD);
    /* Every read of the session waits for the write-sets committed before
     * it. */
    CHECK(starts(fake_db_sql(db()), "SET SESSION wsrep_sync_wait = 1; "));
    char *c0[2] = {"0", "100"}, *c1[2] = {"1", "100"};
    row_n(0, 2, c0);
    row_n(0, 2, c1);
    ok();
    serve_until(S_READ);
    read_clock(NULL, 0);
    outbox_row(1, 101, 0, "a1", "0", NULL);
    outbox_row(1, 102, 1, "a2", "0", NULL);
    ok_read();
    CHECK_EQ(fp.published, 2);
    p->proven = p->round; /* no gap: whatever the members say */
    ack_from(0);
    serve_until(S_ADVANCE);
    check_fenced(0x3, 102);
    CHECK_EQ(adv[nadv - 1], 102);
    CHECK_EQ(adv_mask[nadv - 1], 0x3);
    ok();
    CHECK_EQ(stats.acked, 2);
    close_all(p);
}

/* Serves reads (each gap check finding no transaction on the relay's
 * node), lanes and advances until `checks` reads carried the check or the
 * cursor reaches `until`. */
static void serve_reads(ob_gap_proof *p, int checks, uint64_t until, int members_prove) {
    for (int n = 0; n < 5000 && checks > 0; n++) {
        stmt k = next_stmt();
        if (k == S_READ) {
            checks -= read_checks();
            read_clock(NULL, 14);
            ok();
            if (members_prove)
                p->proven = p->round;
            continue;
        }
        if (k == S_ADVANCE && adv[nadv - 1] == until)
            return;
        CHECK(k == S_LANE || k == S_ADVANCE);
        ok();
    }
    CHECK(checks <= 0);
}

static void a_gap_waits_for_the_members_proof(void) {
    ob_gap_proof *p = galera_reader();
    start_reading(0x3, 10);
    read_clock(NULL, 0);
    outbox_row(1, 11, 0, "a", "0", NULL);
    outbox_row(1, 12, 1, "b", "0", NULL);
    outbox_row(1, 14, 0, "c", "0", NULL); /* 13 missing */
    ok_read();
    CHECK_EQ(fp.published, 3);
    CHECK_INT(p->needed, >=, 1); /* the read began a round for its gap */
    ack_from(0);
    /* The relay's node finds no transaction that may still commit 13, but
     * the members proved nothing: the cursor stays below the gap. */
    serve_reads(p, 3, 0, 0);
    CHECK_INT(nadv, >=, 1);
    CHECK_EQ(max_written(), 12);
    CHECK_EQ(p->proven, 0);
    /* The members prove the rounds as they come: the cursor passes it. */
    serve_reads(p, 1000, 14, 1);
    CHECK_EQ(adv[nadv - 1], 14);
    check_fenced(adv_mask[nadv - 1], 14);
    CHECK(adv_mask[nadv - 1] & 0x1);
    ok();
    close_all(p);
}

int main(void) {
    uv_loop_init(&loop);
    every_cursor_move_is_fenced_by_the_presence_row();
    a_gap_waits_for_the_members_proof();
    harness_end();
    CHECK_EQ(uv_loop_close(&loop), 0);
    puts("test_cursor_galera: ok");
    return 0;
}
