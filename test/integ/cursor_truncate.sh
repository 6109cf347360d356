# SPDX-License-Identifier: Apache-2.0
# Issue 29, point 1: a TRUNCATE of the outbox table restarts its
# AUTO_INCREMENT counter while outbox_cursor keeps its positions, so new rows
# get seq values at or below the cursors. The relay must not take them for
# delivered:
#   - at start, a --cursor relay exits 1 naming the cause and the command
#     that repairs it (cursor-reset), and publishes nothing;
#   - status reports the mismatch and exits 1; cleanup and partitions exit 1
#     and delete nothing;
#   - cursor-reset sets the cursors to 0, and the relay then delivers every
#     new row once; a second cursor-reset changes nothing, unless --all;
#   - under a running relay, a TRUNCATE stops it publishing that table:
#     /readyz answers 503 naming it, outbox_relay_cursor_mismatch reads 1,
#     one error line; after cursor-reset the new rows are delivered.
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/private.sh"
db=it_cursor_truncate stream=IT_CURSOR_TRUNCATE prefix=itctrunc
work=$(mktemp -d); RELAY_PID=
trap 'kill -KILL $RELAY_PID 2>/dev/null || true; rm -rf "$work"' EXIT
ops() { "$OUTBOX_TEST_RELAY" "$@" --db "${OUTBOX_TEST_DB_URL}$db"; }
drain() { timeout 60 "$OUTBOX_TEST_RELAY" --db "${OUTBOX_TEST_DB_URL}$db" --nats "$OUTBOX_TEST_NATS_URL" \
  --stream $stream --subject-prefix $prefix --no-progress --cursor --drain >"$work/drain.log" 2>&1; }
messages() { field "$(stream_summary $stream)" messages; }

db_fresh $db --cursor
stream_delete $stream
seed $db 300 256
rc=0; drain || rc=$?
assert_eq "$rc" 0 "first drain"
assert_eq "$(messages)" 300 "messages after the first drain"

sql $db "TRUNCATE outbox"
seed $db 200 256
echo "cursors up to $(sql $db 'SELECT MAX(seq) FROM outbox_cursor'), new rows up to seq $(sql $db 'SELECT MAX(seq) FROM outbox')"

rc=0; drain || rc=$?
{ grep -v ' info ' "$work/drain.log" || true; } | sed 's/^/    /'
assert_eq "$rc" 1 "exit status of a cursor relay on the truncated table"
grep -q "AUTO_INCREMENT counter" "$work/drain.log" || fail "the refusal does not name the cause"
grep -q "outbox-uvrelay cursor-reset --table outbox" "$work/drain.log" || fail "the refusal does not name the repair"
assert_eq "$(messages)" 300 "messages published by the refused relay"

rc=0; out=$(ops status 2>&1) || rc=$?
echo "$out" | grep -v '^  [0-9]' | sed 's/^/    /'
assert_eq "$rc" 1 "exit status of status"
grep -q '^cursor mismatch' <<<"$out" || fail "status does not report the mismatch"
assert_eq "$(echo "$out" | sed -n 's/^pending  *//p')" 200 "pending in status (every new row)"
json=$(ops status --json 2>/dev/null || true)
assert_eq "$(echo "$json" | jq -c '[.cursor_mismatch, .pending]')" "[true,200]" "status --json"
rc=0; out=$(ops cleanup --once --older-than 0s 2>&1) || rc=$?
echo "$out" | sed 's/^/    /'
assert_eq "$rc" 1 "exit status of cleanup"
grep -q "nothing was deleted" <<<"$out" || fail "cleanup does not say it deleted nothing"
assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox')" 200 "rows left by cleanup"
rc=0; out=$(ops partitions --once 2>&1) || rc=$?
assert_eq "$rc" 1 "exit status of partitions"
grep -q "AUTO_INCREMENT counter" <<<"$out" || fail "partitions does not name the mismatch"

assert_eq "$(ops cursor-reset 2>/dev/null)" \
  "cursor-reset: 64 cursor(s) set to 0 (the highest was 300, the table's counter $(sql $db "SELECT AUTO_INCREMENT FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'outbox'"))" \
  "cursor-reset"
assert_eq "$(ops cursor-reset 2>/dev/null)" "cursor-reset: nothing reset (the cursors agree with the counter)" \
  "a second cursor-reset"
rc=0; out=$(ops status 2>&1) || rc=$?
assert_eq "$rc" 0 "exit status of status after the reset"
rc=0; drain || rc=$?
assert_eq "$rc" 0 "drain after the reset"
assert_eq "$(messages)" 500 "messages after the reset (300 before, 200 new)"
assert_eq "$(field "$(stream_summary $stream)" distinct)" 500 "distinct ids after the reset"
rc=0; out=$(ops status 2>&1) || rc=$?
assert_eq "$rc" 0 "exit status of status after the drain"
assert_eq "$(echo "$out" | sed -n 's/^pending  *//p')" 0 "pending after the drain"

# Under a running relay.
relay_bg "$work/relay.log" $db $stream $prefix --cursor --http 127.0.0.1:0
port=$(http_port "$work/relay.log")
wait_sql $db "SELECT MIN(seq) >= (SELECT MAX(seq) FROM outbox) FROM outbox_cursor" 1 30 ||
  { show_log "$work/relay.log"; fail "the cursors did not reach the last row"; }
sql $db "TRUNCATE outbox"
seed $db 100 256
for i in $(seq 1 100); do [ "$(http_code $port /readyz)" = 503 ] && break; sleep 0.1; done
reason=$(curl -s -m 5 "http://127.0.0.1:$port/readyz")
echo "readyz: $reason"
assert_eq "$(http_code $port /readyz)" 503 "/readyz after the TRUNCATE"
grep -q "AUTO_INCREMENT counter" <<<"$reason" || fail "/readyz does not name the mismatch"
assert_eq "$(metric_value "$(metrics $port)" 'outbox_relay_cursor_mismatch{table="outbox"}')" 1 \
  "outbox_relay_cursor_mismatch"
sleep 2 # the relay checks again every second: still one error line
assert_eq "$(grep -c ' error .*AUTO_INCREMENT counter' "$work/relay.log")" 1 "error lines about the mismatch"
ops cursor-reset
for i in $(seq 1 150); do [ "$(messages)" = 600 ] && break; sleep 0.2; done
assert_eq "$(messages)" 600 "messages once the running relay's cursors were reset"
assert_eq "$(http_code $port /readyz)" 200 "/readyz after the reset"
assert_eq "$(metric_value "$(metrics $port)" 'outbox_relay_cursor_mismatch{table="outbox"}')" 0 \
  "outbox_relay_cursor_mismatch after the reset"
kill -TERM $RELAY_PID
wait_exit $RELAY_PID 15
RELAY_PID=
assert_eq "$WAIT_RC" 0 "relay exit status"
assert_eq "$(field "$(stream_summary $stream)" distinct)" 600 "distinct ids in the stream"
want="cursor-reset: 64 cursor(s) set to 0 (the highest was $(sql $db 'SELECT MAX(seq) FROM outbox_cursor'), the table's counter $(sql $db "SELECT AUTO_INCREMENT FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'outbox'"))"
assert_eq "$(ops cursor-reset --all 2>/dev/null)" "$want" "cursor-reset --all, with cursors that agree with the counter"
echo "cursor_truncate: ok"
