# SPDX-License-Identifier: Apache-2.0
# Issue 37, item 8: a server whose wait_timeout is 3 s (private servers).
# Asserts:
# - an idle unordered relay keeps its sessions: over 8 s of idling nothing is
#   lost, no reconnect is counted, no line is logged (it reconnected every
#   3 s with "bad file descriptor" before);
# - a relay frozen past the wait_timeout (SIGSTOP 5 s) finds its sessions
#   closed and says why in words ("... sat idle for ... (its wait_timeout is
#   3 s)"), once per connection, never "bad file descriptor", and then
#   stays quiet; rows written afterwards are delivered once.
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/private.sh"
db=it_fault_wait_timeout stream=IT_FAULT_WAIT_TIMEOUT prefix=itfwaitto
work=$(mktemp -d) RELAY_PID=
cleanup() {
  [ -z "$RELAY_PID" ] || { kill -CONT $RELAY_PID; kill -KILL $RELAY_PID; } 2>/dev/null || true
  private_cleanup
  rm -rf "$work"
}
trap cleanup EXIT
private_db_and_nats "$work/srv"
db_fresh $db
stream_delete $stream
MDB -e "SET GLOBAL wait_timeout = 3"
relay_bg "$work/relay.log" $db $stream $prefix --http 127.0.0.1:0
hport=$(http_port "$work/relay.log")
ready() { [ "$(http_code $hport /readyz)" = 200 ]; }
wait_until 30 "the relay ready" ready
lines=$(wc -l <"$work/relay.log")
sleep 8 # idle, well past the server's wait_timeout
m=$(metrics $hport)
assert_eq "$(metric_value "$m" 'outbox_relay_database_reconnects_total{table="outbox"}')" 0 \
  "reconnects over 8 s of idling"
assert_eq "$(($(wc -l <"$work/relay.log") - lines))" 0 "log lines over 8 s of idling"

kill -STOP $RELAY_PID
sleep 5 # frozen past the wait_timeout: the server closes every session
kill -CONT $RELAY_PID
said="sat idle for [0-9.]+ s \(its wait_timeout is 3 s\)"
wait_until 30 "the closed sessions said" log_has "$work/relay.log" "$said"
wait_until 30 "the relay ready again" ready
sleep 7 # the new sessions outlive the wait_timeout twice over
n=$(log_count "$work/relay.log" "$said")
echo "lines naming the wait_timeout: $n"
[ "$n" -ge 1 ] && [ "$n" -le 4 ] || { show_log "$work/relay.log"; fail "$n lines named the wait_timeout (one per connection at most)"; }
assert_eq "$(log_count "$work/relay.log" "bad file descriptor")" 0 "lines saying 'bad file descriptor'"
lost=$(log_count "$work/relay.log" "lost")
[ "$lost" -le 4 ] || { show_log "$work/relay.log"; fail "$lost lines of lost connections after one freeze"; }

seed $db 50 128
wait_sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1' 50 30 ||
  { show_log "$work/relay.log" 20; fail "the rows written after the freeze were not delivered"; }
kill -TERM $RELAY_PID
wait_exit $RELAY_PID 15
assert_eq "$WAIT_RC" 0 "relay exit status after SIGTERM"
stream_once $stream 50
