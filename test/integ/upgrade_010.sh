# SPDX-License-Identifier: Apache-2.0
# Upgrading from 0.1.0, as docs/upgrading.md and CHANGELOG.md say it: tables made from the
# schema 0.1.0 printed (test/fixtures/0.1.0), plain, binary, ordered and
# cursor, each holding rows in every state 0.1.0 leaves (delivered, pending,
# retrying and due, dead; the cursor table's cursors mid-table with a row
# in the retry lane below them); the page's schema steps, twice (they are
# safe to repeat); then today's relay drains each: every row not yet
# delivered is once in the stream and no delivered one, dead rows stay dead,
# the cursors go on from where they were, each aggregate in order. Then the
# page's schema rollback: the tables are as 0.1.0 made them again, and
# rows inserted after it are delivered. The 0.1.0 binary itself is not run
# here (its source is not kept): docs/upgrading.md says how that was tried.
. "$(dirname "$0")/../harness/lib.sh"
db=it_upgrade010 stream=IT_UPGRADE010 prefix=itupg010
src=$(cd "$(dirname "$0")/../.." && pwd)
fx=$src/test/fixtures/0.1.0
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
kinds=(plain binary ordered cursor)
declare -A fixture=([plain]=schema.sql [binary]=schema_binary.sql [ordered]=schema_ordered.sql
  [cursor]=schema_ordered.sql)
declare -A mode=([plain]= [binary]= [ordered]=--ordered [cursor]=--cursor)

# block TITLE [FILE]: the code block of FILE (docs/upgrading.md) whose first
# line is "# TITLE".
block() {
  awk -v t="# $1" 'p && /^```$/ { exit } p { print } prev ~ /^```/ && $0 == t { p = 1 } { prev = $0 }' \
    "${2:-$src/docs/upgrading.md}"
}
# CHANGELOG.md's Upgrading block shows the same commands.
for t in "0.1.0 to 0.2.0: a plain table" "0.1.0 to 0.2.0: an --ordered, --leader or --cursor table" \
  "0.2.0 back to 0.1.0: the schema"; do
  [ -n "$(block "$t")" ] && [ "$(block "$t")" = "$(block "$t" "$src/CHANGELOG.md")" ] ||
    fail "docs/upgrading.md and CHANGELOG.md differ on \"# $t\""
done
# run_block TITLE DB: each line of the block, on DB (the page's database is shop).
run_block() {
  local lines line
  lines=$(block "$1")
  [ -n "$lines" ] || fail "docs/upgrading.md has no block \"# $1\""
  while IFS= read -r line; do
    line=$(sed -e "s#^outbox-uvrelay #\"\$OUTBOX_TEST_RELAY\" #" -e "s#mariadb shop#MDB $2#g" <<<"$line")
    eval "$line" || fail "the line of \"# $1\" failed: $line"
  done <<<"$lines"
}
# structure DB: the outbox table's definition (its counter left out), the
# database's tables and triggers.
structure() {
  MDB -N -B "$1" -e "SHOW CREATE TABLE outbox" | sed 's/ AUTO_INCREMENT=[0-9]*//'
  sql "$1" "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = '$1' ORDER BY 1;
    SELECT TRIGGER_NAME FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = '$1' ORDER BY 1"
}
# drain_all WHAT: today's relay drains every table at once (--drain, in its
# table's mode), each into its own stream; all must exit 0.
drain_all() {
  local k pids=()
  for k in "${kinds[@]}"; do
    relay "${db}_$k" "${stream}_${k^^}" "${prefix}$k" ${mode[$k]} --drain 2>"$work/$k.log" &
    pids+=($!)
  done
  for k in "${kinds[@]}"; do
    wait "${pids[0]}" || { show_log "$work/$k.log"; fail "$k: the relay's drain $1"; }
    pids=("${pids[@]:1}")
  done
}
at() { echo "aggregate_id = 'a$1' AND JSON_VALUE(headers, '\$.agg_seq') = '$2'"; }

