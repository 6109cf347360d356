# SPDX-License-Identifier: Apache-2.0
# A node cut off from the primary component under its relay: node 3 is
# isolated (gmcast.isolate) while producers write on nodes 1 and 2, so that
# every statement there fails with 1047 ("WSREP has not yet prepared node
# for application use"), then joins again. That is the database's outage:
# no row is charged an attempt or dead, the relays on nodes 1 and 2 deliver
# meanwhile, and every row ends once in the stream. A fourth relay, given
# nodes 3, 1 and 2, leaves node 3 for node 1 when node 3 refuses it. An
# --ordered relay of another table, whose only node is node 3, can deliver
# nothing meanwhile: its /readyz answers 503 naming the node, and
# outbox_relay_database_node_unready reads 1, until node 3 is back.
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/galera.sh"
db=it_galera_isolate stream=IT_GALERA_ISOLATE prefix=itgi
work=$(mktemp -d)
pids=() ports=()
multi= ordered=
trap 'for p in "${pids[@]}" $multi $ordered; do kill -KILL "$p" 2>/dev/null || true; done
  GROOT 3 -e "SET GLOBAL wsrep_provider_options = '"'"'gmcast.isolate=0'"'"'" 2>/dev/null || true
  rm -rf "$work"' EXIT

galera_db_fresh $db
stream_delete $stream
"$OUTBOX_TEST_RELAY" schema --ordered --no-function --table ordered | GROOT 1 $db

# The --ordered relay of table `ordered` on node 3 alone.
galera_relay 3 "$work/ordered.log" $db $stream $prefix --ordered --table ordered \
  --http 127.0.0.1:0
ordered=$RELAY_PID
oport=$(http_port "$work/ordered.log")
unready='outbox_relay_database_node_unready{table="ordered"}'
readyz_is() { [ "$(http_code $oport /readyz)" = "$1" ]; }
wait_until 30 "the --ordered relay on node 3 owns 64 buckets" \
  metric_at_least $oport 'outbox_relay_buckets_owned{table="ordered"}' 64
assert_eq "$(http_code $oport /readyz)" 200 "/readyz of the --ordered relay before the isolation"
assert_eq "$(metric_value "$(metrics $oport)" "$unready")" 0 "$unready before the isolation"

galera_relays $db $stream $prefix "$work"
# A fourth relay is given nodes 3, 1 and 2: it moves to node 1 when node 3
# refuses it, once per connection.
"$OUTBOX_TEST_RELAY" --db "$(galera_url $db 3 1 2)" --nats "$OUTBOX_TEST_NATS_URL" \
  --stream $stream --subject-prefix $prefix --no-progress 2>"$work/relay-multi.log" &
multi=$!

# Slow enough that the producers outlast node 3's isolation.
GALERA_PACE="DO SLEEP(0.1)" galera_producers $db "$work" 1 2
galera_first_delivery $db
GROOT 3 -e "SET GLOBAL wsrep_provider_options = 'gmcast.isolate=1'"
# Wait until node 3 answers 1047 (it leaves the primary component once the
# others stop hearing it, after about 5 s), then until its relay has met it.
for i in $(seq 1 300); do
  [ "$(GROOT 3 -e "SHOW STATUS LIKE 'wsrep_cluster_status'" | cut -f2)" = non-Primary ] && break
  sleep 0.1
done
t0=$(date +%s.%N)
echo "node 3 out of the primary component with $(GSQL 1 $db 'SELECT COUNT(*) FROM outbox WHERE status = 1') rows processed"
for i in $(seq 1 300); do grep -q 'WSREP has not yet prepared node' "$work/relay3.log" && break; sleep 0.1; done
grep -m1 'WSREP has not yet prepared node' "$work/relay3.log" | sed 's/^/    node 3: /'
# The --ordered relay says it cannot deliver (its cluster watch probes
# every 10 s).
wait_until 20 "/readyz 503 from the --ordered relay whose node is non-Primary" readyz_is 503
awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "    --ordered relay on node 3: /readyz 503 %.1f s after node 3 read non-Primary: ", b - a }'
curl -s -m 5 "http://127.0.0.1:$oport/readyz"
assert_eq "$(metric_value "$(metrics $oport)" "$unready")" 1 "$unready while node 3 is non-Primary"
GROOT 3 -e "SET GLOBAL wsrep_provider_options = 'gmcast.isolate=0'"
for p in "${producers[@]}"; do wait "$p" || fail "a producer failed"; done
for i in $(seq 1 600); do
  [ "$(GROOT 3 -e "SHOW STATUS LIKE 'wsrep_local_state_comment'" | cut -f2)" = Synced ] && break
  sleep 0.1
done

galera_drained $db
wait_until 30 "/readyz 200 from the --ordered relay once node 3 is back" readyz_is 200
assert_eq "$(metric_value "$(metrics $oport)" "$unready")" 0 "$unready once node 3 is back"
kill -TERM $ordered
rc=0
wait $ordered || rc=$?
ordered=
assert_eq "$rc" 0 "exit status of the --ordered relay"
# 1047 is an outage of node 3's database: its relay dropped the sessions
# and connected again with backoff (a ROLLBACK refused with 1047 once made
# it retry at once, for ever).
reconnects=$(metric_sum "$(metrics "${ports[2]}")" outbox_relay_database_reconnects_total)
echo "the relay on node 3 reconnected $reconnects time(s)"
[ "$reconnects" -gt 0 ] || fail "the relay on node 3 did not reconnect after 1047"
galera_stop "$work"
lines=$(grep -c 'WSREP has not yet prepared node' "$work/relay3.log" || true)
echo "    $lines log lines of the relay on node 3 name the refusal (1047)"
[ "$lines" -lt 1000 ] || fail "the relay on node 3 retried 1047 without backoff"

# The relay given three nodes left node 3 for node 1 on 1047 (or on the
# watch finding node 3 not ready), each connection logging it once.
kill -TERM "$multi"
rc=0
wait "$multi" || rc=$?
assert_eq "$rc" 0 "exit status of the relay given three nodes"
grep -Eq 'on database node 2 of 3 \(127.0.0.1:[0-9]+\); node 1 of 3 \(127.0.0.1:[0-9]+\) given up: (WSREP has not yet prepared node|the node is not ready)' \
  "$work/relay-multi.log" || { cat "$work/relay-multi.log" >&2; fail "the relay given three nodes did not move off node 3"; }
galera_moves "$work/relay-multi.log"

galera_end $db $stream 10000 "$work"
