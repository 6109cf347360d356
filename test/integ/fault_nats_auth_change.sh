# SPDX-License-Identifier: Apache-2.0
# Issue 12, point 1: a NATS connection that nats.c closes for good is rebuilt.
# A private nats-server with a user and password comes back once with another
# password: nats.c's reconnects fail authentication and it closes the
# connection (with nats.c on the relay's loop, the default, the relay builds
# every new connection itself, and those are refused). The relay
# must log the close or the refusal, keep building new connections
# with backoff (an auth error after a successful start is not fatal), and once
# the server is back with the right password, deliver the rows inserted
# meanwhile: nothing lost, no attempt counted, each id once in the stream.
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/private.sh"
db=it_fault_auth stream=IT_FAULT_AUTH prefix=itfauth
work=$(mktemp -d); RELAY_PID=
trap 'kill -KILL $RELAY_PID 2>/dev/null || true; private_cleanup; rm -rf "$work"' EXIT
port=$(free_port)
conf() { pnats_config "$work/nats" "$port" "authorization { user: relay, password: $1 }"; }
conf right
pnats_start "$work/nats"
url="nats://relay:right@127.0.0.1:$port"
OUTBOX_TEST_NATS_URL=$url # for streamcheck
db_fresh $db
seed $db 1000 256

"$OUTBOX_TEST_RELAY" --db "${OUTBOX_TEST_DB_URL}$db" --nats "$url" --stream $stream \
  --subject-prefix $prefix --no-progress --batch 100 --http 127.0.0.1:0 2>"$work/relay.log" &
RELAY_PID=$!
hport=$(http_port "$work/relay.log")
wait_sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1' 1000 30 ||
  { show_log "$work/relay.log"; fail "the first 1000 rows were not relayed"; }
echo "ok: first 1000 rows relayed"

# Back with another password.
pnats_stop "$work/nats"
conf other
pnats_start "$work/nats"
seed $db 500 256
t0=$(date +%s)
refused="closed the connection for good|cannot connect to .*Authorization Violation"
for i in $(seq 1 150); do
  grep -qE "$refused" "$work/relay.log" && break
  sleep 0.2
done
grep -qE "$refused" "$work/relay.log" ||
  { show_log "$work/relay.log"; fail "the close of the connection was logged within 30 s"; }
echo "ok: close logged after $(($(date +%s) - t0)) s: $(grep -E "$refused" "$work/relay.log" | head -1)"
sleep 3 # new connections are refused meanwhile: retried, not fatal
kill -0 $RELAY_PID 2>/dev/null || { show_log "$work/relay.log"; fail "the relay exited on an auth error after a good start"; }
assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 0')" 500 "rows pending while refused"
# /readyz names the refusal, not a generic "NATS not ready"; said once in the log.
for i in $(seq 1 100); do
  reason=$(curl -s -m 5 "http://127.0.0.1:$hport/readyz" || true)
  grep -q 'NATS refuses the relay' <<<"$reason" && break
  sleep 0.2
done
assert_eq "$(http_code $hport /readyz)" 503 "/readyz while NATS refuses the relay"
grep -q 'NATS refuses the relay.*Authorization' <<<"$reason" ||
  { show_log "$work/relay.log"; fail "/readyz does not name the refusal: '$reason'"; }
[ "$(grep -c 'the server refuses the relay, retrying' "$work/relay.log")" -le 1 ] ||
  { show_log "$work/relay.log"; fail "the refusal is said more than once"; }

# Back with the right password: the relay builds a new connection by itself.
pnats_stop "$work/nats"
conf right
pnats_start "$work/nats"
t0=$(date +%s)
wait_sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1' 1500 40 ||
  { show_log "$work/relay.log"; fail "the rows inserted meanwhile were not relayed within 40 s"; }
echo "ok: rows inserted meanwhile relayed $(($(date +%s) - t0)) s after the server came back"
# The rows above went through a connection built after nats.c gave up on the
# first; the counters agree: an outage counted, NATS up again.
text=$(metrics $hport)
outages=$(metric_value "$text" 'outbox_relay_nats_outages_total{table="outbox"}')
[ "${outages:-0}" -ge 1 ] || { show_log "$work/relay.log"; fail "no NATS outage counted (${outages:-no metrics})"; }
assert_eq "$(metric_value "$text" 'outbox_relay_up{table="outbox",dependency="nats"}')" 1 \
  "up{dependency=nats} once the server is back ($outages outage(s) counted)"
kill -TERM $RELAY_PID
wait_exit $RELAY_PID 15
assert_eq "$WAIT_RC" 0 "relay exit status after SIGTERM"
assert_eq "$(sql $db 'SELECT MAX(attempt_count) FROM outbox')" 0 "largest attempt_count"
assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = -1')" 0 "dead rows"
stream_has_ids $db $stream 1500 "$work/ids"
if grep -q ':right@\|:other@' "$work/relay.log"; then fail "a password is in the log"; fi
