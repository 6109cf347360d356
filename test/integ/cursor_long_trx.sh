# SPDX-License-Identifier: Apache-2.0
# A long transaction in cursor mode: it inserts an event, sleeps 10 s and
# commits, while four other producers commit 20,000 rows. The rows above its
# seq are delivered before it commits; no bucket's cursor passes its seq
# while it is open; the gap-age gauge reads at least 5 s during it; once it
# commits its event is delivered and the cursors pass it. Each id is once in
# the stream, no aggregate out of order.
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/private.sh"
db=it_cursor_long stream=IT_CURSOR_LONG prefix=itcurl
work=$(mktemp -d); RELAY_PID=
trap 'rc=$?; [ $rc = 0 ] || show_log "$work/relay.log" 80; kill -KILL $RELAY_PID 2>/dev/null || true
  private_cleanup; rm -rf "$work"' EXIT
# Private servers: INNODB_TRX lists every transaction of the server, so
# another test's open transaction would hold back the gaps this one times.
private_db_and_nats "$work/srv"
cursor_relay_fresh $db $stream $prefix "$work/relay.log"
seed $db 10 256
# A bucket's first cursor waits for every transaction open when it is taken
# (README, "Taking a bucket that has no cursor row"): the long transaction
# starts once the relay has made them, as in a relay that was running.
wait_sql $db "SELECT COUNT(*) FROM outbox_cursor" 64 60 || fail "the relay made no cursor rows in 60 s"
# The long transaction sleeps 10 s, then (on a machine too busy to insert
# the 20,000 rows in that time) waits for a lock the test holds until its
# checks are done.
MDB -n -N -B $db -e "SELECT CONNECTION_ID(); DO GET_LOCK('it_cursor_long', 0); DO SLEEP(120)" \
  >"$work/holder.out" 2>/dev/null &
holder_pid=$!
for i in $(seq 1 50); do [ -s "$work/holder.out" ] && break; sleep 0.1; done
t0=$(date +%s.%N)
MDB -n -N -B $db -e "BEGIN;
  INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload, headers)
    VALUES (outbox_uuid_v7(), 'order', 'long', 'created', '{}', JSON_OBJECT('agg_seq', '0'));
  SELECT LAST_INSERT_ID(); DO SLEEP(10); DO GET_LOCK('it_cursor_long', 120); COMMIT" \
  >"$work/long.out" &
long_pid=$!
for i in $(seq 1 50); do [ -s "$work/long.out" ] && break; sleep 0.1; done
long=$(cat "$work/long.out")
[ -n "$long" ] || fail "the long transaction's seq"
echo "the long transaction holds seq $long"
produce() { # P: 10 transactions of 500 rows of aggregates p<P>-a0..9, one session
  local t
  for t in $(seq 0 9); do
    echo "INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload, headers)
      SELECT outbox_uuid_v7(), 'order', CONCAT('p$1-a', seq % 10), 'created',
             JSON_OBJECT('pad', REPEAT('x', 200)),
             JSON_OBJECT('agg_seq', CAST($t * 50 + seq DIV 10 AS CHAR)) FROM seq_0_to_499;"
  done | MDB $db
}
producers=
for p in 1 2 3 4; do produce $p & producers="$producers $!"; done
wait_acked() { # N SECONDS: the relay has at least N rows acked by JetStream
  local i
  for i in $(seq 1 $(($2 * 10))); do
    [ "$(metric_sum "$(metrics $port)" outbox_relay_published_total)" -ge "$1" ] && return 0
    sleep 0.1
  done
  return 1
}
wait_acked 20010 50 || fail "the rows above the open transaction were not delivered before it commits" \
  "($(metric_sum "$(metrics $port)" outbox_relay_published_total) published;" \
  "rows, max seq: $(sql $db 'SELECT COUNT(*), MAX(seq) FROM outbox' | tr '\t' ' '))"
kill -0 $long_pid 2>/dev/null || fail "the long transaction ended before the check"
echo "ok: 20,010 rows above seq $long delivered while it is open ($(echo "$(date +%s.%N) - $t0" | bc) s)"
assert_eq "$(sql $db "SELECT COUNT(*) FROM outbox_cursor WHERE seq >= $long")" 0 \
  "cursors at or past the open transaction's seq"
while [ "$(echo "$(date +%s.%N) - $t0 < 7" | bc)" = 1 ]; do sleep 0.2; done
m=$(metrics $port)
age=$(metric_value "$m" 'outbox_relay_cursor_gap_age_seconds{table="outbox"}')
echo "gap age at 7 s: $age"
[ "$(echo "${age:-0} >= 5" | bc)" = 1 ] || fail "gap age gauge below 5 s: $age"
assert_eq "$(sql $db "SELECT COUNT(*) FROM outbox_cursor WHERE seq >= $long")" 0 \
  "cursors at or past the open transaction's seq 7 s in"
for p in $producers; do wait $p; done
kill -0 $long_pid 2>/dev/null || fail "the long transaction ended before it was let go"
echo "letting the long transaction commit after $(echo "$(date +%s.%N) - $t0" | bc) s"
MDB -e "KILL $(head -1 "$work/holder.out")"
wait $long_pid || fail "the long transaction failed"
wait $holder_pid 2>/dev/null || true
wait_acked 20011 20 || fail "the long transaction's event was not delivered after its commit"
for i in $(seq 1 100); do
  [ "$(sql $db "SELECT MIN(seq) >= (SELECT MAX(seq) FROM outbox) FROM outbox_cursor")" = 1 ] && break
  sleep 0.1
done
assert_eq "$(sql $db "SELECT COUNT(*), MIN(seq) >= (SELECT MAX(seq) FROM outbox) FROM outbox_cursor" |
  tr '\t' ' ')" "64 1" "every cursor past the last row after the commit"
m=$(metrics $port)
assert_eq "$(metric_value "$m" 'outbox_relay_cursor_gap_age_seconds{table="outbox"}')" 0 "gap age once it committed"
cursor_relay_end $db $stream 20011 "$work/ids"
echo "cursor_long_trx: ok"
