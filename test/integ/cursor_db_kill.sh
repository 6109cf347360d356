# SPDX-License-Identifier: Apache-2.0
# Issue 22: mariadbd killed with SIGKILL and restarted (crash recovery) while
# one --cursor relay delivers a backlog of 20,000 rows and three producers
# insert (private servers: the shared ones are left alone). The producers
# reconnect and check their statements in doubt (only rows in the table
# after the restart count).
# Asserts:
# - the relay recovers by itself: the same process delivers every committed
#   row, counts the lost connections, reports the database up and no gap
#   left open (those of the transactions the crash rolled back), exits 0;
# - the outage costs no row anything: no attempt, none dead, and in cursor
#   mode no row written;
# - no bucket's cursor ever went back (sampled every 0.2 s, across the crash:
#   a cursor the relay wrote is durable);
# - the stream holds every committed row once (what the relay publishes
#   again after the crash is absorbed by Msg-Id dedup) and nothing else, and
#   no aggregate out of order (the producer's counter, header agg_seq).
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/cursor.sh"
mode=$CURSOR_TEST_MODE # (harness/cursor.sh)
db=it_cursor_db_kill stream=IT_CURSOR_DB_KILL prefix=itcdbk
work=$(mktemp -d) RELAY_PID= pids=()
cleanup() {
  local p
  touch "$work/stop" "$work/samples.stop"
  for p in $RELAY_PID "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
  private_cleanup
  rm -rf "$work"
}
trap cleanup EXIT
private_db_and_nats "$work/srv"
db_fresh $db --ordered
stream_delete $stream
t0=$(now_ms)

# A backlog for the relay to be in the middle of: 20,000 rows of producer 0
# in one statement.
cursor_producer $db 0 "$work/stop" 20000 0 80 1
relay_bg "$work/relay.log" $db $stream $prefix $mode --connections 2 --batch 200 \
  --http 127.0.0.1:0
relay=$RELAY_PID
port=$(http_port "$work/relay.log")
cursor_sample_start $db "$work/samples" outbox $mode
pids+=($CURSOR_SAMPLER_PID)
for p in 1 2 3; do
  cursor_producer $db $p "$work/stop" 100 0.2 80 600 &
  pids+=($!)
done
# In the middle of the backlog: once 2,000 of its rows are published,
# whatever the machine's speed.
wait_until 60 "2000 rows published" metric_at_least $port \
  'outbox_relay_published_total{table="outbox",result="stored"}' 2000
before=$(sql $db 'SELECT COUNT(*) FROM outbox')
echo "killing mariadbd with $before rows inserted, $(cursor_pending $db) pending"
"$OUTBOX_TEST_SERVERS" kill-db "$OUTBOX_TEST_DIR"
killed=$(now_ms)
sleep 2
"$OUTBOX_TEST_SERVERS" start-db "$OUTBOX_TEST_DIR"
restarted=$(now_ms)
echo "mariadbd up again $(ms_since "$killed") ms after the kill"
# The producers go on for 6 s once the database answers again.
sleep 6
touch "$work/stop"
for i in 1 2 3; do wait "${pids[$i]}" || fail "producer $i failed"; done
total=$(sql $db 'SELECT COUNT(*) FROM outbox')
doubts=$(cat "$work/stop.doubt" 2>/dev/null || true)
echo "producers stopped: $total rows committed ($before before the kill); statements in doubt: $(echo -n "$doubts" | grep -c . || true)"
[ -n "$doubts" ] && echo "$doubts" | sed 's/^/    /'
[ "$total" -gt "$before" ] || fail "no row committed after the restart"
cursor_wait_delivered $db 90 || { show_log "$work/relay.log"; fail "$(cursor_pending $db) of $total rows still pending after 90 s"; }
kill -0 $relay 2>/dev/null || { show_log "$work/relay.log"; fail "the relay did not survive the restart"; }
cursor_sample_fresh "$work/samples"
cursor_sample_stop "$work/samples"
text=$(metrics $port)
m() { metric_value "$text" "$1{table=\"outbox\"${2:-}}"; }
lost=$(m outbox_relay_database_reconnects_total)
echo "relay: $lost lost database connection(s) counted, $(m outbox_relay_database_connections) up at the end"
[ "${lost:-0}" -ge 1 ] || { show_log "$work/relay.log"; fail "no lost connection counted (${lost:-absent})"; }
assert_eq "$(m outbox_relay_up ',dependency="database"')" 1 "up{dependency=database} at the end"
# The transactions the crash rolled back left gaps: all resolved.
[ "$mode" = --cursor ] && assert_eq "$(m outbox_relay_cursor_gap_age_seconds)" 0 "age of the oldest open gap at the end"
kill -TERM $relay
wait_exit $relay 30
RELAY_PID=
assert_eq "$WAIT_RC" 0 "exit status of the relay (never restarted)"
cursor_rows_clean $db $mode
cursor_never_back "$work/samples" 32
after=$(awk -v t="$restarted" '$1 > t' "$work/samples" | wc -l)
echo "cursor samples after the restart: $after"
[ "$after" -gt 0 ] || fail "no cursor sampled after the restart"
cursor_stream_check $db $stream "$work/ids"
echo "cursor_db_kill ($mode): $total rows; $(ms_since $t0) ms"
