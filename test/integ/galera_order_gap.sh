# SPDX-License-Identifier: Apache-2.0
# Issue 39: an aggregate delivered out of order by --ordered on Galera (seen
# in galera_setup_doc: n2-5's agg_seq 6 in the stream before 5, both written
# on node 2 by one session, one after the other), and its fix.
# The fact: a write-set applied on node 1 keeps the seq its own node gave,
# which may be below a seq node 1 has already handed to a local
# transaction. So the ordered fetch (READ COMMITTED, FOR UPDATE, ORDER BY
# seq), waiting on the local transaction's uncommitted row, resumes past
# rows applied meanwhile below it, and reads an aggregate's second row
# without its first.
# The interleaving, on node 1: L inserts a row of x (seq s) and stays open;
# a fetch of x's bucket waits on L's row; node 2 commits aggregate y's row
# (below s) and, after rows that lift its counter, y's next (above s); L
# commits.
# 1. The database: the relay's fetch statement (as src/pipeline/sql.c
#    builds it on a Galera node) mostly reads y's second row, not its
#    first, and its locking subquery names the first (OB_OCOL_BEFORE). The
#    same subquery without FOR UPDATE does not: it reads with the
#    statement's view, opened at w's row, read before the wait.
# 2. The relay (--ordered on node 1) as the waiting fetch: it holds y's
#    later row when it passed the first (outbox_relay_held_back_rows_total),
#    and the stream has every row once, each aggregate in order.
# 3. Without the index the subquery names (idx_aggregate_wait), an --ordered
#    relay on the Galera table exits 1 at start naming it and the remedy.
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/galera.sh"
db=it_galera_order_gap stream=IT_GALERA_ORDER_GAP prefix=itgog
work=$(mktemp -d)
lpid= rpid= relay_pid=
cleanup() {
  exec 3>&- 2>/dev/null || true
  for p in $lpid $rpid $relay_pid; do kill -KILL "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

galera_db_fresh $db --ordered >/dev/null
stream_delete $stream >/dev/null 2>&1 || true
# Three aggregates of one bucket (the table's bucket expression).
read -r w x y bucket < <(GSQL 1 $db "SELECT a.id, b.id, c.id, a.k FROM
  (SELECT CONCAT('w', seq) id, CRC32(CONCAT('order', 0x1F, 'w', seq)) % 64 k FROM seq_1_to_300) a
  JOIN (SELECT CONCAT('x', seq) id, CRC32(CONCAT('order', 0x1F, 'x', seq)) % 64 k
        FROM seq_1_to_300) b ON a.k = b.k
  JOIN (SELECT CONCAT('y', seq) id, CRC32(CONCAT('order', 0x1F, 'y', seq)) % 64 k
        FROM seq_1_to_300) c ON a.k = c.k LIMIT 1")
[ -n "$bucket" ] || fail "no three aggregates of one bucket"
# Rows parked an hour (a retry far ahead) in the other buckets: as on a
# table in use, a fetch reads a bucket by idx_bucket_seq rather than every
# pending row by idx_status_seq (on a near-empty table the server may pick
# either; by idx_status_seq, a fetch waits on L's row in the branch of
# another bucket, and reads x's bucket, late row first, only after it).
GSQL 1 $db "INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload, status,
    next_attempt_at)
  SELECT outbox_uuid_v7(), 'order', CONCAT('z', seq), 'e', '{}', 0, NOW(6) + INTERVAL 1 HOUR
  FROM seq_1_to_400 WHERE CRC32(CONCAT('order', 0x1F, 'z', seq)) % 64 <> $bucket"
# drained: no pending row but the parked ones.
drained() {
  [ "$(GSQL 1 $db "SELECT COUNT(*) FROM outbox WHERE status = 0 AND aggregate_id NOT LIKE 'z%'")" = 0 ]
}
# row AGGREGATE AGG_SEQ [STATUS]: a pending row (a pad, which only lifts a
# node's seq counter, is written processed: no fetch reads it or waits on it).
row() {
  echo "INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload, headers, status)
    VALUES (outbox_uuid_v7(), 'order', '$1', 'e', '{}', JSON_OBJECT('agg_seq', '$2'), ${3:-0});"
}

# l_open PART N: L on node 1: six rows of other aggregates lift its seq,
# then x's row agg_seq N; its seq in s.
l_open() {
  mkfifo "$work/l$1"
  {
    echo "BEGIN;"
    for i in 1 2 3 4 5 6; do row "p$1-$i" 1 1; done
    row "$x" "$2"
    echo "SELECT 'L', seq FROM outbox WHERE aggregate_id = '$x' AND status = 0;"
    cat "$work/l$1"
    echo "COMMIT;"
  } | GROOT 1 $db -n >"$work/l$1.out" &
  lpid=$!
  exec 3>"$work/l$1"
  wait_until 20 "L holds its row" grep -q '^L' "$work/l$1.out"
  s=$(awk '$1 == "L" { print $2 }' "$work/l$1.out")
}
l_commit() {
  echo 'SELECT 1;' >&3
  exec 3>&-
  wait $lpid || fail "L failed"
  lpid=
}
# A fetch (a FOR UPDATE read) waits for L's row, seq s (not L waiting on
# the fetch, nor the fetch waiting on another row for a moment).
waits() {
  [ "$(GROOT 1 -e "SELECT COUNT(*) FROM information_schema.INNODB_LOCK_WAITS w
    JOIN information_schema.INNODB_TRX t ON t.trx_id = w.requesting_trx_id
    JOIN information_schema.INNODB_LOCKS l ON l.lock_id = w.requested_lock_id
    WHERE t.trx_query LIKE '%FOR UPDATE%' AND l.lock_data LIKE '%, $s, %'")" -ge 1 ]
}
# late_rows PART A B: node 2 commits y's row agg_seq A, rows that lift
# node 2's counter past s, y's row B; their seqs in y1 and y2.
late_rows() {
  GROOT 2 $db -e "$(row "$y" "$2")" 3>&-
  for i in $(seq 1 8); do GROOT 2 $db -e "$(row "q$1-$i" 1 1)" 3>&-; done
  GROOT 2 $db -e "$(row "$y" "$3")" 3>&-
  local seqs
  seqs=$(GROOT 1 $db -e "SET SESSION wsrep_sync_wait = 1;
    SELECT GROUP_CONCAT(seq ORDER BY seq) FROM outbox
    WHERE aggregate_id = '$y' AND status = 0" 3>&-)
  y1=${seqs%,*} y2=${seqs#*,}
  [ "$y1" -lt "$s" ] && [ "$y2" -gt "$s" ] ||
    fail "y's rows took seq $seqs, not one below and one above L's $s"
  echo "L's row: seq $s; y's rows (node 2, committed, applied on node 1): seq $y1 and $y2"
}

# 1. The fetch statement alone. w's row, committed first, is read before
# the wait.
GSQL 1 $db "$(row "$w" 1)"
l_open 1 1
{
  echo "SET SESSION tx_isolation = 'READ-COMMITTED', innodb_lock_wait_timeout = 60;
    START TRANSACTION;
    SELECT o.seq, o.aggregate_id, JSON_VALUE(o.headers, '\$.agg_seq'),
      IFNULL((SELECT MAX(p.seq) FROM outbox p FORCE INDEX (idx_aggregate_wait)
              WHERE p.aggregate_type = o.aggregate_type
              AND p.aggregate_id = o.aggregate_id AND p.status = 0 AND p.seq < o.seq
              FOR UPDATE), '-'),
      IFNULL((SELECT MAX(p.seq) FROM outbox p FORCE INDEX (idx_aggregate_wait)
              WHERE p.aggregate_type = o.aggregate_type
              AND p.aggregate_id = o.aggregate_id AND p.status = 0 AND p.seq < o.seq), '-')
    FROM outbox o WHERE o.bucket = $bucket AND o.status = 0 AND (SELECT 1 FROM outbox h
      WHERE h.aggregate_type = o.aggregate_type AND h.aggregate_id = o.aggregate_id
      AND h.status = 0 AND h.next_attempt_at > NOW(6) LIMIT 1) IS NULL
    ORDER BY o.seq LIMIT 15 FOR UPDATE;
    COMMIT;"
} | GROOT 1 $db -n >"$work/r.out" 3>&- &
rpid=$!
wait_until 20 "the fetch waits on L's row" waits
late_rows 1 1 2
l_commit
wait $rpid || fail "the fetch failed"
rpid=
echo "the fetch read (seq, aggregate, agg_seq, previous pending seq: locking, plain):"
sed 's/^/  /' "$work/r.out"
got=$(awk -v y="$y" '$2 == y { printf "%s%s", sep, $3; sep = " " }' "$work/r.out")
# Where the scan resumes after its wait is the server's business: mostly
# past y's first row (the gap), sometimes not. Either way the locking read
# names y's first row for its second, and the plain one, with the view
# opened at w's row, does not.
case $got in
2) echo "the scan passed y's first row (the gap)" ;;
"1 2") echo "the scan read y's first row this time (no gap)" ;;
*) fail "y's rows in the fetch: '$got', expected '2' or '1 2'" ;;
esac
prev=$(awk -v y="$y" '$2 == y && $3 == 2 { print $4 }' "$work/r.out")
assert_eq "$prev" "$y1" "the previous pending seq of y's second row (a locking read)"
plain=$(awk -v y="$y" '$2 == y && $3 == 2 { print $5 }' "$work/r.out")
assert_eq "$plain" "-" "the same, read without a lock (the statement's view)"

