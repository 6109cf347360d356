# SPDX-License-Identifier: Apache-2.0
# Rebuilding a lost stream, as docs/recovery.md says it: plain, ordered and
# cursor tables whose rows the relay delivered (one dead row, pending rows
# added after), the streams deleted, then the page's recipe run as written
# against each table. Then: the stream holds every delivered row once and
# nothing else, each message as the relay had published it (subject,
# headers, data), each aggregate in order; no row of the database changed;
# a second run stores nothing new; bad input publishes nothing and exits 1
# or 2.
. "$(dirname "$0")/../harness/lib.sh"
db=it_republish stream=IT_REPUB prefix=itrepub
src=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
kinds=(plain ordered cursor)
declare -A mode=([plain]= [ordered]=--ordered [cursor]=--cursor)

# block TITLE: the code block of docs/recovery.md whose first line is "# TITLE".
block() {
  awk -v t="# $1" 'p && /^```$/ { exit } p { print } prev ~ /^```/ && $0 == t { p = 1 } { prev = $0 }' \
    "$src/docs/recovery.md"
}
# run_block TITLE KIND: each line of the block, with KIND's table in the
# environment (as a relay's config would give it).
run_block() {
  local lines line
  lines=$(block "$1")
  [ -n "$lines" ] || fail "docs/recovery.md has no block \"# $1\""
  while IFS= read -r line; do
    line=$(sed -e "s#^outbox-uvrelay #\"\$OUTBOX_TEST_RELAY\" #" <<<"$line")
    (env_of "$2" && eval "$line") >>"$work/$2.out" 2>>"$work/$2.err" ||
      { show_log "$work/$2.err"; fail "$2: the line of \"# $1\" failed: $line"; }
  done <<<"$lines"
}
env_of() {
  export OUTBOX_DB="${OUTBOX_TEST_DB_URL}${db}_$1" OUTBOX_NATS="$OUTBOX_TEST_NATS_URL"
  export OUTBOX_STREAM="${stream}_${1^^}" OUTBOX_SUBJECT_PREFIX="$prefix$1"
  case $1 in ordered) export OUTBOX_ORDERED=1 ;; cursor) export OUTBOX_CURSOR=1 ;; esac
}
# dump KIND [FLAGS]: the stream's messages (subject, headers, data), one a
# line, sorted; streamcheck's other lines (the order check) after them.
dump() {
  local k=$1; shift
  streamcheck --stream "${stream}_${k^^}" --subject '>' --dump 100000 "$@" >"$work/raw" || true
  awk '/^---$/ { print m; m = ""; next } /^(subject|header|data)/ { m = m " | " $0 }' "$work/raw" | sort
  grep -E '^order_' "$work/raw" || true
}
checksum() { sql "${db}_$1" "CHECKSUM TABLE outbox; SELECT IFNULL(SUM(CRC32(CONCAT_WS(',', bucket, seq))), 0) FROM outbox_cursor" 2>/dev/null || sql "${db}_$1" "CHECKSUM TABLE outbox"; }

# --- tables whose rows the relay delivered -----------------------------------
# 6 aggregates of 10 rows each, inserted in turn; agg_seq counts each
# aggregate's rows (the order check), a header the message carries.
for k in "${kinds[@]}"; do
  db_fresh "${db}_$k" ${mode[$k]}
  stream_delete "${stream}_${k^^}" >/dev/null 2>&1 || true
  sql "${db}_$k" "INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload, headers)
    SELECT outbox_uuid_v7(), 'order', CONCAT('a', seq % 6), 'created', JSON_OBJECT('n', seq),
      JSON_OBJECT('agg_seq', CAST(seq DIV 6 AS CHAR)) FROM seq_0_to_59"
done
pids=()
for k in "${kinds[@]}"; do
  relay "${db}_$k" "${stream}_${k^^}" "$prefix$k" ${mode[$k]} --drain 2>"$work/$k.log" &
  pids+=($!)
done
for i in "${!kinds[@]}"; do
  wait "${pids[$i]}" || { show_log "$work/${kinds[$i]}.log"; fail "${kinds[$i]}: the drain"; }
done
for k in "${kinds[@]}"; do
  dump "$k" >"$work/$k.before"
  assert_eq "$(wc -l <"$work/$k.before")" 60 "$k: messages the relay delivered"
  # Rows the relay never delivered: pending ones, and a dead one.
  sql "${db}_$k" "INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload, status)
    VALUES (outbox_uuid_v7(), 'order', 'a1', 'late', '{}', 0), (outbox_uuid_v7(), 'order', 'a2', 'dead', '{}', -1)"
  checksum "$k" >"$work/$k.sum"
  stream_delete "${stream}_${k^^}"
done

