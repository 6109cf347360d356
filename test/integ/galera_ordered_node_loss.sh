# SPDX-License-Identifier: Apache-2.0
# --ordered on a three-node Galera cluster through the loss of a node: two
# relays, A given nodes 2, 1, 3 and B given nodes 3, 1, 2 (each works on the
# first), producers writing each aggregate from one node. First node 3, under
# B, is killed with SIGKILL (then started again); later node 2, under A, is
# frozen with SIGSTOP (thawed once A owns its buckets again from node 1, and
# not before --lease-timeout has passed). Each time the relay of the lost
# node moves to node 1, and the 64 buckets are owned again within
# --lease-timeout: outbox_relay_buckets_owned summed over the two relays,
# sampled every 0.1 s, never exceeds 64 and is back at 64 within the
# default --lease-timeout (15 s) of the loss. Then a rolling restart: nodes
# 1, 2 and 3 each stopped and started again in turn, producers on the
# other two writing meanwhile; then a partition: node 1 cut off from the
# primary component (gmcast.isolate) for about 8 s and joining again. The sum
# still never exceeds 64. Every row ends processed, none dead or charged,
# once in the stream, no aggregate out of order. Prints each takeover's
# time, each restart's and the partition's.
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/galera.sh"
db=it_galera_ord_loss stream=IT_GALERA_ORD_LOSS prefix=itgol
work=$(mktemp -d)
pids=() ports=() sampler= isolated=
cleanup() {
  [ -z "$sampler" ] || kill "$sampler" 2>/dev/null || true
  for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
  "$OUTBOX_TEST_SERVERS" thaw-gnode "$OUTBOX_TEST_GALERA_DIR" 2 2>/dev/null || true
  [ -z "$isolated" ] || GROOT 1 -e "SET GLOBAL wsrep_provider_options = 'gmcast.isolate=0'" || true
  rm -rf "$work"
}
trap cleanup EXIT
timeout_ms=15000 # the default: the cluster itself pauses about 6 s after a kill

galera_synced 2
galera_synced 3
galera_db_fresh $db --ordered
stream_delete $stream
relay() { # NAME NODES...: an --ordered relay given those nodes, in that order
  local name=$1; shift
  "$OUTBOX_TEST_RELAY" --db "$(galera_url $db "$@")" --nats "$OUTBOX_TEST_NATS_URL" \
    --stream $stream --subject-prefix $prefix --no-progress --ordered \
    --lease-timeout $timeout_ms --http 127.0.0.1:0 2>"$work/relay$name.log" &
  pids+=($!)
  ports+=("$(http_port "$work/relay$name.log")")
}
relay A 2 1 3
relay B 3 1 2
series='outbox_relay_buckets_owned{table="outbox"}'
: >"$work/owned"
galera_sample "$work/owned" "$series" "${ports[@]}" &
sampler=$!
wait_until 30 "64 buckets owned by the two relays" grep -q '^64 ' "$work/owned"

# takeover T: over the samples after T (date +%s.%N), the seconds to the
# first sample back at 64 once the sum fell below 64; 0 when it never fell
# (the relay moved and renewed its lease in time); "never" when it fell and
# did not come back.
takeover() {
  awk -v t="$1" '$NF > t { if ($1 < 64) fell = 1; else if (fell) { printf "%.1f\n", $NF - t; done = 1; exit } }
    END { if (!done) print fell ? "never" : 0 }' "$work/owned"
}
past() { awk -v t="$1" -v s="$2" -v now="$(date +%s.%N)" 'BEGIN { exit !(now >= t + s) }'; }
# back T LOG: since T the sum fell below 64, the relay of LOG has moved to
# node 1 (having let its leases go with its connection), and the last three
# samples are all at 64 again: the takeover is over.
back() {
  grep -q 'on database node 2 of 3' "$2" || return 1
  awk -v t="$1" '$NF > t { if ($1 < 64) fell = 1; n++; last[n % 3] = $1 }
    END { if (!fell || n < 3) exit 1; for (i in last) if (last[i] != 64) exit 1 }' "$work/owned"
}
# Each loss is watched until its takeover is over, or past the lease timeout
# and more when the sum never fell (the relay moved and renewed in time).
kill_over() { back "$t_kill" "$work/relayB.log" || past "$t_kill" 20; }
freeze_over() { past "$t_freeze" $((timeout_ms / 1000)) && { back "$t_freeze" "$work/relayA.log" || past "$t_freeze" 30; }; }

# 1. Node 3 killed under B while node 1's producer writes.
GALERA_PACE='DO SLEEP(0.1)' galera_agg_producers $db "$work" 40 20 1
galera_first_delivery $db || fail "no row processed within 30 s"
t_kill=$(date +%s.%N)
"$OUTBOX_TEST_SERVERS" kill-gnode "$OUTBOX_TEST_GALERA_DIR" 3
for p in "${producers[@]}"; do wait "$p" || fail "a producer failed"; done
galera_drained $db
wait_until 40 "the takeover after the kill" kill_over
took_kill=$(takeover "$t_kill")
echo "node 3 killed: the buckets were all owned again after ${took_kill} s"
grep -q 'on database node 2 of 3' "$work/relayB.log" ||
  { cat "$work/relayB.log" >&2; fail "relay B did not move to node 1"; }
