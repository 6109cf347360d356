# SPDX-License-Identifier: Apache-2.0
# The fact behind an aggregate delivered out of order by --ordered on Galera
# (seen in galera_setup_doc: n2-5's agg_seq 6 in the stream before 5, both
# written on node 2 by one session, one after the other):
# a write-set applied on node 1 keeps the seq its own node gave, which may be
# below a seq node 1 has already handed to a local transaction. So the
# ordered fetch (READ COMMITTED, FOR UPDATE, ORDER BY seq), waiting on the
# local transaction's uncommitted row, resumes past rows applied meanwhile
# below it, and reads an aggregate's second row without its first.
# Here, on node 1: L inserts a row (seq s) and stays open; R runs the
# relay's fetch of that bucket and waits on L's row; node 2 commits
# aggregate y's first row (below s) and, after rows that lift its counter,
# y's second (above s); L commits. R reads y's second row, not its first.
# The relay must not publish such a batch as it reads it: the same read
# names the late row as the aggregate's previous pending one, and the batch
# holds the row whose previous one it lacks.
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/galera.sh"
db=it_galera_order_gap
work=$(mktemp -d)
lpid= rpid=
cleanup() {
  exec 3>&- 2>/dev/null || true
  for p in $lpid $rpid; do kill -KILL "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

galera_db_fresh $db --ordered >/dev/null
# Two aggregates of one bucket (the table's bucket expression).
read -r x y bucket < <(GSQL 1 $db "SELECT a.id, b.id, a.k FROM
  (SELECT CONCAT('x', seq) id, CRC32(CONCAT('order', 0x1F, 'x', seq)) % 64 k FROM seq_1_to_200) a
  JOIN (SELECT CONCAT('y', seq) id, CRC32(CONCAT('order', 0x1F, 'y', seq)) % 64 k
        FROM seq_1_to_200) b ON a.k = b.k LIMIT 1")
[ -n "$bucket" ] || fail "no two aggregates of one bucket"
row() {
  echo "INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload, headers)
    VALUES (outbox_uuid_v7(), 'order', '$1', 'e', '{}', JSON_OBJECT('agg_seq', '$2'));"
}

# L on node 1: six rows of other aggregates lift its seq, then x's row.
mkfifo "$work/l"
{
  echo "BEGIN;"
  for i in 1 2 3 4 5 6; do row pad$i 1; done
  row "$x" 1
  echo "SELECT 'L', seq FROM outbox WHERE aggregate_id = '$x';"
  cat "$work/l"
  echo "COMMIT;"
} | GROOT 1 $db -n >"$work/l.out" &
lpid=$!
exec 3>"$work/l"
wait_until 20 "L holds its row" grep -q '^L' "$work/l.out"
s=$(awk '$1 == "L" { print $2 }' "$work/l.out")

# R on node 1: the ordered fetch of the bucket (as src/pipeline/sql.c
# builds it, without the retry guard), which waits on L's row.
{
  echo "SET SESSION tx_isolation = 'READ-COMMITTED', innodb_lock_wait_timeout = 60;
    START TRANSACTION;
    SELECT o.seq, o.aggregate_id, JSON_VALUE(o.headers, '\$.agg_seq'), IFNULL((SELECT MAX(p.seq)
      FROM outbox p WHERE p.aggregate_type = o.aggregate_type AND p.aggregate_id = o.aggregate_id
      AND p.status = 0 AND p.seq < o.seq), 0) FROM outbox o
    WHERE o.bucket = $bucket AND o.status = 0 ORDER BY o.seq LIMIT 15 FOR UPDATE;
    COMMIT;"
} | GROOT 1 $db -n >"$work/r.out" 3>&- &
rpid=$!
waits() { [ "$(GROOT 1 -e 'SELECT COUNT(*) FROM information_schema.INNODB_LOCK_WAITS')" -ge 1 ]; }
wait_until 20 "the fetch waits on L's row" waits

# Node 2: y's first row, rows that lift node 2's counter past s, y's second.
GROOT 2 $db -e "$(row "$y" 1)" 3>&-
for i in $(seq 1 8); do GROOT 2 $db -e "$(row qad$i 1)" 3>&-; done
GROOT 2 $db -e "$(row "$y" 2)" 3>&-
seqs=$(GROOT 1 $db -e "SET SESSION wsrep_sync_wait = 1;
  SELECT GROUP_CONCAT(seq ORDER BY seq) FROM outbox WHERE aggregate_id = '$y'" 3>&-)
y1=${seqs%,*} y2=${seqs#*,}
[ "$y1" -lt "$s" ] && [ "$y2" -gt "$s" ] ||
  fail "y's rows took seq $seqs, not one below and one above L's $s"
echo "L's row: seq $s; y's rows (node 2, committed, applied on node 1): seq $y1 and $y2"

echo 'SELECT 1;' >&3
exec 3>&-
wait $lpid || fail "L failed"
lpid=
wait $rpid || fail "the fetch failed"
rpid=
echo "the fetch read:"
sed 's/^/  /' "$work/r.out"
got=$(awk -v y="$y" '$2 == y { printf "%s%s", sep, $3; sep = " " }' "$work/r.out")
assert_eq "$got" "2" "y's rows in the fetch (its first, committed and pending, passed)"
# The relay's fetch also reads each row's aggregate's previous pending seq
# (src/pipeline/sql.c), in the same statement: for y's second row it names
# y's first, which the batch then does not hold, so the row is held back
# with its aggregate's later rows (src/pipeline/batch.c; unit.test_order).
before=$(awk -v y="$y" '$2 == y { print $4 }' "$work/r.out")
assert_eq "$before" "$y1" "the previous pending seq the fetch read for y's second row"