# --- tables as 0.1.0 made them, with its rows -------------------------------
# 10 aggregates of 10 rows, inserted in turn (the ordered tables' seq is
# 1..100, a0's rows 1, 11, ..., 91), agg_seq counting each aggregate's rows.
# rows KIND: the rows, and the states 0.1.0 left them in, as SQL.
rows() {
  local i
  for i in $(seq 0 99); do
    echo "INSERT INTO outbox (aggregate_type, aggregate_id, event_type, payload, headers)
      VALUES ('order', 'a$((i % 10))', 'created', '{\"n\": $i}', JSON_OBJECT('agg_seq', '$((i / 10))'));"
  done
  # retrying: a2's fifth row failed twice and is due again; dead: a1's sixth.
  echo "UPDATE outbox SET attempt_count = 2, last_error = 'publish failed',
    next_attempt_at = NOW(6) - INTERVAL 1 SECOND WHERE $(at 2 4);
  UPDATE outbox SET status = -1, attempt_count = 5, last_error = 'dead in 0.1.0',
    processed_at = NOW(6) WHERE $(at 1 5);"
  if [ "$1" = cursor ]; then
    # Every bucket's cursor at seq 50: rows 1..50 delivered (and never
    # written, as cursor mode leaves them), but a2's fifth row (seq 43),
    # which the cursor passed in the retry lane (status 2).
    echo "INSERT INTO outbox_cursor (table_name, bucket, seq) SELECT 'outbox', seq, 50 FROM seq_0_to_63;
      UPDATE outbox SET status = 2 WHERE $(at 2 4);"
  else
    # Delivered by 0.1.0: each aggregate's first three rows.
    echo "UPDATE outbox SET status = 1, processed_at = NOW(6) WHERE JSON_VALUE(headers, '\$.agg_seq') < '3';"
  fi
}
for k in "${kinds[@]}"; do
  d=${db}_$k
  MDB -e "DROP DATABASE IF EXISTS $d; CREATE DATABASE $d;
    DROP DATABASE IF EXISTS ${d}_base; CREATE DATABASE ${d}_base"
  # The schema alone in ${d}_base: what the rollback must give back.
  MDB "${d}_base" <"$fx/${fixture[$k]}"
  structure "${d}_base" >"$work/$k.base"
  { cat "$fx/${fixture[$k]}"; rows $k; } | MDB "$d"
  # The rows due: not delivered (nor dead).
  case $k in
  cursor) ids "$d" "(seq > 50 AND status = 0) OR status = 2" >"$work/$k.due" ;;
  *) ids "$d" "status = 0" >"$work/$k.due" ;;
  esac
done
echo "ok: tables and rows as 0.1.0 left them ($SECONDS s)"

# --- the upgrade: docs/upgrading.md's steps, twice ---------------------------
for k in "${kinds[@]}"; do
  d=${db}_$k
  for _ in 1 2; do
    case $k in
    plain | binary) run_block "0.1.0 to 0.2.0: a plain table" "$d" ;;
    *) run_block "0.1.0 to 0.2.0: an --ordered, --leader or --cursor table" "$d" ;;
    esac
  done
  want="1 0"
  case $k in ordered | cursor) want="1 1" ;; esac
  assert_eq "$(sql "$d" "SELECT (SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = '$d'
    AND TABLE_NAME = 'outbox_lease'), (SELECT COUNT(*) FROM information_schema.TRIGGERS
    WHERE TRIGGER_SCHEMA = '$d' AND TRIGGER_NAME = 'outbox_seq')" | tr '\t' ' ')" "$want" \
    "$k: the lease table, the seq trigger"
done
echo "ok: the upgrade steps, twice, on every kind of table ($SECONDS s)"

