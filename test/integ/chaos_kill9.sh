# SPDX-License-Identifier: Apache-2.0
# kill -9 the relay at random points of a 20,000-row run, five times, then run
# it to drain: every row ends processed, the stream holds each id exactly once,
# and no attempt was counted (a killed relay's transactions roll back).
# A point is counted in rows, not in time: each relay is killed once it has
# processed 200 to 999 rows more than the one before it, so that every kill
# lands while rows flow and the table is far from drained at the fifth, on a
# fast machine as on a slow one.
. "$(dirname "$0")/../harness/lib.sh"
db=it_kill9 stream=IT_KILL9 prefix=itkill9
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
db_fresh $db
stream_delete $stream
seed $db 20000 512
# progress: the running relay has processed rows up to $target (and runs).
progress() {
  kill -0 $RELAY_PID 2>/dev/null || { show_log "$work/r$i.log"; fail "relay $i exited"; }
  processed_at_least $db $target
}
start=$(date +%s.%N)
for i in 1 2 3 4 5; do
  target=$(($(rows_processed $db) + RANDOM % 800 + 200))
  relay_bg "$work/r$i.log" $db $stream $prefix --connections 2 --batch 20
  wait_until 120 "relay $i processed rows up to $target" progress
  kill -KILL $RELAY_PID
  wait $RELAY_PID 2>/dev/null || true
  pending=$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 0')
  echo "kill $i: $(rows_processed $db) rows processed (from $target on), $pending still pending"
  [ "$pending" -gt 0 ] || fail "kill $i came after the table was drained"
done
relay $db $stream $prefix --drain 2>"$work/final.log"
assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1')" 20000 "processed rows"
assert_eq "$(sql $db 'SELECT SUM(attempt_count) FROM outbox')" 0 "attempts counted"
ids $db >"$work/ids"
out=$(streamcheck --stream $stream --subject '>' --expect-ids "$work/ids")
summary=$(echo "$out" | grep '^messages=')
exp=$(echo "$out" | grep '^expected=')
echo "$summary"; echo "$exp"
assert_eq "$(field "$summary" messages)" 20000 "messages in the stream"
assert_eq "$(field "$summary" distinct)" 20000 "distinct ids in the stream"
assert_eq "$(field "$exp" missing)" 0 "ids missing from the stream"
echo "took $(echo "$(date +%s.%N) - $start" | bc) s"
