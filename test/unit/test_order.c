/* SPDX-License-Identifier: Apache-2.0 */
/* Ordered delivery without servers: the publish order of a batch, the
 * ordered fetch statements and the migration text. */
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "check.h"
#include "lease.h"
#include "outbox/maint.h"
#include "sql.h"

/* A fake fetch result: aggregate ids and the waiting flag per row. */
typedef struct rows {
    const char *const *agg;
    const char *const *waiting;
    int n, i;
    unsigned char id[16];
    char *cols[OB_OCOL_COUNT];
    unsigned long len[OB_OCOL_COUNT];
    const char *const *seq, *const *before; /* NULL: columns absent (NULL) */
} rows;

static char **next_row(void *cur, unsigned long **lengths) {
    rows *r = cur;
    if (r->i == r->n)
        return NULL;
    memset(r->id, 0, 16);
    r->id[15] = (unsigned char)r->i;
    static char type[] = "order", ev[] = "created", payload[] = "{}", zero[] = "0";
    r->cols[OB_COL_ID] = (char *)r->id;
    r->cols[OB_COL_AGGREGATE_TYPE] = type;
    r->cols[OB_COL_AGGREGATE_ID] = (char *)r->agg[r->i];
    r->cols[OB_COL_EVENT_TYPE] = ev;
    r->cols[OB_COL_PAYLOAD] = payload;
    r->cols[OB_COL_HEADERS] = NULL;
    r->cols[OB_COL_ATTEMPTS] = zero;
    r->cols[OB_COL_CREATED_AT] = NULL;
    r->cols[OB_COL_WAITING] = (char *)(r->waiting ? r->waiting[r->i] : "0");
    r->cols[OB_OCOL_SEQ] = (char *)(r->seq ? r->seq[r->i] : NULL);
    r->cols[OB_OCOL_BEFORE] = (char *)(r->before ? r->before[r->i] : NULL);
    for (int c = 0; c < OB_OCOL_COUNT; c++)
        r->len[c] = r->cols[c] ? strlen(r->cols[c]) : 0;
    r->len[OB_COL_ID] = 16;
    r->i++;
    *lengths = r->len;
    return r->cols;
}

static int load(ob_batch *b, const char *const *agg, const char *const *waiting, int n) {
    rows r = {agg, waiting, n, 0, {0}, {0}, {0}, NULL, NULL};
    return ob_batch_load(b, next_row, &r, 1);
}

static int load_seq(ob_batch *b, const char *const *agg, const char *const *seq,
                    const char *const *before, int n) {
    rows r = {agg, NULL, n, 0, {0}, {0}, {0}, seq, before};
    return ob_batch_load(b, next_row, &r, 1);
}

/* Publishes what may leave now; returns how many, their slots in out. */
static int take_ready(ob_batch *b, int *out) {
    int n = 0, i;
    while ((i = ob_batch_next_ready(b)) >= 0) {
        b->slots[i].state = OB_SLOT_INFLIGHT;
        b->outstanding++;
        out[n++] = i;
    }
    return n;
}

static void one_row_per_aggregate_in_flight(void) {
    static const char *const agg[] = {"a", "b", "a", "c", "a", "b"};
    ob_batch b;
    CHECK_EQ(ob_batch_init(&b, 8, OB_ORDER_AGGREGATE), 0);
    CHECK_EQ(load(&b, agg, NULL, 6), 6);
    int out[8];
    CHECK_EQ(take_ready(&b, out), 3); /* the first of a, b and c */
    CHECK_EQ(out[0], 0);
    CHECK_EQ(out[1], 1);
    CHECK_EQ(out[2], 3);
    ob_batch_acked(&b, 0, 0);
    CHECK_EQ(take_ready(&b, out), 1); /* a's second, once a's first is stored */
    CHECK_EQ(out[0], 2);
    /* b's first fails: b's second must not pass it. */
    ob_batch_fail(&b, 1, OUTBOX_FAIL_ACK_TIMEOUT, 0, 0, "x", 1);
    CHECK_EQ(take_ready(&b, out), 0);
    CHECK_EQ(b.slots[5].state, OB_SLOT_HELD);
    ob_batch_acked(&b, 2, 0);
    ob_batch_acked(&b, 3, 0);
    CHECK_EQ(take_ready(&b, out), 1);
    CHECK_EQ(out[0], 4);
    CHECK(!ob_batch_complete(&b));
    ob_batch_acked(&b, 4, 0);
    CHECK_EQ(take_ready(&b, out), 0);
    CHECK(ob_batch_complete(&b));
    ob_batch_free(&b);
}

