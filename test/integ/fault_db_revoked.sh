# SPDX-License-Identifier: Apache-2.0
# Issue 19, point 3: the relay's user loses UPDATE on the outbox table while
# the relay runs. That error would meet every row alike: the database's fault.
# The relay stops claiming and publishes no row again while it holds (each id
# at most once in the stream over several seconds, no attempt counted), warns
# once, /readyz answers 503 with the error; `--drain` exits 1 naming the grant
# to give; once UPDATE is granted again every row is delivered, once.
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/private.sh"
db=it_fault_revoked stream=IT_FAULT_REVOKED prefix=itfrevoked user=it_revoked
work=$(mktemp -d); RELAY_PID=
trap 'kill -KILL $RELAY_PID 2>/dev/null || true; MDB -e "DROP USER IF EXISTS '"'$user'"'@'"'127.0.0.1'"'" || true; rm -rf "$work"' EXIT
db_fresh $db
stream_delete $stream
MDB -e "DROP USER IF EXISTS '$user'@'127.0.0.1'; CREATE USER '$user'@'127.0.0.1' IDENTIFIED BY 'revoked';
  GRANT SELECT, UPDATE ON $db.outbox TO '$user'@'127.0.0.1'"
url=$(echo "$OUTBOX_TEST_DB_URL" | sed "s|//[^@]*@|//$user:revoked@|")$db
seed $db 200 256
"$OUTBOX_TEST_RELAY" --db "$url" --nats "$OUTBOX_TEST_NATS_URL" --stream $stream \
  --subject-prefix $prefix --no-progress --http 127.0.0.1:0 --connections 2 --batch 50 \
  2>"$work/relay.log" &
RELAY_PID=$!
hport=$(http_port "$work/relay.log")
wait_sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1' 200 30 ||
  { show_log "$work/relay.log" 20; fail "the first 200 rows were not processed"; }
echo "ok: 200 rows processed with SELECT and UPDATE granted"

MDB -e "REVOKE UPDATE ON $db.outbox FROM '$user'@'127.0.0.1'"
seed $db 300 256
sleep 3
lines=$(wc -l <"$work/relay.log")
first=$(stream_summary $stream)
sleep 6
second=$(stream_summary $stream)
echo "3 s after the revoke: $first"
echo "9 s after the revoke: $second"
kill -0 $RELAY_PID 2>/dev/null || { show_log "$work/relay.log"; fail "the relay exited"; }
assert_eq "$(field "$second" messages)" "$(field "$first" messages)" "messages stored between 3 s and 9 s after the revoke"
assert_eq "$(field "$second" messages)" "$(field "$second" distinct)" "messages in the stream (each id at most once)"
assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE attempt_count > 0 OR status = -1')" 0 \
  "rows charged an attempt or dead while UPDATE is revoked"
assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1')" 200 "rows processed while UPDATE is revoked"
more=$(($(wc -l <"$work/relay.log") - lines))
echo "log lines in the 6 s window: $more"
[ "$more" -le 2 ] || { show_log "$work/relay.log" 20; fail "$more log lines in 6 s of a refused privilege"; }
warned=$(grep -c "refuses the relay's statements" "$work/relay.log" || true)
[ "$warned" -ge 1 ] && [ "$warned" -le 2 ] || fail "the refusal warned $warned times (once per connection)"
assert_eq "$(http_code $hport /readyz)" 503 "/readyz while UPDATE is revoked"
reason=$(curl -s -m 5 "http://127.0.0.1:$hport/readyz")
echo "readyz: $reason"
grep -q "1142" <<<"$reason" || fail "/readyz names the error: '$reason'"

# --drain cannot end while the privilege is missing: exit 1 naming the grant.
rc=0
timeout 60 "$OUTBOX_TEST_RELAY" --db "$url" --nats "$OUTBOX_TEST_NATS_URL" --stream $stream \
  --subject-prefix $prefix --no-progress --drain >"$work/drain.out" 2>&1 || rc=$?
tail -3 "$work/drain.out" | sed 's/^/    /'
assert_eq "$rc" 1 "exit status of --drain while UPDATE is revoked"
grep -q "GRANT SELECT, UPDATE" "$work/drain.out" || fail "--drain names the grant to give"

MDB -e "GRANT UPDATE ON $db.outbox TO '$user'@'127.0.0.1'"
wait_sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1' 500 40 ||
  { show_log "$work/relay.log" 20; fail "the rows were not processed within 40 s of the grant"; }
echo "ok: every row processed after the grant"
# Each connection finds out at its next probe (the pause grows to 10 s).
for i in $(seq 1 100); do [ "$(http_code $hport /readyz)" = 200 ] && break; sleep 0.2; done
assert_eq "$(http_code $hport /readyz)" 200 "/readyz within 20 s of the grant"
kill -TERM $RELAY_PID
wait_exit $RELAY_PID 15
assert_eq "$WAIT_RC" 0 "relay exit status after SIGTERM"
assert_eq "$(sql $db 'SELECT MAX(attempt_count) FROM outbox')" 0 "largest attempt_count"
stream_once $stream 500
