# SPDX-License-Identifier: Apache-2.0
# Issue 12, point 4: a frozen broker costs no attempts. A private nats-server
# is stopped with SIGSTOP twice, while rows are being inserted and relayed,
# each time until the relay has declared the connection lost (15 s at most). Both outages must cost nothing: every row processed, none dead,
# MAX(attempt_count) = 0, each id exactly once in the stream. Each freeze
# must find the relay publishing again (NATS up, then 500 more rows), or it
# only prolongs the outage already counted (see the loop).
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/private.sh"
db=it_fault_freeze stream=IT_FAULT_FREEZE prefix=itffreeze
work=$(mktemp -d); RELAY_PID=; PROD_PID=
trap 'kill -KILL $RELAY_PID $PROD_PID 2>/dev/null || true; private_cleanup; rm -rf "$work"' EXIT
pnats_alone "$work/nats"
db_fresh $db
seed $db 3000 512

producer_start $db 512 "$work/stop-producer"
relay_bg "$work/relay.log" $db $stream $prefix --connections 2 --batch 100 --http 127.0.0.1:0
hport=$(http_port "$work/relay.log")
outages() { metric_value "$(metrics $hport)" 'outbox_relay_nats_outages_total{table="outbox"}'; }
# nats_ready: one scrape says the relay may publish (its link is connected
# and the stream answered); the outages counted so far are left in $before.
nats_ready() {
  local text
  text=$(metrics $hport)
  before=$(metric_value "$text" 'outbox_relay_nats_outages_total{table="outbox"}')
  [ -n "$before" ] && [ "$(metric_value "$text" 'outbox_relay_up{table="outbox",dependency="nats"}')" = 1 ]
}
# Each freeze comes once the relay publishes again and rows flow (500 more
# processed after that), whatever the speed. The outage counter counts a
# loss of readiness, once however long it lasts: a freeze that comes after
# the thaw but before the relay has connected again (its backoff grows to
# 10 s) is the same outage, not a second one. So readiness is waited for,
# and the rows are counted from there, not from before the previous freeze
# (rows still processed between that count and the stop, over 500 on a
# loaded machine, used to let the second freeze follow the thaw at once).
for round in 1 2; do
  wait_until 60 "freeze $round: NATS ready (after the thaw)" nats_ready
  flowing=$(rows_processed $db)
  wait_until 60 "freeze $round: 500 more rows processed" processed_at_least $db $((flowing + 500))
  processed=$(rows_processed $db)
  wait_until 10 "freeze $round: NATS still ready" nats_ready
  lost=$(log_count "$work/relay.log" 'nats: disconnected')
  kill -STOP "$PNATS_PID"
  frozen_at=$(date +%s%N)
  echo "freeze $round: $processed rows processed so far, $before outage(s) counted"
  # The outage is noticed (counted) within 10 s of the freeze; the
  # responder runs on the relay's loop, which a frozen broker must not stop.
  noticed=
  for i in $(seq 1 30); do
    sleep 0.5
    now=$(outages)
    [ -n "$now" ] && [ "$now" -gt "$before" ] && { noticed=$(( ($(date +%s%N) - frozen_at) / 1000000 )); break; }
  done
  [ -n "$noticed" ] || { show_log "$work/relay.log"; fail "freeze $round: no outage counted in 15 s"; }
  echo "freeze $round counted after ~$noticed ms"
  [ "$noticed" -le 10000 ] || fail "freeze $round counted after $noticed ms (bound 10 s)"
  # Frozen until the relay has found the connection dead (its ping, about
  # 6 s), or 15 s: the whole outage, unanswered publishes and lost link.
  while [ "$(log_count "$work/relay.log" 'nats: disconnected')" -le "$lost" ] &&
    [ $(( ($(date +%s%N) - frozen_at) / 1000000 )) -lt 15000 ]; do
    sleep 0.2
  done
  echo "freeze $round: thawed after ~$(( ($(date +%s%N) - frozen_at) / 1000000 )) ms"
  kill -CONT "$PNATS_PID"
  kill -0 $RELAY_PID 2>/dev/null || { show_log "$work/relay.log"; fail "the relay exited"; }
done
producer_stop "$work/stop-producer"
total=$(sql $db 'SELECT COUNT(*) FROM outbox')
echo "$total rows inserted"
wait_sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 0' 0 40 ||
  { show_log "$work/relay.log"; fail "rows still pending 40 s after the last thaw"; }
kill -TERM $RELAY_PID
wait_exit $RELAY_PID 15
assert_eq "$WAIT_RC" 0 "relay exit status after SIGTERM"
grep -E "disconnected|JetStream unavailable|no reply|ack" "$work/relay.log" | head -10 | sed 's/^/    log: /' || true
assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = -1')" 0 "dead rows"
assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE attempt_count > 0')" 0 "rows with an attempt counted"
assert_eq "$(sql $db 'SELECT MAX(attempt_count) FROM outbox')" 0 "largest attempt_count"
assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1')" "$total" "processed rows"
stream_has_ids $db $stream "$total" "$work/ids"
