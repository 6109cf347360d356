# SPDX-License-Identifier: Apache-2.0
# Four relay processes drain one 20,000-row table together.
. "$(dirname "$0")/../harness/lib.sh"
db=it_four stream=IT_FOUR prefix=itfour
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
db_fresh $db
stream_delete $stream
seed $db 20000 512
pids=()
for i in 1 2 3 4; do
  relay_bg "$work/r$i.log" $db $stream $prefix --connections 2 --batch 50 --drain
  pids+=($RELAY_PID)
done
total=0
for i in 1 2 3 4; do
  rc=0; wait ${pids[$((i - 1))]} || rc=$?
  assert_eq "$rc" 0 "exit status of relay $i"
  n=$(sed -n 's/.*relay stopped: \([0-9]*\) acked.*/\1/p' "$work/r$i.log")
  echo "relay $i acked $n"
  total=$((total + n))
done
assert_eq "$total" 20000 "rows acked by the four relays together"
assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1')" 20000 "processed rows"
summary=$(stream_summary $stream)
assert_eq "$(field "$summary" messages)" 20000 "messages in the stream"
assert_eq "$(field "$summary" distinct)" 20000 "distinct ids in the stream"
