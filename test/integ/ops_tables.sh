# SPDX-License-Identifier: Apache-2.0
# The operator commands act on the tables a config file declares (issue 20):
#   - with one [table] section, status, dead list, dead purge and cleanup act
#     on that table only, never on the default table `outbox`;
#   - with several sections, on each, and every result names its section;
#   - --table picks one section (by its name or its table); a --table the
#     file does not declare exits 2 and changes nothing;
#   - --json: status and dead list print one JSON object per line.
. "$(dirname "$0")/../harness/lib.sh"
db=it_ops_tables
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
db_fresh $db
"$OUTBOX_TEST_RELAY" schema --table outbox_orders --no-function | MDB $db
"$OUTBOX_TEST_RELAY" schema --table outbox_billing --no-function | MDB $db

# dead DB TABLE N: N dead rows created 3 days ago, plus 2 pending rows.
dead() {
  sql $db "INSERT INTO $1 (id, aggregate_type, aggregate_id, event_type, payload, status,
      attempt_count, last_error, created_at)
    SELECT outbox_uuid_v7(), 'order', CONCAT('$1-', seq), 'created', '{}', -1, 5, 'refused',
      NOW(6) - INTERVAL 3 DAY FROM seq_1_to_$2"
  sql $db "INSERT INTO $1 (id, aggregate_type, aggregate_id, event_type, payload)
    SELECT outbox_uuid_v7(), 'order', CONCAT('$1-p', seq), 'created', '{}' FROM seq_1_to_2"
}
count() { sql $db "SELECT COUNT(*) FROM $1 WHERE status = $2"; }
dead outbox 3
dead outbox_orders 4
dead outbox_billing 5

cat >"$work/one.conf" <<CONF
db = ${OUTBOX_TEST_DB_URL}$db
nats = $OUTBOX_TEST_NATS_URL
[table orders]
table = outbox_orders
CONF
cat >"$work/two.conf" <<CONF
db = ${OUTBOX_TEST_DB_URL}$db
nats = $OUTBOX_TEST_NATS_URL
[table orders]
table = outbox_orders
[table outbox_billing]
CONF
one() { "$OUTBOX_TEST_RELAY" "$@" --config "$work/one.conf"; }
two() { "$OUTBOX_TEST_RELAY" "$@" --config "$work/two.conf"; }
line() { echo "$1" | awk -v k="$2" 'index($0, k) == 1 { print substr($0, 19) }'; }

# One section: the commands see outbox_orders, not outbox.
out=$(one status)
echo "$out"
assert_eq "$(line "$out" table)" outbox_orders "status: the table of the one section"
assert_eq "$(line "$out" section)" "[table orders]" "status: its section"
assert_eq "$(line "$out" dead)" 4 "status: dead rows of outbox_orders"
out=$(one dead list 2>"$work/summary")
assert_eq "$(echo "$out" | tail -n +2 | cut -f1 | sort -u)" orders "dead list: the section column"
assert_eq "$(echo "$out" | tail -n +2 | wc -l)" 4 "dead list: the rows of outbox_orders"
grep -q "dead list \[orders\]: 4 of 4" "$work/summary" || fail "dead list summary names the section"
out=$(one dead purge --older-than 1d)
assert_eq "$out" "dead purge [orders]: 4 row(s) changed (deleted)" "dead purge with one section"
assert_eq "$(count outbox_orders -1)" 0 "dead rows left in outbox_orders"
assert_eq "$(count outbox -1)" 3 "dead rows of outbox untouched"
assert_eq "$(count outbox_billing -1)" 5 "dead rows of outbox_billing untouched"
out=$(one cleanup --once --include-dead --older-than 1d)
assert_eq "$out" "cleanup [orders]: 0 row(s) deleted (0 processed, 0 dead)" "cleanup with one section"
assert_eq "$(count outbox -1)" 3 "cleanup left outbox alone"

# Several sections: each, in the file's order, named.
out=$(two status)
echo "$out"
assert_eq "$(line "$out" table | tr '\n' ' ')" "outbox_orders outbox_billing " "status: both tables"
assert_eq "$(line "$out" dead | tr '\n' ' ')" "0 5 " "status: dead rows of each"
out=$(two status --json)
echo "$out"
python3 -c '
import json, sys
rows = [json.loads(l) for l in sys.stdin.read().splitlines()]
assert [(r["table"], r["section"], r["dead"], r["pending"]) for r in rows] == \
    [("outbox_orders", "orders", 0, 2), ("outbox_billing", "outbox_billing", 5, 2)], rows
assert rows[0]["partitions"] == [] and rows[0]["lock_holder"] is None, rows[0]
assert rows[0]["database"] == "a single server (wsrep off)", rows[0]
' <<<"$out" || fail "status --json"
out=$(two dead list --json 2>/dev/null)
python3 -c '
import json, sys
rows = [json.loads(l) for l in sys.stdin.read().splitlines()]
assert len(rows) == 5, rows
assert {(r["table"], r["attempts"], r["last_error"], r["event_type"]) for r in rows} == \
    {("outbox_billing", 5, "refused", "created")}, rows
assert all(len(r["id"]) == 36 for r in rows), rows
' <<<"$out" || fail "dead list --json"
expect_exit 2 "--json on a purge" two dead purge --json

# --table picks one section, by its name or its table.
out=$(two dead purge --older-than 1d --table nosuch 2>&1) && fail "--table nosuch should fail"
echo "$out"
case "$out" in *"--table 'nosuch': the config file $work/two.conf declares no such table"*) ;;
  *) fail "--table nosuch: message" ;; esac
expect_exit 2 "a --table the file does not declare" two dead purge --older-than 1d --table outbox
assert_eq "$(count outbox -1) $(count outbox_billing -1)" "3 5" "dead rows after refused commands"
out=$(two dead purge --older-than 1d --table outbox_billing)
assert_eq "$out" "dead purge [outbox_billing]: 5 row(s) changed (deleted)" "purge of the chosen table"
out=$(OUTBOX_TABLE=orders two status)
assert_eq "$(line "$out" table)" outbox_orders "OUTBOX_TABLE picks a section by name"
assert_eq "$(count outbox -1) $(count outbox_billing -1) $(count outbox_billing 0)" "3 0 2" \
  "rows after the purges"
# schema with sections: the DDL of each declared table.
# (and the lease table relays on a Galera node use, one for the database:
# made only if missing, so printed with each section it does no harm).
ddl=$(two schema)
assert_eq "$(grep '^CREATE TABLE' <<<"$ddl" | grep -vc 'outbox_lease')" 2 "schema: one table per section"
grep -q '^CREATE TABLE IF NOT EXISTS outbox_lease ' <<<"$ddl" || fail "schema: the lease table, if missing"
grep -q 'CREATE TABLE.*outbox_billing' <<<"$(two schema)" || fail "schema: the billing table"
echo "ops_tables: ok"
