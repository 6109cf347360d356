# SPDX-License-Identifier: Apache-2.0
# --cursor on a Galera cluster, two relays: relay A on node 1 and relay B
# on node 2, --lease-timeout 5 s, producers on all three nodes (90
# aggregates, each written from one node; 120 transactions of 30 rows per
# node, one every 0.1 s). Sampled every 0.1 s, outbox_relay_buckets_owned
# summed over the pair is never above 64, and the pair shares the buckets.
# Relay A is frozen with SIGSTOP mid-run for twice the lease timeout: B
# owns all 64 buckets within --lease-timeout (the time is printed, the
# README quotes it). Thawed, A finds its presence row deleted and says once
# what it gave up without a proven lease; until its lease gives it buckets
# again its cursor sends no statement that writes (its log, at debug level,
# is the record), then it takes its share back. Every committed row once
# in the stream, no aggregate out of order, the cursors at the last row,
# both relays exit 0.
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/galera.sh"
db=it_galera_cursor_pair stream=IT_GALERA_CURSOR_PAIR prefix=itgcp
timeout=5000 trx=120
work=$(mktemp -d)
pids=() ports=() sampler=
cleanup() {
  [ -z "${show:-}" ] || for n in 1 2; do
    grep -v ' debug ' "$work/relay$n.log" | tail -30 | sed "s/^/    relay $n: /"
  done
  [ -z "$sampler" ] || kill "$sampler" 2>/dev/null || true
  for p in "${pids[@]}"; do kill -CONT "$p" 2>/dev/null; kill -KILL "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
show=1

galera_db_fresh $db --cursor
stream_delete $stream
# Relay A logs at debug level: its cursor's state changes are the record of
# what it did after the thaw.
galera_relay 1 "$work/relay1.log" $db $stream $prefix --cursor --lease-timeout $timeout \
  --http 127.0.0.1:0 --log-level debug
pids+=($RELAY_PID)
ports+=("$(http_port "$work/relay1.log")")
galera_relay 2 "$work/relay2.log" $db $stream $prefix --cursor --lease-timeout $timeout \
  --http 127.0.0.1:0
pids+=($RELAY_PID)
ports+=("$(http_port "$work/relay2.log")")
series='outbox_relay_buckets_owned{table="outbox"}'
galera_sample "$work/owned" "$series" "${ports[@]}" &
sampler=$!
owned() { # N: the buckets relay N (1 A, 2 B) owns
  metric_value "$(metrics "${ports[$1 - 1]}")" "$series"
}
sharing() { [ "$(owned 1)" -ge 1 ] && [ "$(owned 2)" -ge 1 ]; }
wait_until 30 "the two relays share the buckets" sharing
echo "shared: relay A $(owned 1), relay B $(owned 2) buckets"

published() { # N: the rows relay N has had acked
  metric_sum "$(metrics "${ports[$1 - 1]}")" outbox_relay_published_total
}
published_by() { [ "$(published "$1")" -ge "$2" ]; }
GALERA_PACE='DO SLEEP(0.1)' galera_agg_producers $db "$work" $trx 30 1 2 3
wait_until 60 "relay A publishes" published_by 1 300
wait_until 60 "relay B publishes" published_by 2 300

kill -STOP "${pids[0]}"
stopped=$(date +%s%N)
while :; do
  asked=$((($(date +%s%N) - stopped) / 1000000))
  [ "$(owned 2)" != 64 ] || break
  [ "$asked" -le $timeout ] || fail "relay B did not own 64 buckets within --lease-timeout ($timeout ms)"
  sleep 0.05
done
echo "takeover: relay B owns 64 buckets $asked ms after relay A was frozen"
# A stays frozen for twice the lease timeout.
while [ $((($(date +%s%N) - stopped) / 1000000)) -lt $((2 * timeout)) ]; do sleep 0.1; done
thawed=$(date -u +%Y-%m-%dT%H:%M:%S.%3NZ)
kill -CONT "${pids[0]}"
wait_until 30 "relay A finds its presence row deleted" \
  grep -q 'presence row in .* was deleted' "$work/relay1.log"
wait_until 30 "relay A owns buckets again" sharing

for p in "${producers[@]}"; do wait "$p" || fail "a producer failed"; done
cursors_at_end() {
  [ "$(GSQL 1 $db 'SELECT (SELECT MIN(seq) FROM outbox_cursor) >= (SELECT MAX(seq) FROM outbox)')" = 1 ]
}
wait_until 60 "the cursors at the last row" cursors_at_end
kill "$sampler"
wait "$sampler" 2>/dev/null || true
sampler=
max=$(sort -n "$work/owned" | tail -1 | cut -d' ' -f1)
echo "buckets owned, summed over the pair: $(wc -l <"$work/owned") samples, at most $max"
[ "$max" -le 64 ] || { awk '$1 > 64' "$work/owned" | head; fail "a bucket was owned twice"; }

# Relay A from the thaw until its lease gives it buckets again: what it
# gave up (said once), and no statement of its cursor that writes (a
# batch's outcome, a cursor's advance or hand-over).
awk -v t="$thawed" '$1 < t { next } / info  lease: [1-9][0-9]* of 64 buckets owned \(was 0\)/ { exit }
  { print }' "$work/relay1.log" >"$work/thawed"
grep -v ' debug ' "$work/thawed" | sed 's/^/    relay A thawed: /'
assert_eq "$(grep -c 'given up without a proven lease' "$work/thawed")" 1 \
  "lines of relay A giving up its buckets without a proven lease"
assert_eq "$(grep -cE 'debug cursor: [a-z-]+ -> (advancing|finishing)$' "$work/thawed")" 0 \
  "cursor writes by relay A before it owned buckets again"

for n in 1 2; do
  kill -TERM "${pids[n - 1]}"
  rc=0
  wait "${pids[n - 1]}" || rc=$?
  assert_eq "$rc" 0 "exit status of relay $n"
done
pids=()
show=
galera_stream_once $db $stream $((trx * 30 * 3)) "$work"
out=$(streamcheck --stream $stream --subject '>' --check-order agg_seq) ||
  { echo "$out"; fail "an aggregate out of order"; }
echo "$out" | grep order_violations
