# SPDX-License-Identifier: Apache-2.0
# Issue 29, part 6: the fence at the point of publishing. Leader mode; the
# leader reaches MariaDB through a forwarder that is cut (a network
# partition: nothing forwarded, nothing closed) while its batch still has
# hundreds of unsent rows, and reaches NATS through a forwarder that delays
# every chunk by 50 ms, with one publish in flight at a time (about ten
# publishes a second, so the batch outlasts the lease). NATS stays
# reachable; the stream's duplicate window (2 min) is longer than the
# takeover (15 s). Asserts:
# - the cut leader goes on publishing after the cut (messages stored in the
#   6.5 s after it), but none is stored (stream times) from the end of its
#   lease (its validity, 5 s, counted from a round sent before the cut, plus
#   1.5 s for a publish then in flight on a loaded machine) until the standby
#   leads (about 10 s after the cut), though it still holds unsent rows then (its rows fetched
#   outnumber its publish attempts);
# - the standby takes over, every row is delivered, each id once in the
#   stream, no aggregate out of order.
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/private.sh"
. "$(dirname "$0")/../harness/lease.sh"
db=it_lease_stale_pub stream=IT_LEASE_STALE_PUB prefix=itlsp
lease_setup $db $stream
dbport=$(free_port) natsport=$(free_port)
nats_port=${OUTBOX_TEST_NATS_URL##*:}
"$OUTBOX_TEST_BUILD/test/delayproxy" "$dbport" "$OUTBOX_TEST_DB_PORT" 0 >"$work/dbproxy" &
dbproxy=$!
pids+=($dbproxy)
"$OUTBOX_TEST_BUILD/test/delayproxy" "$natsport" "$nats_port" 50 >"$work/natsproxy" &
pids+=($!)
wait_log "$work/dbproxy" ready 5 || fail "the database forwarder did not start"
wait_log "$work/natsproxy" ready 5 || fail "the NATS forwarder did not start"
total=3000
produce $db 0 $total
"$OUTBOX_TEST_RELAY" --db "mysql://outbox:outbox@127.0.0.1:$dbport/$db" \
  --nats "nats://127.0.0.1:$natsport" --stream $stream --subject-prefix $prefix --no-progress \
  --leader --batch 500 --max-in-flight 1 --http 127.0.0.1:0 2>"$work/a.log" &
a=$!
pids+=($a)
wait_log "$work/a.log" "lease: leading" 10 || fail "relay a (behind the forwarders) does not lead"
aport=$(http_port "$work/a.log")
relay_bg "$work/b.log" $db $stream $prefix --leader --batch 500
b=$RELAY_PID
pids+=($b)
messages() { field "$(stream_summary $stream)" messages; }
for i in $(seq 1 100); do [ "$(messages)" -ge 20 ] && break; sleep 0.2; done
[ "$(messages)" -ge 20 ] || fail "the leader does not publish"
# The cut comes once the leader holds unsent rows: its first fetch is sized
# for large rows (a few dozen), the next ones take --batch.
wait_until 30 "the leader holds unsent rows" holds_unsent $aport 100
kill -USR1 $dbproxy
cut=$(now_ms)
echo "cut the leader off from MariaDB with $(messages) messages in the stream"
wait_log "$work/b.log" "lease: leading" 30 || fail "the standby did not take over within 30 s"
lead=$(date -d "$(grep -m1 'lease: leading' "$work/b.log" | cut -d' ' -f1)" +%s%3N)
fence_judged $aport $cut $lead 6500 1500 $stream "$work"
kill -USR2 $dbproxy
wait_processed $db $total 120 || fail "not every row was processed: $(processed $db) of $total"
kill -TERM $a $b
for p in $a $b; do
  rc=0; wait $p || rc=$?
  assert_eq "$rc" 0 "exit status of relay $p"
done
check_stream $stream $total
echo "lease_stale_publish: ok"
