# SPDX-License-Identifier: Apache-2.0
# --log-file with --log-format logfmt: lines are logfmt, URL passwords never
# appear, SIGHUP reopens the file after a rotation. An --http address that is
# taken stops the start with exit status 2.
. "$(dirname "$0")/../harness/lib.sh"
db=it_logfile stream=IT_LOGFILE prefix=itlogfile
work=$(mktemp -d); RELAY_PID=; trap 'kill $RELAY_PID 2>/dev/null || true; rm -rf "$work"' EXIT
db_fresh $db
stream_delete $stream
seed $db 500 256
relay_bg "$work/stderr.log" $db $stream $prefix --log-file "$work/relay.log" --log-format logfmt \
  --http 127.0.0.1:0
for i in $(seq 1 100); do grep -q "port [0-9]" "$work/relay.log" 2>/dev/null && break; sleep 0.1; done
port=$(http_port "$work/relay.log")
for i in $(seq 1 100); do
  [ "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 0')" = 0 ] && break
  sleep 0.1
done
mv "$work/relay.log" "$work/relay.log.1"
kill -HUP $RELAY_PID
for i in $(seq 1 50); do [ -s "$work/relay.log" ] && break; sleep 0.1; done
grep -q 'msg="SIGHUP: log file reopened"' "$work/relay.log" ||
  fail "the new file got the SIGHUP line"
assert_eq "$(http_code $port /healthz)" 200 "/healthz after SIGHUP"

# A second relay on the same --http port: refused at start, exit status 2.
rc=0
relay $db $stream $prefix --http "127.0.0.1:$port" 2>"$work/second.log" || rc=$?
assert_eq "$rc" 2 "exit status when the --http address is taken"
grep -q "cannot listen on 127.0.0.1:$port" "$work/second.log" || fail "$(cat "$work/second.log")"

seed $db 100 256
for i in $(seq 1 100); do
  [ "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 0')" = 0 ] && break
  sleep 0.1
done
kill -TERM $RELAY_PID
rc=0; wait $RELAY_PID || rc=$?
assert_eq "$rc" 0 "relay exit status"
cat "$work/relay.log.1" "$work/relay.log" >"$work/all.log"
if grep -q . <<<"$(grep -v '^ts=[^ ]* level=[a-z]* msg="' "$work/all.log")"; then
  grep -v '^ts=' "$work/all.log" | head; fail "every line is logfmt"
fi
grep -q 'msg="stopping' "$work/relay.log" || { cat "$work/relay.log"; fail "the stop went to the new file"; }
! grep -qF ":$OUTBOX_TEST_DB_PASSWORD@" "$work/all.log" "$work/stderr.log" || fail "a password in a log"
[ ! -s "$work/stderr.log" ] || { cat "$work/stderr.log"; fail "nothing on stderr with --log-file"; }
echo "ok: logfmt lines, rotated on SIGHUP, no password"
