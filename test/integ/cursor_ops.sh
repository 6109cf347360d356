# SPDX-License-Identifier: Apache-2.0
# The operator's commands on a table in cursor mode (rows in outbox_cursor),
# with the cursors and every row status set up by SQL:
#   - without the cursor table, or without cursor rows for the table,
#     status reads as in the other modes;
#   - status and status --json count pending rows per bucket from the
#     cursors (status 0 above the cursor, and status 2) and show each
#     bucket's cursor; rows with status 0 at or below it count as processed;
#   - cleanup deletes the rows at or below their bucket's cursor (status 0
#     and 1) and the processed rows of buckets without a cursor, and nothing
#     above a cursor;
#   - dead replay makes a dead row of a bucket with a cursor status 2 (the
#     retry lane's, wherever the cursor is), attempts reset;
#   - partition maintenance drops an expired partition only when none of
#     its rows is above its bucket's cursor or waits (status 2, or status 0
#     without a cursor).
. "$(dirname "$0")/../harness/lib.sh"
db=it_cursor_ops
db_fresh $db --ordered
# schema --ordered made the cursor table; the first checks run without it.
# Its trigger makes every seq the counter's: the rows below set theirs, for
# a layout without the gaps of bulk inserts.
sql $db "DROP TABLE outbox_cursor; DROP TRIGGER outbox_seq"

ops() { "$OUTBOX_TEST_RELAY" "$@" --db "${OUTBOX_TEST_DB_URL}$db"; }
line() { echo "$1" | sed -n "s/^$2  *//p"; }

# Three aggregates in three different buckets: a and b get cursors, c none.
aggs=() buckets=()
for i in $(seq 1 200); do
  k=$(sql $db "SELECT CRC32(CONCAT('order', 0x1F, 'g$i')) % 64")
  case " ${buckets[*]} " in *" $k "*) continue ;; esac
  aggs+=("g$i") buckets+=("$k")
  [ ${#aggs[@]} = 3 ] && break
done
A=${aggs[0]} B=${aggs[1]} C=${aggs[2]} BA=${buckets[0]} BB=${buckets[1]} BC=${buckets[2]}
echo "buckets: a=$BA b=$BB c=$BC"

# insert DB AGG N FIRST: N rows of aggregate AGG, seq FIRST.. (set here: a
# bulk insert may leave gaps in AUTO_INCREMENT values).
insert() {
  sql "$1" "INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload, seq)
    SELECT outbox_uuid_v7(), 'order', '$2', 'created', JSON_OBJECT('n', seq), seq + $4 - 1
    FROM seq_1_to_$3"
}
# a: seq 1-30, b: 31-60, c: 61-70.
insert $db $A 30 1
insert $db $B 30 31
insert $db $C 10 61
st() { sql $db "UPDATE outbox SET status = $1 $3 WHERE seq BETWEEN $2"; }
old=", processed_at = NOW(6) - INTERVAL 1 DAY"
# a, cursor 20: 1-10 delivered (0), 11-14 processed (1), 15-16 waiting for a
# retry (2), 17-18 dead below the cursor, 19-20 delivered, 21-28 pending,
# 29-30 dead above the cursor.
st 1 "11 AND 14" "$old"
st 2 "15 AND 16" ", attempt_count = 1, next_attempt_at = NOW(6) + INTERVAL 1 HOUR"
st -1 "17 AND 18" ", attempt_count = 5, last_error = 'boom'$old"
st -1 "29 AND 30" ", attempt_count = 5, last_error = 'boom'$old"
# b, cursor 45: 31-45 delivered, 46-60 pending. c, no cursor: 61-65
# processed, 66-70 pending.
st 1 "61 AND 65" "$old"

# Without the cursor table: as in the other modes (status 0 is pending).
out=$(ops status)
echo "$out"
assert_eq "$(line "$out" pending)" 55 "pending without the cursor table"
assert_eq "$(line "$out" processed)" 9 "processed without the cursor table"
case "$out" in *"cursor mode"*) fail "status speaks of cursor mode without the cursor table" ;; esac
# With the cursor table but no rows for this table: the same.
"$OUTBOX_TEST_RELAY" schema --migrate | MDB $db
sql $db "INSERT INTO outbox_cursor (table_name, bucket, seq) VALUES ('other', $BA, 1000)"
out=$(ops status)
assert_eq "$(line "$out" pending)" 55 "pending without cursor rows for the table"
case "$(ops status --json)" in *'"cursors"'*) fail "status --json has cursors without cursor rows" ;; esac

sql $db "INSERT INTO outbox_cursor (table_name, bucket, seq) VALUES ('outbox', $BA, 20), ('outbox', $BB, 45)"
above() { sql $db "SELECT COUNT(*) FROM outbox WHERE (bucket = $BA AND seq > 20) OR (bucket = $BB AND seq > 45)"; }
assert_eq "$(above)" 25 "rows above the cursors"