# 2. The relay as the waiting fetch (one connection, so one fetch reads
# every bucket). It delivers what part 1 left first.
galera_relay 1 "$work/relay.log" $db $stream $prefix --ordered --connections 1 \
  --http 127.0.0.1:0
relay_pid=$RELAY_PID
port=$(http_port "$work/relay.log")
wait_until 60 "part 1's rows delivered" drained
bf_aborts() { GROOT 1 -e "SHOW GLOBAL STATUS LIKE 'wsrep_local_bf_aborts'" | cut -f2; }
bf0=$(bf_aborts)
l_open 2 2
# A row of another aggregate committed on node 2 (below s: a row committed
# on node 1 now would lift node 2's counter past s) makes the relay fetch:
# it waits on L's row.
GROOT 2 $db -e "$(row t2 1)" 3>&-
wait_until 20 "the relay's fetch waits on L's row" waits
late_rows 2 3 4
l_commit
wait_until 60 "part 2's rows delivered" drained
pads="aggregate_id NOT LIKE 'p%' AND aggregate_id NOT LIKE 'q%' AND aggregate_id NOT LIKE 'z%'"
late=$(metric_value "$(metrics "$port")" 'outbox_relay_held_back_rows_total{table="outbox"}')
bf=$(($(bf_aborts) - bf0))
echo "rows held late: $late; local transactions aborted by write-sets applied: $bf"
# The relay holds y's later row when its fetch passed the earlier one; it
# has nothing to hold when the fetch resumed before it, or when node 1
# aborted the waiting fetch to apply y's row (the relay reads again, in
# order). The stream's order below is the judge.
kill -TERM $relay_pid
rc=0
wait $relay_pid || rc=$?
relay_pid=
assert_eq "$rc" 0 "exit status of the relay"
rows=$(GSQL 1 $db "SELECT COUNT(*) FROM outbox WHERE $pads")
assert_eq "$(GSQL 1 $db "SELECT COUNT(*) FROM outbox WHERE $pads AND status = 1
  AND attempt_count = 0")" "$rows" "rows processed without an attempt"
stream_once $stream "$rows"
out=$(streamcheck --stream $stream --subject '>' --check-order agg_seq) ||
  { echo "$out"; fail "an aggregate out of order"; }
echo "$out" | grep order_violations

# 3. The subquery names the aggregate's index (a stale plan would read the
# bucket's every pending row per row): a Galera table without it is a
# misconfiguration, refused at start with the cause and the remedy.
GSQL 1 $db "ALTER TABLE outbox DROP INDEX idx_aggregate_wait"
rc=0
timeout 30 "$OUTBOX_TEST_RELAY" --db "${OUTBOX_TEST_GALERA_URL1}$db" --nats "$OUTBOX_TEST_NATS_URL" \
  --stream $stream --subject-prefix $prefix --no-progress --ordered 2>"$work/noindex.log" || rc=$?
assert_eq "$rc" 1 "exit status of an --ordered relay on a Galera table without idx_aggregate_wait"
grep -q "idx_aggregate_wait.*schema --migrate" "$work/noindex.log" ||
  { cat "$work/noindex.log" >&2; fail "the refusal does not name the index and the remedy"; }
grep -m1 "idx_aggregate_wait" "$work/noindex.log" | sed 's/^/    /' 
