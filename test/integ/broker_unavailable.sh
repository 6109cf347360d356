# SPDX-License-Identifier: Apache-2.0
# JetStream stops answering for the relay's subjects (the stream is deleted
# under it): the relay sees no responders, pauses without counting attempts
# (it never makes again a stream it has seen), and finishes once the operator
# has made the stream again. Its counters show the outage; the stream holds
# what was published after it.
. "$(dirname "$0")/../harness/lib.sh"
db=it_unavail stream=IT_UNAVAIL prefix=itunavail
work=$(mktemp -d); r=; trap 'kill $r 2>/dev/null || true; rm -rf "$work"' EXIT
db_fresh $db
stream_delete $stream
seed $db 20000 512
relay_bg "$work/relay.log" $db $stream $prefix --batch 50 --drain --http 127.0.0.1:0
r=$RELAY_PID
port=$(http_port "$work/relay.log")
# Mid-run: once rows flow (1,000 of 20,000 processed), whatever the speed.
wait_until 60 "1000 rows processed" processed_at_least $db 1000
# The relay is frozen while the stream goes, and the stream is made again
# only once the relay says it missing: one made again while nats-server is
# still removing the old one's files can get a stream whose every write
# fails (503/10077, seen here once in a few runs), a broker fault the relay
# rightly waits out for ever.
kill -STOP $r
stream_delete $stream
sleep 1
kill -CONT $r
missing() { [ "$(metric_value "$(metrics $port)" 'outbox_relay_nats_stream_missing{table="outbox"}')" = 1 ]; }
wait_until 30 "the stream missing, on /metrics" missing
streamcheck --stream $stream --create "$prefix.>"
metrics_until_exit $r $port "$work/metrics"
rc=0; wait $r || rc=$?
assert_eq "$rc" 0 "relay exit status"
text=$(cat "$work/metrics")
[ -n "$text" ] || { cat "$work/relay.log"; fail "the relay's /metrics did not answer"; }
outages=$(metric_value "$text" 'outbox_relay_nats_outages_total{table="outbox"}')
echo "nats: ${outages:-no} outage(s) counted"
[ "${outages:-0}" -ge 1 ] || { cat "$work/relay.log"; fail "the outage was not counted (nats_outages_total ${outages:-absent})"; }
assert_eq "$(metric_value "$text" 'outbox_relay_dead_total{table="outbox"}')" 0 "dead_total"
summary=$(stream_summary $stream) || fail "the stream made again is gone"
echo "$summary"
[ "$(field "$summary" messages)" -ge 1 ] || fail "nothing was stored in the re-created stream"
assert_eq "$(field "$summary" duplicates)" 0 "ids stored twice in the re-created stream"
assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1')" 20000 "processed rows"
assert_eq "$(sql $db 'SELECT MAX(attempt_count) FROM outbox')" 0 "largest attempt_count"
