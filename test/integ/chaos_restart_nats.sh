# Restart nats-server in the middle of a run: the relay pauses, resumes by
# itself, and the outage costs no row an attempt. Nothing is lost or stored
# twice.
. "$(dirname "$0")/../harness/lib.sh"
db=it_restart_nats
work=$(mktemp -d); RELAY_PID=; trap 'kill $RELAY_PID 2>/dev/null || true; rm -rf "$work"' EXIT
restart_mid_run $db IT_RESTART_NATS itrnats restart-nats "$work/relay.log"
grep -q "disconnected; pausing" "$work/relay.log" || { cat "$work/relay.log"; fail "the outage was logged"; }
grep -q "stream IT_RESTART_NATS is ready" "$work/relay.log" || fail "the stream check after the reconnect"
assert_eq "$(sql $db 'SELECT MAX(attempt_count) FROM outbox')" 0 "largest attempt_count"
