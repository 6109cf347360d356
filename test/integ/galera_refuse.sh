# SPDX-License-Identifier: Apache-2.0
# On a Galera node whose members are all named (wsrep_node_incoming_address
# set on every node, as the fixture does) cursor mode runs: its gap proof
# asks every member (README "On a Galera cluster"). --ordered and --leader
# run there (their leases are rows of the lease table), and the one mode per
# table holds across the cluster: an --ordered relay on node 1 makes a
# --leader relay on node 2 and a plain one on node 3 exit 1, naming
# --ordered. `status` says what the database is. Without the lease table,
# or its grants, a relay there exits 1 naming it; with the README's grants
# and no more, --ordered delivers.
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/galera.sh"
db=it_galera_refuse stream=IT_GALERA_REFUSE prefix=itgr
work=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT

# --cursor --drain on node 2, its own database and stream: it delivers.
galera_db_fresh ${db}_c --cursor
stream_delete ${stream}_C
GSQL 1 ${db}_c "INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload)
  SELECT outbox_uuid_v7(), 'order', CONCAT('o', seq), 'created', JSON_OBJECT('n', seq)
  FROM seq_1_to_10"
rc=0
timeout 60 "$OUTBOX_TEST_RELAY" --db "${OUTBOX_TEST_GALERA_URL2}${db}_c" --nats "$OUTBOX_TEST_NATS_URL" \
  --stream ${stream}_C --subject-prefix ${prefix}c --no-progress --drain --cursor 2>"$work/cursor.log" || rc=$?
grep -E 'database|drained|cannot' "$work/cursor.log" | sed 's/^/    /'
assert_eq "$rc" 0 "exit status of --cursor --drain on a Galera node"
grep -q "info  database: Galera cluster of 3 nodes (Primary), this node Synced" "$work/cursor.log" ||
  fail "--cursor did not log what the database is"
stream_once ${stream}_C 10
assert_eq "$(GSQL 2 ${db}_c "SELECT COUNT(*) FROM outbox_cursor WHERE seq >= 10")" 64 \
  "cursors past the last row"

galera_db_fresh $db --cursor
stream_delete $stream
GSQL 1 $db "INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload)
  SELECT outbox_uuid_v7(), 'order', CONCAT('o', seq), 'created', JSON_OBJECT('n', seq)
  FROM seq_1_to_10"

# An --ordered relay on node 1; a relay of another mode on another node is refused.
galera_relay 1 "$work/ordered.log" $db $stream $prefix --ordered --lease-timeout 3000
pids+=($RELAY_PID)
wait_until 30 "the ordered relay owns buckets" grep -q 'lease: 64 of 64 buckets owned' "$work/ordered.log"
for mode in leader plain; do
  n=2 flag=--leader
  [ $mode = plain ] && n=3 flag=
  eval "url=\$OUTBOX_TEST_GALERA_URL$n"
  rc=0
  timeout 60 "$OUTBOX_TEST_RELAY" --db "${url}$db" --nats "$OUTBOX_TEST_NATS_URL" --stream $stream \
    --subject-prefix $prefix --no-progress --drain $flag 2>"$work/$mode.log" || rc=$?
  grep -E 'lease|cannot' "$work/$mode.log" | sed 's/^/    /'
  assert_eq "$rc" 1 "exit status of the $mode relay on node $n beside --ordered on node 1"
  grep -q "relay cannot go on: table outbox is already relayed in --ordered mode by 1 relay(s)" \
    "$work/$mode.log" || fail "the $mode relay did not name the other mode"
done
# The refused relays leave no presence row behind.
assert_eq "$(GSQL 1 $db "SELECT COUNT(*) FROM outbox_lease WHERE kind = 'i' AND mode <> 'm'")" 0 \
  "presence rows of the refused relays"
stream_once $stream 10
kill -TERM "${pids[0]}"
rc=0
wait "${pids[0]}" || rc=$?
pids=()
assert_eq "$rc" 0 "exit status of the ordered relay"

