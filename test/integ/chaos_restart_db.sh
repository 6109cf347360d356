# Restart mariadbd in the middle of a run: the relay reconnects by itself with
# fresh connections, the interrupted batches are redone, and nothing is lost or
# stored twice.
. "$(dirname "$0")/../harness/lib.sh"
db=it_restart_db
work=$(mktemp -d); RELAY_PID=; trap 'kill $RELAY_PID 2>/dev/null || true; rm -rf "$work"' EXIT
restart_mid_run $db IT_RESTART_DB itrdb restart-db "$work/relay.log"
grep -q "connection lost" "$work/relay.log" || { cat "$work/relay.log"; fail "the loss was logged"; }
# Two connections at start, then at least one made anew; the other may still
# be in its reconnect backoff when the first has drained the table.
reconnects=$(grep -c "connected to the database" "$work/relay.log")
[ "$reconnects" -ge 3 ] || { cat "$work/relay.log"; fail "the connections were re-made ($reconnects)"; }
assert_eq "$(sql $db 'SELECT SUM(attempt_count) FROM outbox')" 0 "attempts counted"
