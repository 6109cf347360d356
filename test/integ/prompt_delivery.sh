# SPDX-License-Identifier: Apache-2.0
# Prompt delivery, as behaviour rather than speed:
#   - with a 10 s poll interval, a doorbell (outbox_ring from C) makes an idle
#     relay deliver a new row within 1 s, and a burst of rings is one fetch;
#     so does docs/producing.md's doorbell from bash alone;
#   - a scheduled row (next_attempt_at in the future) is not delivered before
#     its time and is delivered soon after it;
#   - at rest (a quiet minute, default polling: the scout probes about once a
#     second) a plain INSERT, without a ring, is still delivered within about
#     a second (the bound asserted leaves room for a loaded machine); that
#     relay watches a table of its own from the start, so that its quiet
#     minute passes while the other parts run.
. "$(dirname "$0")/../harness/lib.sh"
db=it_prompt stream=IT_PROMPT prefix=itprompt
work=$(mktemp -d); r= rest=; trap 'kill $r $rest 2>/dev/null || true; rm -rf "$work"' EXIT
db_fresh $db
stream_delete $stream
# The relay put at rest by a quiet minute (the last part), on its own table.
"$OUTBOX_TEST_RELAY" schema --table outbox_rest | MDB $db
relay_bg "$work/rest.log" $db $stream $prefix --table outbox_rest --log-level debug
rest=$RELAY_PID
wait_until 30 "the resting relay's first idle poll" log_has "$work/rest.log" ' -> poll-wait$'
rest_t0=$(date +%s)
ring() { "$OUTBOX_TEST_BUILD/test/ring" --nats "$OUTBOX_TEST_NATS_URL" "$@"; }
processed() { sql $db "SELECT COUNT(*) FROM outbox WHERE status = 1"; }
# wait_processed N SECONDS: 0 once N rows are processed, 1 on timeout.
wait_processed() {
  local i
  for i in $(seq 1 $(( $2 * 20 ))); do
    [ "$(processed)" -ge "$1" ] && return 0
    sleep 0.05
  done
  return 1
}

relay_bg "$work/relay.log" $db $stream $prefix --poll-interval 10s --connections 2 \
  --http 127.0.0.1:0 --log-level debug
r=$RELAY_PID
port=$(http_port "$work/relay.log")
for i in $(seq 1 100); do [ "$(http_code $port /readyz)" = 200 ] && break; sleep 0.1; done
assert_eq "$(http_code $port /readyz)" 200 "/readyz once the relay is up (database and NATS ready)"
# both_idle LOG: both workers are idle by the relay's debug log LOG (the
# last change of each: the scout to poll-wait, its next poll 10 s away, the
# other to parked).
both_idle() {
  [ "$(awk '$(NF - 1) == "->" { last[$(NF - 3)] = $NF }
    END { for (w in last) n += last[w] == "poll-wait" || last[w] == "parked"; print n + 0 }' \
    "$1")" -ge 2 ]
}
wait_until 30 "both workers idle" both_idle "$work/relay.log"

seed $db 1 100
sleep 1
assert_eq "$(processed)" 0 "nothing delivered before the doorbell (10 s poll)"
t0=$(date +%s%N)
ring --table outbox
wait_processed 1 1 || { cat "$work/relay.log"; fail "the doorbell did not make the relay fetch within 1 s"; }
echo "ok: delivered $(( ($(date +%s%N) - t0) / 1000000 )) ms after the doorbell"

seed $db 5 100
ring --table outbox --count 50
wait_processed 6 1 || fail "a burst of rings did not deliver within 1 s"
echo "ok: a burst of 50 rings delivered the 5 rows"


kill $r; wait $r || true; r=

# docs/producing.md's shell doorbell (bash alone, no NATS client), as written but
# for the server's port, to a relay as idle as the first.
src=$(cd "$(dirname "$0")/../.." && pwd)
line=$(grep -m1 '^  exec 3<>/dev/tcp/127.0.0.1/4222 ' "$src/docs/producing.md" | sed 's/^  //')
[ -n "$line" ] || fail "docs/producing.md's shell doorbell found"
nport=${OUTBOX_TEST_NATS_URL##*:}
relay_bg "$work/relay1.log" $db $stream $prefix --poll-interval 10s --connections 2 \
  --http 127.0.0.1:0 --log-level debug
r=$RELAY_PID
port=$(http_port "$work/relay1.log")
for i in $(seq 1 100); do [ "$(http_code $port /readyz)" = 200 ] && break; sleep 0.1; done
wait_until 30 "both workers idle" both_idle "$work/relay1.log"
seed $db 1 100
sleep 1
assert_eq "$(processed)" 6 "nothing delivered before the shell doorbell (10 s poll)"
(eval "${line//127.0.0.1\/4222/127.0.0.1\/$nport}") || fail "the shell doorbell: exit status $?"
wait_processed 7 5 || { cat "$work/relay1.log"; fail "the shell doorbell did not make the relay fetch"; }
echo "ok: docs/producing.md's shell doorbell delivered the row"
kill $r; wait $r || true; r=

# Scheduled delivery: next_attempt_at in the future.
relay_bg "$work/relay2.log" $db $stream $prefix
r=$RELAY_PID
sql $db "INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload, next_attempt_at)
  VALUES (outbox_uuid_v7(), 'order', 'later', 'created', '{}', NOW(6) + INTERVAL 2 SECOND)"
sleep 1
assert_eq "$(sql $db "SELECT status FROM outbox WHERE aggregate_id = 'later'")" 0 \
  "a scheduled row is not delivered before its time"
for i in $(seq 1 60); do
  [ "$(sql $db "SELECT status FROM outbox WHERE aggregate_id = 'later'")" = 1 ] && break
  sleep 0.1
done
assert_eq "$(sql $db "SELECT status FROM outbox WHERE aggregate_id = 'later'")" 1 \
  "a scheduled row is delivered soon after its time"
late=$(sql $db "SELECT TIMESTAMPDIFF(MICROSECOND, created_at, processed_at) DIV 1000 - 2000
  FROM outbox WHERE aggregate_id = 'later'")
echo "ok: the scheduled row was delivered ${late:-?} ms after its time"

kill $r; wait $r || true; r=

# At rest: a minute after the last rows (here its start) the scout probes
# once a second. The minute is the relay's own (OB_FLOW_WARM_MS): a duration.
left=$((rest_t0 + 62 - $(date +%s)))
[ "$left" -le 0 ] || sleep "$left"
rest_processed() { sql $db "SELECT COUNT(*) FROM outbox_rest WHERE status = 1"; }
assert_eq "$(rest_processed)" 0 "rows of the resting relay's table before its row"
seed $db 1 100 outbox_rest
t0=$(date +%s%N)
for i in $(seq 1 60); do [ "$(rest_processed)" = 1 ] && break; sleep 0.05; done
assert_eq "$(rest_processed)" 1 "a row inserted at rest delivered within 3 s"
echo "ok: a row inserted after a quiet minute was delivered after $(( ($(date +%s%N) - t0) / 1000000 )) ms"
kill $rest; wait $rest || true; rest=
summary=$(stream_summary $stream)
assert_eq "$(field "$summary" distinct)" 9 "distinct ids in the stream"
