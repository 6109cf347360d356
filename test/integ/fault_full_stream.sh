# SPDX-License-Identifier: Apache-2.0
# Issue 12, point 7 (second half): a full stream (max messages, discard new)
# refuses every further message. That is no row's fault: the relay pauses
# without burning attempts, says why in the log a few times at most (not
# several lines a second), and goes on by itself once there is room again (the
# stream purged here, twice).
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/private.sh"
db=it_fault_cap stream=IT_FAULT_CAP prefix=itfcap
work=$(mktemp -d); RELAY_PID=
trap 'kill -KILL $RELAY_PID 2>/dev/null || true; rm -rf "$work"' EXIT
db_fresh $db
stream_delete $stream
streamcheck --stream $stream --create "$prefix.>" --max-msgs 100 --discard-new
seed $db 300 256

relay_bg "$work/relay.log" $db $stream $prefix --batch 50 --max-attempts 3 \
  --backoff fixed --backoff-base 200ms --backoff-max 200ms --backoff-jitter 0 --http 127.0.0.1:0
hport=$(http_port "$work/relay.log")
# The stream is full once 100 rows are processed and the relay counts a NATS
# outage; from that moment the relay is watched for 7 s (the window of the
# log-rate bound below: a pause that grows, not several lines a second).
full_now() {
  kill -0 $RELAY_PID 2>/dev/null || { show_log "$work/relay.log"; fail "the relay exited"; }
  processed_at_least $db 100 && metric_at_least $hport 'outbox_relay_nats_outages_total{table="outbox"}' 1
}
wait_until 60 "100 rows processed and a NATS outage counted" full_now
sleep 7 # the observation window of the log-rate bound, not a moment
kill -0 $RELAY_PID 2>/dev/null || { show_log "$work/relay.log"; fail "the relay exited"; }
sql $db "SELECT status, COUNT(*), MAX(attempt_count) FROM outbox GROUP BY status" | sed 's/^/    status count max_attempts: /'
lines=$(wc -l <"$work/relay.log")
# Lines that say the stream is full: the stream's name, and "full" or the
# server's "maximum messages".
said_full="$stream.*(is full|full stream|maximum messages)|(is full|full stream|maximum messages).*$stream"
full=$(log_count "$work/relay.log" "$said_full")
# Any line that might be about it, for the upper bound: no more than 3.
about=$(grep -Eic 'maximum messages|stream is full|is full|full stream|no room|limit' "$work/relay.log" || true)
echo "7 s after the stream filled: $lines log lines, $full of them saying the stream is full; the first:"
grep -E "$said_full" "$work/relay.log" | head -2 | sed 's/^/    /' || true
assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1')" 100 "rows processed while the stream fills"
assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = -1')" 0 "dead rows while the stream is full"
assert_eq "$(sql $db 'SELECT MAX(attempt_count) FROM outbox')" 0 "largest attempt_count while the stream is full"
# The counters class the full stream as the broker's outage, not as failed
# publishes of rows.
text=$(metrics $hport)
outages=$(metric_value "$text" 'outbox_relay_nats_outages_total{table="outbox"}')
echo "${outages:-no} NATS outage(s) counted"
# One stretch of refusals is one outage, however often the link tries again.
assert_eq "${outages:-none}" 1 "NATS outages counted for one full stream"
assert_eq "$(metric_value "$text" 'outbox_relay_failures_total{table="outbox",reason="stream_error"}')" 0 \
  "failures_total{reason=stream_error} while the stream is full"
assert_eq "$(metric_value "$text" 'outbox_relay_dead_total{table="outbox"}')" 0 "dead_total while the stream is full"
# The log checks are reported at the end, so that the resume is tried as well.
log_fail=
[ "$full" -ge 1 ] || log_fail="the log does not say that stream $stream is full"
[ "$about" -le 3 ] || log_fail="$log_fail${log_fail:+; }the full stream was logged $about times (at most 3)"
[ "$lines" -le 20 ] || log_fail="$log_fail${log_fail:+; }$lines log lines up to 7 s into a full stream (at most 20)"

# Room again (100 messages per purge): the relay goes on by itself.
for want in 200 300; do
  streamcheck --stream $stream --purge
  wait_sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1' $want 30 ||
    { show_log "$work/relay.log" 20; fail "$want rows were not processed within 30 s of a purge"; }
  echo "ok: $want rows processed after a purge"
done
kill -TERM $RELAY_PID
wait_exit $RELAY_PID 15
assert_eq "$WAIT_RC" 0 "relay exit status after SIGTERM"
assert_eq "$(sql $db 'SELECT MAX(attempt_count) FROM outbox')" 0 "largest attempt_count"
summary=$(stream_summary $stream)
echo "$summary"
assert_eq "$(field "$summary" messages)" 100 "messages in the stream after the last purge"
assert_eq "$(field "$summary" distinct)" 100 "distinct ids in the stream after the last purge"
if [ -n "$log_fail" ]; then
  echo "--- the log while the stream was full:"; sed -n '1,12p' "$work/relay.log" | sed 's/^/    /'
  fail "$log_fail"
fi
