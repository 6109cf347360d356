# SPDX-License-Identifier: Apache-2.0
# Issue 29, point 4: the stream's subjects are changed under a running
# --ordered relay (to '<prefix>other.>', as `nats stream edit` would). The stream
# still answers, but takes none of the relay's subjects: the broker side's
# configuration is at fault, not the rows'. With 200 rows pending: no
# attempt is charged and no row dies (--max-attempts 2 and a 200 ms backoff
# would kill them within a second or two if they were charged), /readyz
# answers 503 naming the stream's subjects, the nats outage is counted and
# the log says it once. The subjects changed back, the relay resumes by
# itself: every row once in the stream, each aggregate in order, /readyz 200.
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/private.sh"
db=it_fault_subjects stream=IT_FAULT_SUBJECTS prefix=itfsubj
work=$(mktemp -d); RELAY_PID=
trap 'rc=$?; [ $rc = 0 ] || show_log "$work/relay.log"; kill -KILL $RELAY_PID 2>/dev/null || true
  rm -rf "$work"' EXIT
db_fresh $db --ordered
stream_delete $stream
streamcheck --stream $stream --create "$prefix.>"
rows() { # FROM TO: rows of 20 aggregates, each with its own counter in a header
  sql $db "INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload, headers)
    SELECT outbox_uuid_v7(), 'order', CONCAT('a', seq % 20), 'created', JSON_OBJECT('n', seq),
           JSON_OBJECT('agg_seq', CAST(seq DIV 20 AS CHAR)) FROM seq_$1_to_$2"
}
relay_bg "$work/relay.log" $db $stream $prefix --ordered --batch 50 --max-attempts 2 \
  --backoff fixed --backoff-base 200ms --backoff-max 200ms --backoff-jitter 0 --http 127.0.0.1:0
port=$(http_port "$work/relay.log")
rows 0 19
wait_sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1' 20 30 || fail "the first 20 rows not delivered"
assert_eq "$(http_code $port /readyz)" 200 "/readyz while the stream takes the subjects"

streamcheck --stream $stream --set-subjects "${prefix}other.>" # a subject of its own: streams may not overlap
streamcheck --stream $stream --info-only | grep -i subjects
rows 20 219
echo "200 rows pending"
for i in $(seq 1 150); do
  [ "$(http_code $port /readyz)" = 503 ] && break
  sleep 0.2
done
assert_eq "$(http_code $port /readyz)" 503 "/readyz once the stream lists none of the subjects"
reason=$(curl -s -m 5 "http://127.0.0.1:$port/readyz")
echo "readyz: $reason"
grep -q "stream $stream lists no subject the relay publishes to" <<<"$reason" ||
  fail "/readyz names the reason: '$reason'"
sleep 3 # the time for rows charged at every try to die (2 attempts, 200 ms apart)
sql $db "SELECT status, COUNT(*), MAX(attempt_count) FROM outbox GROUP BY status" |
  sed 's/^/    status count max_attempts: /'
assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = -1')" 0 "dead rows while unlisted"
assert_eq "$(sql $db 'SELECT MAX(attempt_count) FROM outbox')" 0 "largest attempt_count while unlisted"
assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 0')" 200 "rows pending while unlisted"
m=$(metrics $port)
assert_eq "$(metric_value "$m" 'outbox_relay_up{table="outbox",dependency="nats"}')" 0 "outbox_relay_up for nats"
outages=$(metric_sum "$m" outbox_relay_nats_outages_total)
[ "$outages" -ge 1 ] || fail "nats outages counted: $outages"
assert_eq "$(grep -c 'lists no subject' "$work/relay.log")" 1 "log lines naming the subjects"

streamcheck --stream $stream --set-subjects "$prefix.>"
wait_sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1' 220 60 ||
  fail "not every row delivered within 60 s of the subjects' return"
echo "ok: every row delivered once the stream takes the subjects again"
assert_eq "$(http_code $port /readyz)" 200 "/readyz once the stream takes the subjects again"
grep -q "takes '$prefix.>' again; resuming" "$work/relay.log" || fail "the resumption is logged"
kill -TERM $RELAY_PID
wait_exit $RELAY_PID 15
assert_eq "$WAIT_RC" 0 "relay exit status after SIGTERM"
assert_eq "$(sql $db 'SELECT MAX(attempt_count) FROM outbox')" 0 "largest attempt_count"
assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = -1')" 0 "dead rows"
stream_has_ids $db $stream 220 "$work/ids"
streamcheck --stream $stream --subject '>' --check-order agg_seq
echo "fault_stream_subjects: ok"
