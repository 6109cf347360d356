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

# holds_unsent PORT N: 0 when the relay of HTTP port PORT holds at least N
# rows it fetched and has not published.
holds_unsent() {
  local m
  m=$(metrics "$1")
  [ $(($(metric_value "$m" 'outbox_relay_fetched_rows_total{table="outbox"}') -
    $(metric_value "$m" 'outbox_relay_publish_attempts_total{table="outbox"}'))) -ge "$2" ]
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
