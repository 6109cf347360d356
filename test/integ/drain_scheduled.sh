# SPDX-License-Identifier: Apache-2.0
# Issue 19, point 4: what --drain means for rows scheduled ahead. A drain
# waits for the rows due now or within the longest backoff (the relay's own
# retries always are), and reports, without waiting for them, the rows a
# producer scheduled later: a row with next_attempt_at in 2038 among 200 due
# ones lets --drain exit 0, names the count and the time, and stays pending.
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/private.sh"
db=it_drain_sched stream=IT_DRAIN_SCHED prefix=itdrsched
work=$(mktemp -d); RELAY_PID=
trap 'kill -KILL $RELAY_PID 2>/dev/null || true; rm -rf "$work"' EXIT
db_fresh $db
stream_delete $stream
seed $db 100 256
sql $db "INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload, next_attempt_at)
  VALUES (outbox_uuid_v7(), 'order', 'later', 'created', '{}', '2038-01-01 00:00:00')"
seed $db 100 256
relay_bg "$work/relay.log" $db $stream $prefix --drain --batch 50
wait_exit $RELAY_PID 30
echo "relay --drain: exit $WAIT_RC after $WAITED_MS ms"
[ "$WAIT_RC" = 0 ] || show_log "$work/relay.log" 20
assert_eq "$WAIT_RC" 0 "exit status of --drain with a row scheduled in 2038 (within 30 s)"
assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1')" 200 "due rows processed"
assert_eq "$(sql $db "SELECT status FROM outbox WHERE aggregate_id = 'later'")" 0 "the scheduled row stays pending"
assert_eq "$(sql $db "SELECT attempt_count FROM outbox WHERE aggregate_id = 'later'")" 0 "attempts of the scheduled row"
grep "scheduled later" "$work/relay.log" | sed 's/^/    /'
grep -q "1 row(s) scheduled later, the next at 2038-01-01 00:00:00" "$work/relay.log" ||
  { show_log "$work/relay.log" 10; fail "the drain reports the row scheduled later"; }
summary=$(stream_summary $stream)
assert_eq "$(field "$summary" messages)" 200 "messages in the stream"

# A retry within the backoff is waited for: a row whose subject no stream
# takes, while the stream takes the others' (so the row is at fault, not the
# broker), fails, waits 300 ms, fails again and goes dead (2 attempts)
# before --drain exits; the drain says what it waits for meanwhile.
db_fresh $db
stream_delete $stream # its subjects would overlap the next one's
stream_delete ${stream}_R
streamcheck --stream ${stream}_R --create "$prefix.order.>"
seed $db 20 128
sql $db "INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload)
  VALUES (outbox_uuid_v7(), 'invoice', 'retry', 'created', '{}')"
relay_bg "$work/relay2.log" $db ${stream}_R $prefix --drain --max-attempts 2 \
  --backoff fixed --backoff-base 300ms --backoff-max 300ms --backoff-jitter 0
wait_exit $RELAY_PID 60
assert_eq "$WAIT_RC" 0 "exit status of --drain with retries to wait for"
assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1')" 20 "rows the stream takes"
assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = -1 AND attempt_count = 2')" 1 \
  "rows dead after both attempts before the drain ended"
grep -q "draining: waiting for" "$work/relay2.log" ||
  { show_log "$work/relay2.log" 10; fail "the drain logs what it waits for"; }
