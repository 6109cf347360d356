# SPDX-License-Identifier: Apache-2.0
# Issue 12, point 8: an outage of the database longer than the stream's
# duplicate window, with commits in flight, does not duplicate silently.
# A private mariadbd is frozen (SIGSTOP) mid-run, so that the relay's batches
# are published and acked but their commits hang; then it dies (SIGKILL: the
# open transactions are lost) and stays down for longer than the stream's
# 3 s duplicate window. After it returns, the relay delivers those rows again,
# past the window. It must say so: a warning that names the duplicate window
# and counts the rows that may be stored twice, at least as many as the
# stream really holds twice. The test goes on only once it has seen rows
# published and not marked when the database went away (the premise of the
# warning), so a relay that never warns fails it even if no copy was stored.
# Nothing may be lost either way.
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/private.sh"
db=it_fault_dupwin stream=IT_FAULT_DUPWIN prefix=itfdupwin
work=$(mktemp -d); RELAY_PID=
trap 'kill -KILL $RELAY_PID 2>/dev/null || true; private_cleanup; rm -rf "$work"' EXIT
private_db_and_nats "$work/srv"
db_fresh $db
streamcheck --stream $stream --create "$prefix.>" --dup-window-ms 3000
seed $db 20000 512

relay_bg "$work/relay.log" $db $stream $prefix --batch 500 --connections 2 --http 127.0.0.1:0
hport=$(http_port "$work/relay.log")
# acks_in: every message the relay published has its answer (none in flight),
# so the stream holds all it will hold of the frozen batches.
acks_in() {
  local m
  m=$(metrics $hport)
  [ -n "$m" ] && [ "$(metric_sum "$m" outbox_relay_in_flight_messages)" = 0 ]
}
# A freeze catches a commit in flight about half the time; when it caught
# none, the relay drains, more rows come, and the freeze is tried again.
rows=20000
for attempt in 1 2 3 4 5; do
  # Freeze once batches are flowing (a loaded machine starts slowly).
  base=$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1')
  for i in $(seq 1 200); do
    [ "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1')" -ge $((base + 2000)) ] && break
    sleep 0.05
  done
  kill -STOP "$(cat "$OUTBOX_TEST_DIR/db.pid")"
  wait_until 30 "the publishes of the batches in flight answered" acks_in
  published=$(field "$(stream_summary $stream)" messages)
  "$OUTBOX_TEST_SERVERS" kill-db "$OUTBOX_TEST_DIR"
  echo "mariadbd frozen, then killed, with $published messages in the stream"
  sleep 5 # the outage must outlast the 3 s duplicate window: a duration, not a moment
  "$OUTBOX_TEST_SERVERS" start-db "$OUTBOX_TEST_DIR"
  marked=$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1')
  unmarked=$((published - marked))
  echo "mariadbd back: $marked rows marked processed, $unmarked published but not marked"
  [ "$unmarked" -gt 0 ] && break
  [ $attempt = 5 ] && fail "the test did not catch a commit in flight in 5 tries"
  wait_sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 0' 0 60 ||
    { show_log "$work/relay.log"; fail "rows still pending 60 s after the database came back"; }
  seed $db 20000 512
  rows=$((rows + 20000))
done

wait_sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 0' 0 60 ||
  { show_log "$work/relay.log"; fail "rows still pending 60 s after the database came back"; }
kill -TERM $RELAY_PID
wait_exit $RELAY_PID 15
assert_eq "$WAIT_RC" 0 "relay exit status after SIGTERM"
assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1')" $rows "processed rows"
summary=$(stream_summary $stream)
echo "$summary"
assert_eq "$(field "$summary" distinct)" $rows "distinct ids in the stream"
dups=$(field "$summary" duplicates)
echo "$dups ids stored twice"

# The warning: it names the duplicate window and counts rows (the start-up
# check of the window against the retry horizon is another line).
warn=$(grep -Ei 'duplicate window|dedup|twice' "$work/relay.log" | grep -v 'retry horizon' |
  grep -E '[0-9]+ (rows?|messages?)' || true)
if [ -z "$warn" ]; then
  echo "--- the relay's warnings and errors:"
  grep -E ' warn | error ' "$work/relay.log" | head -12 | sed 's/^/    /' || true
  fail "$unmarked rows published and not marked when the database went away past the duplicate" \
    "window ($dups ids stored twice), and no warning with a count"
fi
echo "warning: $warn"
counted=$(echo "$warn" | grep -oE '[0-9]+ (rows?|messages?)' | awk '{s += $1} END {print s + 0}')
if [ "$counted" -lt "$dups" ]; then
  echo "--- what the relay logged about its database connections:"
  grep -E 'lost|not marked' "$work/relay.log" | head -8 | sed 's/^/    /' || true
  fail "the warnings count $counted rows, the stream holds $dups twice"
fi
echo "ok: the warnings count $counted rows that may be stored twice ($dups are)"
