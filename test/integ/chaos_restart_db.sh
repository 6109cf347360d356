# Restart mariadbd in the middle of a run: the relay reconnects by itself with
# fresh connections, the interrupted batches are redone, and nothing is lost or
# stored twice.
. "$(dirname "$0")/../harness/lib.sh"
db=it_restart_db stream=IT_RESTART_DB prefix=itrdb
work=$(mktemp -d); r=; trap 'kill $r 2>/dev/null || true; rm -rf "$work"' EXIT
db_fresh $db
stream_delete $stream
seed $db 20000 512
relay_bg "$work/relay.log" $db $stream $prefix --connections 2 --batch 50
r=$RELAY_PID
sleep 0.4
before=$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1')
echo "restarting mariadbd with $before rows processed"
"$OUTBOX_TEST_SERVERS" restart-db "$OUTBOX_TEST_DIR"
for i in $(seq 1 600); do
  [ "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 0')" = 0 ] && break
  sleep 0.1
done
kill -TERM $r
rc=0; wait $r || rc=$?
assert_eq "$rc" 0 "relay exit status"
grep -q "connection lost" "$work/relay.log" || { cat "$work/relay.log"; fail "the loss was logged"; }
reconnects=$(grep -c "connected to the database" "$work/relay.log")
[ "$reconnects" -ge 4 ] || { cat "$work/relay.log"; fail "both connections were re-made ($reconnects)"; }
assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1')" 20000 "processed rows"
assert_eq "$(sql $db 'SELECT SUM(attempt_count) FROM outbox')" 0 "attempts counted"
summary=$(stream_summary $stream)
echo "$summary"
assert_eq "$(field "$summary" messages)" 20000 "messages in the stream"
assert_eq "$(field "$summary" distinct)" 20000 "distinct ids in the stream"
