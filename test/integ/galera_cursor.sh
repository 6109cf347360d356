# SPDX-License-Identifier: Apache-2.0
# --cursor on a three-node Galera cluster (README "On a Galera cluster"):
# a cursor relay on node 1, while on node 2 a transaction holds a seq for
# 10 s and nodes 2 and 3 commit 20,000 rows (100 transactions of 100 rows
# each). Every committed row, the held one included (it commits at the
# end), ends processed and once in the stream, no aggregate out of order,
# and the cursors end at the last row. Then a held transaction rolled back:
# its gap closes (the relay drains) and nothing is lost. Then a Galera
# Arbitrator (garbd) joins: its entry in wsrep_incoming_addresses is empty,
# and it is no data member; the running relay goes on (it used to exit 1),
# a second one starts on node 2, and a row committed then is delivered.
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/galera.sh"
db=it_galera_cursor stream=IT_GALERA_CURSOR prefix=itgc
work=$(mktemp -d)
pids=() holder= GARBD_PID=
cleanup() {
  [ -z "$GARBD_PID" ] || galera_garbd_stop || true
  [ -z "${show:-}" ] || tail -40 "$work/relay.log" | sed 's/^/    relay: /'
  [ -z "$holder" ] || kill -KILL "$holder" 2>/dev/null || true
  for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
show=1

galera_db_fresh $db --cursor
stream_delete $stream
galera_relay 1 "$work/relay.log" $db $stream $prefix --cursor --http 127.0.0.1:0
pids+=($RELAY_PID)
port=$(http_port "$work/relay.log")
wait_until 30 "the cursor relay owns the buckets" grep -q 'lease: 64 of 64 buckets owned' \
  "$work/relay.log"

published() { # N: the relay has at least N rows acked by JetStream
  [ "$(metric_sum "$(metrics $port)" outbox_relay_published_total)" -ge "$1" ]
}
cursors_at_end() {
  [ "$(GSQL 1 $db 'SELECT (SELECT MIN(seq) FROM outbox_cursor) >= (SELECT MAX(seq) FROM outbox)')" = 1 ]
}
# (a holder that ended before its transaction was seen says why: issue 37
# saw "not within 10 s: the held transaction is open" and nothing more)
trx_open() {
  grep -q . <(GROOT 2 -e "SELECT 1 FROM information_schema.INNODB_TRX LIMIT 1" 2>>"$work/trx.err") &&
    return 0
  kill -0 "$holder" 2>/dev/null && return 1
  sed 's/^/    holder: /' "$work/hold.err" "$work/trx.err" >&2
  fail "the held transaction ended before it was seen open"
}

# hold END: on node 2 a transaction takes a seq, waits 10 s, then ENDs.
hold() {
  : >"$work/trx.err"
  GROOT 2 $db -e "START TRANSACTION;
    INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload, headers)
    VALUES (outbox_uuid_v7(), 'order', 'held-$1', 'changed', '{}', JSON_OBJECT('agg_seq', '1'));
    DO SLEEP(10); $1" >"$work/hold.err" 2>&1 &
  holder=$!
  wait_until 10 "the held transaction is open" trx_open
}

hold COMMIT
held=$(GROOT 2 -e "SELECT trx_id FROM information_schema.INNODB_TRX LIMIT 1")
galera_agg_producers $db "$work" 100 100 2 3
for p in "${producers[@]}"; do wait "$p" || fail "a producer failed"; done
wait "$holder" || fail "the held transaction failed"
holder=
wait_until 60 "every row published" published 20001
m=$(metrics $port)
assert_eq "$(metric_value "$m" 'outbox_relay_cursor_members_down{table="outbox"}')" 0 \
  "members down or missing"
wait_until 30 "the cursors at the last row" cursors_at_end

hold ROLLBACK
wait "$holder" || fail "the rolled back transaction failed"
holder=
GSQL 3 $db "INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload)
  VALUES (outbox_uuid_v7(), 'order', 'after', 'created', '{}')"
wait_until 30 "the row after the rolled back one published" published 20002
wait_until 30 "the cursors past the rolled back seq" cursors_at_end
m=$(metrics $port)
assert_eq "$(metric_value "$m" 'outbox_relay_cursor_gap_age_seconds{table="outbox"}')" 0 \
  "age of the oldest open gap at the end"

galera_garbd "$work/garbd.log"
echo "    wsrep_incoming_addresses with the arbitrator: '$(GROOT 1 -e "SHOW STATUS LIKE 'wsrep_incoming_addresses'" | cut -f2)'"
wait_until 30 "the relay saw the arbitrator join" grep -q 'Galera cluster of 4 nodes' "$work/relay.log"
grep -m1 'Galera cluster of 4 nodes' "$work/relay.log" | sed 's/^/    /'
galera_relay 2 "$work/relay2.log" $db $stream $prefix --cursor --http 127.0.0.1:0
pids+=($RELAY_PID)
port2=$(http_port "$work/relay2.log")
wait_until 30 "the second cursor relay owns buckets" \
  metric_at_least $port2 'outbox_relay_buckets_owned{table="outbox"}' 1
kill -0 "${pids[0]}" || fail "the first cursor relay exited while the arbitrator is in the cluster"
GSQL 3 $db "INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload)
  SELECT outbox_uuid_v7(), 'order', CONCAT('garbd-', seq), 'created', '{}' FROM seq_1_to_64"
both_published() { # N: the two relays have acked N rows or more
  [ $(($(metric_sum "$(metrics $port)" outbox_relay_published_total) +
    $(metric_sum "$(metrics $port2)" outbox_relay_published_total))) -ge "$1" ]
}
wait_until 30 "the rows committed with the arbitrator in the cluster published" both_published 20066
for p in "${pids[@]}"; do
  kill -TERM "$p"
  rc=0
  wait "$p" || rc=$?
  assert_eq "$rc" 0 "exit status of a cursor relay"
done
pids=()
galera_garbd_stop
show=
galera_stream_once $db $stream 20066 "$work"
out=$(streamcheck --stream $stream --subject '>' --check-order agg_seq) ||
  { echo "$out"; fail "an aggregate out of order"; }
echo "$out" | grep order_violations
