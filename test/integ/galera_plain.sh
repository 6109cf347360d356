# The plain mode on a three-node Galera cluster: one relay on each node and
# a producer on each node committing 5,000 rows (100 transactions of 50).
# Two nodes' claims of one row meet at COMMIT, where certification makes
# the loser's fail with 1213: its batch, already published, goes back
# untouched and is published again, and the stream drops the copy by its
# Nats-Msg-Id. So every row ends processed and once in the stream, none
# dead, none charged an attempt. The duplicates the stream dropped are
# counted from the relays' metrics and printed (the README quotes them).
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/galera.sh"
db=it_galera_plain stream=IT_GALERA_PLAIN prefix=itgp
work=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT

galera_db_fresh $db
stream_delete $stream

ports=()
for n in 1 2 3; do
  eval "url=\$OUTBOX_TEST_GALERA_URL$n"
  "$OUTBOX_TEST_RELAY" --db "${url}$db" --nats "$OUTBOX_TEST_NATS_URL" --stream $stream \
    --subject-prefix $prefix --no-progress --http 127.0.0.1:0 2>"$work/relay$n.log" &
  pids+=($!)
  ports+=("$(http_port "$work/relay$n.log")")
done

# The producers, one per node, at once.
producers=()
for n in 1 2 3; do
  for t in $(seq 1 100); do
    echo "INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload)
      SELECT outbox_uuid_v7(), 'order', CONCAT('n$n-$t-', seq), 'created',
             JSON_OBJECT('node', $n, 'trx', $t, 'n', seq) FROM seq_1_to_50;"
  done >"$work/produce$n.sql"
  eval "sock=\$OUTBOX_TEST_GALERA_SOCKET$n"
  "$OUTBOX_TEST_MARIADB_CLIENT" --no-defaults -uroot -S "$sock" $db <"$work/produce$n.sql" &
  producers+=($!)
done
for p in "${producers[@]}"; do wait "$p" || fail "a producer failed"; done
echo "produced $(GSQL 1 $db 'SELECT COUNT(*) FROM outbox') rows"

for i in $(seq 1 600); do
  [ "$(GSQL 1 $db 'SELECT COUNT(*) FROM outbox WHERE status = 0')" = 0 ] && break
  sleep 0.1
done

dups=0
for n in 1 2 3; do
  text=$(metrics "${ports[n-1]}")
  d=$(echo "$text" | awk '/^outbox_relay_published_total\{/ && /result="duplicate"/ { s += $NF } END { printf "%d\n", s }')
  dups=$((dups + d))
done
for n in 1 2 3; do kill -TERM "${pids[n-1]}"; done
for n in 1 2 3; do
  rc=0
  wait "${pids[n-1]}" || rc=$?
  assert_eq "$rc" 0 "exit status of the relay on node $n"
  grep 'relay stopped' "$work/relay$n.log" | sed "s/^/    node $n: /"
done
pids=()
conflicts=$(cat "$work"/relay*.log | grep -c 'transaction conflict while' || true)

assert_eq "$(GSQL 1 $db 'SELECT COUNT(*) FROM outbox WHERE status = 1')" 15000 "processed rows"
assert_eq "$(GSQL 1 $db 'SELECT COUNT(*) FROM outbox WHERE status = -1')" 0 "dead rows"
assert_eq "$(GSQL 1 $db 'SELECT COUNT(*) FROM outbox WHERE attempt_count > 0')" 0 \
  "rows charged an attempt"
ids_file="$work/ids"
GSQL 1 $db "SELECT LOWER(CONCAT_WS('-', SUBSTR(HEX(id),1,8), SUBSTR(HEX(id),9,4),
  SUBSTR(HEX(id),13,4), SUBSTR(HEX(id),17,4), SUBSTR(HEX(id),21))) FROM outbox" >"$ids_file"
out=$(streamcheck --stream $stream --subject '>' --expect-ids "$ids_file" || true)
summary=$(echo "$out" | grep '^messages=')
echo "$summary"
assert_eq "$(field "$summary" messages)" 15000 "messages in the stream"
assert_eq "$(field "$summary" distinct)" 15000 "distinct ids in the stream"
assert_eq "$(field "$(echo "$out" | grep '^expected=')" missing)" 0 "ids missing from the stream"
echo "galera plain: 15000 rows from 3 nodes by 3 relays: $conflicts certification conflicts" \
  "retried, $dups duplicate publishes dropped by the stream"