out=$("$OUTBOX_TEST_RELAY" status --db "${OUTBOX_TEST_GALERA_URL3}$db")
echo "$out"
line=$(echo "$out" | sed -n 's/^database          //p')
case "$line" in
  "Galera cluster of 3 nodes (Primary), this node Synced, members "*"; the maintenance lock below is this node's only, the leases are the lease table's") ;;
  *) fail "status did not say what the database is" ;;
esac
members=$(echo "$line" | sed 's/.*members \([^;]*\);.*/\1/' | tr ',' '\n' | sort | tr '\n' ' ')
assert_eq "$members" "$(echo "$OUTBOX_TEST_GALERA_ADDRESSES" | tr ',' '\n' | sort | tr '\n' ' ')" \
  "members status names"

# Without the lease table a relay on a Galera node stops at start, naming it.
GSQL 1 $db "DROP TABLE outbox_lease"
rc=0
timeout 60 "$OUTBOX_TEST_RELAY" --db "${OUTBOX_TEST_GALERA_URL2}$db" --nats "$OUTBOX_TEST_NATS_URL" \
  --stream $stream --subject-prefix $prefix --no-progress --drain --ordered 2>"$work/nolease.log" || rc=$?
grep 'cannot go on' "$work/nolease.log" | sed 's/^/    /'
assert_eq "$rc" 1 "exit status of --ordered without the lease table"
grep -qF "relay cannot go on: on a Galera node the leases are rows of the lease table \`outbox_lease\`, which this relay cannot use (1146 " \
  "$work/nolease.log" || fail "the relay did not name the lease table"
grep -qF "create it with \`outbox-uvrelay schema --no-function --table outbox | mariadb <database>\`" \
  "$work/nolease.log" || fail "the relay did not say how to make the lease table"

# The README's grants, and no more: without those on the lease table the
# relay stops naming it (1142); with them --ordered delivers.
"$OUTBOX_TEST_RELAY" schema --no-function --table outbox | GROOT 1 $db # the README's recipe
assert_eq "$(GSQL 2 $db "SELECT COUNT(*) FROM outbox_lease")" 0 "rows of the new lease table"
GSQL 1 $db "INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload)
  SELECT outbox_uuid_v7(), 'order', CONCAT('p', seq), 'created', JSON_OBJECT('n', seq)
  FROM seq_1_to_10"
GSQL 1 "" "DROP USER IF EXISTS 'g_glease'@'%'; CREATE USER 'g_glease'@'%' IDENTIFIED BY 'pw';
  GRANT SELECT, UPDATE ON $db.outbox TO 'g_glease'@'%';
  GRANT SELECT, DELETE ON $db.outbox_cursor TO 'g_glease'@'%'"
gurl=$(echo "$OUTBOX_TEST_GALERA_URL2" | sed 's|//[^@]*@|//g_glease:pw@|')
rc=0
timeout 60 "$OUTBOX_TEST_RELAY" --db "${gurl}$db" --nats "$OUTBOX_TEST_NATS_URL" --stream $stream \
  --subject-prefix $prefix --no-progress --drain --ordered 2>"$work/nogrant.log" || rc=$?
grep 'cannot go on' "$work/nogrant.log" | sed 's/^/    /'
assert_eq "$rc" 1 "exit status of --ordered without grants on the lease table"
grep -qF "lease table \`outbox_lease\`, which this relay cannot use (1142 " "$work/nogrant.log" ||
  fail "the relay did not name the lease table's missing grant"
GSQL 1 "" "GRANT SELECT, INSERT, UPDATE, DELETE ON $db.outbox_lease TO 'g_glease'@'%'"
rc=0
timeout 60 "$OUTBOX_TEST_RELAY" --db "${gurl}$db" --nats "$OUTBOX_TEST_NATS_URL" --stream $stream \
  --subject-prefix $prefix --no-progress --drain --ordered 2>"$work/granted.log" || rc=$?
tail -2 "$work/granted.log" | sed 's/^/    /'
assert_eq "$rc" 0 "exit status of --ordered with the README's grants"
stream_once $stream 20
GSQL 1 "" "DROP USER 'g_glease'@'%'"
