# SPDX-License-Identifier: Apache-2.0
# Issue 12, point 7 ("the same for a per-message 503"): JetStream refuses one
# message while it takes the others. The stream keeps one message per subject
# and discards new ones per subject; 300 'order' rows each have a subject of
# their own, and two 'invoice' rows share one. The second invoice row is
# refused (503, maximum messages per subject) while everything else is
# stored: that refusal is the row's own failure, not a broker outage. It goes
# through its attempts (--max-attempts 2) to dead with the reason, the other
# rows flow, and --drain exits 0 within a bound.
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/private.sh"
db=it_fault_subjfull stream=IT_FAULT_SUBJFULL prefix=itfsubjfull
work=$(mktemp -d); RELAY_PID=
trap 'kill -KILL $RELAY_PID 2>/dev/null || true; rm -rf "$work"' EXIT
db_fresh $db
stream_delete $stream
streamcheck --stream $stream --create "$prefix.>" --max-msgs-per-subject 1 --discard-new \
  --discard-new-per-subject
sql $db "INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload)
  SELECT outbox_uuid_v7(), 'order', CONCAT('o', seq), CONCAT('e', seq), JSON_OBJECT('n', seq)
  FROM seq_1_to_150"
sql $db "INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload) VALUES
  (outbox_uuid_v7(), 'invoice', 'first', 'created', '{}')"
sql $db "INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload) VALUES
  (outbox_uuid_v7(), 'invoice', 'second', 'created', '{}')"
sql $db "INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload)
  SELECT outbox_uuid_v7(), 'order', CONCAT('p', seq), CONCAT('f', seq), JSON_OBJECT('n', seq)
  FROM seq_1_to_150"

relay_bg "$work/relay.log" $db $stream $prefix --drain --batch 100 --connections 1 --max-attempts 2 \
  --backoff fixed --backoff-base 500ms --backoff-max 500ms --backoff-jitter 0
wait_exit $RELAY_PID 30
echo "relay --drain: exit $WAIT_RC after $WAITED_MS ms"
sql $db "SELECT status, COUNT(*), MAX(attempt_count) FROM outbox GROUP BY status" | sed 's/^/    status count max_attempts: /'
if [ "$WAIT_RC" != 0 ]; then
  echo "    $(grep -c . "$work/relay.log") log lines; the first warnings:"
  grep -E ' warn | error ' "$work/relay.log" | head -5 | sed 's/^/    /' || true
fi
assert_eq "$WAIT_RC" 0 "exit status of --drain (within 30 s)"
assert_eq "$(sql $db "SELECT COUNT(*) FROM outbox WHERE status = 1 AND aggregate_type = 'order'")" 300 \
  "order rows processed"
assert_eq "$(sql $db "SELECT status FROM outbox WHERE aggregate_id = 'first'")" 1 "status of the first invoice row"
assert_eq "$(sql $db "SELECT status FROM outbox WHERE aggregate_id = 'second'")" -1 "status of the refused invoice row"
assert_eq "$(sql $db "SELECT attempt_count FROM outbox WHERE aggregate_id = 'second'")" 2 \
  "attempts of the refused invoice row"
err=$(sql $db "SELECT last_error FROM outbox WHERE aggregate_id = 'second'")
echo "refused row's last_error: $err"
grep -Eiq 'per subject|503' <<<"$err" || fail "last_error names the reason: '$err'"
summary=$(stream_summary $stream)
echo "$summary"
assert_eq "$(field "$summary" messages)" 301 "messages in the stream"
assert_eq "$(field "$summary" distinct)" 301 "distinct ids in the stream"
