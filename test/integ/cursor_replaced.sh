# SPDX-License-Identifier: Apache-2.0
# Issue 37, points 1 and 2: cursor mode takes every row at or below a cursor
# for delivered, which holds only for the table the cursors were written for
# and only while seq is the server's. The class, not the case:
#   - a TRUNCATE while no relay runs, followed by as many rows as before and
#     more (the counter passes every cursor), a RENAME TABLE that swaps in a
#     new table: a --cursor relay exits 1 naming the table replaced and
#     cursor-reset, publishes nothing; status exits 1; cleanup deletes
#     nothing; after cursor-reset every row of the table now there is sent;
#   - the same under a running relay: /readyz 503, the mismatch metric 1, one
#     error line, nothing published until cursor-reset;
#   - a table without the BEFORE INSERT trigger that sets seq (a swap leaves
#     it behind): the relay exits 1 naming `schema --migrate` and
#     --cursor-trust-seq, and runs with the latter; a trigger dropped under a
#     running relay stops it publishing until it is back.
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/private.sh"
db=it_cursor_replaced stream=IT_CURSOR_REPLACED prefix=itcrepl
work=$(mktemp -d); RELAY_PID=
trap 'kill -KILL $RELAY_PID 2>/dev/null || true; rm -rf "$work"' EXIT
ops() { "$OUTBOX_TEST_RELAY" "$@" --db "${OUTBOX_TEST_DB_URL}$db"; }
drain() { timeout 60 "$OUTBOX_TEST_RELAY" --db "${OUTBOX_TEST_DB_URL}$db" --nats "$OUTBOX_TEST_NATS_URL" \
  --stream $stream --subject-prefix $prefix --no-progress --cursor --drain "$@" >"$work/drain.log" 2>&1; }
messages() { field "$(stream_summary $stream)" messages; }
has_messages() { [ "$(messages)" = "$1" ]; }
readyz_is() { [ "$(http_code $port /readyz)" = "$1" ]; }
witnessed() { [ "$(sql $db "SELECT COUNT(*) > 0 FROM outbox_cursor WHERE witness IS NOT NULL")" = 1 ]; }
readyz_says() { curl -s -m 5 "http://127.0.0.1:$port/readyz" | grep -q -- "$1"; }
refused() { # WHAT PATTERN: the last drain exited 1 naming PATTERN and published nothing new
  local rc=0 before; before=$(messages)
  drain || rc=$?
  { grep -v ' info ' "$work/drain.log" || true; } | sed 's/^/    /'
  assert_eq "$rc" 1 "exit status of a cursor relay on $1"
  grep -q -- "$2" "$work/drain.log" || fail "the refusal on $1 does not say '$2'"
  assert_eq "$(messages)" "$before" "messages published by the refused relay ($1)"
}
delivered() { # WHAT TOTAL
  local rc=0; drain "${@:3}" || rc=$?
  [ "$rc" = 0 ] || show_log "$work/drain.log" 10
  assert_eq "$rc" 0 "drain $1"
  assert_eq "$(messages)" "$2" "messages after $1"
  assert_eq "$(field "$(stream_summary $stream)" distinct)" "$2" "distinct ids after $1"
}
replaced="cursors were checked against, is another row"
repair="outbox-uvrelay cursor-reset --table outbox"

db_fresh $db --cursor
stream_delete $stream
seed $db 120 128
delivered "the first drain" 120

# A TRUNCATE while no relay runs, then as many rows as before, then more.
sql $db "TRUNCATE outbox"
seed $db 120 128
refused "a table truncated and refilled with as many rows" "$replaced"
grep -q "$repair" "$work/drain.log" || fail "the refusal does not name the repair"
seed $db 30 128
refused "a table truncated and refilled with more rows" "$replaced"
rc=0; out=$(ops status 2>&1) || rc=$?
assert_eq "$rc" 1 "exit status of status"
grep -q "^cursor mismatch   the row the cursors name as their witness was replaced" <<<"$out" ||
  fail "status does not report the witness replaced"
rc=0; out=$(ops cleanup --once --older-than 0s 2>&1) || rc=$?
echo "$out" | sed 's/^/    /'
assert_eq "$rc" 1 "exit status of cleanup"
grep -q "$replaced" <<<"$out" || fail "cleanup does not name the table replaced"
assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox')" 150 "rows left by cleanup"
ops cursor-reset | sed 's/^/    /'
delivered "the reset (120, then the 150 of the table now there)" 270

# Cleanup keeps the witness; the relay trusts the table it left.
ops cleanup --once --older-than 0s | sed 's/^/    /'
assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox')" 1 "rows left by cleanup (the witness)"
seed $db 10 128
delivered "a cleanup" 280

# A RENAME TABLE swap: a new table with more rows, without the trigger.
sql $db "CREATE TABLE outbox_new LIKE outbox"
seed $db 400 128 outbox_new
sql $db "RENAME TABLE outbox TO outbox_old, outbox_new TO outbox"
refused "a table swapped in" "$replaced"
ops cursor-reset | sed 's/^/    /'
refused "a table without the seq trigger" "has no BEFORE INSERT trigger that sets seq"
grep -q "schema --migrate --table outbox" "$work/drain.log" || fail "the refusal does not name the migration"
grep -q -- "--cursor-trust-seq" "$work/drain.log" || fail "the refusal does not name --cursor-trust-seq"
delivered "the reset, with --cursor-trust-seq" 680 --cursor-trust-seq
"$OUTBOX_TEST_RELAY" schema --migrate | MDB $db
delivered "schema --migrate" 680

# Under a running relay: a TRUNCATE and more rows again, then a trigger dropped.
relay_bg "$work/relay.log" $db $stream $prefix --cursor --http 127.0.0.1:0
port=$(http_port "$work/relay.log")
seed $db 20 128
wait_until 30 "the relay's 20 rows" has_messages 700
wait_until 30 "the witness" witnessed
sql $db "TRUNCATE outbox"
seed $db 600 128 # the counter passes every cursor
wait_until 30 "/readyz 503" readyz_is 503
# (between the TRUNCATE and the rows the counter tells first)
wait_until 30 "/readyz naming the table replaced" readyz_says "$replaced"
assert_eq "$(metric_value "$(metrics $port)" 'outbox_relay_cursor_mismatch{table="outbox"}')" 1 \
  "outbox_relay_cursor_mismatch"
# (rows above the cursors that left before the check saw the table replaced
# are the new table's own, sent again after the reset under the same ids)
ops cursor-reset | sed 's/^/    /'
wait_until 60 "the 600 rows after the reset" has_messages 1300
wait_until 30 "/readyz 200" readyz_is 200
assert_eq "$(grep -c " error .*publishing nothing and moving no cursor until then" "$work/relay.log")" 1 \
  "error lines about the table replaced"
sql $db "DROP TRIGGER outbox_seq"
wait_until 30 "/readyz 503 without the trigger" readyz_is 503
curl -s -m 5 "http://127.0.0.1:$port/readyz" | grep -q "no BEFORE INSERT trigger" ||
  fail "/readyz does not name the trigger"
"$OUTBOX_TEST_RELAY" schema --migrate | MDB $db
wait_until 30 "/readyz 200 with the trigger back" readyz_is 200
seed $db 5 128
wait_until 30 "rows after the trigger came back" has_messages 1305
kill -TERM $RELAY_PID
wait_exit $RELAY_PID 15
RELAY_PID=
assert_eq "$WAIT_RC" 0 "relay exit status"
assert_eq "$(field "$(stream_summary $stream)" distinct)" 1305 "distinct ids in the stream"
echo "cursor_replaced: ok"