# status: pending = a 10 (21-28, 15-16) + b 15 + c 5; processed = a 16 +
# b 15 + c 5; dead 4.
out=$(ops status)
echo "$out"
assert_eq "$(line "$out" pending)" 30 "status: pending"
assert_eq "$(line "$out" processed)" 36 "status: processed"
assert_eq "$(line "$out" dead)" 4 "status: dead"
assert_eq "$(line "$out" "cursor mode")" "2 of 64 buckets have a cursor" "status: cursor mode"
assert_eq "$(echo "$out" | awk -v k=$BA '$1 == k { print $2, $3 }')" "20 10" "status: bucket a"
assert_eq "$(echo "$out" | awk -v k=$BB '$1 == k { print $2, $3 }')" "45 15" "status: bucket b"
assert_eq "$(echo "$out" | awk -v k=$BC '$1 == k { print $2, $3 }')" "- 5" "status: bucket c"
json=$(ops status --json)
echo "$json"
assert_eq "$(echo "$json" | jq -c '[.pending, .processed, .dead]')" "[30,36,4]" "status --json: counts"
assert_eq "$(echo "$json" | jq -c ".cursors | map(select(.bucket == $BA or .bucket == $BB or .bucket == $BC)) | sort_by(.cursor) | map([.cursor, .pending])")" \
  "[[null,5],[20,10],[45,15]]" "status --json: cursors"
assert_eq "$(echo "$json" | jq '.cursors | length')" 3 "status --json: buckets listed"

# cleanup: a 1-14 and 19-20 (16), b 31-45 (15), c 61-65 (5); the dead rows
# stay (no --include-dead), and so does everything above a cursor.
sleep 1.2 # the rows' ids and created_at must be older than --older-than
out=$(ops cleanup --once --older-than 1s)
assert_eq "$out" "cleanup: 36 row(s) deleted (36 processed, 0 dead)" "cleanup in cursor mode"
assert_eq "$(above)" 25 "rows above the cursors after cleanup"
assert_eq "$(sql $db "SELECT GROUP_CONCAT(seq ORDER BY seq) FROM outbox WHERE seq <= 45 OR seq > 60")" \
  "15,16,17,18,21,22,23,24,25,26,27,28,29,30,66,67,68,69,70" "rows left by cleanup"
out=$(ops cleanup --once --older-than 1s)
assert_eq "$out" "cleanup: 0 row(s) deleted (0 processed, 0 dead)" "a second cleanup"
# The cleanup held no transaction open: a cursor moves at once.
sql $db "SET SESSION innodb_lock_wait_timeout = 2;
  UPDATE outbox_cursor SET seq = 20 WHERE table_name = 'outbox' AND bucket = $BA AND seq < 20"

# dead replay: 17-18 (below the cursor) and 29-30 (above it) become 2.
out=$(ops dead replay --all)
assert_eq "$out" "dead replay: 4 row(s) changed (pending again, attempts reset)" "dead replay --all"
assert_eq "$(sql $db "SELECT GROUP_CONCAT(CONCAT(seq, ':', status, ':', attempt_count) ORDER BY seq)
  FROM outbox WHERE seq IN (17, 18, 29, 30)")" "17:2:0,18:2:0,29:2:0,30:2:0" "replayed rows"
out=$(ops status)
assert_eq "$(line "$out" pending)" 34 "pending after the replay"
assert_eq "$(echo "$out" | awk -v k=$BA '$1 == k { print $2, $3 }')" "20 14" "bucket a after the replay"

# A cursor relay delivers what is pending; its own pending sample (the gauge)
# then reads 0 though rows with status 0 remain (at or below the cursors).
stream=IT_CURSOR_OPS prefix=itcops
sql $db "UPDATE outbox SET next_attempt_at = NOW(6) WHERE status = 2"
stream_delete $stream
streamcheck --stream $stream --create "$prefix.>" >/dev/null
relay_bg "$OUTBOX_TEST_DIR/cursor_ops.log" $db $stream $prefix --cursor --pending-interval 200ms \
  --http 127.0.0.1:0
rpid=$RELAY_PID
trap 'kill -TERM $rpid 2>/dev/null || true' EXIT
port=$(http_port "$OUTBOX_TEST_DIR/cursor_ops.log")
gauge() { metrics $port | awk '$1 ~ /^outbox_relay_pending_rows[{]/ { print $NF }'; }
# (up to 60 s: a bucket's first cursor waits for every transaction open on the
# server, a frozen relay's of another test too)
for i in $(seq 1 120); do
  [ "$(gauge)" = 0 ] && [ "$(ops status --json | jq .pending)" = 0 ] && break
  sleep 0.5