# --- the recipe, as written ----------------------------------------------------
for k in "${kinds[@]}"; do
  run_block "Recovery 1: count the rows and see how far back the table reaches" "$k"
  grep -q "60 row(s) in range would be published" "$work/$k.out" || { cat "$work/$k.out"; fail "$k: the dry run's count"; }
  grep -q "oldest row in the table 20" "$work/$k.out" || fail "$k: the dry run names the oldest row"
  run_block "Recovery 2: create the stream as the relay would, and publish the rows again" "$k"
  grep -q "60 row(s) published to stream ${stream}_${k^^} under $prefix$k.>: 60 acked, 0 already" "$work/$k.out" ||
    { cat "$work/$k.out"; fail "$k: the summary"; }
  # Each aggregate in order where the relay promises it (seq); a plain
  # table goes in id order, which SQL-made ids of one millisecond do not keep.
  dump "$k" --check-order agg_seq >"$work/$k.after"
  [ "$k" = plain ] || grep order_violations=0 "$work/$k.after" || fail "$k: order per aggregate"
  diff "$work/$k.before" <(grep -v '^order_' "$work/$k.after") ||
    fail "$k: the messages differ from the relay's"
  echo "ok: $k: the stream holds the relay's 60 messages again, byte for byte"
  assert_eq "$(checksum "$k")" "$(cat "$work/$k.sum")" "$k: the tables' checksum"
  # Within the duplicate window a second run stores nothing new.
  run_block "Recovery 3: the last two days only, at most 5000 rows a second" "$k"
  grep -q "60 acked, 60 already in the stream" "$work/$k.out" || fail "$k: the second run"
done

# --- a part, another stream ----------------------------------------------------
rp() { (env_of "$1"; shift; "$OUTBOX_TEST_RELAY" republish "$@"); }
rp ordered --seq 11-20 --stream "${stream}_PART" --subject-prefix "${prefix}part" --create-stream >/dev/null
stream_once "${stream}_PART" 10
id5=$(ids "${db}_plain" "1 ORDER BY id LIMIT 4,1")
rp plain --id-to "$id5" --dry-run | grep -q "^republish outbox: 5 row(s)" || fail "--id-to counts 5 rows"
rp plain --include-dead --dry-run | grep -q "^republish outbox: 61 row(s)" || fail "--include-dead counts the dead row"

# --- read-only grants suffice (docs/security.md) ---------------------------------
MDB -e "DROP USER IF EXISTS 'rp_ro'@'127.0.0.1'; CREATE USER 'rp_ro'@'127.0.0.1' IDENTIFIED BY 'pw';
  GRANT SELECT ON ${db}_cursor.outbox TO 'rp_ro'@'127.0.0.1'"
trap 'MDB -e "DROP USER IF EXISTS '"'"'rp_ro'"'"'@'"'"'127.0.0.1'"'"'" || true; kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
ro() { rp cursor --db "$(echo "$OUTBOX_TEST_DB_URL" | sed "s|//[^@]*@|//rp_ro:pw@|")${db}_cursor" "$@"; }
expect_exit 1 "republish without SELECT on outbox_cursor" ro --dry-run
out=$(ro --dry-run 2>&1 || true)
grep -q "GRANT SELECT ON ${db}_cursor.outbox_cursor TO" <<<"$out" || fail "the missing grant named"
MDB -e "GRANT SELECT ON ${db}_cursor.outbox_cursor TO 'rp_ro'@'127.0.0.1'"
ro 2>/dev/null | grep -q "60 acked, 60 already in the stream" || fail "republish as a read-only user"
echo "ok: republish as a user with SELECT on outbox and outbox_cursor only"

# --- bad input: nothing published ---------------------------------------------
expect_exit 1 "a stream that does not exist" rp plain --stream "${stream}_NOSUCH"
expect_exit 1 "a stream that takes other subjects" rp plain --subject-prefix "${prefix}other"
expect_exit 2 "an empty seq range" rp ordered --seq 20-10
expect_exit 2 "a seq range on a plain table" rp plain --seq 1-10
expect_exit 2 "a malformed time" rp plain --since yesterday
expect_exit 2 "an empty time range" rp plain --since '2026-01-02' --until '2026-01-01'
expect_exit 2 "a malformed id" rp plain --id-from 42
expect_exit 2 "an unknown option" rp plain --from-seq 1
# A stream that refuses the messages (too large): exit 1, where to resume.
streamcheck --stream "${stream}_SMALL" --create "${prefix}small.>" --max-msg-size 64 >/dev/null
out=$(rp ordered --stream "${stream}_SMALL" --subject-prefix "${prefix}small" 2>&1) && fail "a refusing stream: exit 0"
echo "$out" | sed 's/^/    /'
grep -q "resume with --seq 1-18446744073709551615" <<<"$out" || fail "where to resume"
streamcheck --stream "${stream}_NOSUCH" --info-only >/dev/null 2>&1 && fail "a stream was created"
stream_once "${stream}_PLAIN" 60
for k in "${kinds[@]}"; do
  assert_eq "$(checksum "$k")" "$(cat "$work/$k.sum")" "$k: the tables' checksum at the end"
done
