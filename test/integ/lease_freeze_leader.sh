# SPDX-License-Identifier: Apache-2.0
# Leader mode, the leader frozen with SIGSTOP while a producer keeps
# writing: the standby takes over within the lease timeout (15 s, the
# default) and delivers during the freeze (1,000 rows, then the leader is
# thawed); after SIGCONT, with the producer still writing for 1,000 more
# rows, the old leader publishes nothing out of order: the whole stream is in
# insertion order (header n only grows), each id once. Prints the takeover
# time.
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/lease.sh"
db=it_lease_freeze_leader stream=IT_LEASE_FREEZE_LEADER prefix=itlfl
lease_setup $db $stream
produce $db 0 2000
relay_bg "$work/a.log" $db $stream $prefix --leader --batch 200 --log-level debug
pids+=($RELAY_PID)
wait_log "$work/a.log" "lease: leading" 10 || fail "relay a does not lead"
relay_bg "$work/b.log" $db $stream $prefix --leader --batch 200
pids+=($RELAY_PID)
produce_until $db 2000 "$work/stop" &
producer=$!
pids+=($producer)
wait_processed $db 1000 30 || fail "the leader does not deliver"
kill -STOP "${pids[0]}"
frozen=$(now_ms)
echo "froze the leader with $(processed $db) rows processed"
wait_log "$work/b.log" "lease: leading" 30 || fail "the standby did not take over within 30 s"
took=$(($(now_ms) - frozen))
echo "takeover: the standby leads ${took} ms after the freeze"
[ "$took" -le 15000 ] || fail "takeover took ${took} ms, over the 15 s lease timeout"
grep "ended it" "$work/b.log" || fail "the standby did not end the frozen leader's sessions"
at=$(processed $db)
wait_processed $db $((at + 1000)) 20 || fail "the standby does not deliver during the freeze"
echo "the standby delivered while the leader was frozen: $(processed $db) rows processed"
kill -CONT "${pids[0]}"
echo "thawed the old leader after $(($(now_ms) - frozen)) ms"
at=$(processed $db)
wait_processed $db $((at + 1000)) 30 || fail "no delivery after the thaw"
produce_stop "$work/stop" $producer
total=$(rows $db)
wait_processed $db $total 120 || fail "not every row was processed: $(processed $db) of $total"
for i in 0 1; do kill -TERM "${pids[$i]}"; done
for i in 0 1; do
  rc=0; wait "${pids[$i]}" || rc=$?
  assert_eq "$rc" 0 "exit status of relay $i"
done
grep -E "lease: (connection lost|standing by)" "$work/a.log" | head -3
check_stream $stream $total fifo
echo "lease_freeze_leader: ok"
