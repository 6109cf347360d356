# A relay given three nodes leaves a frozen node: one plain relay with --db
# naming nodes 3, 1 and 2 (it runs on node 3), producers on nodes 1 and 2,
# and node 3 frozen with SIGSTOP once the relay delivers. A frozen server's
# kernel keeps its TCP connections alive, so no connection is lost: the
# relay's cluster watch finds the node silent (its probe, every 10 s, gets
# no answer within 5 s) and every connection of the relay on that node
# moves to node 1 at once. Nothing is charged or lost, every row ends once
# in the stream, and the relay stops with exit 0; node 3 is thawed and
# joins again. Prints the time from the freeze to the first row published
# through node 1, which the README's bound (15 s) covers.
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/galera.sh"
db=it_galera_freeze stream=IT_GALERA_FREEZE prefix=itgf
work=$(mktemp -d)
pids=() ports=()
trap 'for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
  "$OUTBOX_TEST_SERVERS" thaw-gnode "$OUTBOX_TEST_GALERA_DIR" 3 2>/dev/null || true
  rm -rf "$work"' EXIT

galera_synced 3
galera_db_fresh $db
stream_delete $stream

url=$(galera_url $db 3 1 2)
"$OUTBOX_TEST_RELAY" --db "$url" --nats "$OUTBOX_TEST_NATS_URL" --stream $stream \
  --subject-prefix $prefix --no-progress --http 127.0.0.1:0 2>"$work/relay.log" &
pids+=($!)
port=$(http_port "$work/relay.log")

# Paced so that the producers outlast the freeze's first seconds.
GALERA_PACE="DO SLEEP(0.05)" galera_producers $db "$work" 1 2
galera_first_delivery $db
t0=$(galera_now)
"$OUTBOX_TEST_SERVERS" freeze-gnode "$OUTBOX_TEST_GALERA_DIR" 3
echo "node 3 frozen with $(GSQL 1 $db 'SELECT COUNT(*) FROM outbox WHERE status = 1') rows processed"
for p in "${producers[@]}"; do wait "$p" || fail "a producer failed"; done

galera_drained $db
times=$(galera_move_times $db "$work/relay.log" "$t0")
[ -n "$times" ] || { cat "$work/relay.log" >&2; fail "the relay published nothing through another node"; }
took=${times#* }
echo "the relay moved ${times% *} s, and published its first row through node 1 ${took} s, after node 3 was frozen"
awk -v t="$took" 'BEGIN { exit !(t < 15) }' ||
  echo "NOTE: the move took ${took} s, past the README's 15 s"
grep -q 'on database node 2 of 3 (127.0.0.1:[0-9]*); node 1 of 3 (127.0.0.1:[0-9]*) given up: no answer' \
  "$work/relay.log" || { cat "$work/relay.log" >&2; fail "the relay did not log its move to node 1"; }
galera_moves "$work/relay.log"

kill -TERM "${pids[0]}"
rc=0
wait "${pids[0]}" || rc=$?
pids=()
assert_eq "$rc" 0 "exit status of the relay"
galera_end $db $stream 10000 "$work"

"$OUTBOX_TEST_SERVERS" thaw-gnode "$OUTBOX_TEST_GALERA_DIR" 3
galera_synced 3
