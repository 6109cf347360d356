# SPDX-License-Identifier: Apache-2.0
# Issue 37, point 3: the stream is deleted under a running relay. The
# operator's stream takes only '<prefix>.order.>' and has a limit of its own;
# the relay, which has seen it, must never make it again with its own
# defaults ('<prefix>.>', no limits) nor publish into a stream of other
# subjects. With 100 rows committed after the deletion: /readyz answers 503
# naming the deletion, outbox_relay_nats_stream_missing reads 1 and the loss
# is counted, the log says it once (error) while the relay keeps asking, no
# row is charged or dead, and no stream exists. Made again with other
# subjects, the stream is refused the same way (/readyz names its subjects,
# the rows stay pending). Once the operator gives it back its subjects, the
# relay resumes by itself, and the rebuild of docs/operations.md sends the
# rows delivered before: each of the 120 rows once in the new stream, whose
# settings are still the operator's. Deleted and made again between two
# publishes, the stream's sequence going back tells the loss. Deleted while
# another stream (another name) takes its subjects, the acks name that
# stream: no row counts delivered into a stream nobody reads; the relay
# pauses as for the deletion (/readyz names both streams, said once) and the
# rows stay pending, not dead although --max-attempts is 1, until the stream
# is back. "No responders" at a row's last attempt costs it nothing either.
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/private.sh"
db=it_fault_deleted stream=IT_FAULT_DELETED prefix=itfdel other=IT_FAULT_DELETED_OTHER
work=$(mktemp -d); RELAY_PID=
trap 'rc=$?; [ $rc = 0 ] || show_log "$work/relay.log"; kill -KILL $RELAY_PID 2>/dev/null || true
  stream_delete $stream >/dev/null 2>&1 || true; stream_delete $other >/dev/null 2>&1 || true
  rm -rf "$work"' EXIT
db_fresh $db
stream_delete $stream
stream_delete $other
streamcheck --stream $stream --create "$prefix.order.>" --max-msgs 100000 --replicas 1
rows() { # FROM TO
  sql $db "INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload)
    SELECT outbox_uuid_v7(), 'order', CONCAT('a', seq % 10), 'created', JSON_OBJECT('n', seq)
    FROM seq_$1_to_$2"
}
# The relay's debug lines show each time it asks about the stream.
relay_bg "$work/relay.log" $db $stream $prefix --batch 50 --max-attempts 1 --backoff fixed \
  --backoff-base 200ms --backoff-max 200ms --backoff-jitter 0 --http 127.0.0.1:0 --log-level debug
port=$(http_port "$work/relay.log")
rows 0 19
wait_sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1' 20 30 || fail "the first 20 rows not delivered"
assert_eq "$(http_code $port /readyz)" 200 "/readyz while the stream is there"

stream_delete $stream
rows 20 119
echo "stream deleted; 100 rows committed"
readyz_says() { curl -s -m 5 "http://127.0.0.1:$port/readyz" | grep -q "$1"; }
wait_until 30 "/readyz naming the deletion" readyz_says "stream $stream was deleted while the relay ran"
assert_eq "$(http_code $port /readyz)" 503 "/readyz while the stream is missing"
echo "readyz: $(curl -s -m 5 "http://127.0.0.1:$port/readyz")"
# The relay asks again while the stream stays missing.
asks() { grep -c 'nats: stream-wait -> stream$' "$work/relay.log" || true; }
asked=$(asks)
asked_again() { [ "$(asks)" -gt "$asked" ]; }
wait_until 30 "another stream request" asked_again
m=$(metrics $port)
assert_eq "$(metric_value "$m" 'outbox_relay_nats_stream_missing{table="outbox"}')" 1 "stream_missing"
assert_eq "$(metric_value "$m" 'outbox_relay_nats_stream_losses_total{table="outbox"}')" 1 "stream losses"
assert_eq "$(metric_value "$m" 'outbox_relay_up{table="outbox",dependency="nats"}')" 0 "outbox_relay_up for nats"
assert_eq "$(grep -c 'was deleted while the relay ran' "$work/relay.log")" 1 "log lines naming the deletion"
grep 'was deleted while the relay ran' "$work/relay.log" | grep -q "subjects $prefix.order.>, 1 replica(s)" ||
  fail "the log line says what the stream was"
# rows: "dead, largest attempt_count, pending".
rows_now() { sql $db "SELECT CONCAT_WS(', ', SUM(status = -1), MAX(attempt_count), SUM(status = 0)) FROM outbox"; }
assert_eq "$(rows_now)" "0, 0, 100" "dead rows, largest attempt_count, rows pending while missing"
if streamcheck --stream $stream --info-only >/dev/null 2>&1; then fail "a stream $stream exists"; fi
echo "ok: no stream was made"

