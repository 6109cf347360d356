# SPDX-License-Identifier: Apache-2.0
# Rows committed while the relay runs are delivered: the example producer
# writes orders and their events in transactions while the relay polls.
. "$(dirname "$0")/../harness/lib.sh"
db=it_live stream=IT_LIVE prefix=itlive
work=$(mktemp -d); r=; trap 'kill $r 2>/dev/null || true; rm -rf "$work"' EXIT
db_fresh $db
stream_delete $stream

relay_bg "$work/relay.log" $db $stream $prefix --poll-interval 50ms
r=$RELAY_PID
for i in $(seq 1 10); do
  "$OUTBOX_TEST_BUILD/example-producer" "${OUTBOX_TEST_DB_URL}$db" 100 5 >/dev/null
  sleep 0.1
done
# Wait until everything committed so far has been processed.
for i in $(seq 1 300); do
  [ "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 0')" = 0 ] && break
  sleep 0.1
done
kill -TERM $r
rc=0; wait $r || rc=$?
assert_eq "$rc" 0 "relay exit status after SIGTERM"
assert_eq "$(sql $db 'SELECT COUNT(*) FROM orders')" 1000 "orders written"
assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1')" 1000 "events processed"
summary=$(stream_summary $stream)
assert_eq "$(field "$summary" messages)" 1000 "messages in the stream"
assert_eq "$(field "$summary" distinct)" 1000 "distinct ids in the stream"
grep -q "relay stopped: 1000 acked" "$work/relay.log" || { cat "$work/relay.log"; fail "stop line"; }