/* A row whose subject is paused waits: its aggregate's later rows are held
 * behind it, the others leave, and the finishing statement writes it due
 * later with no attempt counted (nor dead). */
static void deferred_row_holds_its_aggregate(void) {
    static const char *const agg[] = {"a", "b", "a"};
    ob_batch b;
    CHECK_EQ(ob_batch_init(&b, 4, OB_ORDER_AGGREGATE), 0);
    CHECK_EQ(load(&b, agg, NULL, 3), 3);
    int out[4];
    CHECK_EQ(take_ready(&b, out), 2);
    CHECK_EQ(ob_batch_defer(&b, 0, 1100, "full", 4), 1);
    CHECK_EQ(b.slots[0].state, OB_SLOT_DEFERRED);
    ob_batch_acked(&b, 1, 0);
    CHECK_EQ(take_ready(&b, out), 0);
    CHECK_EQ(b.slots[2].state, OB_SLOT_HELD);
    CHECK(ob_batch_complete(&b));
    ob_batch_config cfg = {"`t`",
                           OUTBOX_KEEP_PROCESSED,
                           3,
                           {OUTBOX_BACKOFF_FIXED, 100, 100, 0},
                           outbox_classify_default,
                           NULL};
    CHECK(ob_batch_finish_sql(&b, &cfg, 0) > 0);
    CHECK(strstr(b.sql.p, "SET last_error = _utf8mb4 X'66756c6c', next_attempt_at = "
                          "TIMESTAMPADD(MICROSECOND, 1250000, NOW(6)) WHERE id IN (") != NULL);
    CHECK(strstr(b.sql.p, "attempt_count") == NULL);
    CHECK_EQ(b.n_deferred, 1);
    CHECK_EQ(b.n_acked, 1);
    CHECK_EQ(b.n_held, 1);
    CHECK_EQ(b.n_dead + b.n_retry, 0);
    ob_batch_free(&b);
}

static void waiting_row_holds_its_aggregate(void) {
    static const char *const agg[] = {"a", "b", "a", "b"};
    static const char *const waiting[] = {"1", "0", "0", "0"};
    ob_batch b;
    CHECK_EQ(ob_batch_init(&b, 4, OB_ORDER_AGGREGATE), 0);
    CHECK_EQ(load(&b, agg, waiting, 4), 4);
    int out[4];
    CHECK_EQ(take_ready(&b, out), 1);
    CHECK_EQ(out[0], 1);
    CHECK_EQ(b.slots[0].state, OB_SLOT_HELD);
    CHECK_EQ(b.slots[2].state, OB_SLOT_HELD);
    ob_batch_free(&b);
}

/* States changed by hand (cursor mode holds an aggregate, or makes given
 * back rows unsent again) are seen once the batch is touched: a hold
 * passes down the aggregate's chain, and unsent rows leave again. */
static void hand_changes_after_touched(void) {
    static const char *const agg[] = {"a", "a", "a", "b"};
    ob_batch b;
    CHECK_EQ(ob_batch_init(&b, 4, OB_ORDER_AGGREGATE), 0);
    CHECK_EQ(load(&b, agg, NULL, 4), 4);
    b.slots[0].state = OB_SLOT_HELD;
    ob_batch_touched(&b);
    int out[4];
    CHECK_EQ(take_ready(&b, out), 1);
    CHECK_EQ(out[0], 3);
    CHECK_EQ(b.slots[1].state, OB_SLOT_HELD);
    CHECK_EQ(b.slots[2].state, OB_SLOT_HELD);
    for (int i = 0; i < 3; i++)
        b.slots[i].state = OB_SLOT_UNSENT;
    b.next_pub = 0;
    ob_batch_touched(&b);
    CHECK_EQ(take_ready(&b, out), 1);
    CHECK_EQ(out[0], 0);
    /* Each ack frees the next row of its aggregate, and only that one. */
    ob_batch_acked(&b, 0, 0);
    CHECK_EQ(take_ready(&b, out), 1);
    CHECK_EQ(out[0], 1);
    ob_batch_acked(&b, 3, 0);
    CHECK_EQ(take_ready(&b, out), 0);
    ob_batch_acked(&b, 1, 0);
    CHECK_EQ(take_ready(&b, out), 1);
    CHECK_EQ(out[0], 2);
    ob_batch_acked(&b, 2, 0);
    CHECK(ob_batch_complete(&b));
    ob_batch_free(&b);
}

