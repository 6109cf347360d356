# SPDX-License-Identifier: Apache-2.0
# Issue 29, part 4: what a stop's last line counts as given back. A relay
# delivers a backlog through a broker frozen for a moment (rows in flight go
# back untouched and are read again), then is stopped while the broker is
# frozen again with publishes in flight. Asserts the line
#   relay stopped: A acked, 0 dead; given back untouched: R while running
#   (read again), S by the stop (left pending)
# with A the rows processed, R > 0 and equal to outbox_relay_released_total
# before the stop, and 0 < S <= the rows still pending.
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/private.sh"
db=it_stop_line stream=IT_STOP_LINE prefix=itstopl
work=$(mktemp -d); RELAY_PID=
trap 'kill -CONT $PNATS_PID 2>/dev/null || true; kill -KILL $RELAY_PID 2>/dev/null || true; private_cleanup; rm -rf "$work"' EXIT
pnats_alone "$work/nats"
db_fresh $db
seed $db 3000 512
relay_bg "$work/relay.log" $db $stream $prefix --connections 1 --batch 200 \
  --shutdown-timeout 1s --http 127.0.0.1:0
port=$(http_port "$work/relay.log")
m() { metric_value "$(metrics $port)" "$1{table=\"outbox\"}"; }
wait_sql_ge() { # SQL N SECONDS
  local i
  for i in $(seq 1 $(($3 * 5))); do
    [ "$(sql $db "$1")" -ge "$2" ] && return 0
    sleep 0.2
  done
  return 1
}
wait_sql_ge 'SELECT COUNT(*) FROM outbox WHERE status = 1' 200 30 || fail "the relay does not deliver"

# A short freeze while rows are in flight: they go back untouched. Rows are
# added once the broker is frozen, so that some are published into the
# freeze however fast the relay delivered the backlog before it.
kill -STOP $PNATS_PID
seed $db 500 512
for i in $(seq 1 200); do [ "$(m outbox_relay_released_total)" -gt 0 ] && break; sleep 0.1; done
kill -CONT $PNATS_PID
running=$(m outbox_relay_released_total)
echo "given back during the freeze: $running"
[ "$running" -gt 0 ] || { show_log "$work/relay.log"; fail "no row given back during a 20 s freeze"; }
wait_sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 0' 0 60 || fail "rows still pending after the thaw"

# A stop while the broker is frozen with publishes in flight.
seed $db 2000 512
kill -STOP $PNATS_PID
for i in $(seq 1 100); do [ "$(m outbox_relay_in_flight_messages)" -gt 0 ] && break; sleep 0.1; done
[ "$(m outbox_relay_in_flight_messages)" -gt 0 ] || fail "nothing in flight with the broker frozen"
kill -TERM $RELAY_PID
wait_exit $RELAY_PID 15
RELAY_PID=
kill -CONT $PNATS_PID
assert_eq "$WAIT_RC" 0 "exit status of the relay"
line=$(grep "relay stopped:" "$work/relay.log")
echo "$line"
processed=$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1')
pending=$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 0')
re='relay stopped: ([0-9]+) acked, 0 dead; given back untouched: ([0-9]+) while running \(read again\), ([0-9]+) by the stop \(left pending\)'
[[ $line =~ $re ]] || fail "the stop line does not read as expected"
assert_eq "${BASH_REMATCH[1]}" "$processed" "acked in the stop line (rows processed)"
assert_eq "${BASH_REMATCH[2]}" "$running" "given back while running (the metric before the stop)"
stop=${BASH_REMATCH[3]}
[ "$stop" -gt 0 ] && [ "$stop" -le "$pending" ] ||
  fail "given back by the stop: $stop, expected 1..$pending (the rows still pending)"
echo "stop_line: ok ($processed acked, $running given back while running, $stop by the stop, $pending pending)"