# --- today's relay drains each table ------------------------------------------
for k in "${kinds[@]}"; do stream_delete "${stream}_${k^^}"; done
drain_all "after the upgrade"
for k in "${kinds[@]}"; do
  d=${db}_$k
  assert_eq "$(sql "$d" "SELECT COUNT(*) FROM outbox WHERE status = -1")" 1 "$k: dead rows"
  assert_eq "$(sql "$d" "SELECT attempt_count FROM outbox WHERE status = -1 AND $(at 1 5)")" 5 \
    "$k: the dead row as 0.1.0 left it"
  if [ "$k" = cursor ]; then
    # The rows below the cursors stay as they were (status 0, never written);
    # every cursor that moved went on from 50.
    assert_eq "$(sql "$d" "SELECT COUNT(*) FROM outbox WHERE seq <= 50 AND status = 0
      AND attempt_count = 0 AND processed_at IS NULL")" 49 "cursor: rows below the cursors untouched"
    assert_eq "$(sql "$d" "SELECT MIN(seq) >= 50 FROM outbox_cursor WHERE table_name = 'outbox'")" 1 \
      "cursor: no cursor went back"
    assert_eq "$(sql "$d" "SELECT COUNT(*) FROM (SELECT bucket, MAX(seq) top FROM outbox GROUP BY bucket) t
      JOIN outbox_cursor c ON c.table_name = 'outbox' AND c.bucket = t.bucket WHERE c.seq < t.top")" 0 \
      "cursor: every bucket's cursor past its last row"
    assert_eq "$(sql "$d" "SELECT status FROM outbox WHERE $(at 2 4)")" 1 "cursor: the lane's row"
  else
    assert_eq "$(sql "$d" "SELECT COUNT(*) FROM outbox WHERE status = 1")" 99 "$k: processed rows"
  fi
done
echo "ok: today's relay drained every table (the stream is read at the end) ($SECONDS s)"

# --- the rollback: docs/upgrading.md's schema steps ---------------------------
# The tables are as 0.1.0 made them again; the rows today's relay left are in
# states 0.1.0 writes (0, 1, -1, 2); rows inserted now are delivered (a relay
# upgraded before its schema runs on this schema too), except by a cursor
# relay: it refuses a table without its trigger and witness, naming the step.
for k in "${kinds[@]}"; do
  d=${db}_$k
  run_block "0.2.0 back to 0.1.0: the schema" "$d"
  structure "$d" >"$work/$k.now"
  diff "$work/$k.base" "$work/$k.now" || fail "$k: the schema after the rollback is not 0.1.0's"
  assert_eq "$(sql "$d" "SELECT COUNT(*) FROM outbox WHERE status NOT IN (0, 1, -1, 2)")" 0 \
    "$k: row states 0.1.0 knows"
  sql "$d" "INSERT INTO outbox (aggregate_type, aggregate_id, event_type, payload, headers)
    VALUES ('order', 'a0', 'created', '{}', JSON_OBJECT('agg_seq', '10'))"
  [ "$k" = cursor ] || ids "$d" "$(at 0 10)" >>"$work/$k.due"
done
rc=0
relay "${db}_cursor" "${stream}_CURSOR" "${prefix}cursor" --cursor --drain 2>"$work/cursor.log" || rc=$?
assert_eq "$rc" 1 "a cursor relay on the rolled-back table"
grep -q 'schema --migrate' "$work/cursor.log" || fail "the cursor relay's refusal names schema --migrate"
kinds=(plain binary ordered)
drain_all "after the rollback"
kinds=(plain binary ordered cursor)
echo "ok: the schema rolled back to 0.1.0's ($SECONDS s)"

# --- the streams: every row due once, and no other ----------------------------
# (no delivered row sent again, by either relay), each aggregate in order in
# the ordered tables. The streams are read at once (a read takes seconds).
for k in "${kinds[@]}"; do
  order=()
  case $k in ordered | cursor) order=(--check-order agg_seq) ;; esac
  { streamcheck --stream "${stream}_${k^^}" --subject '>' --expect-ids "$work/$k.due" "${order[@]}" \
      >"$work/$k.stream" || true; } &
done
wait
for k in "${kinds[@]}"; do
  n=$(wc -l <"$work/$k.due") out=$(grep -E '^(messages|expected|order)' "$work/$k.stream" || true)
  echo "$out"
  summary=$(grep '^messages=' <<<"$out" || true)
  assert_eq "$(field "$summary" messages) $(field "$summary" distinct)" "$n $n" "$k: messages, distinct"
  assert_eq "$(field "$(grep '^expected=' <<<"$out")" missing)" 0 "$k: rows due missing"
  case $k in
  ordered | cursor) assert_eq "$(field "$(grep '^order_checked=' <<<"$out")" order_violations)" 0 \
    "$k: aggregates out of order" ;;
  esac
done
for k in "${kinds[@]}"; do MDB -e "DROP DATABASE ${db}_${k}_base"; done
echo "upgrade_010: ok"
