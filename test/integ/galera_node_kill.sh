# The plain mode loses nothing when a node dies under its relay: three
# relays, one per node, producers on nodes 1 and 2, and node 3 killed with
# SIGKILL while they run. Its relay's open transactions die with the node
# (their rows were never marked on the others) and the relays on nodes 1 and
# 2 deliver them; its relay waits for its database as for any outage, and
# stops cleanly. Every row ends processed and once in the stream, none dead,
# none charged an attempt. The node stays down: this test runs last on the
# fixture (DEPENDS in tests.cmake).
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/galera.sh"
db=it_galera_kill stream=IT_GALERA_KILL prefix=itgk
work=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT

galera_db_fresh $db
stream_delete $stream

for n in 1 2 3; do
  eval "url=\$OUTBOX_TEST_GALERA_URL$n"
  "$OUTBOX_TEST_RELAY" --db "${url}$db" --nats "$OUTBOX_TEST_NATS_URL" --stream $stream \
    --subject-prefix $prefix --no-progress --http 127.0.0.1:0 2>"$work/relay$n.log" &
  pids+=($!)
  http_port "$work/relay$n.log" >/dev/null
done

producers=()
for n in 1 2; do
  for t in $(seq 1 100); do
    echo "INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload)
      SELECT outbox_uuid_v7(), 'order', CONCAT('n$n-$t-', seq), 'created',
             JSON_OBJECT('node', $n, 'trx', $t, 'n', seq) FROM seq_1_to_50;"
  done >"$work/produce$n.sql"
  eval "sock=\$OUTBOX_TEST_GALERA_SOCKET$n"
  "$OUTBOX_TEST_MARIADB_CLIENT" --no-defaults -uroot -S "$sock" $db <"$work/produce$n.sql" &
  producers+=($!)
done
# Once the relay on node 3 has delivered some rows, its node dies.
for i in $(seq 1 300); do
  grep -q . <(GSQL 1 $db 'SELECT 1 FROM outbox WHERE status = 1 LIMIT 1') && break
  sleep 0.1
done
"$OUTBOX_TEST_SERVERS" kill-gnode "$OUTBOX_TEST_GALERA_DIR" 3
echo "node 3 killed with $(GSQL 1 $db 'SELECT COUNT(*) FROM outbox WHERE status = 1') rows processed"
for p in "${producers[@]}"; do wait "$p" || fail "a producer failed"; done

for i in $(seq 1 600); do
  [ "$(GSQL 1 $db 'SELECT COUNT(*) FROM outbox WHERE status = 0')" = 0 ] && break
  sleep 0.1
done
for n in 1 2 3; do kill -TERM "${pids[n-1]}"; done
for n in 1 2 3; do
  rc=0
  wait "${pids[n-1]}" || rc=$?
  assert_eq "$rc" 0 "exit status of the relay on node $n"
  grep 'relay stopped' "$work/relay$n.log" | sed "s/^/    node $n: /"
done
pids=()
grep -Eq 'database connection lost|cannot connect to the database' "$work/relay3.log" ||
  fail "the relay on node 3 did not report its database lost"

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
