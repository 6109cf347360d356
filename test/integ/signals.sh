# SPDX-License-Identifier: Apache-2.0
# SIGTERM stops the binary gracefully; a second signal stops it at once.
# Neither loses a row.
. "$(dirname "$0")/../harness/lib.sh"
# The binary's start-up checks run before its signal handlers are in place
# (a signal then ends it by its default action, with nothing claimed): the
# signals are sent once rows are being processed, within 30 s.
wait_processing() {
  local i
  for i in $(seq 300); do
    [ "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1')" -gt "$1" ] && return 0
    sleep 0.1
  done
  fail "no row was processed within 30 s"
}
db=it_signals stream=IT_SIGNALS prefix=itsignals
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
db_fresh $db
stream_delete $stream
seed $db 20000 512
relay_bg "$work/a.log" $db $stream $prefix --batch 100 --shutdown-timeout 30s
wait_processing 0
kill -TERM $RELAY_PID
rc=0; wait $RELAY_PID || rc=$?
assert_eq "$rc" 0 "exit status after one SIGTERM"
grep -q "stopping: no new claims" "$work/a.log" || fail "graceful stop logged"
assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status NOT IN (0, 1)')" 0 "rows in other states"

# Freeze nats-server so that acks stop coming: the graceful stop then waits
# (up to --shutdown-timeout), and the second signal must cut it short.
natspid=$(cat "$OUTBOX_TEST_DIR/nats.pid")
relay_bg "$work/b.log" $db $stream $prefix --batch 100 --shutdown-timeout 30s --ack-timeout 60s \
  --http 127.0.0.1:0
trap 'kill -CONT $natspid 2>/dev/null || true; rm -rf "$work"' EXIT
hport=$(http_port "$work/b.log")
wait_processing "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1')"
kill -STOP $natspid
# The signal comes once publishes wait for acks that cannot come.
in_flight() { [ "$(metric_sum "$(metrics $hport)" outbox_relay_in_flight_messages)" -gt 0 ]; }
wait_until 10 "messages in flight with nats-server frozen" in_flight
kill -INT $RELAY_PID
wait_until 10 "the graceful stop logged" log_has "$work/b.log" "stopping: no new claims"
sleep 1 # a window to see that the stop waits, not a moment
kill -0 $RELAY_PID 2>/dev/null || { cat "$work/b.log"; fail "the graceful stop did not wait for acks"; }
t0=$(date +%s%N)
kill -INT $RELAY_PID
rc=0; wait $RELAY_PID || rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
kill -CONT $natspid
assert_eq "$rc" 0 "exit status after the second SIGINT"
echo "stopped $ms ms after the second signal"
[ "$ms" -lt 10000 ] || fail "the second signal did not stop at once"
grep -q "stopping now" "$work/b.log" || { cat "$work/b.log"; fail "immediate stop logged"; }
assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status NOT IN (0, 1)')" 0 "rows in other states"

relay $db $stream $prefix --drain 2>/dev/null
assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1')" 20000 "processed rows"
summary=$(stream_summary $stream)
assert_eq "$(field "$summary" messages)" 20000 "messages in the stream"
assert_eq "$(field "$summary" distinct)" 20000 "distinct ids in the stream"