/* A Galera node applies another node's rows with the seq that node gave
 * them: a row of an aggregate can appear below the position of a locking
 * read that waited, and the read returns the aggregate's next row without
 * it. A row whose aggregate's previous pending row is not its previous row
 * in the batch is held, and so are its aggregate's later rows; the rest
 * flows, and nothing is charged. */
static void late_earlier_row_holds_its_aggregate(void) {
    static const char *const agg[] = {"a", "b", "a", "c", "c", "a"};
    static const char *const seq[] = {"10", "11", "20", "21", "22", "30"};
    static const char *const before[] = {NULL, NULL, "15", "5", "21", "20"};
    ob_batch b;
    CHECK_EQ(ob_batch_init(&b, 8, OB_ORDER_AGGREGATE | OB_BATCH_CHECK_BEFORE), 0);
    CHECK_EQ(load_seq(&b, agg, seq, before, 6), 6);
    CHECK_EQ(b.n_late, 2); /* a's row 20 (15 came late) and c's first (5 did) */
    int out[8];
    CHECK_EQ(take_ready(&b, out), 2); /* a's 10 and b's 11 */
    ob_batch_acked(&b, 0, 0);
    ob_batch_acked(&b, 1, 0);
    CHECK_EQ(take_ready(&b, out), 0);
    CHECK_EQ(b.slots[2].state, OB_SLOT_HELD);
    CHECK_EQ(b.slots[3].state, OB_SLOT_HELD);
    CHECK_EQ(b.slots[4].state, OB_SLOT_HELD);
    CHECK_EQ(b.slots[5].state, OB_SLOT_HELD);
    CHECK(ob_batch_complete(&b));
    ob_batch_free(&b);
    /* The previous pending row in the batch: every row flows in order. */
    static const char *const fine[] = {NULL, NULL, "10", NULL, "21", "20"};
    CHECK_EQ(ob_batch_init(&b, 8, OB_ORDER_STRICT | OB_BATCH_CHECK_BEFORE), 0);
    CHECK_EQ(load_seq(&b, agg, seq, fine, 6), 6);
    CHECK_EQ(b.n_late, 0);
    int sent = 0;
    for (int round = 0; round < 6 && !ob_batch_complete(&b); round++) {
        int n = take_ready(&b, out);
        for (int k = 0; k < n; k++)
            ob_batch_acked(&b, out[k], 0);
        sent += n;
    }
    CHECK_EQ(sent, 6);
    ob_batch_free(&b);
    /* Without the columns (cursor mode's batches): no check. */
    CHECK_EQ(ob_batch_init(&b, 8, OB_ORDER_AGGREGATE), 0);
    CHECK_EQ(load_seq(&b, agg, seq, before, 6), 6);
    CHECK_EQ(b.n_late, 0);
    ob_batch_free(&b);
}

static void strict_never_passes(void) {
    static const char *const agg[] = {"a", "b", "a", "c"};
    ob_batch b;
    CHECK_EQ(ob_batch_init(&b, 4, OB_ORDER_STRICT), 0);
    CHECK_EQ(load(&b, agg, NULL, 4), 4);
    int out[4];
    CHECK_EQ(take_ready(&b, out), 2); /* a, b; then a's second waits, and c behind it */
    ob_batch_acked(&b, 0, 0);
    CHECK_EQ(take_ready(&b, out), 2);
    CHECK_EQ(out[0], 2);
    CHECK_EQ(out[1], 3);
    ob_batch_free(&b);
}

static void unordered_is_unchanged(void) {
    static const char *const agg[] = {"a", "a", "a"};
    ob_batch b;
    CHECK_EQ(ob_batch_init(&b, 4, 0), 0);
    CHECK_EQ(load(&b, agg, NULL, 3), 3);
    int out[4];
    CHECK_EQ(take_ready(&b, out), 3);
    ob_batch_free(&b);
}

