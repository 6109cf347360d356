# SPDX-License-Identifier: Apache-2.0
# Three relay processes in ordered mode share 50,000 rows over 300
# aggregates; one is killed with SIGKILL mid-run (once 5,000 rows are
# processed, whatever the machine's speed) and the survivors
# drain. Every id once in the stream, every row processed, and no
# aggregate's producer-written sequence (header agg_seq) goes backwards in
# the stream. Prints how long the survivors took to own every bucket (bounded
# at 10 s here, generously: the figure itself is reported, not timed).
. "$(dirname "$0")/../harness/lib.sh"
db=it_ord_failover stream=IT_ORD_FAILOVER prefix=itordf
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
db_fresh $db --ordered
stream_delete $stream
sql $db "INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload, headers)
  SELECT outbox_uuid_v7(), 'order', CONCAT('a', seq % 300), 'created', JSON_OBJECT('n', seq),
         JSON_OBJECT('agg_seq', CAST(seq DIV 300 AS CHAR)) FROM seq_0_to_49999"
for i in 1 2 3; do
  relay_bg "$work/r$i.log" $db $stream $prefix --ordered --connections 4 --batch 200 --drain \
    --http 127.0.0.1:0
  pids+=($RELAY_PID)
done
started=$(date +%s%N)
ports=()
for i in 1 2 3; do ports+=($(http_port "$work/r$i.log")); done
# owned I: relay I's outbox_relay_buckets_owned gauge.
owned() { metric_value "$(metrics "${ports[$(($1 - 1))]}")" 'outbox_relay_buckets_owned{table="outbox"}'; }
since() { echo $((($(date +%s%N) - $1) / 1000000)); }
# Instances that start together share the buckets among themselves.
while [ "$(since $started)" -le 10000 ]; do
  a=$(owned 1); b=$(owned 2); c=$(owned 3)
  [ "${a:-0}" -gt 0 ] && [ "${b:-0}" -gt 0 ] && [ "${c:-0}" -gt 0 ] && break
  sleep 0.05
done
echo "shares: relay 1 owns ${a:-0}, relay 2 ${b:-0}, relay 3 ${c:-0} buckets"
[ "${a:-0}" -gt 0 ] && [ "${b:-0}" -gt 0 ] && [ "${c:-0}" -gt 0 ] ||
  fail "the three relays did not share the buckets within 10 s"
wait_until 60 "5000 rows processed" processed_at_least $db 5000
echo "killing relay 1 with $(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1') rows processed"
kill -KILL "${pids[0]}"
killed=$(date +%s%N)
[ "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 0')" -gt 0 ] ||
  fail "relay 1 was killed after the table was drained"
took=
while [ "$(since $killed)" -le 10000 ]; do
  a=$(owned 2); b=$(owned 3)
  if [ $((${a:-0} + ${b:-0})) = 64 ]; then took=$(since $killed); break; fi
  sleep 0.05
done
[ -n "$took" ] || fail "the survivors did not take every bucket within 10 s"
echo "takeover: the survivors owned all 64 buckets ${took} ms after the kill (2 and 3: $a + $b)"
for i in 2 3; do
  rc=0; wait "${pids[$((i - 1))]}" || rc=$?
  assert_eq "$rc" 0 "exit status of relay $i"
done
assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1')" 50000 "processed rows"
out=$(streamcheck --stream $stream --subject '>' --check-order agg_seq) || { echo "$out"; fail "stream check"; }
echo "$out"
summary=$(echo "$out" | grep '^messages=')
assert_eq "$(field "$summary" distinct)" 50000 "distinct ids in the stream"
assert_eq "$(field "$summary" messages)" 50000 "messages in the stream"
assert_eq "$(echo "$out" | sed -n 's/.*order_violations=\([0-9]*\).*/\1/p')" 0 "aggregates out of order"
echo "ordered_failover: ok"
