# SPDX-License-Identifier: Apache-2.0
# Sourced by the tests of the ordered modes (cursor_*.sh) after lib.sh: a
# producer that survives a database restart and checks its in-doubt commits,
# a sampler of the buckets' cursors, and the checks made on what it saw and on
# the stream. Every loop here ends, bounded in time. It brings lease.sh and
# private.sh with it.
. "$(dirname "${BASH_SOURCE[0]}")/lease.sh"
. "$(dirname "${BASH_SOURCE[0]}")/private.sh"

# The mode the chaos tests (cursor_chaos, cursor_db_kill) run in: --cursor,
# unless OUTBOX_CURSOR_TEST_MODE says --ordered (the same bucket leases; the
# tests pass in both).
CURSOR_TEST_MODE=${OUTBOX_CURSOR_TEST_MODE:---cursor}

# ms_since MS: milliseconds since MS (now_ms, lease.sh).
ms_since() { echo $(($(now_ms) - $1)); }

# relays_share PORT...: waits up to 15 s until each relay (its --http port)
# owns buckets (gauge outbox_relay_buckets_owned); prints the shares, and
# fails if one has none.
relays_share() {
  local t0 p n v shares
  t0=$(now_ms)
  while :; do
    shares=() n=0
    for p in "$@"; do
      v=$(metric_value "$(metrics "$p")" 'outbox_relay_buckets_owned{table="outbox"}')
      shares+=("${v:-0}")
      [ "${v:-0}" -gt 0 ] && n=$((n + 1))
    done
    [ $n = $# ] && break
    [ "$(ms_since "$t0")" -le 15000 ] || fail "the relays did not share the buckets within 15 s: ${shares[*]}"
    sleep 0.1
  done
  echo "shares: ${shares[*]} buckets"
}

# cursor_producer DB P FLAG [ROWS] [SLEEP] [AGGS] [MAX]: inserts ROWS (100)
# rows per statement, then sleeps SLEEP (0.2) s, until the file FLAG exists
# or MAX (600) statements are committed. Its aggregates are pP-a0 ..
# pP-a(AGGS-1) (AGGS 80), written by this producer only and one statement at
# a time, so their events are in insertion order; each row carries the
# producer's counter n (it only grows) in its payload and in header agg_seq.
# A statement that fails is in doubt: once the database answers again, the
# rows of its counters are counted; none: it is sent again, all: it was
# committed; a part: the test fails. Each doubt is a line in FLAG.doubt.
# Runs in the foreground: start it with `&`.
cursor_producer() {
  local db=$1 p=$2 flag=$3 rows=${4:-100} pause=${5:-0.2} aggs=${6:-80} max=${7:-600}
  local n=0 done=0 c i
  while [ ! -f "$flag" ] && [ "$done" -lt "$max" ]; do
    if sql "$db" "INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload, headers)
        SELECT outbox_uuid_v7(), 'order', CONCAT('p$p-a', seq % $aggs), 'created',
               JSON_OBJECT('p', $p, 'n', seq), JSON_OBJECT('agg_seq', CAST(seq AS CHAR))
        FROM seq_${n}_to_$((n + rows - 1))" 2>/dev/null; then
      n=$((n + rows)) done=$((done + 1))
      sleep "$pause"
      continue
    fi
    c=
    for i in $(seq 1 300); do
      c=$(sql "$db" "SELECT COUNT(*) FROM outbox WHERE aggregate_id LIKE 'p$p-a%'
        AND CAST(JSON_VALUE(payload, '\$.n') AS UNSIGNED) BETWEEN $n AND $((n + rows - 1))" \
        2>/dev/null) && break
      c=
      sleep 0.2
    done
    [ -n "$c" ] || fail "producer $p: the database did not answer again within 60 s"
    echo "producer $p: statement of n=$n..$((n + rows - 1)) in doubt: $c of $rows rows committed" \
      >>"$flag.doubt"
    if [ "$c" = "$rows" ]; then
      n=$((n + rows)) done=$((done + 1))
    elif [ "$c" != 0 ]; then
      fail "producer $p: $c of the $rows rows of one statement committed"
    fi
  done
}

# cursor_sample_start DB FILE [TABLE] [MODE]: samples every bucket's
# cursor of TABLE (outbox) from outbox_cursor every 0.2 s in the background,
# a line "MS BUCKET SEQ" per bucket and sample (MS: this machine's clock in
# milliseconds when the query was sent), until cursor_sample_stop FILE, FILE
# is removed, or for at most 10 minutes. One client sends the queries; when it fails (the
# database down) a new one is started 0.2 s later, and the samples missed
# are left out. With MODE --ordered, that mode's counterpart: each bucket's
# highest seq with status 1. The sampler's pid is in
# CURSOR_SAMPLER_PID.
cursor_sample_start() {
  local db=$1 file=$2 table=${3:-outbox} q
  q="bucket, seq FROM outbox_cursor WHERE table_name = '$table'"
  [ "${4:-}" = --ordered ] && q="bucket, MAX(seq) FROM \`$table\` WHERE status = 1 GROUP BY bucket"
  : >"$file"
  rm -f "$file.stop"
  (
    local end=$((SECONDS + 600)) t
    on() { [ -f "$file" ] && [ ! -f "$file.stop" ] && [ $SECONDS -lt $end ]; }
    while on; do
      while on; do
        t=${EPOCHREALTIME/./}
        echo "SELECT ${t%???}, $q;"
        sleep 0.2
      done | MDB -N -B --unbuffered "$db" >>"$file" 2>/dev/null || true
      sleep 0.2
    done
  ) &
  CURSOR_SAMPLER_PID=$!
}

# cursor_sample_fresh FILE: waits (up to 10 s) until the sampler of FILE has
# a sample sent after this call, so that what is true now is in FILE.
cursor_sampled_after() { tail -200 "$1" | awk -v t="$2" '$1 > t { f = 1 } END { exit !f }'; }
cursor_sample_fresh() {
  local t=$(($(date +%s%N) / 1000000))
  wait_until 10 "a cursor sample after $t" cursor_sampled_after "$1" "$t"
}

# cursor_sample_stop FILE: ends the sampler of FILE and waits for it.
cursor_sample_stop() {
  touch "$1.stop"
  wait "$CURSOR_SAMPLER_PID" 2>/dev/null || true
  CURSOR_SAMPLER_PID=
}

# cursor_never_back FILE [MIN_BUCKETS]: no bucket's cursor in the samples of
# FILE ever went below a value sampled before it, and at least MIN_BUCKETS
# (1) buckets were sampled.
cursor_never_back() {
  local out
  out=$(awk '{ n++; if ($2 in last && $3 < last[$2]) { v++; if (v <= 5) print "bucket " $2 " went back from " last[$2] " to " $3 " at " $1 }
               if (!($2 in last) || $3 > last[$2]) last[$2] = $3 }
             END { for (b in last) nb++; printf "samples=%d buckets=%d backwards=%d\n", n, nb, v }' "$1")
  echo "$out"
  [ "$(field "$(echo "$out" | tail -1)" buckets)" -ge "${2:-1}" ] ||
    fail "cursors of fewer than ${2:-1} buckets were sampled"
  assert_eq "$(field "$(echo "$out" | tail -1)" backwards)" 0 "cursor samples that went backwards"
}

# cursor_takeover_ms FILE AT SETTLE BUCKETS: how long after the event at
# AT (ms, this machine's clock) every bucket of the list BUCKETS (numbers,
# space-separated) had moved: for each, the first sample after AT + SETTLE
# whose cursor passed the one sampled last at or before AT + SETTLE, if any
# (SETTLE leaves out a statement sent just before a freeze and answered
# after it).
# Prints "MS SLOW" (SLOW: buckets that took over 2 s), or nothing while a
# bucket has not moved yet.
cursor_takeover_ms() {
  awk -v at="$2" -v base=$(($2 + $3)) -v want="$4" '
    BEGIN { nw = split(want, w, " ") }
    $1 <= base { v0[$2] = $3; next }
    !($2 in moved) && (!($2 in v0) || $3 > v0[$2]) { moved[$2] = $1 - at }
    END {
      for (i = 1; i <= nw; i++) {
        if (!(w[i] in moved)) exit
        if (moved[w[i]] > worst) worst = moved[w[i]]
        if (moved[w[i]] > 2000) slow++
      }
      printf "%d %d\n", worst, slow
    }' "$1"
}

# cursor_buckets_after DB SEQ: the buckets (space-separated) with a row
# inserted after seq SEQ: those that must move after an event.
cursor_buckets_after() { sql "$1" "SELECT DISTINCT bucket FROM outbox WHERE seq > $2" | tr '\n' ' '; }

# cursor_pending DB [TABLE]: rows not delivered yet. With outbox_cursor, in
# either ordered mode: status 0 above the bucket's cursor (none: above 0), and
# status 2; without it, status 0.
cursor_pending() {
  local db=$1 table=${2:-outbox}
  if [ "$(sql "$db" "SELECT COUNT(*) FROM information_schema.TABLES
        WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'outbox_cursor'")" = 1 ]; then
    sql "$db" "SELECT COUNT(*) FROM \`$table\` o LEFT JOIN outbox_cursor c
      ON c.table_name = '$table' AND c.bucket = o.bucket
      WHERE (o.status = 0 AND o.seq > COALESCE(c.seq, 0)) OR o.status = 2"
  else
    sql "$db" "SELECT COUNT(*) FROM \`$table\` WHERE status = 0"
  fi
}

# cursor_wait_delivered DB SECONDS [TABLE]: 0 once no row is pending.
cursor_wait_delivered() {
  local i
  for i in $(seq 1 $(($2 * 2))); do
    [ "$(cursor_pending "$1" "${3:-}" 2>/dev/null)" = 0 ] && return 0
    sleep 0.5
  done
  return 1
}

# cursor_rows_clean DB MODE: no row was charged for a fault that was not its
# own: no attempt counted, none dead; and in MODE --cursor no row was written
# (status 0 throughout), in --ordered every row is marked (status 1).
cursor_rows_clean() {
  local want=0
  [ "$2" = --ordered ] && want=1
  assert_eq "$(sql "$1" 'SELECT COALESCE(SUM(attempt_count), 0) FROM outbox')" 0 "attempts counted"
  assert_eq "$(sql "$1" 'SELECT COUNT(*) FROM outbox WHERE status = -1')" 0 "dead rows"
  assert_eq "$(sql "$1" "SELECT COUNT(*) FROM outbox WHERE status <> $want")" 0 "rows with a status other than $want"
}

# cursor_stream_check DB STREAM FILE [HEADER]: the stream holds every row of
# DB's outbox table once (ids listed into FILE), nothing else, and no
# aggregate out of order: header HEADER (agg_seq) grows per aggregate in
# stream order.
cursor_stream_check() {
  local db=$1 stream=$2 file=$3 h=${4:-agg_seq} out n
  ids "$db" >"$file"
  n=$(wc -l <"$file")
  out=$(streamcheck --stream "$stream" --subject '>' --check-order "$h" --expect-ids "$file" || true)
  echo "$out" | head -20
  assert_eq "$(field "$(echo "$out" | grep '^messages=')" messages)" "$n" "messages in the stream (rows committed)"
  assert_eq "$(field "$(echo "$out" | grep '^messages=')" distinct)" "$n" "distinct ids in the stream"
  assert_eq "$(field "$(echo "$out" | grep '^expected=')" missing)" 0 "committed rows missing from the stream"
  assert_eq "$(field "$(echo "$out" | grep '^expected=')" extra)" 0 "ids in the stream that are no row"
  assert_eq "$(field "$(echo "$out" | grep '^order_checked=')" order_violations)" 0 "aggregates out of order"
}
