# SPDX-License-Identifier: Apache-2.0
# Moving a table between --cursor and --ordered mid-stream.
#
# First, to --ordered from a state written by SQL: the table is left as
# cursor relays leave it (rows with status 0 at or below their bucket's
# cursor, delivered; a bucket whose rows wait for a retry with status 2;
# rows above the cursors pending), then ordered relays start while a
# producer keeps inserting. Every row reaches the stream exactly once, no
# aggregate out of order, the waiting rows keep their attempts, and the
# cursor table is empty once the ordered relays own every bucket. One
# bucket is left as a conversion that crashed halfway leaves it.
#
# Then the round trip with a producer inserting throughout: two --cursor
# relays, stopped (SIGTERM) once the cursors moved; two --ordered relays,
# stopped once the cursor table is empty and they delivered rows; two
# --cursor relays again until nothing is pending. Every row is in the stream
# once, no aggregate out of order; the rows published again (and dropped by
# the stream's duplicate window) are counted.
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/lease.sh"
db=it_cursor_switch stream=IT_CURSOR_SWITCH prefix=itcsw
lease_setup $db $stream
# A one-second duplicate window: a row published again later is a second
# message, which the checks count.
streamcheck --stream $stream --create "$prefix.>" --dup-window-ms 1000 >/dev/null

# 3,000 rows delivered, as a cursor relay leaves them: published, status 0,
# each bucket's cursor at its last row. (An ordered relay publishes them
# here; the rows are then put back to status 0.)
produce $db 0 3000
relay $db $stream $prefix --ordered --connections 2 --drain 2>"$work/first.log"
assert_eq "$(processed $db)" 3000 "rows delivered before the switch"
sql $db "UPDATE outbox SET status = 0, processed_at = NULL;
  INSERT INTO outbox_cursor (table_name, bucket, seq)
    SELECT 'outbox', bucket, MAX(seq) FROM outbox GROUP BY bucket"
