# SPDX-License-Identifier: Apache-2.0
# The plain mode loses nothing when a node dies under its relay: three
# relays, one per node, producers on nodes 1 and 2, and node 3 killed with
# SIGKILL while they run. Its relay's open transactions die with the node
# (their rows were never marked on the others) and the relays on nodes 1 and
# 2 deliver them; its relay waits for its database as for any outage, and
# stops cleanly. Every row ends processed and once in the stream, none dead,
# none charged an attempt. The node stays down: this test runs last on the
# fixture (DEPENDS in tests.cmake).
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/galera.sh"
db=it_galera_kill stream=IT_GALERA_KILL prefix=itgk
work=$(mktemp -d)
pids=() ports=()
trap 'for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT

galera_db_fresh $db
stream_delete $stream

galera_relays $db $stream $prefix "$work"

galera_producers $db "$work" 1 2
# Once the relay on node 3 has delivered some rows, its node dies.
galera_first_delivery $db
"$OUTBOX_TEST_SERVERS" kill-gnode "$OUTBOX_TEST_GALERA_DIR" 3
echo "node 3 killed with $(GSQL 1 $db 'SELECT COUNT(*) FROM outbox WHERE status = 1') rows processed"
for p in "${producers[@]}"; do wait "$p" || fail "a producer failed"; done

galera_drained $db
galera_stop "$work"
grep -Eq 'database connection lost|cannot connect to the database' "$work/relay3.log" ||
  fail "the relay on node 3 did not report its database lost"

galera_end $db $stream 10000 "$work"
