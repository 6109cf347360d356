# SPDX-License-Identifier: Apache-2.0
# Ids from outbox_uuid_v7() in plain SQL are not ordered within one
# millisecond; the seq column is. Events written two per transaction, as
# fast as one session can, while an ordered relay with 4 connections runs:
# every aggregate's events reach the stream in insertion order.
# Whether two inserts share a millisecond depends on the machine's speed, so
# every other transaction makes the premise hold whatever the speed: it takes
# two ids from outbox_uuid_v7() and inserts the larger first, so its second
# event's id is below its first's. The test asserts that ids went down.
. "$(dirname "$0")/../harness/lib.sh"
db=it_ord_uuid stream=IT_ORD_UUID prefix=itorduuid
work=$(mktemp -d)
RELAY_PID=
cleanup() { [ -n "$RELAY_PID" ] && kill -KILL "$RELAY_PID" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
db_fresh $db --ordered
stream_delete $stream
relay_bg "$work/relay.log" $db $stream $prefix --ordered --connections 4 --batch 100
{
  for t in $(seq 0 2499); do
    a=$((t % 40)) n=$((t / 40 * 2))
    echo "START TRANSACTION;"
    [ $((t % 2)) = 0 ] || echo "SET @x = outbox_uuid_v7(), @y = outbox_uuid_v7();"
    for k in 0 1; do
      if [ $((t % 2)) = 0 ]; then id='outbox_uuid_v7()'
      elif [ $k = 0 ]; then id='GREATEST(@x, @y)'
      else id='LEAST(@x, @y)'
      fi
      echo "INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload, headers)
        VALUES ($id, 'order', 'a$a', 'changed', '{}', '{\"agg_seq\": \"$((n + k))\"}');"
    done
    echo "COMMIT;"
  done
} | MDB $db
inversions=$(sql $db "SELECT COUNT(*) FROM outbox a JOIN outbox b ON b.seq = a.seq + 1 WHERE b.id < a.id")
echo "consecutive inserts whose id went down: $inversions of 4999"
# At least the 1,250 transactions that insert the larger id first.
[ "$inversions" -ge 1250 ] || fail "only $inversions consecutive inserts whose id went down (1250 at least)"
for i in $(seq 1 600); do
  [ "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 0')" = 0 ] && break
  sleep 0.1
done
kill -TERM $RELAY_PID
rc=0; wait $RELAY_PID || rc=$?
RELAY_PID=
assert_eq "$rc" 0 "relay exit status"
assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1')" 5000 "processed rows"
out=$(streamcheck --stream $stream --subject '>' --check-order agg_seq) || { echo "$out"; fail "stream check"; }
echo "$out"
assert_eq "$(field "$(echo "$out" | grep '^messages=')" distinct)" 5000 "distinct ids in the stream"
echo "ordered_uuid_sql: ok"
