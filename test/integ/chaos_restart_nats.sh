# Restart nats-server in the middle of a run: the relay pauses, resumes by
# itself, and the outage costs no row an attempt. Nothing is lost or stored
# twice.
. "$(dirname "$0")/../harness/lib.sh"
db=it_restart_nats stream=IT_RESTART_NATS prefix=itrnats
work=$(mktemp -d); r=; trap 'kill $r 2>/dev/null || true; rm -rf "$work"' EXIT
db_fresh $db
stream_delete $stream
seed $db 20000 512
relay_bg "$work/relay.log" $db $stream $prefix --connections 2 --batch 50
r=$RELAY_PID
sleep 0.4
before=$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1')
echo "restarting nats-server with $before rows processed"
"$OUTBOX_TEST_SERVERS" restart-nats "$OUTBOX_TEST_DIR"
for i in $(seq 1 600); do
  [ "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 0')" = 0 ] && break
  sleep 0.1
done
kill -TERM $r
rc=0; wait $r || rc=$?
assert_eq "$rc" 0 "relay exit status"
grep -q "disconnected; pausing" "$work/relay.log" || { cat "$work/relay.log"; fail "the outage was logged"; }
grep -q "stream $stream is ready" "$work/relay.log" || fail "the stream check after the reconnect"
assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1')" 20000 "processed rows"
assert_eq "$(sql $db 'SELECT MAX(attempt_count) FROM outbox')" 0 "largest attempt_count"
summary=$(stream_summary $stream)
echo "$summary"
assert_eq "$(field "$summary" messages)" 20000 "messages in the stream"
assert_eq "$(field "$summary" distinct)" 20000 "distinct ids in the stream"
