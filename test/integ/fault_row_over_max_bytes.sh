# SPDX-License-Identifier: Apache-2.0
# One row whose payload is larger than the stream's whole max_bytes, and one
# whose headers (not its payload) push its message over it: no emptier stream
# would ever take them, so it is the row's fault, not a full stream. Each goes
# through its attempts (--max-attempts 2) to dead with the reason, while the
# 300 small rows around them are stored and --drain exits 0.
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/private.sh"
db=it_fault_overbytes stream=IT_FAULT_OVERBYTES prefix=itfoverbytes
work=$(mktemp -d); RELAY_PID=
trap 'kill -KILL $RELAY_PID 2>/dev/null || true; rm -rf "$work"' EXIT
db_fresh $db
stream_delete $stream
streamcheck --stream $stream --create "$prefix.>" --max-bytes 200000 --discard-new
seed $db 150 256
sql $db "INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload) VALUES
  (outbox_uuid_v7(), 'invoice', 'huge', 'created', JSON_OBJECT('pad', REPEAT('x', 300000)))"
sql $db "INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload, headers) VALUES
  (outbox_uuid_v7(), 'invoice', 'headers', 'created', JSON_OBJECT('pad', REPEAT('x', 150000)),
   JSON_OBJECT('x-pad', REPEAT('h', 60000)))"
seed $db 150 256

relay_bg "$work/relay.log" $db $stream $prefix --drain --batch 100 --connections 1 --max-attempts 2 \
  --backoff fixed --backoff-base 500ms --backoff-max 500ms --backoff-jitter 0
wait_exit $RELAY_PID 30
echo "relay --drain: exit $WAIT_RC after $WAITED_MS ms"
sql $db "SELECT status, COUNT(*), MAX(attempt_count) FROM outbox GROUP BY status" | sed 's/^/    status count max_attempts: /'
[ "$WAIT_RC" = 0 ] || show_log "$work/relay.log" 20
assert_eq "$WAIT_RC" 0 "exit status of --drain (within 30 s)"
assert_eq "$(sql $db "SELECT COUNT(*) FROM outbox WHERE status = 1 AND aggregate_type = 'order'")" 300 \
  "small rows processed"
for row in huge headers; do
  assert_eq "$(sql $db "SELECT status FROM outbox WHERE aggregate_id = '$row'")" -1 "status of the $row row"
  assert_eq "$(sql $db "SELECT attempt_count FROM outbox WHERE aggregate_id = '$row'")" 2 \
    "attempts of the $row row"
  err=$(sql $db "SELECT last_error FROM outbox WHERE aggregate_id = '$row'")
  echo "$row row's last_error: $err"
  grep -q "max_bytes" <<<"$err" || fail "last_error names the reason: '$err'"
done
summary=$(stream_summary $stream)
echo "$summary"
assert_eq "$(field "$summary" messages)" 300 "messages in the stream"
