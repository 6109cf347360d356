# SPDX-License-Identifier: Apache-2.0
# The table lease's own fence on a Galera cluster. A --leader relay reaches
# node 1 through a forwarder that is then cut (its node cut off: nothing
# forwarded, nothing closed), while it still holds hundreds of unsent rows
# and reaches NATS through a forwarder that delays every chunk by 50 ms (one
# publish in flight: about ten a second). The relay and NATS stay alive; a
# standby on node 2 takes the leadership row once the cut leader's presence
# row is stale. Asserts:
# - the cut leader goes on publishing after the cut, but nothing is stored
#   from the end of its lease (its validity, 5 s from a round sent before
#   the cut, plus 1 s for a publish in flight) until the standby leads,
#   though it still holds unsent rows (its lease round waits for its own
#   10 s deadline: only the age of its last proven round stops it);
# - the standby leads, every row is once in the stream, none dead or
#   charged, no aggregate out of order, both relays exit 0.
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/galera.sh"
. "$(dirname "$0")/../harness/private.sh"
. "$(dirname "$0")/../harness/lease.sh"
db=it_galera_lease_fence stream=IT_GALERA_LEASE_FENCE prefix=itglf
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -CONT "$p" 2>/dev/null || true; kill -KILL "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

galera_db_fresh $db --ordered
stream_delete $stream
node1=${OUTBOX_TEST_GALERA_URL1#*@}
node1=${node1%/}
dbport=$(free_port) natsport=$(free_port)
"$OUTBOX_TEST_BUILD/test/delayproxy" "$dbport" "${node1##*:}" 0 >"$work/dbproxy" &
dbproxy=$!
pids+=($dbproxy)
"$OUTBOX_TEST_BUILD/test/delayproxy" "$natsport" "${OUTBOX_TEST_NATS_URL##*:}" 50 \
  >"$work/natsproxy" &
pids+=($!)
wait_log "$work/dbproxy" ready 5 || fail "the database forwarder did not start"
wait_log "$work/natsproxy" ready 5 || fail "the NATS forwarder did not start"
total=2000
GSQL 1 $db "INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload, headers)
  SELECT outbox_uuid_v7(), 'order', CONCAT('a', seq % 200), 'created', JSON_OBJECT('n', seq),
         JSON_OBJECT('agg_seq', CAST(seq AS CHAR)) FROM seq_1_to_$total"
"$OUTBOX_TEST_RELAY" --db "mysql://outbox:outbox@127.0.0.1:$dbport/$db" \
  --nats "nats://127.0.0.1:$natsport" --stream $stream --subject-prefix $prefix --no-progress \
  --leader --batch 500 --max-in-flight 1 --http 127.0.0.1:0 2>"$work/a.log" &
a=$!
pids+=($a)
wait_log "$work/a.log" "lease: leading" 20 || fail "relay a (node 1, behind the forwarders) does not lead"
grep -q 'lease: on a Galera node' "$work/a.log" || fail "relay a does not keep its lease in the table"
aport=$(http_port "$work/a.log")
galera_relay 2 "$work/b.log" $db $stream $prefix --leader --batch 500 --http 127.0.0.1:0
b=$RELAY_PID
pids+=($b)
wait_log "$work/b.log" "lease: on a Galera node" 20 || fail "relay b (node 2) has no lease connection"
messages() { field "$(stream_summary $stream)" messages; }
wait_until 30 "the leader publishes" eval '[ "$(messages)" -ge 20 ]'
# The cut comes once the leader holds unsent rows: its first fetch is sized
# for large rows (a few dozen), the next ones take --batch.
wait_until 30 "the leader holds unsent rows" holds_unsent $aport 100
! grep -q "lease: leading" "$work/b.log" || fail "relay b led before the cut"
kill -USR1 $dbproxy
cut=$(now_ms)
echo "cut the leader off from node 1 with $(messages) messages in the stream"
wait_log "$work/b.log" "lease: leading" 40 || fail "the standby did not lead within 40 s"
lead=$(date -d "$(grep -m1 'lease: leading' "$work/b.log" | cut -d' ' -f1)" +%s%3N)
fence_judged $aport $cut $lead 6000 1000 $stream "$work"
kill -USR2 $dbproxy
galera_drained $db || fail "rows still pending after the standby led"
for p in $a $b; do
  kill -TERM $p
  rc=0
  wait $p || rc=$?
  assert_eq "$rc" 0 "exit status of relay $p"
done
galera_end $db $stream $total "$work"
out=$(streamcheck --stream $stream --subject '>' --check-order agg_seq) ||
  { echo "$out"; fail "an aggregate out of order"; }
echo "$out" | grep order_violations
