# SPDX-License-Identifier: Apache-2.0
# Issue 12, point 6: a row the finishing UPDATE cannot write does not block its
# batch. One row with an invalid JSON payload, inserted with the CHECK off
# (check_constraint_checks=0), sits among 500 good rows in one batch; MariaDB
# checks CHECK (json_valid(payload)) again on every UPDATE of that row (error
# 4025). With --drain the relay must exit 0 within a bound, every other row
# processed, the bad row dead (status -1) with the database's reason (the
# constraint) in last_error, and each id at most once in the stream (the bad
# row's message may be stored once).
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/private.sh"
db=it_fault_unwritable stream=IT_FAULT_UNWRITABLE prefix=itfunwr
work=$(mktemp -d); RELAY_PID=
trap 'kill -KILL $RELAY_PID 2>/dev/null || true; rm -rf "$work"' EXIT
db_fresh $db
stream_delete $stream
seed $db 250 256
sql $db "SET SESSION check_constraint_checks = 0;
  INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload)
  VALUES (outbox_uuid_v7(), 'order', 'unwritable', 'created', '{\"broken\": ')"
seed $db 250 256
# The row is as described: MariaDB refuses any UPDATE of it.
rc=0; sql $db "UPDATE outbox SET attempt_count = attempt_count + 1 WHERE aggregate_id = 'unwritable'" \
  2>"$work/check.err" || rc=$?
[ "$rc" != 0 ] && grep -q 4025 "$work/check.err" || fail "the bad row cannot be updated (4025): $(cat "$work/check.err")"
echo "ok: an UPDATE of the bad row fails: $(cat "$work/check.err")"

relay_bg "$work/relay.log" $db $stream $prefix --drain --batch 500 --max-attempts 3 \
  --backoff fixed --backoff-base 200ms --backoff-jitter 0
wait_exit $RELAY_PID 45
echo "relay --drain: exit $WAIT_RC after $WAITED_MS ms"
sql $db "SELECT status, COUNT(*), MAX(attempt_count) FROM outbox GROUP BY status" | sed 's/^/    status count max_attempts: /'
if [ "$WAIT_RC" != 0 ]; then
  echo "    $(grep -c 'database error' "$work/relay.log" || true) database errors logged; the first ones:"
  grep 'database error\|rolled\|conflict' "$work/relay.log" | head -3 | sed 's/^/    /' || true
  show_log "$work/relay.log" 15
fi
assert_eq "$WAIT_RC" 0 "exit status of --drain (within 45 s)"
assert_eq "$(sql $db "SELECT COUNT(*) FROM outbox WHERE status = 1 AND aggregate_id <> 'unwritable'")" 500 \
  "good rows processed"
assert_eq "$(sql $db "SELECT status FROM outbox WHERE aggregate_id = 'unwritable'")" -1 "status of the bad row"
err=$(sql $db "SELECT last_error FROM outbox WHERE aggregate_id = 'unwritable'")
echo "bad row's last_error: $err"
grep -Eiq 'constraint|4025|json' <<<"$err" || fail "last_error names the check constraint: '$err'"
summary=$(stream_summary $stream)
echo "$summary"
assert_eq "$(field "$summary" duplicates)" 0 "ids stored more than once"
n=$(field "$summary" distinct)
[ "$n" = 500 ] || [ "$n" = 501 ] || fail "distinct ids in the stream: expected 500 or 501, got $n"
echo "ok: distinct ids in the stream = $n"
