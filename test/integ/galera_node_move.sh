# SPDX-License-Identifier: Apache-2.0
# A relay given three nodes moves when its node dies, and moves back when it
# returns: one plain relay with --db naming nodes 3, 1 and 2 (it runs on
# node 3, the first) and --db-failback 5s, producers on nodes 1 and 2, and
# node 3 killed with SIGKILL once the relay delivers.
# 1. Every connection of the relay moves to node 1 (the next in the list),
#    each logging its move once; the outage costs no attempts. While node 3
#    is down, its tries of node 3 (one per 5 s for the relay) are refused
#    and it stays on node 1. Prints the time from the kill to the first row
#    published through node 1.
# 2. Node 3 is started again (a state transfer) and the producers write
#    again: the relay's workers go back to node 3 between two batches, each
#    saying so once, and outbox_relay_database_failbacks_total counts them.
# Every row ends processed and once in the stream, none charged an attempt,
# and the relay stops with exit 0.
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/galera.sh"
db=it_galera_move stream=IT_GALERA_MOVE prefix=itgm
work=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
  GROOT 3 -e "SELECT 1" >/dev/null 2>&1 ||
    "$OUTBOX_TEST_SERVERS" start-gnode "$OUTBOX_TEST_GALERA_DIR" 3 >/dev/null 2>&1 || true
  rm -rf "$work"' EXIT

galera_synced 3
galera_db_fresh $db
stream_delete $stream

GALERA_RELAY_ARGS="--db-failback 5s" \
  galera_node3_lost $db $stream $prefix "$work" "DO SLEEP(0.02)" kill-gnode killed ""
port=$(http_port "$work/relay.log")
failbacks() { metric_value "$(metrics "$port")" 'outbox_relay_database_failbacks_total{table="outbox"}'; }
assert_eq "$(failbacks)" 0 "failbacks while node 3 is down"
grep -q "back on database" "$work/relay.log" && fail "a move back to node 3 while it is down"
# Its refused tries are not news: no connect line at info level but each
# worker's first and its move (4), whatever the number of tries (a period
# more passes first: a try at least, the idle scout's).
sleep 6
tries=$(grep -c "worker [0-9]*: connected to the database" "$work/relay.log")
[ "$tries" -le 4 ] || { show_log "$work/relay.log"; fail "$tries connect lines while node 3 is down"; }

# 2. Node 3 back; rows written again, unpaced, so that full batches keep
# both workers busy: each goes back at its next batch (an idle worker, which
# the scout leaves parked, would go back when it next works).
"$OUTBOX_TEST_SERVERS" start-gnode "$OUTBOX_TEST_GALERA_DIR" 3
galera_synced 3
galera_producers $db "$work" 1 2
# back_on_3: both workers of the relay (a plain relay runs two by default)
# said their move back to node 3.
back_on_3() {
  [ "$(grep -c ': back on database node 1 of 3 (127.0.0.1:[0-9]*), the first listed, after [0-9]* s on node 2 of 3' \
    "$work/relay.log")" -ge 2 ]
}
for i in $(seq 1 1200); do back_on_3 && break; sleep 0.1; done
back_on_3 || { show_log "$work/relay.log"; fail "the relay's workers not back on node 3 within 120 s"; }
for p in "${producers[@]}"; do wait "$p" || fail "a producer failed"; done
galera_drained $db
grep ': back on database' "$work/relay.log" | sed 's/^/    /'
for name in $(grep ': back on database' "$work/relay.log" | sed -E 's/.* info +([^:]*): back on.*/\1/' |
  tr ' ' '_' | sort | uniq -d); do
  fail "connection $name logged more than one move back"
done
n=$(failbacks)
[ "$n" -ge 2 ] || fail "outbox_relay_database_failbacks_total reads $n, expected at least 2"
echo "failbacks counted: $n"
on3=$(GROOT 3 -e "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE USER = 'outbox'
  AND DB = '$db'")
[ "$on3" -ge 2 ] || fail "$on3 session(s) of the relay on node 3, expected at least its 2 workers"

kill -TERM "${pids[0]}"
rc=0
wait "${pids[0]}" || rc=$?
pids=()
assert_eq "$rc" 0 "exit status of the relay"
galera_end $db $stream 20000 "$work"
