# SPDX-License-Identifier: Apache-2.0
# Leader mode, the leader cut off from MariaDB by a forwarder that stops
# forwarding without closing anything (a network partition; NATS stays
# reachable) while a producer keeps writing: the standby takes over within
# the lease timeout (15 s, the default) and delivers (1,000 rows, then the
# partition heals); once it heals, with the producer still writing for
# 1,000 more rows, the old leader publishes nothing out of order: the whole
# stream is in insertion order, each id once. Prints the takeover time.
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/lease.sh"
db=it_lease_partition stream=IT_LEASE_PARTITION prefix=itlpa
lease_setup $db $stream
for i in $(seq 1 50); do
  pport=$(( (RANDOM * 32768 + RANDOM) % 30000 + 20000 ))
  (exec 3<>"/dev/tcp/127.0.0.1/$pport") 2>/dev/null || break
done
"$OUTBOX_TEST_BUILD/test/delayproxy" "$pport" "$OUTBOX_TEST_DB_PORT" 0 >"$work/proxy" &
proxy=$!
pids+=($proxy)
wait_log "$work/proxy" ready 5 || fail "the forwarder did not start"
produce $db 0 2000
"$OUTBOX_TEST_RELAY" --db "mysql://outbox:outbox@127.0.0.1:$pport/$db" \
  --nats "$OUTBOX_TEST_NATS_URL" --stream $stream --subject-prefix $prefix --no-progress \
  --leader --batch 200 2>"$work/a.log" &
a=$!
pids+=($a)
wait_log "$work/a.log" "lease: leading" 10 || fail "relay a (behind the forwarder) does not lead"
relay_bg "$work/b.log" $db $stream $prefix --leader --batch 200
b=$RELAY_PID
pids+=($b)
produce_until $db 2000 "$work/stop" &
producer=$!
pids+=($producer)
wait_processed $db 1000 30 || fail "the leader does not deliver"
kill -USR1 $proxy
cut=$(now_ms)
echo "cut the leader off from MariaDB with $(processed $db) rows processed"
wait_log "$work/b.log" "lease: leading" 30 || fail "the standby did not take over within 30 s"
took=$(($(now_ms) - cut))
echo "takeover: the standby leads ${took} ms after the partition"
[ "$took" -le 15000 ] || fail "takeover took ${took} ms, over the 15 s lease timeout"
at=$(processed $db)
wait_processed $db $((at + 1000)) 20 || fail "the standby does not deliver during the partition"
kill -USR2 $proxy
echo "healed the partition after $(($(now_ms) - cut)) ms"
at=$(processed $db)
wait_processed $db $((at + 1000)) 30 || fail "no delivery after the partition healed"
produce_stop "$work/stop" $producer
total=$(rows $db)
wait_processed $db $total 120 || fail "not every row was processed: $(processed $db) of $total"
kill -TERM $a $b
for p in $a $b; do
  rc=0; wait $p || rc=$?
  assert_eq "$rc" 0 "exit status of relay $p"
done
check_stream $stream $total fifo
echo "lease_partition: ok"
