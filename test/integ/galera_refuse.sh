# On a Galera node the modes that rest on node-local locks refuse to start:
# --ordered, --leader and --cursor exit 1 naming the cause, before their
# lease takes any lock. The plain mode runs, and `status` says what the
# database is.
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/galera.sh"
db=it_galera_refuse stream=IT_GALERA_REFUSE prefix=itgr
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

galera_db_fresh $db --cursor
stream_delete $stream
GSQL 1 $db "INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload)
  SELECT outbox_uuid_v7(), 'order', CONCAT('o', seq), 'created', JSON_OBJECT('n', seq)
  FROM seq_1_to_10"

for mode in ordered leader cursor; do
  rc=0
  timeout 60 "$OUTBOX_TEST_RELAY" --db "${OUTBOX_TEST_GALERA_URL2}$db" --nats "$OUTBOX_TEST_NATS_URL" \
    --stream $stream --subject-prefix $prefix --no-progress --drain --$mode 2>"$work/$mode.log" || rc=$?
  sed 's/^/    /' "$work/$mode.log"
  assert_eq "$rc" 1 "exit status of --$mode on a Galera node"
  grep -q "relay cannot go on: $mode mode needs a\{0,1\} *cluster-wide lock" "$work/$mode.log" ||
    fail "--$mode did not name the cause"
  grep -q "the database is a Galera node (a cluster of 3 nodes)" "$work/$mode.log" ||
    fail "--$mode did not name the cluster"
  grep -q "info  database: Galera cluster of 3 nodes (Primary), this node Synced" "$work/$mode.log" ||
    fail "--$mode did not log what the database is"
done
assert_eq "$(GSQL 2 $db 'SELECT COUNT(*) FROM outbox WHERE status <> 0 OR attempt_count > 0')" 0 \
  "rows touched by the refused relays"
assert_eq "$(GSQL 2 $db "SELECT COUNT(*) FROM outbox_cursor")" 0 "cursor rows made by the refused relay"

# The plain mode delivers.
rc=0
timeout 60 "$OUTBOX_TEST_RELAY" --db "${OUTBOX_TEST_GALERA_URL2}$db" --nats "$OUTBOX_TEST_NATS_URL" \
  --stream $stream --subject-prefix $prefix --no-progress --drain 2>"$work/plain.log" || rc=$?
tail -3 "$work/plain.log"
assert_eq "$rc" 0 "exit status of the plain mode on a Galera node"
stream_once $stream 10

out=$("$OUTBOX_TEST_RELAY" status --db "${OUTBOX_TEST_GALERA_URL3}$db")
echo "$out"
line=$(echo "$out" | sed -n 's/^database          //p')
case "$line" in
  "Galera cluster of 3 nodes (Primary), this node Synced, members "*"; the locks and sessions below are this node's only") ;;
  *) fail "status did not say what the database is" ;;
esac
members=$(echo "$line" | sed 's/.*members \([^;]*\);.*/\1/' | tr ',' '\n' | sort | tr '\n' ' ')
assert_eq "$members" "$(echo "$OUTBOX_TEST_GALERA_ADDRESSES" | tr ',' '\n' | sort | tr '\n' ' ')" \
  "members status names"
