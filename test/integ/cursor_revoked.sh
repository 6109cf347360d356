# SPDX-License-Identifier: Apache-2.0
# Issue 29, point 2: grants missing or revoked under cursor mode.
#   - without INSERT on outbox_cursor, a --cursor --drain relay exits 1
#     within a few seconds naming the grant (it used to retry "initialising
#     failed: 1142" for ever);
#   - UPDATE on outbox_cursor revoked under a running relay: as for UPDATE on
#     the outbox table in the other modes, nothing more is published while
#     it holds, /readyz answers 503 with the error, one error line; once
#     granted again every row is delivered;
#   - PROCESS revoked (seen from the next connection on): /readyz answers 503
#     naming the grant, outbox_relay_cursor_gap_age_seconds keeps growing,
#     one error line; rows are still delivered; once granted again /readyz
#     answers 200 and the cursors pass every row.
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/cursor.sh"
db=it_cursor_revoked stream=IT_CURSOR_REVOKED prefix=itcrevoked user=it_crevoked
work=$(mktemp -d); RELAY_PID=
trap 'kill -KILL $RELAY_PID 2>/dev/null || true; MDB -e "DROP USER IF EXISTS '"'$user'"'@'"'127.0.0.1'"'" || true; rm -rf "$work"' EXIT
db_fresh $db --cursor
stream_delete $stream
streamcheck --stream $stream --create "$prefix.>"
MDB -e "DROP USER IF EXISTS '$user'@'127.0.0.1'; CREATE USER '$user'@'127.0.0.1' IDENTIFIED BY 'rv';
  GRANT SELECT, UPDATE ON $db.outbox TO '$user'@'127.0.0.1';
  GRANT SELECT, UPDATE ON $db.outbox_cursor TO '$user'@'127.0.0.1';
  GRANT PROCESS ON *.* TO '$user'@'127.0.0.1'"
url=$(echo "$OUTBOX_TEST_DB_URL" | sed "s|//[^@]*@|//$user:rv@|")$db
run() { timeout 60 "$OUTBOX_TEST_RELAY" --db "$url" --nats "$OUTBOX_TEST_NATS_URL" --stream $stream \
  --subject-prefix $prefix --no-progress --cursor "$@"; }
messages() { field "$(stream_summary $stream)" messages; }
# kill_sessions: ends every session of the user (global privileges are read
# at connect: a revoked PROCESS shows from the next connection on).
kill_sessions() {
  local id
  for id in $(MDB -N -e "SELECT ID FROM information_schema.PROCESSLIST WHERE USER = '$user'"); do
    MDB -e "KILL CONNECTION $id" 2>/dev/null || true
  done
}
seed $db 100 256

# No INSERT on the cursor table: --drain exits 1 naming the grant.
t0=$(now_ms)
rc=0; run --drain >"$work/drain.log" 2>&1 || rc=$?
took=$(ms_since $t0)
{ grep -v ' info ' "$work/drain.log" || true; } | sed 's/^/    /'
assert_eq "$rc" 1 "exit status of --drain without INSERT on outbox_cursor"
echo "exited after $took ms"
[ "$took" -le 5000 ] || fail "the relay took $took ms to give up"
grep -q "INSERT command denied" "$work/drain.log" || fail "the message does not name the refused INSERT"
grep -qF "GRANT SELECT, INSERT, UPDATE ON <database>.outbox_cursor TO '$user'@'<host>'" "$work/drain.log" ||
  fail "the message does not name the grant"
assert_eq "$(messages)" 0 "messages published without INSERT"

MDB -e "GRANT INSERT ON $db.outbox_cursor TO '$user'@'127.0.0.1'"
"$OUTBOX_TEST_RELAY" --db "$url" --nats "$OUTBOX_TEST_NATS_URL" --stream $stream \
  --subject-prefix $prefix --no-progress --cursor --http 127.0.0.1:0 2>"$work/relay.log" &
RELAY_PID=$!
port=$(http_port "$work/relay.log")
wait_sql $db "SELECT COUNT(*) FROM outbox_cursor WHERE seq >= 100" 64 30 ||
  { show_log "$work/relay.log"; fail "the cursors did not pass the first 100 rows"; }
assert_eq "$(messages)" 100 "messages with every grant"

