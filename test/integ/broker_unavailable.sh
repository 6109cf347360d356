# JetStream stops answering for the relay's subjects (the stream is deleted
# under it): the relay sees no responders, pauses without counting attempts,
# re-creates the stream, and finishes.
. "$(dirname "$0")/../harness/lib.sh"
db=it_unavail stream=IT_UNAVAIL prefix=itunavail
work=$(mktemp -d); r=; trap 'kill $r 2>/dev/null || true; rm -rf "$work"' EXIT
db_fresh $db
stream_delete $stream
seed $db 20000 512
relay_bg "$work/relay.log" $db $stream $prefix --batch 50 --drain
r=$RELAY_PID
sleep 0.4
stream_delete $stream
rc=0; wait $r || rc=$?
assert_eq "$rc" 0 "relay exit status"
grep -Eq "JetStream unavailable|stream $stream does not exist; creating it" "$work/relay.log" || { cat "$work/relay.log"; fail "the outage was logged"; }
grep -q "created stream $stream" "$work/relay.log" || fail "the stream was created again"
assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1')" 20000 "processed rows"
assert_eq "$(sql $db 'SELECT MAX(attempt_count) FROM outbox')" 0 "largest attempt_count"
