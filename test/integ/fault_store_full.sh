# SPDX-License-Identifier: Apache-2.0
# Issue 19, point 1: JetStream's store fills up (a server limit of
# max_file_store: 3MB stands in for a small disk). Every publish is then
# refused with 503/10023 "insufficient resources": the broker's fault, not the
# rows'. While it lasts: no attempt and no dead row, the reason said once in
# the log and by /readyz (503). Once there is room again (the stream purged),
# the relay goes on by itself and every row is stored once.
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/private.sh"
db=it_fault_store stream=IT_FAULT_STORE prefix=itfstore
work=$(mktemp -d); RELAY_PID=
trap 'kill -KILL $RELAY_PID 2>/dev/null || true; private_cleanup; rm -rf "$work"' EXIT
port=$(free_port)
mkdir -p "$work/nats/store"
cat >"$work/nats/nats.conf" <<CONF
listen: 127.0.0.1:$port
jetstream { store_dir: "$work/nats/store", max_file_store: 3MB }
CONF
pnats_start "$work/nats"
OUTBOX_TEST_NATS_URL="nats://127.0.0.1:$port"
db_fresh $db
rows=4500
seed $db $rows 1024

relay_bg "$work/relay.log" $db $stream $prefix --batch 100 --max-attempts 3 --http 127.0.0.1:0 \
  --backoff fixed --backoff-base 200ms --backoff-max 200ms --backoff-jitter 0
hport=$(http_port "$work/relay.log")

# Full: the count of processed rows stops growing short of every row.
last=-1; t0=$(date +%s)
while :; do
  sleep 2
  now=$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1')
  [ "$now" = "$last" ] && break
  last=$now
  [ $(($(date +%s) - t0)) -lt 60 ] || { show_log "$work/relay.log" 20; fail "the store never filled"; }
done
echo "store full after $last of $rows rows"
[ "$last" -gt 1000 ] && [ "$last" -lt $rows ] || fail "$last rows stored before the store was full"
grep -q 'insufficient resources' "$work/nats/nats.log" "$work/relay.log" ||
  { show_log "$work/relay.log" 20; fail "nats-server never refused for insufficient resources"; }
sleep 6 # more pauses and tries while full
kill -0 $RELAY_PID 2>/dev/null || { show_log "$work/relay.log"; fail "the relay exited"; }
sql $db "SELECT status, COUNT(*), MAX(attempt_count) FROM outbox GROUP BY status" | sed 's/^/    status count max_attempts: /'
assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = -1')" 0 "dead rows while the store is full"
assert_eq "$(sql $db 'SELECT MAX(attempt_count) FROM outbox')" 0 "largest attempt_count while the store is full"
assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1')" "$last" "rows processed while full"
assert_eq "$(http_code $hport /readyz)" 503 "/readyz while the store is full"
reason=$(curl -s -m 5 "http://127.0.0.1:$hport/readyz")
echo "readyz: $reason"
grep -q "insufficient resources" <<<"$reason" || fail "/readyz names the reason: '$reason'"
said=$(grep -c 'refuses new messages' "$work/relay.log" || true)
echo "the refusal was logged $said time(s)"
[ "$said" -ge 1 ] && [ "$said" -le 2 ] || { show_log "$work/relay.log" 30; fail "the refusal logged $said times (1, at most 2)"; }
echo "before the purge:"
stream_once $stream "$last"

# Room again: the relay resumes by itself and stores the rest, once each.
streamcheck --stream $stream --purge
wait_sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1' $rows 60 ||
  { show_log "$work/relay.log" 20; fail "not every row processed within 60 s of the purge"; }
echo "ok: every row processed after the purge"
assert_eq "$(http_code $hport /readyz)" 200 "/readyz once the stream takes messages again"
kill -TERM $RELAY_PID
wait_exit $RELAY_PID 15
assert_eq "$WAIT_RC" 0 "relay exit status after SIGTERM"
assert_eq "$(sql $db 'SELECT MAX(attempt_count) FROM outbox')" 0 "largest attempt_count"
assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = -1')" 0 "dead rows"
echo "after the purge:"
stream_once $stream $((rows - last))
