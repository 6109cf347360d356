# SPDX-License-Identifier: Apache-2.0
# Issue 22: three relays with --cursor on one ordered table while three
# producers insert (240 aggregates, 200 rows per statement, tens of thousands
# of rows). Relay 3 is killed with SIGKILL, later relay 1 is frozen with
# SIGSTOP (thawed once its buckets have moved and the lease timeout has
# passed); a lease timeout of 6 s. Asserts:
# - after each, every bucket with new rows moves (its cursor advances) within
#   the lease timeout and 4 s of slack (measured from the cursors, sampled
#   every 0.2 s), and during the freeze some buckets did stall (relay 1's);
# - no bucket's cursor ever went back, over the whole run, thaw included;
# - the two live relays exit 0 on SIGTERM; no row was charged an attempt,
#   none is dead, and in cursor mode no row was written;
# - the stream holds every committed row once and nothing else, and no
#   aggregate out of order (the producer's counter, header agg_seq).
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/cursor.sh"
mode=$CURSOR_TEST_MODE # (harness/cursor.sh)
db=it_cursor_chaos stream=IT_CURSOR_CHAOS prefix=itcchaos
lease=6 slack=4
# Private servers: the bound timed here rests on the gap checks, and another
# test's open transaction (a relay frozen in the middle of one) would hold
# them back on the shared server.
srv=$(mktemp -d)
private_db_and_nats "$srv"
lease_setup $db $stream
trap 'touch "$work/stop" "$work/samples.stop"; lease_cleanup; private_cleanup; rm -rf "$srv"' EXIT

for i in 1 2 3; do
  relay_bg "$work/r$i.log" $db $stream $prefix $mode --lease-timeout ${lease}s --connections 2 \
    --batch 200 --http 127.0.0.1:0
  pids+=($RELAY_PID)
done
t0=$(now_ms) ports=()
for i in 1 2 3; do ports+=($(http_port "$work/r$i.log")); done
owned() { metric_value "$(metrics "${ports[$(($1 - 1))]}")" 'outbox_relay_buckets_owned{table="outbox"}'; }
relays_share "${ports[@]}"

cursor_sample_start $db "$work/samples" outbox $mode
sampler=$CURSOR_SAMPLER_PID
for p in 1 2 3; do
  cursor_producer $db $p "$work/stop" 200 0.2 80 600 &
  pids+=($!)
done
prods=("${pids[@]:3:3}")
pids+=($sampler)

inserted_at_least() { [ "$(sql $db 'SELECT COUNT(*) FROM outbox')" -ge "$1" ]; }
# event NAME AT: waits (up to lease + 20 s) until every bucket that had rows
# inserted after AT + 1 s has moved; asserts the bound and sets TOOK and SLOW.
event() {
  local name=$1 at=$2 seq0 want r
  sleep 1
  seq0=$(sql $db 'SELECT COALESCE(MAX(seq), 0) FROM outbox')
  sleep 2
  want=$(cursor_buckets_after $db "$seq0")
  r=
  while [ "$(ms_since "$at")" -le $(((lease + 20) * 1000)) ]; do
    r=$(cursor_takeover_ms "$work/samples" "$at" 1000 "$want")
    [ -n "$r" ] && break
    sleep 0.5
  done
  [ -n "$r" ] || fail "$name: not every bucket moved within $((lease + 20)) s"
  TOOK=${r% *} SLOW=${r#* }
  echo "$name: all $(echo $want | wc -w) buckets with new rows moved within $TOOK ms ($SLOW over 2 s)"
  [ "$TOOK" -le $(((lease + slack) * 1000)) ] ||
    fail "$name: the buckets moved after $TOOK ms, over the ${lease} s lease timeout and ${slack} s"
}

# Relay 3 dies once it delivers the producers' rows (200 published), whatever
# the machine's speed.
wait_until 60 "relay 3 published 200 rows" metric_at_least "${ports[2]}" \
  'outbox_relay_published_total{table="outbox",result="stored"}' 200
echo "killing relay 3 (owning $(owned 3) buckets) with $(sql $db 'SELECT COUNT(*) FROM outbox') rows inserted"
kill -KILL "${pids[2]}"
wait "${pids[2]}" 2>/dev/null || true
event "kill" "$(now_ms)"
kill_took=$TOOK

a=$(owned 1)
echo "freezing relay 1 (owning ${a:-?} buckets) with $(sql $db 'SELECT COUNT(*) FROM outbox') rows inserted"
kill -STOP "${pids[0]}"
frozen=$(now_ms)
event "freeze" "$frozen"
freeze_took=$TOOK
[ "$SLOW" -gt 0 ] || fail "freeze: no bucket stalled: relay 1 owned none"
b=$(owned 2)
echo "relay 2 owns ${b:-?} buckets during the freeze"
left=$((lease * 1000 - $(ms_since "$frozen")))
[ $left -gt 0 ] && sleep "$(awk -v m=$left 'BEGIN { printf "%.3f", m / 1000 }')"
kill -CONT "${pids[0]}"
echo "thawed relay 1 after $(ms_since "$frozen") ms"
sleep 3
# Tens of thousands of rows, whatever the machine's speed.
wait_until 120 "10,000 rows inserted" inserted_at_least 10000
touch "$work/stop"
for p in "${prods[@]}"; do wait "$p" || fail "a producer failed"; done
total=$(sql $db 'SELECT COUNT(*) FROM outbox')
echo "producers stopped: $total rows committed, $(cursor_pending $db) pending"
[ "$total" -ge 10000 ] || fail "only $total rows inserted: the producers were too slow for the test"
cursor_wait_delivered $db 60 || fail "$(cursor_pending $db) of $total rows still pending after 60 s"
cursor_sample_fresh "$work/samples"
cursor_sample_stop "$work/samples"
for i in 0 1; do kill -TERM "${pids[$i]}"; done
for i in 0 1; do
  wait_exit "${pids[$i]}" 30
  assert_eq "$WAIT_RC" 0 "exit status of relay $((i + 1))"
done
cursor_rows_clean $db $mode
cursor_never_back "$work/samples" 32
cursor_stream_check $db $stream "$work/ids"
echo "cursor_chaos ($mode): $total rows; takeover after the kill $kill_took ms, after the freeze $freeze_took ms; $(ms_since $t0) ms"
