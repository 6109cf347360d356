# SPDX-License-Identifier: Apache-2.0
# Issue 12, point 2: every server of a --nats list is tried. With the first
# one down (nothing listens on port 1) and the second up, the relay starts,
# drains every row, and exits 0 within a bound.
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/private.sh"
db=it_fault_first stream=IT_FAULT_FIRST prefix=itffirst
work=$(mktemp -d); RELAY_PID=
trap 'kill -KILL $RELAY_PID 2>/dev/null || true; rm -rf "$work"' EXIT
db_fresh $db
stream_delete $stream
seed $db 2000 256

"$OUTBOX_TEST_RELAY" --db "${OUTBOX_TEST_DB_URL}$db" --nats "nats://127.0.0.1:1,$OUTBOX_TEST_NATS_URL" \
  --stream $stream --subject-prefix $prefix --no-progress --drain 2>"$work/relay.log" &
RELAY_PID=$!
wait_exit $RELAY_PID 45
echo "relay exit $WAIT_RC after $WAITED_MS ms"
[ "$WAIT_RC" = 0 ] || show_log "$work/relay.log"
assert_eq "$WAIT_RC" 0 "exit status of --drain with the first server down"
assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1')" 2000 "processed rows"
assert_eq "$(sql $db 'SELECT MAX(attempt_count) FROM outbox')" 0 "largest attempt_count"
summary=$(stream_summary $stream)
echo "$summary"
assert_eq "$(field "$summary" messages)" 2000 "messages in the stream"
assert_eq "$(field "$summary" distinct)" 2000 "distinct ids in the stream"

# The same with the live server first and a dead one after it (the list is
# not only a fallback for the first entry).
seed $db 500 256
"$OUTBOX_TEST_RELAY" --db "${OUTBOX_TEST_DB_URL}$db" --nats "$OUTBOX_TEST_NATS_URL,nats://127.0.0.1:1" \
  --stream $stream --subject-prefix $prefix --no-progress --drain 2>"$work/relay2.log" &
RELAY_PID=$!
wait_exit $RELAY_PID 45
[ "$WAIT_RC" = 0 ] || show_log "$work/relay2.log"
assert_eq "$WAIT_RC" 0 "exit status of --drain with the last server down"
assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1')" 2500 "processed rows"
