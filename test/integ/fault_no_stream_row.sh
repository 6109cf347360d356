# SPDX-License-Identifier: Apache-2.0
# Issue 12, point 7 (first half): a row no stream accepts does not block the
# table. The stream covers only '<prefix>.order.>'; one row of aggregate
# 'invoice' sits among 300 'order' rows. "No responders" for that one subject,
# while the others are acked, is that row's failure, not a broker outage: it
# goes through its attempts (--max-attempts 2) to dead with the reason, the
# 300 flow, and --drain exits 0 within a bound.
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/private.sh"
db=it_fault_nostream stream=IT_FAULT_NOSTREAM prefix=itfnostream
work=$(mktemp -d); RELAY_PID=
trap 'kill -KILL $RELAY_PID 2>/dev/null || true; rm -rf "$work"' EXIT
db_fresh $db
stream_delete $stream
streamcheck --stream $stream --create "$prefix.order.>"
seed $db 150 256
sql $db "INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload)
  VALUES (outbox_uuid_v7(), 'invoice', 'no-stream', 'created', '{\"n\": 1}')"
seed $db 150 256

relay_bg "$work/relay.log" $db $stream $prefix --drain --batch 100 --max-attempts 2 \
  --backoff fixed --backoff-base 500ms --backoff-max 500ms --backoff-jitter 0
wait_exit $RELAY_PID 30
echo "relay --drain: exit $WAIT_RC after $WAITED_MS ms"
sql $db "SELECT status, COUNT(*), MAX(attempt_count) FROM outbox GROUP BY status" | sed 's/^/    status count max_attempts: /'
if [ "$WAIT_RC" != 0 ]; then
  echo "    $(grep -c 'no responders' "$work/relay.log" || true) log lines mention no responders; the first ones:"
  grep -i 'no responders\|stream' "$work/relay.log" | head -5 | sed 's/^/    /' || true
  show_log "$work/relay.log" 10
fi
assert_eq "$WAIT_RC" 0 "exit status of --drain (within 30 s)"
assert_eq "$(sql $db "SELECT COUNT(*) FROM outbox WHERE status = 1 AND aggregate_type = 'order'")" 300 \
  "order rows processed"
assert_eq "$(sql $db "SELECT status FROM outbox WHERE aggregate_type = 'invoice'")" -1 "status of the invoice row"
assert_eq "$(sql $db "SELECT attempt_count FROM outbox WHERE aggregate_type = 'invoice'")" 2 \
  "attempts of the invoice row"
err=$(sql $db "SELECT last_error FROM outbox WHERE aggregate_type = 'invoice'")
echo "invoice row's last_error: $err"
grep -Eiq 'no responders|no stream' <<<"$err" || fail "last_error names the reason: '$err'"
summary=$(stream_summary $stream)
echo "$summary"
assert_eq "$(field "$summary" messages)" 300 "messages in the stream"
assert_eq "$(field "$summary" distinct)" 300 "distinct ids in the stream"
