# SPDX-License-Identifier: Apache-2.0
# Sourced by the lease tests (lease_*.sh) after lib.sh: their set-up, a
# producer that keeps writing while an owner is frozen or cut off, and the
# checks.

# lease_setup DB STREAM: a fresh ordered table and an empty stream, a work
# folder in $work, and on exit every pid in the array `pids` thawed, killed
# and the folder removed.
lease_setup() {
  work=$(mktemp -d)
  pids=()
  trap lease_cleanup EXIT
  db_fresh "$1" --ordered
  stream_delete "$2"
}
lease_cleanup() {
  local p
  for p in "${pids[@]}"; do
    kill -CONT "$p" 2>/dev/null || true
    kill -KILL "$p" 2>/dev/null || true
  done
  rm -rf "$work"
}

# produce DB FROM TO: inserts rows n = FROM..TO-1, 100 per statement, ten
# statements a second, over 300 aggregates; header n is the global
# sequence (insertion order), agg_seq the same number (per aggregate it
# only grows).
produce() {
  local db=$1 n=$2 to=$3
  while [ "$n" -lt "$to" ]; do
    sql "$db" "INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload, headers)
      SELECT outbox_uuid_v7(), 'order', CONCAT('a', seq % 300), 'created', JSON_OBJECT('n', seq),
             JSON_OBJECT('n', CAST(seq AS CHAR), 'agg_seq', CAST(seq AS CHAR))
      FROM seq_${n}_to_$((n + 99))"
    n=$((n + 100))
    sleep 0.1
  done
}

# produce_until DB FROM FILE: as produce, from FROM on, until FILE exists (a
# test stops its producer at a state it observes, not after a count of rows
# that a fast or a slow machine writes in a different time).
produce_until() {
  local db=$1 n=$2
  while [ ! -e "$3" ]; do
    produce "$db" "$n" $((n + 100))
    n=$((n + 100))
  done
}
# produce_stop FILE PID: stops the produce_until given FILE (its pid PID).
produce_stop() {
  touch "$1"
  wait "$2" || fail "the producer failed"
}

# unsent_rows PORT: the rows the relay of HTTP port PORT fetched and has not
# published (table outbox).
unsent_rows() {
  local m
  m=$(metrics "$1")
  echo $(($(metric_value "$m" 'outbox_relay_fetched_rows_total{table="outbox"}') -
    $(metric_value "$m" 'outbox_relay_publish_attempts_total{table="outbox"}')))
}
# holds_unsent PORT N: 0 when that relay holds at least N such rows.
holds_unsent() { [ "$(unsent_rows "$1")" -ge "$2" ]; }

# fence_judged PORT CUT LEAD WINDOW MARGIN STREAM WORK: the fence of a
# leader (HTTP port PORT) cut off from its lease's database at CUT (ms),
# whose standby led at LEAD (ms): it published after the cut, but nothing
# of STREAM was stored from CUT + WINDOW ms (its lease's end) until LEAD,
# though it still held unsent rows; LEAD is at least MARGIN ms past that
# end, so that the window means something.
fence_judged() {
  local port=$1 cut=$2 lead=$3 window=$4 margin=$5 stream=$6 work=$7 unsent from late before
  unsent=$(unsent_rows "$port")
  streamcheck --stream "$stream" --subject '>' --times "$work/times" >/dev/null
  from=$((cut + window))
  late=$(awk -v a=$from -v b=$lead '$1 > a && $1 < b' "$work/times" | wc -l)
  before=$(awk -v a=$cut -v b=$from '$1 > a && $1 <= b' "$work/times" | wc -l)
  echo "the standby leads $((lead - cut)) ms after the cut; messages stored: $before in the" \
    "$window ms after the cut, $late from then until the standby led; rows the cut leader" \
    "claimed and never published: $unsent"
  [ $((lead - from)) -ge "$margin" ] ||
    fail "the standby led $((lead - cut)) ms after the cut: too soon for the window to mean anything"
  [ "$before" -gt 0 ] || fail "the cut leader published nothing after the cut"
  assert_eq "$late" 0 "messages stored after the cut leader's lease ran out and before the standby led"
  [ "$unsent" -gt 0 ] || fail "the cut leader held no unsent rows when its lease ran out"
}
processed() { sql "$1" 'SELECT COUNT(*) FROM outbox WHERE status = 1'; }
rows() { sql "$1" 'SELECT COUNT(*) FROM outbox'; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# wait_log FILE PATTERN SECONDS: 0 once FILE has a line matching PATTERN.
wait_log() {
  local i
  for i in $(seq 1 $(($3 * 20))); do
    grep -q "$2" "$1" && return 0
    sleep 0.05
  done
  return 1
}

# wait_processed DB N SECONDS: 0 once N rows are processed.
wait_processed() {
  local i
  for i in $(seq 1 $(($3 * 4))); do
    [ "$(processed "$1")" -ge "$2" ] && return 0
    sleep 0.25
  done
  return 1
}

# check_stream STREAM N [fifo]: N messages, each id once, no aggregate out
# of order (and with fifo, the whole stream in insertion order).
check_stream() {
  local out summary
  out=$(streamcheck --stream "$1" --subject '>' --check-order agg_seq ${3:+--check-fifo n}) ||
    { echo "$out"; fail "stream check"; }
  echo "$out"
  summary=$(echo "$out" | grep '^messages=')
  assert_eq "$(field "$summary" distinct)" "$2" "distinct ids in the stream"
  assert_eq "$(field "$summary" messages)" "$2" "messages in the stream"
  assert_eq "$(echo "$out" | sed -n 's/.*order_violations=\([0-9]*\).*/\1/p')" 0 \
    "aggregates out of order"
}
