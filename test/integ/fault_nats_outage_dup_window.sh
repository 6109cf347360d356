# SPDX-License-Identifier: Apache-2.0
# Issue 37, point 6: an outage of NATS longer than the stream's duplicate
# window, with publishes unanswered, does not duplicate silently. A private
# nats-server under a stream with a 1 s duplicate window is frozen (SIGSTOP)
# while a producer inserts and the relay publishes: what the relay publishes
# then gets no answer. It stays frozen until the relay declares the connection
# lost, then 2 s more, and is thawed. The relay publishes those rows again,
# past the window, and must say so once the broker is back: a warning that
# names the duplicate window and counts at least as many rows as the stream
# really holds twice. Nothing may be lost, and no attempt charged.
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/private.sh"
db=it_fault_natsdup stream=IT_FAULT_NATSDUP prefix=itfnatsdup
work=$(mktemp -d); RELAY_PID=; PROD_PID=
trap 'kill -CONT $PNATS_PID 2>/dev/null || true; kill -KILL $RELAY_PID $PROD_PID 2>/dev/null || true
  private_cleanup; rm -rf "$work"' EXIT
pnats_alone "$work/nats"
db_fresh $db
streamcheck --stream $stream --create "$prefix.>" --dup-window-ms 1000
seed $db 2000 256

producer_start $db 256 "$work/stop-producer"
relay_bg "$work/relay.log" $db $stream $prefix --connections 2 --batch 100
wait_until 60 "500 rows processed" processed_at_least $db 500
lines=$(wc -l <"$work/relay.log")
kill -STOP "$PNATS_PID"
for i in $(seq 1 300); do
  tail -n +$((lines + 1)) "$work/relay.log" | grep -q "nats: disconnected" && break
  sleep 0.1
done
grep -q "nats: disconnected" <<<"$(tail -n +$((lines + 1)) "$work/relay.log")" ||
  { show_log "$work/relay.log"; fail "the connection was not declared lost within 30 s of the freeze"; }
sleep 2 # the outage must outlast the 1 s duplicate window: a duration, not a moment
kill -CONT "$PNATS_PID"
sleep 2
producer_stop "$work/stop-producer"
rows=$(sql $db 'SELECT COUNT(*) FROM outbox')
wait_sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 0' 0 60 ||
  { show_log "$work/relay.log"; fail "rows still pending 60 s after the thaw"; }
kill -TERM $RELAY_PID
wait_exit $RELAY_PID 20
assert_eq "$WAIT_RC" 0 "relay exit status after SIGTERM"
assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1')" "$rows" "processed rows"
assert_eq "$(sql $db 'SELECT MAX(attempt_count) FROM outbox')" 0 "largest attempt_count"
summary=$(stream_summary $stream)
echo "$summary"
assert_eq "$(field "$summary" distinct)" "$rows" "distinct ids in the stream"
dups=$(field "$summary" duplicates)
warn=$(grep "got no answer before the broker's outage" "$work/relay.log" || true)
[ -n "$warn" ] || { show_log "$work/relay.log"; fail "publishes left unanswered past the 1 s window ($dups ids stored twice), and no warning"; }
echo "warning: $warn"
counted=$(grep -oE '[0-9]+ row\(s\) published up to' <<<"$warn" | awk '{s += $1} END {print s + 0}')
[ "$counted" -ge "$dups" ] || fail "the warnings count $counted rows, the stream holds $dups twice"
echo "ok: the warnings count $counted rows that may be stored twice ($dups are)"