# UPDATE on the cursor table revoked.
MDB -e "REVOKE UPDATE ON $db.outbox_cursor FROM '$user'@'127.0.0.1'"
seed $db 100 256
for i in $(seq 1 100); do [ "$(http_code $port /readyz)" = 503 ] && break; sleep 0.1; done
reason=$(curl -s -m 5 "http://127.0.0.1:$port/readyz")
echo "readyz: $reason"
assert_eq "$(http_code $port /readyz)" 503 "/readyz without UPDATE on outbox_cursor"
grep -q "1142" <<<"$reason" || fail "/readyz does not name the error"
first=$(messages)
sleep 3
assert_eq "$(messages)" "$first" "messages stored in 3 s while UPDATE is revoked"
assert_eq "$(grep -c ' error .*UPDATE command denied' "$work/relay.log")" 1 "error lines about the refusal"
MDB -e "GRANT UPDATE ON $db.outbox_cursor TO '$user'@'127.0.0.1'"
wait_sql $db "SELECT COUNT(*) FROM outbox_cursor WHERE seq >= (SELECT MAX(seq) FROM outbox)" 64 30 ||
  { show_log "$work/relay.log"; fail "the cursors did not pass every row once UPDATE was granted"; }
assert_eq "$(http_code $port /readyz)" 200 "/readyz once UPDATE is granted again"
assert_eq "$(field "$(stream_summary $stream)" distinct)" 200 "distinct ids after UPDATE came back"

# PROCESS revoked: seen from the next connection on.
MDB -e "REVOKE PROCESS ON *.* FROM '$user'@'127.0.0.1'"
kill_sessions
# A transaction holds a seq open while rows commit above it: a gap that only
# a check of INNODB_TRX can close.
MDB $db -e "BEGIN; INSERT INTO outbox (aggregate_type, aggregate_id, event_type, payload)
  VALUES ('order', 'held', 'created', '{}'); DO SLEEP(1); ROLLBACK" &
hold=$!
sleep 0.3
seed $db 100 256
wait $hold
for i in $(seq 1 100); do [ "$(http_code $port /readyz)" = 503 ] && break; sleep 0.1; done
reason=$(curl -s -m 5 "http://127.0.0.1:$port/readyz")
echo "readyz: $reason"
assert_eq "$(http_code $port /readyz)" 503 "/readyz without PROCESS"
grep -q "GRANT PROCESS" <<<"$reason" || fail "/readyz does not name the grant"
for i in $(seq 1 100); do [ "$(field "$(stream_summary $stream)" distinct)" = 300 ] && break; sleep 0.1; done
assert_eq "$(field "$(stream_summary $stream)" distinct)" 300 "distinct ids without PROCESS (rows still delivered)"
age1=$(metric_value "$(metrics $port)" 'outbox_relay_cursor_gap_age_seconds{table="outbox"}')
sleep 2
age2=$(metric_value "$(metrics $port)" 'outbox_relay_cursor_gap_age_seconds{table="outbox"}')
echo "gap age: $age1 s, then $age2 s"
awk -v a="$age1" -v b="$age2" 'BEGIN { exit !(b >= a + 1.5) }' || fail "the gap age did not grow: $age1 -> $age2"
assert_eq "$(grep -c ' error .*INNODB_TRX' "$work/relay.log")" 1 "error lines about PROCESS"
MDB -e "GRANT PROCESS ON *.* TO '$user'@'127.0.0.1'"
kill_sessions
wait_sql $db "SELECT COUNT(*) FROM outbox_cursor WHERE seq >= (SELECT MAX(seq) FROM outbox)" 64 30 ||
  { show_log "$work/relay.log"; fail "the cursors did not pass every row once PROCESS was granted"; }
for i in $(seq 1 100); do [ "$(http_code $port /readyz)" = 200 ] && break; sleep 0.1; done
assert_eq "$(http_code $port /readyz)" 200 "/readyz once PROCESS is granted again"
kill -TERM $RELAY_PID
wait_exit $RELAY_PID 15
RELAY_PID=
assert_eq "$WAIT_RC" 0 "relay exit status"
assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status <> 0 OR attempt_count > 0')" 0 "rows written"
assert_eq "$(field "$(stream_summary $stream)" distinct)" 300 "distinct ids in the stream"
echo "cursor_revoked: ok"
