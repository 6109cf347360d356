# SPDX-License-Identifier: Apache-2.0
# --leader on a Galera cluster: a relay on node 1 and one on node 2, a
# producer on node 3. The leadership is a row of the lease table: sampled
# every 0.1 s, outbox_relay_leader summed over the pair is never above 1.
# The leader is frozen with SIGSTOP mid-run: the other leads within
# --lease-timeout (6 s here; the time is printed, the README quotes it).
# Thawed, the old leader finds its presence row deleted and stands by,
# publishing nothing: every row is once in the stream and no aggregate is
# out of order.
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/galera.sh"
db=it_galera_leader stream=IT_GALERA_LEADER prefix=itgl
work=$(mktemp -d)
pids=() ports=() sampler=
cleanup() {
  [ -z "$sampler" ] || kill "$sampler" 2>/dev/null || true
  for p in "${pids[@]}"; do kill -CONT "$p" 2>/dev/null; kill -KILL "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

galera_db_fresh $db --ordered
stream_delete $stream
for n in 1 2; do
  galera_relay $n "$work/relay$n.log" $db $stream $prefix --leader --lease-timeout 6000 \
    --http 127.0.0.1:0
  pids+=($RELAY_PID)
  ports+=("$(http_port "$work/relay$n.log")")
done
series='outbox_relay_leader{table="outbox"}'
galera_sample "$work/leaders" "$series" "${ports[@]}" &
sampler=$!
# leads N: relay N (1 or 2) says it leads.
leads() { [ "$(metric_value "$(metrics "${ports[$1 - 1]}")" "$series")" = 1 ]; }
one_leads() { leads 1 || leads 2; }
wait_until 30 "a relay leads" one_leads
leader=1 other=2
leads 1 || { leader=2 other=1; }

GALERA_PACE='DO SLEEP(0.1)' galera_agg_producers $db "$work" 80 30 3
wait_until 60 "300 rows processed" galera_processed_at_least $db 300
kill -STOP "${pids[leader - 1]}"
stopped=$(date +%s%N)
took=0
until leads $other; do
  took=$((($(date +%s%N) - stopped) / 1000000))
  [ "$took" -le 6000 ] || fail "relay $other did not lead within --lease-timeout (6000 ms)"
  sleep 0.05
done
took=$((($(date +%s%N) - stopped) / 1000000))
echo "takeover: relay $other (node $other) leads $took ms after relay $leader was frozen"

for p in "${producers[@]}"; do wait "$p" || fail "the producer failed"; done
galera_drained $db
kill -CONT "${pids[leader - 1]}"
wait_until 30 "the thawed relay finds its lease gone" \
  grep -q 'presence row in .* was deleted' "$work/relay$leader.log"
wait_until 30 "the thawed relay stands by" grep -q 'lease: standing by' "$work/relay$leader.log"
kill "$sampler"
wait "$sampler" 2>/dev/null || true
sampler=
max=$(sort -n "$work/leaders" | tail -1 | cut -d' ' -f1)
echo "leaders at once: $(wc -l <"$work/leaders") samples, at most $max"
[ "$max" -le 1 ] || { awk '$1 > 1' "$work/leaders" | head; fail "two relays led at once"; }
leads $other || fail "relay $other no longer leads after the thaw"

for n in 1 2; do
  kill -TERM "${pids[n - 1]}"
  rc=0
  wait "${pids[n - 1]}" || rc=$?
  assert_eq "$rc" 0 "exit status of the relay on node $n"
done
pids=()
galera_end $db $stream 2400 "$work"
out=$(streamcheck --stream $stream --subject '>' --check-order agg_seq) ||
  { echo "$out"; fail "an aggregate out of order"; }
echo "$out" | grep order_violations
