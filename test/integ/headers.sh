# What a message carries: subject <prefix>.<aggregate_type>.<event_type>,
# Nats-Msg-Id and CloudEvents headers, the row's string headers, and the
# payload bytes unchanged. Rows that try to set a header the relay owns or
# one that steers JetStream, or whose subject would hold a wildcard or
# invalid UTF-8, go dead with the reason and never reach the stream.
. "$(dirname "$0")/../harness/lib.sh"
db=it_headers stream=IT_HEADERS prefix=ithdr
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
db_fresh $db
stream_delete $stream
sql $db "INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload, headers, created_at)
  VALUES (X'019aa5a1b0007123812345678901abcd', 'invoice', 'inv 7', 'line.added',
          '{\"amount\": 12.50, \"note\": \"caf\u00e9\"}',
          '{\"traceparent\": \"00-4bf92f-00f067-01\", \"retries\": 3}',
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
forged "'invoice'" "'a*b'" "NULL"
forged "'invoice'" "'x>'" "NULL"
relay $db $stream $prefix --drain --ce-source /shop/billing 2>/dev/null
assert_eq "$(sql $db "SELECT COUNT(*) FROM outbox WHERE status = -1")" 9 "forged rows dead"
assert_eq "$(sql $db "SELECT COUNT(*) FROM outbox WHERE status = -1 AND attempt_count = 1 AND
  (last_error LIKE '%is refused%' OR last_error LIKE '%wildcards%' OR
   last_error LIKE '%UTF-8%')")" 9 "each dead at once, with the reason"
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
has "header traceparent: 00-4bf92f-00f067-01"
grep -q "^header retries:" "$work/dump" && fail "a non-string member became a header"
payload=$(sql $db "SELECT payload FROM outbox WHERE status = 1")
has "data: $payload"
