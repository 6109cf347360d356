# SPDX-License-Identifier: Apache-2.0
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
pids=()
trap 'for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
  "$OUTBOX_TEST_SERVERS" thaw-gnode "$OUTBOX_TEST_GALERA_DIR" 3 2>/dev/null || true
  rm -rf "$work"' EXIT

galera_synced 3
galera_db_fresh $db
stream_delete $stream

# Paced so that the producers outlast the freeze's first seconds.
galera_node3_lost $db $stream $prefix "$work" "DO SLEEP(0.05)" freeze-gnode frozen ": no answer"
awk -v t="$took" 'BEGIN { exit !(t < 15) }' ||
  echo "NOTE: the move took ${took} s, past the 15 s of docs/galera.md (A frozen node)"

kill -TERM "${pids[0]}"
rc=0
wait "${pids[0]}" || rc=$?
pids=()
assert_eq "$rc" 0 "exit status of the relay"
galera_end $db $stream 10000 "$work"

"$OUTBOX_TEST_SERVERS" thaw-gnode "$OUTBOX_TEST_GALERA_DIR" 3
galera_synced 3