static void fetch_statements(void) {
    ob_buf b = OB_BUF_INIT;
    ob_sql_fetch_buckets(&b, "`outbox`", 0, 100, NULL, 1);
    CHECK_STR(b.p, "START TRANSACTION; SELECT 1 FROM DUAL WHERE 0");
    ob_buf_reset(&b);
    ob_sql_fetch_buckets(&b, "`outbox`", (1ULL << 3) | (1ULL << 63), 100, NULL, 1);
    CHECK_CONTAINS(b.p, "START TRANSACTION; (SELECT o.id, o.aggregate_type");
    CHECK_CONTAINS(b.p, "IFNULL(o.next_attempt_at > NOW(6), 0), o.seq, (SELECT MAX(p.seq) FROM "
                        "`outbox` p FORCE INDEX (idx_aggregate_wait) WHERE p.aggregate_type = "
                        "o.aggregate_type AND p.aggregate_id = o.aggregate_id AND p.status = 0 AND "
                        "p.seq < o.seq FOR UPDATE) FROM `outbox` o");
    CHECK_CONTAINS(b.p, "o.bucket = 3 AND o.status = 0 AND (SELECT 1 FROM `outbox` h");
    CHECK_CONTAINS(b.p, "ORDER BY o.seq LIMIT 50 FOR UPDATE) UNION ALL (SELECT");
    CHECK_CONTAINS(b.p, "o.bucket = 63");
    CHECK(strstr(b.p, "SKIP LOCKED") == NULL); /* a skipped row would be passed */
    ob_buf_reset(&b);
    ob_sql_fetch_strict(&b, "`outbox`", 200, NULL, 0);
    CHECK_CONTAINS(b.p, "ORDER BY o.seq LIMIT 200 FOR UPDATE");
    CHECK_CONTAINS(b.p, "0), o.seq, NULL FROM `outbox` o"); /* one server: no subquery */
    CHECK(strstr(b.p, "bucket") == NULL);
    /* With the worker's lock: taken in a first branch, before any row. */
    ob_buf_reset(&b);
    ob_sql_fetch_strict(&b, "`outbox`", 200, "'obx:1:w7.0'", 0);
    CHECK_CONTAINS(b.p, "START TRANSACTION; (SELECT NULL, NULL, NULL, NULL, NULL, NULL, NULL, "
                        "NULL, NULL, NULL, NULL FROM DUAL WHERE GET_LOCK('obx:1:w7.0', 0) IS "
                        "NULL) UNION "
                        "ALL (SELECT o.id");
    CHECK_CONTAINS(b.p, "LIMIT 200 FOR UPDATE)");
    ob_buf_reset(&b);
    ob_sql_fetch_buckets(&b, "`outbox`", 1ULL << 5, 100, "'obx:1:w7.0'", 0);
    CHECK_CONTAINS(b.p, "IS NULL) UNION ALL (SELECT o.id");
    ob_buf_free(&b);
}

static void migration_and_lock_names(void) {
    char *ddl = NULL, err[256];
    CHECK_EQ(outbox_schema_migrate_ddl("app.outbox", &ddl, err, sizeof(err)), OUTBOX_OK);
    CHECK_CONTAINS(ddl, "ALTER TABLE `app`.`outbox`");
    CHECK_CONTAINS(ddl, "ADD COLUMN IF NOT EXISTS seq ");
    CHECK_CONTAINS(ddl, "AUTO_INCREMENT");
    CHECK_CONTAINS(ddl, "CRC32(CONCAT(aggregate_type, 0x1F, aggregate_id)) % 64) STORED");
    CHECK_CONTAINS(ddl, "ADD INDEX IF NOT EXISTS idx_bucket_seq (bucket, status, seq)");
    CHECK_CONTAINS(ddl, "CREATE TRIGGER IF NOT EXISTS `app`.`outbox_seq` BEFORE INSERT ON "
                        "`app`.`outbox` FOR EACH ROW SET NEW.seq = NULL;");
    free(ddl);
    CHECK_EQ(outbox_schema_migrate_ddl("bad name", &ddl, err, sizeof(err)), OUTBOX_EINVAL);
    outbox_schema_options o;
    outbox_schema_options_init(&o);
    CHECK_EQ(outbox_schema_ddl(&o, &ddl, err, sizeof(err)), OUTBOX_OK);
    CHECK(strstr(ddl, "AUTO_INCREMENT") == NULL); /* only when asked for */
    free(ddl);
    o.ordered = 1;
    CHECK_EQ(outbox_schema_ddl(&o, &ddl, err, sizeof(err)), OUTBOX_OK);
    CHECK_CONTAINS(ddl, "seq             BIGINT UNSIGNED NOT NULL AUTO_INCREMENT");
    CHECK_CONTAINS(ddl, "INDEX idx_aggregate_wait");
    CHECK_CONTAINS(ddl, "CREATE TRIGGER IF NOT EXISTS `outbox_seq` BEFORE INSERT ON `outbox`");
    free(ddl);
    char a[32], b2[32];
    ob_lease_base(a, "shop", "outbox");
    ob_lease_base(b2, "shop", "outbox2");
    CHECK(strncmp(a, "obx:", 4) == 0);
    CHECK_EQ(strlen(a), 20);
    CHECK(strcmp(a, b2) != 0);
}

