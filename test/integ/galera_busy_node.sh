# SPDX-License-Identifier: Apache-2.0
# A busy node is not a dead one. An --ordered relay given nodes 1, 2 and 3
# works on node 1; a session on node 1 holds the row lock of the relay's
# presence row in the lease table for 14 s (as a long cluster-wide DDL holds
# every commit), so the lease's renewal gets no answer within its 10 s
# deadline while node 1 answers the cluster probe. Asserts:
# - the relay says once that node 1 is busy, not dead, and no connection of
#   it moves to another node (before, every one moved: "given up: no answer
#   within 10000 ms");
# - once the lock is gone it owns its 64 buckets again, every row is once in
#   the stream, none dead or charged, no aggregate out of order, exit 0.
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/galera.sh"
db=it_galera_busy_node stream=IT_GALERA_BUSY_NODE prefix=itgbn
work=$(mktemp -d)
pids=() locker=
cleanup() {
  [ -z "$locker" ] || kill "$locker" 2>/dev/null || true
  for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

galera_db_fresh $db --ordered
stream_delete $stream
"$OUTBOX_TEST_RELAY" --db "$(galera_url $db 1 2 3)" --nats "$OUTBOX_TEST_NATS_URL" \
  --stream $stream --subject-prefix $prefix --no-progress --ordered --http 127.0.0.1:0 \
  2>"$work/relay.log" &
relay=$!
pids+=($relay)
port=$(http_port "$work/relay.log")
series='outbox_relay_buckets_owned{table="outbox"}'
owns_all() { [ "$(metric_value "$(metrics $port)" "$series")" = 64 ]; }
wait_until 30 "the relay owns 64 buckets" owns_all
GALERA_PACE='DO SLEEP(0.05)' galera_agg_producers $db "$work" 40 10 1 2
wait_until 30 "rows delivered" galera_processed_at_least $db 100

me=$(GSQL 1 $db "SELECT slot FROM outbox_lease WHERE kind = 'i'")
[ "$(wc -l <<<"$me")" = 1 ] || fail "one presence row expected, found: $me"
GROOT 1 $db -e "BEGIN; SELECT slot FROM outbox_lease WHERE kind = 'i' AND slot = $me FOR UPDATE;
  DO SLEEP(14); ROLLBACK" >/dev/null &
locker=$!
moves() { grep -E ': on database node [0-9]+ of 3 ' "$work/relay.log" || true; }
wait_until 30 "the relay says node 1 is busy, or moves" \
  grep -qE 'is busy, not dead|: on database node [0-9]+ of 3 ' "$work/relay.log"
[ -z "$(moves)" ] || { moves; fail "a connection moved off the busy node"; }
wait "$locker" || fail "the session holding the lock failed"
locker=
for p in "${producers[@]}"; do wait "$p" || fail "a producer failed"; done
wait_until 30 "the relay owns 64 buckets again" owns_all
galera_drained $db || fail "rows still pending after the lock was gone"
kill -TERM $relay
rc=0
wait $relay || rc=$?
pids=()
assert_eq "$rc" 0 "exit status of the relay"
grep 'is busy, not dead' "$work/relay.log" | head -3
assert_eq "$(grep -c ' warn .*is busy, not dead' "$work/relay.log")" 1 "busy lines at warn level"
[ -z "$(moves)" ] || { moves; fail "a connection moved off the busy node"; }
galera_end $db $stream 800 "$work"
out=$(streamcheck --stream $stream --subject '>' --check-order agg_seq) ||
  { echo "$out"; fail "an aggregate out of order"; }
echo "$out" | grep order_violations
