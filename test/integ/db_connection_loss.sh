# SPDX-License-Identifier: Apache-2.0
# Issue 29, part 4: a lost database connection is noticed within the bound
# the README states (10 s), whether it ran a statement or sat idle between
# polls, and the health signals follow it. An unordered relay with three
# connections on private servers, a producer writing 40 rows every 0.1 s.
# Asserts:
# - KILL CONNECTION, from another client, of the relay's session that has
#   been idle longest (a worker between polls): the relay logs that
#   worker's loss within 10 s and connects it again (a new session), the
#   connections gauge is back to 3;
# - mariadbd killed with SIGKILL: /readyz answers 503 and
#   outbox_relay_up{dependency="database"} is 0, with the connections gauge
#   at 0, within 10 s; mariadbd started again: /readyz 200, up 1 and the
#   gauge 3 (no dead connection counted);
# - every row committed is in the stream once.
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/private.sh"
. "$(dirname "$0")/../harness/lease.sh"
db=it_db_conn_loss stream=IT_DB_CONN_LOSS prefix=itdcl
work=$(mktemp -d) RELAY_PID= PROD_PID=
cleanup() {
  touch "$work/stop"
  for p in $RELAY_PID $PROD_PID; do kill -KILL "$p" 2>/dev/null || true; done
  private_cleanup
  rm -rf "$work"
}
trap cleanup EXIT
private_db_and_nats "$work/srv"
db_fresh $db
stream_delete $stream
relay_bg "$work/relay.log" $db $stream $prefix --connections 3 --batch 100 --http 127.0.0.1:0
port=$(http_port "$work/relay.log")
m() { metric_value "$(metrics $port)" "$1{table=\"outbox\"${2:-}}"; }
wait_metric() { # NAME LABELS WANT SECONDS: 0 once the metric reads WANT
  local i
  for i in $(seq 1 $(($4 * 10))); do
    [ "$(m "$1" "$2")" = "$3" ] && return 0
    sleep 0.1
  done
  return 1
}
wait_readyz() { # CODE SECONDS
  local i
  for i in $(seq 1 $(($2 * 10))); do
    [ "$(http_code $port /readyz)" = "$1" ] && return 0
    sleep 0.1
  done
  return 1
}
wait_metric outbox_relay_database_connections "" 3 20 || { show_log "$work/relay.log"; fail "the relay did not connect three times"; }
# The producer goes on through the outage: a failed insert is tried again.
( while [ ! -f "$work/stop" ]; do seed $db 40 200 2>/dev/null || true; sleep 0.1; done ) &
PROD_PID=$!
wait_processed $db 400 30 || fail "the relay does not deliver"

# One session killed by the server at another client's request: the worker
# that has been idle longest (parked between polls, no statement running).
session_of() { sed -n "s/.*worker $1: connected to the database (session \([0-9]*\)).*/\1/p" "$work/relay.log" | tail -1; }
sessions="$(session_of 0),$(session_of 1),$(session_of 2)"
victim=$(sql $db "SELECT ID FROM information_schema.PROCESSLIST WHERE ID IN ($sessions)
  AND COMMAND = 'Sleep' ORDER BY TIME_MS DESC LIMIT 1")
[ -n "$victim" ] || fail "no idle session among the workers' ($sessions)"
for w in 0 1 2; do [ "$(session_of $w)" = "$victim" ] && break; done
echo "killing session $victim of worker $w (idle: $(sql $db "SELECT TIME_MS FROM information_schema.PROCESSLIST WHERE ID = $victim") ms)"
sql $db "KILL CONNECTION $victim"
killed=$(now_ms)
wait_log "$work/relay.log" "worker $w: database connection lost" 10 ||
  { show_log "$work/relay.log"; fail "the relay did not notice within 10 s that session $victim was killed"; }
echo "the relay noticed the killed session $victim $(($(now_ms) - killed)) ms after KILL CONNECTION"
grep "worker $w: database connection lost" "$work/relay.log"
wait_metric outbox_relay_database_connections "" 3 15 || fail "worker $w did not connect again"
[ "$(session_of $w)" != "$victim" ] || fail "worker $w still reports session $victim"
assert_eq "$(http_code $port /readyz)" 200 "/readyz with worker $w connected again"

# The whole server killed.
"$OUTBOX_TEST_SERVERS" kill-db "$OUTBOX_TEST_DIR"
killed=$(now_ms)
wait_readyz 503 10 || { show_log "$work/relay.log"; fail "/readyz did not answer 503 within 10 s of the database's death"; }
took=$(($(now_ms) - killed))
echo "/readyz answered 503 ($(curl -s -m 5 http://127.0.0.1:$port/readyz)) ${took} ms after mariadbd was killed"
wait_metric outbox_relay_up ',dependency="database"' 0 10 || fail "up{database} did not go to 0 within 10 s"
wait_metric outbox_relay_database_connections "" 0 10 || fail "the connections gauge did not go to 0 within 10 s"
"$OUTBOX_TEST_SERVERS" start-db "$OUTBOX_TEST_DIR"
restarted=$(now_ms)
wait_readyz 200 30 || { show_log "$work/relay.log"; fail "/readyz did not answer 200 within 30 s of the restart"; }
echo "/readyz answered 200 $(($(now_ms) - restarted)) ms after mariadbd was started again"
wait_metric outbox_relay_database_connections "" 3 30 || fail "the connections gauge is $(m outbox_relay_database_connections), not 3"
assert_eq "$(m outbox_relay_up ',dependency="database"')" 1 "up{database} after the restart"
sleep 2
assert_eq "$(m outbox_relay_database_connections)" 3 "connections up 2 s later (none dead)"

touch "$work/stop"
wait $PROD_PID
PROD_PID=
total=$(sql $db 'SELECT COUNT(*) FROM outbox')
wait_processed $db $total 60 || fail "$(processed $db) of $total rows processed"
kill -TERM $RELAY_PID
wait_exit $RELAY_PID 30
RELAY_PID=
assert_eq "$WAIT_RC" 0 "exit status of the relay"
stream_has_ids $db $stream $total "$work/ids"
echo "db_connection_loss: ok ($total rows)"
