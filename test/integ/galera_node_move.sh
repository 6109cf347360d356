# SPDX-License-Identifier: Apache-2.0
# A relay given three nodes moves when its node dies: one plain relay with
# --db naming nodes 3, 1 and 2 (it runs on node 3, the first), producers on
# nodes 1 and 2, and node 3 killed with SIGKILL once the relay delivers.
# Every connection of the relay moves to node 1 (the next in the list),
# each logging its move once; the outage costs no attempts; every row ends
# processed and once in the stream, and the relay stops with exit 0 once
# all are. Prints the time from the kill to the first row published
# through node 1. Node 3 is started again at the end (a state transfer).
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

galera_node3_lost $db $stream $prefix "$work" "DO SLEEP(0.02)" kill-gnode killed ""

kill -TERM "${pids[0]}"
rc=0
wait "${pids[0]}" || rc=$?
pids=()
assert_eq "$rc" 0 "exit status of the relay"
galera_end $db $stream 10000 "$work"

"$OUTBOX_TEST_SERVERS" start-gnode "$OUTBOX_TEST_GALERA_DIR" 3
galera_synced 3
