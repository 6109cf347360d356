# SPDX-License-Identifier: Apache-2.0
# docs/galera.md's setting-up recipe, run as written on the test cluster:
# - "# Galera: every node's settings": each setting is in force on every node
#   (the addresses: each node's own, set);
# - "# Galera: the tables and the relay's user, on any one node": run on node
#   1 (the test's database, user and password put in);
# - "# Galera: a relay given every node": the relay, given the three nodes,
#   delivers rows committed on all three, each once, none dead or charged, no
#   aggregate out of order, and exits 0 on SIGTERM;
# - "# Galera: a producer that may write one aggregate on several nodes": one
#   aggregate written alternately on nodes 1 and 2, each insert in a new
#   session with the block's setting, right after the other node's commit:
#   its seq grows with every commit.
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/galera.sh"
db=it_galera_setup_doc stream=IT_GALERA_SETUP_DOC prefix=itgsd user=itgsd pass=itgsd-pw
src=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
  GROOT 1 -e "DROP USER IF EXISTS '$user'@'%'" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# block TITLE: the code block of docs/galera.md whose first line is "# TITLE"
# (or "-- TITLE").
block() {
  awk -v t="$1" 'p && /^```$/ { exit } p { print }
    prev ~ /^```/ && ($0 == "# " t || $0 == "-- " t) { p = 1 } { prev = $0 }' "$src/docs/galera.md"
}
# host N: node N's host:port.
host() { local url; eval "url=\$OUTBOX_TEST_GALERA_URL$1"; url=${url#*@}; echo "${url%/}"; }

settings=$(block "Galera: every node's settings")
[ -n "$settings" ] || fail "docs/galera.md has no block \"# Galera: every node's settings\""
checked=0
while IFS= read -r line; do
  [[ "$line" =~ ^([a-z_]+)\ =\ (.+)$ ]] || continue
  k=${BASH_REMATCH[1]} v=${BASH_REMATCH[2]}
  for n in 1 2 3; do
    got=$(GROOT $n -e "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_VARIABLES
      WHERE VARIABLE_NAME = UPPER('$k')")
    case "$k" in
      wsrep_cluster_address) [[ "$got" == gcomm://?* ]] || fail "node $n: $k is '$got'" ;;
      wsrep_node_address) [ -n "$got" ] || fail "node $n: $k is not set" ;;
      wsrep_node_incoming_address) assert_eq "$got" "$(host $n)" "node $n: $k" ;;
      *) [ "$got" = "$v" ] || { [ "$v" = 1 ] && [ "$got" = ON ]; } ||
        fail "node $n: $k is '$got', the page says '$v'" ;;
    esac
  done
  checked=$((checked + 1))
done <<<"$settings"
[ "$checked" -ge 8 ] || fail "only $checked settings found in the block"
echo "settings: $checked, each in force on every node"

GSQL 1 "" "DROP DATABASE IF EXISTS \`$db\`; CREATE DATABASE \`$db\`; DROP USER IF EXISTS '$user'@'%'"
stream_delete $stream
tables=$(block "Galera: the tables and the relay's user, on any one node")
[ -n "$tables" ] || fail "docs/galera.md has no block for the tables and the relay's user"
tables=$(sed -e "s#^outbox-uvrelay #\"\$OUTBOX_TEST_RELAY\" #" -e "s#mariadb shop#GROOT 1 $db#g" \
  -e "s#shop\\.#$db.#g" -e "s#'relay'@#'$user'@#g" -e "s#'secret'#'$pass'#g" <<<"$tables")
eval "$tables" || fail "the tables and user block failed"

relay=$(block "Galera: a relay given every node")
[ -n "$relay" ] || fail "docs/galera.md has no block for the relay"
relay=$(sed -e "s#OUTBOX_DB_PASSWORD=secret#OUTBOX_DB_PASSWORD=$pass#" \
  -e "s#10\\.0\\.0\\.1:3306#$(host 1)#; s#10\\.0\\.0\\.2:3306#$(host 2)#; s#10\\.0\\.0\\.3:3306#$(host 3)#" \
  -e "s#relay@#$user@#; s#/shop'#/$db'#; s#nats://10\\.0\\.0\\.9:4222#$OUTBOX_TEST_NATS_URL#" \
  -e "s#^outbox-uvrelay \\(.*\\)\$#\"\$OUTBOX_TEST_RELAY\" \\1 --stream $stream --subject-prefix $prefix --no-progress --http 127.0.0.1:0 2>\"\$work/relay.log\" \\&#" \
  <<<"$relay")
grep -q "$(host 3)/$db' --nats $OUTBOX_TEST_NATS_URL --stream" <<<"$relay" ||
  fail "the relay's block did not take the test's addresses: $relay"
eval "$relay"
rpid=$!
pids+=($rpid)
unset OUTBOX_DB_PASSWORD

sync_wait=$(block "Galera: a producer that may write one aggregate on several nodes")
[ -n "$sync_wait" ] || fail "docs/galera.md has no block for a producer on several nodes"
galera_agg_producers $db "$work" 20 10 1 2 3
for i in $(seq 1 20); do
  GROOT $((1 + i % 2)) "$db" -e "$sync_wait
    INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload, headers)
    VALUES (outbox_uuid_v7(), 'order', 'shared', 'changed', JSON_OBJECT('i', $i),
            JSON_OBJECT('agg_seq', '$i'))" || fail "insert $i of the shared aggregate failed"
done
for p in "${producers[@]}"; do wait "$p" || fail "a producer failed"; done
order=$(GSQL 1 $db "SELECT GROUP_CONCAT(JSON_VALUE(payload, '\$.i') ORDER BY seq SEPARATOR ' ')
  FROM outbox WHERE aggregate_id = 'shared'")
assert_eq "$order" "$(seq -s ' ' 1 20)" "the shared aggregate's rows in seq order"
total=$((20 * 10 * 3 + 20))
galera_drained $db || fail "rows still pending"
kill -TERM $rpid
rc=0
wait $rpid || rc=$?
pids=()
assert_eq "$rc" 0 "exit status of the recipe's relay"
grep -q 'lease: on a Galera node' "$work/relay.log" || fail "the relay did not keep its lease in the table"
galera_end $db $stream $total "$work"
out=$(streamcheck --stream $stream --subject '>' --check-order agg_seq) ||
  { echo "$out"; grep -E " (warn|error) |node [0-9] of" "$work/relay.log" | head -20; fail "an aggregate out of order"; }
echo "$out" | grep order_violations
