# SPDX-License-Identifier: Apache-2.0
# What a message carries: subject <prefix>.<aggregate_type>.<event_type>,
# Nats-Msg-Id and CloudEvents headers (with Content-Type beside
# ce-datacontenttype), the row's headers, and the payload bytes unchanged.
# Rows that try to set a header the relay owns or one that steers JetStream,
# that give a header a value that is not a string, or whose subject would hold
# a wildcard or invalid UTF-8, go dead with the reason and never reach the
# stream. Across those refusals the in-flight gauge stays in its range.
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/private.sh"
db=it_headers stream=IT_HEADERS prefix=ithdr
work=$(mktemp -d); RELAY_PID=
trap 'kill -KILL $RELAY_PID 2>/dev/null || true; rm -rf "$work"' EXIT
db_fresh $db
stream_delete $stream
sql $db "INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload, headers, created_at)
  VALUES (X'019aa5a1b0007123812345678901abcd', 'invoice', 'inv 7', 'line.added',
          '{\"amount\": 12.50, \"note\": \"caf\u00e9\"}',
          '{\"traceparent\": \"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\"}',
          '2026-11-21 19:50:00.123456')"
forged() { # aggregate_type event_type headers
  sql $db "INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload, headers)
    VALUES (outbox_uuid_v7(), $1, 'f', $2, '{}', $3)"
}
forged "'invoice'" "'x'" "'{\"nats-msg-id\": \"019aa5a1-b000-7123-8123-45678901abcd\"}'"
forged "'invoice'" "'x'" "'{\"NATS-MSG-ID\": \"1\"}'"
forged "'invoice'" "'x'" "'{\"Nats-Rollup\": \"all\"}'"
forged "'invoice'" "'x'" "'{\"Nats-Expected-Last-Sequence\": \"9\"}'"
forged "'invoice'" "'x'" "'{\"CE-ID\": \"forged\"}'"
forged "'invoice'" "'x'" "'{\"Ce-Source\": \"forged\"}'"
forged "'invoice'" "'x'" "'{\"Content-Type\": \"application/cloudevents+json\"}'"
forged "'invoice'" "'x'" "'{\"Nats-Msg-Id\": 1}'"
forged "'invoice'" "'x'" "'{\"retries\": 3}'"
forged "'invoice'" "'a*b'" "NULL"
forged "'invoice'" "'x>'" "NULL"
relay $db $stream $prefix --drain --ce-source /shop/billing 2>/dev/null
assert_eq "$(sql $db "SELECT COUNT(*) FROM outbox WHERE status = -1")" 11 "forged rows dead"
assert_eq "$(sql $db "SELECT COUNT(*) FROM outbox WHERE status = -1 AND attempt_count = 1 AND
  (last_error LIKE '%is refused%' OR last_error LIKE '%wildcards%' OR
   last_error LIKE '%UTF-8%')")" 11 "each dead at once, with the reason"
assert_eq "$(sql $db "SELECT COUNT(*) FROM outbox WHERE last_error LIKE '%must be a JSON string%'")" 2 \
  "rows with a header value that is not a string"
sql $db "SELECT last_error FROM outbox WHERE status = -1" | sed 's/^/    /'
streamcheck --stream $stream --subject '>' | grep -q "^messages=1 " || fail "only the good row is in the stream"
streamcheck --stream $stream --subject '>' --dump 1 >"$work/dump"
cat "$work/dump"
has() { grep -qxF -- "$1" "$work/dump" || fail "message lacks: $1"; echo "ok: $1"; }
has "subject: ithdr.invoice.line.added"
has "header Nats-Msg-Id: 019aa5a1-b000-7123-8123-45678901abcd"
has "header ce-id: 019aa5a1-b000-7123-8123-45678901abcd"
has "header ce-specversion: 1.0"
has "header ce-type: line.added"
has "header ce-source: /shop/billing"
has "header ce-subject: inv%207"
has "header ce-time: 2026-11-21T19:50:00.123456Z"
has "header ce-datacontenttype: application/json"
has "header Content-Type: application/json"
has "header traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
payload=$(sql $db "SELECT payload FROM outbox WHERE status = 1")
has "data: $payload"

# Refused before publishing, among good rows: the in-flight gauge never
# leaves its range (at most --max-in-flight, back to 0), across many batches.
db_fresh $db
for i in $(seq 1 20); do
  forged "'invoice'" "'x'" "'{\"Nats-Msg-Id\": 1}'"
  forged "'invoice'" "'a*b'" "NULL"
  seed $db 20 128
done
relay_bg "$work/relay.log" $db $stream $prefix --http 127.0.0.1:0 --batch 16 --max-in-flight 8
hport=$(http_port "$work/relay.log")
peak=0
for i in $(seq 1 150); do
  m=$(curl -s -m 5 "http://127.0.0.1:$hport/metrics" || true)
  v=$(metric_sum "$m" outbox_relay_in_flight_messages)
  [ "$v" -gt "$peak" ] && peak=$v
  [ "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 0')" = 0 ] && break
  sleep 0.1
done
m=$(curl -s -m 5 "http://127.0.0.1:$hport/metrics")
kill -TERM $RELAY_PID; wait_exit $RELAY_PID 15
assert_eq "$WAIT_RC" 0 "relay exit status after SIGTERM"
echo "in flight: peak $peak, at the end $(metric_sum "$m" outbox_relay_in_flight_messages)"
assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1')" 400 "good rows processed"
assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = -1')" 40 "refused rows dead"
[ "$peak" -le 8 ] || fail "the in-flight gauge read $peak (at most --max-in-flight 8)"
assert_eq "$(metric_sum "$m" outbox_relay_in_flight_messages)" 0 "in-flight gauge once every row is done"