done
assert_eq "$(ops status --json | jq .pending)" 0 "pending once the cursor relay delivered"
assert_eq "$(gauge)" 0 "the relay's pending gauge"
zero=$(sql $db "SELECT COUNT(*) FROM outbox WHERE status = 0")
[ "$zero" -gt 0 ] || fail "no delivered row with status 0 is left to tell the modes apart"
echo "rows with status 0 (delivered): $zero"
# A row replayed while the relay runs (and its lane found nothing for a
# while) is delivered by the lane, which looks at least every 5 s.
rseq=$(sql $db "SELECT MIN(seq) FROM outbox WHERE status = 0")
sql $db "UPDATE outbox SET status = -1, attempt_count = 3, last_error = 'x' WHERE seq = $rseq"
sleep 6
assert_eq "$(ops dead replay --all)" "dead replay: 1 row(s) changed (pending again, attempts reset)" \
  "dead replay while a cursor relay runs"
for i in $(seq 1 40); do
  [ "$(sql $db "SELECT status FROM outbox WHERE seq = $rseq")" = 1 ] && break
  sleep 0.5
done
assert_eq "$(sql $db "SELECT status FROM outbox WHERE seq = $rseq")" 1 \
  "the replayed row is delivered by the running relay's lane"
kill -TERM $rpid
wait $rpid
trap - EXIT
stream_once $stream 34

# --- partitions: a partitioned ordered table with old days ----------------
pdb=it_cursor_ops_part
db_fresh $pdb --ordered
day0=$(( $(sql $pdb "SELECT UNIX_TIMESTAMP(UTC_DATE())") * 1000 ))
day=86400000
parts=""
for d in -7 -6 -5 -4 -3 -2 -1 0 1; do
  start=$((day0 + d * day))
  name=$(date -u -d "@$((start / 1000))" +p%Y%m%d)
  parts="$parts PARTITION $name VALUES LESS THAN (X'$(printf '%012x' $((start + day)))00000000000000000000'),"
done
sql $pdb "ALTER TABLE outbox PARTITION BY RANGE COLUMNS(id) ($parts PARTITION pmax VALUES LESS THAN (MAXVALUE))"
# at DAY AGG STATUS: one row of AGG with an id in day DAY (relative to today).
at() {
  sql $pdb "INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload, status)
    VALUES (UNHEX(CONCAT(LPAD(HEX($day0 + ($1) * $day + 3600000), 12, '0'),
                         SUBSTR(HEX(outbox_uuid_v7()), 13))), 'order', '$2', 'created', '{}', $3)"
}
# Day -7: c without a cursor, pending (0): kept.
at -7 $C 0
# Day -6: a delivered (0), processed (1) and dead, all below a's cursor: dropped.
at -6 $A 0; at -6 $A 1; at -6 $A -1
# Day -5: a waiting for its retry (2), below the cursor: kept.
at -5 $A 2
# Day -3: b delivered (0) below b's cursor, c processed: dropped.
at -3 $B 0; at -3 $C 1
# Day -4: b pending (0) above b's cursor: kept.
at -4 $B 0
sql $pdb "INSERT INTO outbox_cursor (table_name, bucket, seq) VALUES
  ('outbox', $BA, (SELECT MAX(seq) FROM outbox WHERE bucket = $BA)),
  ('outbox', $BB, (SELECT MAX(seq) - 1 FROM outbox WHERE bucket = $BB))"
pabove() { sql $pdb "SELECT COUNT(*) FROM outbox o JOIN outbox_cursor c
  ON c.table_name = 'outbox' AND c.bucket = o.bucket AND o.seq > c.seq"; }
assert_eq "$(pabove)" 1 "rows above the cursors (partitioned)"
pops() { "$OUTBOX_TEST_RELAY" "$@" --db "${OUTBOX_TEST_DB_URL}$pdb"; }
out=$(pops partitions --once --lookahead 1 --retention 2)
assert_eq "$out" "partitions: 0 created, 2 dropped, 3 kept (expired, but holding pending rows)" \
  "partitions in cursor mode"
gone() { date -u -d "@$(( (day0 + $1 * day) / 1000 ))" +p%Y%m%d; }
left=$(sql $pdb "SELECT GROUP_CONCAT(PARTITION_NAME ORDER BY PARTITION_ORDINAL_POSITION)
  FROM information_schema.PARTITIONS WHERE TABLE_SCHEMA = '$pdb' AND TABLE_NAME = 'outbox'")
for d in -7 -5 -4 -6 -3; do
  want=kept; [ $d = -6 ] || [ $d = -3 ] && want=dropped
  got=dropped; case ",$left," in *",$(gone $d),"*) got=kept ;; esac
  assert_eq "$got" $want "partition of day $d"
done
assert_eq "$(pabove)" 1 "rows above the cursors after the round"
assert_eq "$(sql $pdb "SELECT COUNT(*) FROM outbox")" 3 "rows left after the round"
# Once a's retry is delivered, its partition goes; b's pending row keeps its own.
sql $pdb "UPDATE outbox SET status = 1, processed_at = NOW(6) WHERE status = 2"
out=$(pops partitions --once --lookahead 1 --retention 2)
assert_eq "$out" "partitions: 0 created, 1 dropped, 2 kept (expired, but holding pending rows)" \
  "partitions after the retry"
echo "cursor_ops: ok"