"$OUTBOX_TEST_SERVERS" start-gnode "$OUTBOX_TEST_GALERA_DIR" 3
galera_synced 3

# 2. Node 2 frozen under A while node 3's producer writes.
GALERA_PACE='DO SLEEP(0.1)' galera_agg_producers $db "$work" 40 20 3
n3_delivered() {
  grep -q . <(GSQL 1 $db "SELECT 1 FROM outbox WHERE status = 1 AND aggregate_id LIKE 'n3-%' LIMIT 1")
}
wait_until 30 "a row of node 3's producer processed" n3_delivered
t_freeze=$(date +%s.%N)
"$OUTBOX_TEST_SERVERS" freeze-gnode "$OUTBOX_TEST_GALERA_DIR" 2
for p in "${producers[@]}"; do wait "$p" || fail "a producer failed"; done
galera_drained $db
wait_until 40 "the takeover during the freeze" freeze_over
took_freeze=$(takeover "$t_freeze")
echo "node 2 frozen: the buckets were all owned again after ${took_freeze} s"
"$OUTBOX_TEST_SERVERS" thaw-gnode "$OUTBOX_TEST_GALERA_DIR" 2
grep -q 'on database node 2 of 3' "$work/relayA.log" ||
  { cat "$work/relayA.log" >&2; fail "relay A did not move to node 1"; }

# 3. A rolling restart: each node in turn stopped (SIGTERM) and started again
# (it joins by a state transfer) while producers write on the two others, aggregates of
# their own for each step (r<step><node>-<j>).
galera_synced 2
for n in 1 2 3; do
  others=$(printf '%s\n' 1 2 3 | grep -vx "$n" | tr '\n' ' ')
  # shellcheck disable=SC2086 # the two node numbers
  GALERA_AGG=r$n GALERA_PACE='DO SLEEP(0.05)' galera_agg_producers $db "$work" 20 5 $others
  t0=$(date +%s.%N)
  "$OUTBOX_TEST_SERVERS" stop-gnode "$OUTBOX_TEST_GALERA_DIR" $n
  "$OUTBOX_TEST_SERVERS" start-gnode "$OUTBOX_TEST_GALERA_DIR" $n
  galera_synced $n
  echo "rolling restart: node $n stopped and Synced again after $(awk -v t="$t0" -v now="$(date +%s.%N)" 'BEGIN { printf "%.1f", now - t }') s"
  for p in "${producers[@]}"; do wait "$p" || fail "a producer failed"; done
done

# 4. A partition: node 1, where both relays work now (or their leases do),
# cut off from the others (gmcast.isolate) while producers write on nodes 2
# and 3; it leaves the primary component, every statement there fails with
# 1047, and each relay moves to its next node. Then node 1 joins again.
galera_synced 1
GALERA_AGG=p GALERA_PACE='DO SLEEP(0.05)' galera_agg_producers $db "$work" 20 5 2 3
t0=$(date +%s.%N)
GROOT 1 -e "SET GLOBAL wsrep_provider_options = 'gmcast.isolate=1'"
isolated=1
for i in $(seq 1 300); do
  [ "$(GROOT 1 -e "SHOW STATUS LIKE 'wsrep_cluster_status'" | cut -f2)" = non-Primary ] && break
  sleep 0.1
done
sleep 8 # the relays meet 1047 and move on; the producers write meanwhile
GROOT 1 -e "SET GLOBAL wsrep_provider_options = 'gmcast.isolate=0'"
isolated=
galera_synced 1
echo "partition: node 1 cut off and Synced again after $(awk -v t="$t0" -v now="$(date +%s.%N)" 'BEGIN { printf "%.1f", now - t }') s"
for p in "${producers[@]}"; do wait "$p" || fail "a producer failed"; done
galera_drained $db
kill "$sampler"
wait "$sampler" 2>/dev/null || true
sampler=

samples=$(wc -l <"$work/owned")
max=$(sort -n "$work/owned" | tail -1 | cut -d' ' -f1)
echo "buckets owned, summed over the relays: $samples samples, at most $max"
[ "$max" -le 64 ] || { awk '$1 > 64' "$work/owned" | head; fail "a bucket was owned twice"; }
for t in "$took_kill" "$took_freeze"; do
  [ "$t" != never ] && awk -v t="$t" -v b=$((timeout_ms / 1000)) 'BEGIN { exit !(t <= b) }' ||
    fail "a takeover took $t s, past --lease-timeout"
done

for i in 0 1; do
  kill -TERM "${pids[i]}"
  rc=0
  wait "${pids[i]}" || rc=$?
  assert_eq "$rc" 0 "exit status of relay $i"
done
pids=()
galera_synced 2
galera_end $db $stream $((1600 + 4 * 2 * 20 * 5)) "$work"
out=$(streamcheck --stream $stream --subject '>' --check-order agg_seq) ||
  { echo "$out"; fail "an aggregate out of order"; }
grep order_violations <<<"$out"