/* --max-attempts 1: a row whose "no responders" would be its last attempt
 * goes back untouched while the broker's check has not answered (the
 * broker may be down: its fault costs no attempt), and is charged, to dead,
 * when it fails again once the check said the broker answers. A failure of
 * the row's own (a bad subject) is charged whatever the check; a row with
 * attempts left is charged one as before. */
static void suspect_last_attempt_waits_for_the_check(void) {
    static const char *const agg[] = {"a", "b", "c"};
    ob_batch_config cfg = {"`t`",
                           OUTBOX_KEEP_PROCESSED,
                           1,
                           {OUTBOX_BACKOFF_FIXED, 100, 100, 0},
                           outbox_classify_default,
                           NULL};
    ob_batch b;
    int out[4];
    CHECK_EQ(ob_batch_init(&b, 4, 0), 0);
    CHECK_EQ(load(&b, agg, NULL, 3), 3);
    CHECK_EQ(take_ready(&b, out), 3);
    ob_batch_fail(&b, 0, OUTBOX_FAIL_NO_RESPONDERS, 503, 0, "no responders", 13);
    ob_batch_fail(&b, 1, OUTBOX_FAIL_BAD_SUBJECT, 0, 0, "bad subject", 11);
    ob_batch_fail(&b, 2, OUTBOX_FAIL_STREAM_ERROR, 503, 0, "server error", 12);
    CHECK(ob_batch_suspect(&b));
    CHECK(ob_batch_finish_sql(&b, &cfg, OB_DECIDE_UNSETTLED) > 0);
    CHECK_EQ(b.slots[0].state, OB_SLOT_RELEASED);
    CHECK_EQ(b.slots[2].state, OB_SLOT_RELEASED);
    CHECK_EQ(b.n_released, 2);
    CHECK_EQ(b.n_dead, 1); /* the bad subject: the row's own fault */
    CHECK(strstr(b.sql.p, "no responders") == NULL);
    /* Tried again after the check said the broker answers: charged. */
    CHECK_EQ(load(&b, agg, NULL, 1), 1);
    CHECK_EQ(take_ready(&b, out), 1);
    ob_batch_fail(&b, 0, OUTBOX_FAIL_NO_RESPONDERS, 503, 0, "no responders", 13);
    CHECK(ob_batch_finish_sql(&b, &cfg, 0) > 0);
    CHECK_EQ(b.n_dead, 1);
    CHECK_EQ(b.n_released, 0);
    /* Found down by the check: given back, whatever its attempts. */
    CHECK_EQ(load(&b, agg, NULL, 1), 1);
    CHECK_EQ(take_ready(&b, out), 1);
    ob_batch_fail(&b, 0, OUTBOX_FAIL_NO_RESPONDERS, 503, 0, "no responders", 13);
    CHECK_EQ(ob_batch_finish_sql(&b, &cfg, OB_DECIDE_INTERRUPTED), 0);
    CHECK_EQ(b.n_released, 1);
    /* Attempts left: an attempt, as any suspect failure, check or not. */
    cfg.max_attempts = 3;
    CHECK_EQ(load(&b, agg, NULL, 1), 1);
    CHECK_EQ(take_ready(&b, out), 1);
    ob_batch_fail(&b, 0, OUTBOX_FAIL_NO_RESPONDERS, 503, 0, "no responders", 13);
    CHECK(ob_batch_finish_sql(&b, &cfg, OB_DECIDE_UNSETTLED) > 0);
    CHECK_EQ(b.n_retry, 1);
    CHECK_EQ(b.n_released, 0);
    ob_batch_free(&b);
}

int main(void) {
    suspect_last_attempt_waits_for_the_check();
    deferred_row_holds_its_aggregate();
    one_row_per_aggregate_in_flight();
    waiting_row_holds_its_aggregate();
    hand_changes_after_touched();
    late_earlier_row_holds_its_aggregate();
    strict_never_passes();
    unordered_is_unchanged();
    fetch_statements();
    migration_and_lock_names();
    puts("test_order: ok");
    return 0;
}