# Made again with subjects of another kind: refused the same way.
streamcheck --stream $stream --create "${prefix}x.>" --max-msgs 100000 --replicas 1
wait_until 30 "/readyz naming the subjects" readyz_says "stream $stream lists no subject the relay publishes to"
m=$(metrics $port)
assert_eq "$(metric_value "$m" 'outbox_relay_nats_stream_missing{table="outbox"}')" 0 "stream_missing once it exists"
assert_eq "$(metric_value "$m" 'outbox_relay_up{table="outbox",dependency="nats"}')" 0 "outbox_relay_up for nats, other subjects"
assert_eq "$(rows_now)" "0, 0, 100" "dead rows, largest attempt_count, rows pending, other subjects"

# The operator gives it back its own subjects: every row arrives once.
streamcheck --stream $stream --set-subjects "$prefix.order.>"
wait_sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1' 120 30 ||
  fail "not every row delivered within 30 s of the stream's return"
assert_eq "$(http_code $port /readyz)" 200 "/readyz once the stream is back"
grep -q "stream $stream exists again" "$work/relay.log" || fail "the return is logged"
# The rebuild of docs/operations.md ("The stream was deleted"), as written:
# the 20 rows delivered before the deletion reach the new stream, and the
# 100 after it are published again as duplicates it drops.
rebuild=$(awk '/^### / { s = ($0 == "### The stream was deleted") }
  c && /^```$/ { exit } c { print } s && /^```sql$/ { c = 1 }' "$(dirname "$0")/../../docs/operations.md")
echo "rebuild: $rebuild"
[ -n "$rebuild" ] || fail "no sql block in docs/operations.md, The stream was deleted"
sql $db "$rebuild"
wait_sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1' 120 30 || fail "the rebuild not delivered"
stream_has_ids $db $stream 120 "$work/ids"

# Deleted and made again between two publishes (nothing pending): the first
# publish after it finds a stream, whose sequence went back. Said, counted.
stream_delete $stream
streamcheck --stream $stream --create "$prefix.order.>" --max-msgs 100000 --replicas 1
rows 120 129
wait_sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1' 130 30 || fail "the rows after the re-make"
remade() { [ "$(metric_value "$(metrics $port)" 'outbox_relay_nats_stream_losses_total{table="outbox"}')" = 2 ]; }
wait_until 10 "the second loss counted" remade
assert_eq "$(grep -c "stream $stream went back from sequence 120 to 1 while the relay ran" \
  "$work/relay.log")" 1 "log lines naming the re-made stream"

# Deleted, and another stream takes its subjects before the next publish.
stream_delete $stream
streamcheck --stream $other --create "$prefix.order.>" --max-msgs 100000 --replicas 1
rows 130 139
elsewhere="stream $other, not the relay's stream $stream,"
wait_until 30 "/readyz naming the other stream" readyz_says "$elsewhere"
assert_eq "$(http_code $port /readyz)" 503 "/readyz while another stream takes the subjects"
m=$(metrics $port)
assert_eq "$(metric_value "$m" 'outbox_relay_nats_stream_missing{table="outbox"}')" 1 "stream_missing, another stream"
assert_eq "$(rows_now)" "0, 0, 10" "dead rows, largest attempt_count, rows pending, another stream"
assert_eq "$(grep -c "$elsewhere" "$work/relay.log")" 1 "log lines naming the other stream"
stream_delete $other
streamcheck --stream $stream --create "$prefix.order.>" --max-msgs 100000 --replicas 1
wait_sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1' 140 30 || fail "the rows once the stream is back"
assert_eq "$(http_code $port /readyz)" 200 "/readyz once the stream is back again"
kill -TERM $RELAY_PID
wait_exit $RELAY_PID 15
assert_eq "$WAIT_RC" 0 "relay exit status after SIGTERM"
assert_eq "$(rows_now)" "0, 0, 0" "dead rows, largest attempt_count, rows pending at the end"
assert_eq "$(grep -c 'created stream' "$work/relay.log")" 0 "streams the relay created"
ids $db "JSON_VALUE(payload, '$.n') >= 130" >"$work/ids"
stream_holds_ids $stream 10 "$work/ids"
info=$(streamcheck --stream $stream --info-only)
echo "$info"
echo "$info" | grep -q "replicas=1 " || fail "the stream's replicas changed: $info"
echo "$info" | grep -q "subjects=$prefix.order.>" || fail "the stream's subjects changed: $info"
echo "fault_stream_deleted: ok"
