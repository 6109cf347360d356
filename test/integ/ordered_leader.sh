# SPDX-License-Identifier: Apache-2.0
# Leader mode: three relays, one leads and the others stand by. The leader
# is killed with SIGKILL mid-run; a standby takes over within 5 s, and the
# whole stream is in insertion order (the producer's global sequence in
# header n never goes down), every id once.
. "$(dirname "$0")/../harness/lib.sh"
db=it_ord_leader stream=IT_ORD_LEADER prefix=itordl
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
db_fresh $db --ordered
stream_delete $stream
sql $db "INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload, headers)
  SELECT outbox_uuid_v7(), 'order', CONCAT('a', seq % 300), 'created', JSON_OBJECT('n', seq),
         JSON_OBJECT('n', CAST(seq AS CHAR), 'agg_seq', CAST(seq DIV 300 AS CHAR))
  FROM seq_0_to_29999"
ports=()
for i in 1 2 3; do
  relay_bg "$work/r$i.log" $db $stream $prefix --leader --batch 200 --drain --http 127.0.0.1:0
  pids+=($RELAY_PID)
done
for i in 1 2 3; do ports+=($(http_port "$work/r$i.log")); done
# leads I: 0 when relay I's outbox_relay_leader gauge is 1.
leads() {
  [ "$(metric_value "$(metrics "${ports[$(($1 - 1))]}")" 'outbox_relay_leader{table="outbox"}')" = 1 ]
}
leader=
for t in $(seq 1 100); do
  for i in 1 2 3; do leads $i && leader=$i; done
  [ -n "$leader" ] && break
  sleep 0.05
done
[ -n "$leader" ] || fail "no relay leads (outbox_relay_leader is 1 on none)"
# Mid-run: once the leader has processed 3,000 of the 30,000 rows.
wait_until 60 "3000 rows processed by the leader" processed_at_least $db 3000
echo "killing the leader (relay $leader) with $(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1') rows processed"
kill -KILL "${pids[$((leader - 1))]}"
killed=$(date +%s%N)
[ "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 0')" -gt 0 ] ||
  fail "the leader was killed after the table was drained"
next= took=0
while [ -z "$next" ] && [ "$took" -le 5000 ]; do
  for i in 1 2 3; do
    [ $i != $leader ] && leads $i && next=$i
  done
  took=$((($(date +%s%N) - killed) / 1000000))
  [ -n "$next" ] || sleep 0.05
done
[ -n "$next" ] || fail "no standby took over within 5 s (outbox_relay_leader is 1 on none)"
echo "takeover: relay $next leads ${took} ms after the leader's death"
for i in 1 2 3; do
  [ $i = $leader ] && continue
  rc=0; wait "${pids[$((i - 1))]}" || rc=$?
  assert_eq "$rc" 0 "exit status of relay $i"
done
assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1')" 30000 "processed rows"
out=$(streamcheck --stream $stream --subject '>' --check-fifo n --check-order agg_seq) ||
  { echo "$out"; fail "stream check"; }
echo "$out"
summary=$(echo "$out" | grep '^messages=')
assert_eq "$(field "$summary" messages)" 30000 "messages in the stream"
assert_eq "$(field "$summary" distinct)" 30000 "distinct ids in the stream"
echo "ordered_leader: ok"
