# A node cut off from the primary component under its relay: node 3 is
# isolated (gmcast.isolate) while producers write on nodes 1 and 2, so that
# every statement there fails with 1047 ("WSREP has not yet prepared node
# for application use"), then joins again. That is the database's outage:
# no row is charged an attempt or dead, the relays on nodes 1 and 2 deliver
# meanwhile, and every row ends once in the stream.
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/galera.sh"
db=it_galera_isolate stream=IT_GALERA_ISOLATE prefix=itgi
work=$(mktemp -d)
pids=() ports=()
trap 'for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
  GROOT 3 -e "SET GLOBAL wsrep_provider_options = '"'"'gmcast.isolate=0'"'"'" 2>/dev/null || true
  rm -rf "$work"' EXIT

galera_db_fresh $db
stream_delete $stream

for n in 1 2 3; do
  eval "url=\$OUTBOX_TEST_GALERA_URL$n"
  "$OUTBOX_TEST_RELAY" --db "${url}$db" --nats "$OUTBOX_TEST_NATS_URL" --stream $stream \
    --subject-prefix $prefix --no-progress --http 127.0.0.1:0 2>"$work/relay$n.log" &
  pids+=($!)
  ports+=("$(http_port "$work/relay$n.log")")
done

producers=()
for n in 1 2; do
  for t in $(seq 1 100); do
    echo "INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload)
      SELECT outbox_uuid_v7(), 'order', CONCAT('n$n-$t-', seq), 'created',
             JSON_OBJECT('node', $n, 'trx', $t, 'n', seq) FROM seq_1_to_50;"
    # Slow enough that the producers outlast node 3's isolation.
    echo "DO SLEEP(0.1);"
  done >"$work/produce$n.sql"
  eval "sock=\$OUTBOX_TEST_GALERA_SOCKET$n"
  "$OUTBOX_TEST_MARIADB_CLIENT" --no-defaults -uroot -S "$sock" $db <"$work/produce$n.sql" &
  producers+=($!)
done
for i in $(seq 1 300); do
  grep -q . <(GSQL 1 $db 'SELECT 1 FROM outbox WHERE status = 1 LIMIT 1') && break
  sleep 0.1
done
GROOT 3 -e "SET GLOBAL wsrep_provider_options = 'gmcast.isolate=1'"
# Wait until node 3 answers 1047 (it leaves the primary component once the
# others stop hearing it, after about 5 s), then until its relay has met it.
for i in $(seq 1 300); do
  [ "$(GROOT 3 -e "SHOW STATUS LIKE 'wsrep_cluster_status'" | cut -f2)" = non-Primary ] && break
  sleep 0.1
done
echo "node 3 out of the primary component with $(GSQL 1 $db 'SELECT COUNT(*) FROM outbox WHERE status = 1') rows processed"
for i in $(seq 1 300); do grep -q 'WSREP has not yet prepared node' "$work/relay3.log" && break; sleep 0.1; done
grep -m1 'WSREP has not yet prepared node' "$work/relay3.log" | sed 's/^/    node 3: /'
GROOT 3 -e "SET GLOBAL wsrep_provider_options = 'gmcast.isolate=0'"
for p in "${producers[@]}"; do wait "$p" || fail "a producer failed"; done
for i in $(seq 1 600); do
  [ "$(GROOT 3 -e "SHOW STATUS LIKE 'wsrep_local_state_comment'" | cut -f2)" = Synced ] && break
  sleep 0.1
done

for i in $(seq 1 600); do
  [ "$(GSQL 1 $db 'SELECT COUNT(*) FROM outbox WHERE status = 0')" = 0 ] && break
  sleep 0.1
done
# 1047 is an outage of node 3's database: its relay dropped the sessions
# and connected again with backoff (a ROLLBACK refused with 1047 once made
# it retry at once, for ever).
reconnects=$(metric_sum "$(metrics "${ports[2]}")" outbox_relay_database_reconnects_total)
echo "the relay on node 3 reconnected $reconnects time(s)"
[ "$reconnects" -gt 0 ] || fail "the relay on node 3 did not reconnect after 1047"
for n in 1 2 3; do kill -TERM "${pids[n-1]}"; done
for n in 1 2 3; do
  rc=0
  wait "${pids[n-1]}" || rc=$?
  assert_eq "$rc" 0 "exit status of the relay on node $n"
  grep 'relay stopped' "$work/relay$n.log" | sed "s/^/    node $n: /"
done
pids=()
lines=$(grep -c 'WSREP has not yet prepared node' "$work/relay3.log" || true)
echo "    $lines log lines of the relay on node 3 name the refusal (1047)"
[ "$lines" -lt 1000 ] || fail "the relay on node 3 retried 1047 without backoff"

assert_eq "$(GSQL 1 $db 'SELECT COUNT(*) FROM outbox WHERE status = 1')" 10000 "processed rows"
assert_eq "$(GSQL 1 $db 'SELECT COUNT(*) FROM outbox WHERE status = -1')" 0 "dead rows"
assert_eq "$(GSQL 1 $db 'SELECT COUNT(*) FROM outbox WHERE attempt_count > 0')" 0 \
  "rows charged an attempt"
GSQL 1 $db "SELECT LOWER(CONCAT_WS('-', SUBSTR(HEX(id),1,8), SUBSTR(HEX(id),9,4),
  SUBSTR(HEX(id),13,4), SUBSTR(HEX(id),17,4), SUBSTR(HEX(id),21))) FROM outbox" >"$work/ids"
out=$(streamcheck --stream $stream --subject '>' --expect-ids "$work/ids" || true)
summary=$(echo "$out" | grep '^messages=')
echo "$summary"
assert_eq "$(field "$summary" messages)" 10000 "messages in the stream"
assert_eq "$(field "$summary" distinct)" 10000 "distinct ids in the stream"
assert_eq "$(field "$(echo "$out" | grep '^expected=')" missing)" 0 "ids missing from the stream"
