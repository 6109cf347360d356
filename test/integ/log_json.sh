# SPDX-License-Identifier: Apache-2.0
# --log-format json from the first line to the last (issue 20), the log
# file's fallback to stderr and SIGUSR1 (issue 19 §4):
#   - a start-up failure (a wrong database password), a usage error and an
#     operator command's failure are JSON lines, like every other line;
#   - a row-level line (a row the database refuses to write) carries the
#     row's id and attempt as fields, not only in its text;
#   - when the log file's directory is gone, SIGHUP's reopen fails and the
#     lines go to stderr, which says so once; a later reopen goes back;
#   - SIGUSR1 logs the totals and does not stop the relay.
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/private.sh"
db=it_log_json stream=IT_LOG_JSON prefix=itlogjson
work=$(mktemp -d); RELAY_PID=
trap 'kill -KILL $RELAY_PID 2>/dev/null || true; rm -rf "$work"' EXIT
db_fresh $db
stream_delete $stream

# all_json FILE: every line of FILE is a JSON object with ts, level and msg.
all_json() {
  python3 -c '
import json, sys
n = 0
for line in open(sys.argv[1]):
    o = json.loads(line)
    assert isinstance(o, dict) and {"ts", "level", "msg"} <= set(o), line
    n += 1
assert n > 0, "no line"
' "$1" || { show_log "$1"; fail "not every line of $1 is JSON"; }
}

# A wrong password: exit 1, and the one line that matters is JSON.
rc=0
"$OUTBOX_TEST_RELAY" --log-format json --no-progress --db "mysql://outbox:wrong@127.0.0.1:$OUTBOX_TEST_DB_PORT/$db" \
  --nats "$OUTBOX_TEST_NATS_URL" --stream $stream --subject-prefix $prefix 2>"$work/login.log" || rc=$?
assert_eq "$rc" 1 "exit status with a wrong password"
all_json "$work/login.log"
grep -qi 'access denied' "$work/login.log" || fail "the cause is named"
! grep -q ':wrong@' "$work/login.log" || fail "the password is in the log"
# A usage error, named by the environment's format too.
rc=0; "$OUTBOX_TEST_RELAY" --log-format json --batch many 2>"$work/usage.log" || rc=$?
assert_eq "$rc" 2 "exit status of a usage error"
all_json "$work/usage.log"
rc=0; OUTBOX_LOG_FORMAT=json "$OUTBOX_TEST_RELAY" --nosuch 2>"$work/usage2.log" || rc=$?
assert_eq "$rc" 2 "exit status of an unknown option"
all_json "$work/usage2.log"
# A log file that cannot be opened at start-up: exit 1, path and cause.
rc=0; "$OUTBOX_TEST_RELAY" --log-format json --db "${OUTBOX_TEST_DB_URL}$db" --nats "$OUTBOX_TEST_NATS_URL" \
  --log-file "$work/nodir/relay.log" 2>"$work/nolog.log" || rc=$?
assert_eq "$rc" 1 "exit status when the log file cannot be opened"
all_json "$work/nolog.log"
grep -qF "cannot open log file $work/nodir/relay.log: No such file or directory" "$work/nolog.log" ||
  fail "the log file's path and cause"
# An operator command's failure.
rc=0; "$OUTBOX_TEST_RELAY" status --log-format json --db "${OUTBOX_TEST_DB_URL}$db" --table nosuch \
  2>"$work/ops.log" || rc=$?
assert_eq "$rc" 1 "exit status of status on a missing table"
all_json "$work/ops.log"
rc=0; "$OUTBOX_TEST_RELAY" schema --log-format json --table 'bad name' 2>"$work/schema.log" >/dev/null || rc=$?
assert_eq "$rc" 2 "exit status of schema with a bad table name"
all_json "$work/schema.log"

# A row the database refuses to write, among good ones: its line has fields.
seed $db 20 256
sql $db "SET SESSION check_constraint_checks = 0;
  INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload)
  VALUES (outbox_uuid_v7(), 'order', 'unwritable', 'created', '{\"broken\": ')"
bad=$(ids $db "aggregate_id = 'unwritable'")
mkdir "$work/logs"
relay_bg "$work/stderr.log" $db $stream $prefix --log-format json --log-file "$work/logs/relay.log" \
  --max-attempts 3 --backoff fixed --backoff-base 200ms --backoff-jitter 0
for _ in $(seq 1 300); do
  [ "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 0')" = 0 ] && break
  sleep 0.1
done
assert_eq "$(sql $db "SELECT status FROM outbox WHERE aggregate_id = 'unwritable'")" -1 "the bad row is dead"
python3 -c '
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
mine = [r for r in rows if r.get("id") == sys.argv[2]]
assert mine, "no line with the row id as a field"
assert all(r["attempt"] >= 1 and r["level"] == "warn" for r in mine), mine
print("ok: row line:", mine[0])
' "$work/logs/relay.log" "$bad" || { show_log "$work/logs/relay.log"; fail "row fields"; }

# SIGUSR1: one line with the totals; the relay keeps running.
kill -USR1 $RELAY_PID
for _ in $(seq 1 50); do grep -q 'SIGUSR1: acked 20, dead 1' "$work/logs/relay.log" && break; sleep 0.1; done
grep -q 'SIGUSR1: acked 20, dead 1' "$work/logs/relay.log" || { show_log "$work/logs/relay.log"; fail "SIGUSR1 totals"; }
kill -0 $RELAY_PID || fail "SIGUSR1 stopped the relay"

# The log directory disappears: SIGHUP's reopen fails, stderr says so once,
# and the lines that follow go there; once it is back, SIGHUP returns.
mv "$work/logs" "$work/logs.old"
kill -HUP $RELAY_PID
for _ in $(seq 1 50); do grep -q 'logging to stderr' "$work/stderr.log" 2>/dev/null && break; sleep 0.1; done
kill -USR1 $RELAY_PID
for _ in $(seq 1 50); do grep -q 'SIGUSR1' "$work/stderr.log" 2>/dev/null && break; sleep 0.1; done
assert_eq "$(grep -c 'logging to stderr until a reopen' "$work/stderr.log")" 1 "the fallback is said once"
grep -q 'SIGUSR1: acked' "$work/stderr.log" || { show_log "$work/stderr.log"; fail "lines go to stderr"; }
mkdir "$work/logs"
kill -HUP $RELAY_PID
for _ in $(seq 1 50); do [ -s "$work/logs/relay.log" ] && break; sleep 0.1; done
grep -q 'logging there again' "$work/logs/relay.log" || fail "the reopened file says so"
kill -TERM $RELAY_PID
rc=0; wait $RELAY_PID || rc=$?
assert_eq "$rc" 0 "exit status after SIGTERM"
all_json "$work/stderr.log"
cat "$work/logs.old/relay.log" "$work/logs/relay.log" >"$work/all.log"
all_json "$work/all.log"
grep -q '"msg":"stopping' "$work/logs/relay.log" || fail "the stop went to the file"
echo "log_json: ok"