assert_eq "$(sql $db "SELECT COUNT(*) FROM outbox_cursor")" 64 "cursor rows"
# 2,000 more; in one bucket they are at or below its (moved) cursor and wait
# for a retry with status 2 (one failed attempt, due now): not delivered yet.
produce $db 3000 5000
wb=$(sql $db "SELECT bucket FROM outbox WHERE seq > (SELECT MAX(seq) FROM outbox_cursor)
  GROUP BY bucket ORDER BY COUNT(*) DESC LIMIT 1")
waiting=$(sql $db "SELECT COUNT(*) FROM outbox WHERE bucket = $wb AND status = 0 AND
  seq > (SELECT seq FROM outbox_cursor WHERE bucket = $wb)")
sql $db "UPDATE outbox SET status = 2, attempt_count = 1, last_error = 'boom',
    next_attempt_at = NOW(6)
  WHERE bucket = $wb AND seq > (SELECT seq FROM outbox_cursor WHERE bucket = $wb);
  UPDATE outbox_cursor SET seq = (SELECT MAX(seq) FROM outbox WHERE bucket = $wb)
  WHERE table_name = 'outbox' AND bucket = $wb"
echo "bucket $wb: $waiting row(s) waiting with status 2"
# Another bucket as a conversion that crashed after its first chunk leaves
# it: half its delivered rows already processed, its cursor row still there.
hb=$(( (wb + 1) % 64 ))
sql $db "UPDATE outbox SET status = 1, processed_at = NOW(6) WHERE bucket = $hb AND status = 0
  AND seq <= (SELECT seq FROM outbox_cursor WHERE bucket = $hb) ORDER BY seq
  LIMIT $(sql $db "SELECT COUNT(*) DIV 2 FROM outbox WHERE bucket = $hb AND status = 0")"
[ "$waiting" -gt 0 ] || fail "no waiting rows in bucket $wb"
# status counts them as the cursor relay would have.
out=$("$OUTBOX_TEST_RELAY" status --db "${OUTBOX_TEST_DB_URL}$db")
assert_eq "$(echo "$out" | sed -n 's/^pending  *//p')" 2000 "pending before the switch"

# The ordered relays start while the producer keeps going.
produce $db 5000 8000 &
pids+=($!)
prod=$!
relay_bg "$work/r1.log" $db $stream $prefix --ordered --connections 2 --lease-timeout 3s
pids+=($RELAY_PID); r1=$RELAY_PID
relay_bg "$work/r2.log" $db $stream $prefix --ordered --connections 2 --lease-timeout 3s
pids+=($RELAY_PID); r2=$RELAY_PID
wait $prod
wait_processed $db 8000 120 || { tail -20 "$work/r1.log" "$work/r2.log"; fail "rows not processed in time"; }
kill -TERM $r1 $r2
wait $r1 $r2
assert_eq "$(sql $db "SELECT COUNT(*) FROM outbox_cursor")" 0 "cursor rows after the switch"
assert_eq "$(sql $db "SELECT COUNT(*) FROM outbox WHERE status <> 1")" 0 "rows not processed"
# The waiting rows were delivered after the switch, their failed attempt counted.
assert_eq "$(sql $db "SELECT COUNT(*) FROM outbox WHERE bucket = $wb AND attempt_count >= 1
  AND seq > 3000")" "$waiting" "waiting rows that kept their attempt"
grep -h "left cursor mode" "$work/r1.log" "$work/r2.log" | sed -n 1,3p
assert_eq "$(cat "$work/r1.log" "$work/r2.log" | grep -c "left cursor mode")" 64 "buckets converted"
check_stream $stream 8000

# --- the round trip: --cursor, --ordered, --cursor, with a producer running ---
if ! grep -q -- '--cursor' <<<"$("$OUTBOX_TEST_RELAY" --help 2>&1)"; then
  echo "cursor_switch: this build has no --cursor: the round trip is not run"
  echo "cursor_switch: ok"
  exit 0
fi
pending() { "$OUTBOX_TEST_RELAY" status --json --db "${OUTBOX_TEST_DB_URL}$db" | jq .pending; }
cursor_rows() { sql $db "SELECT COUNT(*) FROM outbox_cursor WHERE table_name = 'outbox'"; }
# start MODE LOG...: one relay per log, in MODE.
start() {
  local mode=$1 log; shift
  started=()
  for log in "$@"; do
    relay_bg "$work/$log" $db $stream2 $prefix2 $mode --connections 2 --lease-timeout 3s
    pids+=($RELAY_PID); started+=($RELAY_PID)
  done
}
# stop: the started relays end with SIGTERM (a clean stop) and exit 0.
stop() {
  local p rc
  kill -TERM "${started[@]}"
  for p in "${started[@]}"; do
    rc=0; wait "$p" || rc=$?
    assert_eq "$rc" 0 "exit status of relay $p"
  done
}
# until_true SECONDS COMMAND...: 0 once COMMAND succeeds.
until_true() {
  local i n=$(($1 * 4)); shift
  for i in $(seq 1 $n); do "$@" && return 0; sleep 0.25; done
  return 1
}
moved_past() { [ "$(sql $db "SELECT COUNT(*) FROM outbox_cursor WHERE table_name = 'outbox'
  AND seq > $1")" -gt 0 ]; }
processed_past() { [ "$(sql $db "SELECT COUNT(*) FROM outbox WHERE status = 1 AND seq > $1")" -gt 0 ]; }
no_cursor_rows() { [ "$(cursor_rows)" = 0 ]; }
nothing_pending() { [ "$(pending)" = 0 ]; }

# A stream of its own, with the default duplicate window (2 minutes): rows
# published again after a stop or a hand-over are dropped there, and counted
# below. (Under a one-second window they show when the machine is loaded.)
stream2=${stream}_RT prefix2=${prefix}rt
stream_delete $stream2
streamcheck --stream $stream2 --create "$prefix2.>" >/dev/null
produce $db 8000 14000 &
pids+=($!); prod=$!
start --cursor c1.log c2.log
until_true 60 moved_past 9000 || { tail "$work/c1.log"; fail "cursor relays made no progress"; }
stop
echo "to --ordered with $(pending) row(s) pending, $(cursor_rows) cursor row(s)"
start --ordered o1.log o2.log
until_true 60 no_cursor_rows || fail "cursor rows left under --ordered: $(cursor_rows)"
until_true 60 processed_past 11000 || fail "ordered relays made no progress"
stop
assert_eq "$(cursor_rows)" 0 "cursor rows after the move to --ordered"
echo "to --cursor with $(pending) row(s) pending"
start --cursor c3.log c4.log
wait $prod
until_true 120 nothing_pending || fail "rows still pending under --cursor: $(pending)"
stop
check_stream $stream2 6000
# Rows published twice (the stream dropped the second copy as a duplicate):
# the relays' acks beyond the rows, from their last log lines.
acked=$(cat "$work"/[co][1-4].log | sed -n 's/.*relay stopped: \([0-9]*\) acked.*/\1/p' |
  awk '{ s += $1 } END { print s }')
grep -H "relay stopped" "$work"/[co][1-4].log | sed "s|^$work/||"
echo "published again and dropped by the duplicate window: $((acked - 6000)) row(s)"
echo "cursor_switch: ok"
