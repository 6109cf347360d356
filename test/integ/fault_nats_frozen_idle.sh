# SPDX-License-Identifier: Apache-2.0
# Issue 23: an idle relay probes NATS slowly (every 30 s once a tick has
# heard the server while nothing was sent) but still notices a broker that
# freezes while it idles. A private nats-server is stopped with SIGSTOP while
# the relay has nothing to publish: the outage must be counted within 40 s
# (the README's bound is 34 s), and once the server is thawed, rows inserted
# meanwhile are delivered: each id once, no attempt counted.
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/private.sh"
db=it_fault_frozen_idle stream=IT_FAULT_FROZEN_IDLE prefix=itffidle
work=$(mktemp -d); RELAY_PID=
trap 'kill -KILL $RELAY_PID 2>/dev/null || true; private_cleanup; rm -rf "$work"' EXIT
pnats_alone "$work/nats"
db_fresh $db
seed $db 100 256
relay_bg "$work/relay.log" $db $stream $prefix --http 127.0.0.1:0
hport=$(http_port "$work/relay.log")
outages() { metric_value "$(metrics $hport)" 'outbox_relay_nats_outages_total{table="outbox"}'; }
wait_sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 0' 0 30 ||
  { show_log "$work/relay.log"; fail "the first rows were not delivered"; }
# Idle long enough for the probe to slow down (one quiet 2 s tick is enough).
sleep 6
before=$(outages)
[ -n "$before" ] || { show_log "$work/relay.log"; fail "/metrics did not answer"; }
kill -STOP "$PNATS_PID"
frozen_at=$(date +%s%N)
noticed=
for i in $(seq 1 100); do
  sleep 0.5
  now=$(outages)
  if [ -n "$now" ] && [ "$now" -gt "$before" ]; then
    noticed=$(( ($(date +%s%N) - frozen_at) / 1000000 ))
    break
  fi
done
kill -CONT "$PNATS_PID"
[ -n "$noticed" ] || { show_log "$work/relay.log"; fail "no outage counted within 50 s of an idle freeze"; }
echo "idle freeze counted after ~$noticed ms"
[ "$noticed" -le 40000 ] || fail "idle freeze counted after $noticed ms (bound 40 s)"
seed $db 100 256
wait_sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 0' 0 40 ||
  { show_log "$work/relay.log"; fail "rows still pending 40 s after the thaw"; }
kill -TERM $RELAY_PID
wait_exit $RELAY_PID 15
assert_eq "$WAIT_RC" 0 "relay exit status after SIGTERM"
assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1')" 200 "processed rows"
assert_eq "$(sql $db 'SELECT MAX(attempt_count) FROM outbox')" 0 "largest attempt_count"
stream_has_ids $db $stream 200 "$work/ids"
