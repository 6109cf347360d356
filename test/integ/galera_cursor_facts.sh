# SPDX-License-Identifier: Apache-2.0
# The two facts cursor mode's proof across a Galera cluster rests on
# (src/readers/gap_members.h), checked on the cluster:
# 1. A node's AUTO_INCREMENT counter passes a seq h once it has applied h's
#    write-set: a node's next value, and the table's counter it reports, are
#    above every seq committed on another node before its causal read.
# 2. The cursor's fenced advance (it bumps the relay's presence row in the
#    lease table in the same statement) never moves a cursor once another
#    node deleted that presence row: open while the deletion commits, it
#    fails certification at COMMIT (1213); after it, it changes nothing.
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/galera.sh"
db=it_galera_cursor_facts
work=$(mktemp -d)
client=
trap '[ -z "$client" ] || kill -KILL "$client" 2>/dev/null || true; rm -rf "$work"' EXIT

galera_db_fresh $db --cursor

# Fact 1, 15 times, each node in turn writing and another one reading.
late=0
for i in $(seq 1 15); do
  a=$((i % 3 + 1)) b=$(((i + 1) % 3 + 1)) rows=$((i * 37 % 200 + 1))
  h=$(GSQL $a $db "INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload)
    SELECT outbox_uuid_v7(), 'order', CONCAT('n$a-', seq), 'created', '{}' FROM seq_1_to_$rows;
    SELECT MAX(seq) FROM outbox WHERE aggregate_id LIKE 'n$a-%'")
  # The causal read waits for h's write-set; the counter is read before
  # node b inserts anything itself.
  set -- $(GSQL $b $db "SELECT MAX(seq) FROM outbox INTO @m; SELECT @m, AUTO_INCREMENT
    FROM information_schema.TABLES WHERE TABLE_SCHEMA = '$db' AND TABLE_NAME = 'outbox'")
  [ "$1" -ge "$h" ] || fail "node $b's causal read did not see seq $h"
  [ "$2" -gt "$h" ] || { late=$((late + 1)); echo "    node $b's counter $2 after node $a's seq $h"; }
  g=$(GSQL $b $db "INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload)
    VALUES (outbox_uuid_v7(), 'order', 'n$b', 'created', '{}'); SELECT LAST_INSERT_ID()")
  [ "$g" -gt "$h" ] || { late=$((late + 1)); echo "    node $b took seq $g after node $a's seq $h"; }
done
assert_eq "$late" 0 "values at or below a seq a node had applied"

# Fact 2. The statement is ob_members_sql_advance's (test_gap_members pins it).
GSQL 1 $db "INSERT INTO outbox_cursor (table_name, bucket, seq) VALUES ('outbox', 3, 0), ('outbox', 7, 0);
  INSERT INTO outbox_lease (lease_key, kind, slot, holder, mode, stale_ms, renewed)
  VALUES ('outbox:t', 'i', 42, 42, 'c', 2000, NOW(6))"
advance="UPDATE outbox_cursor AS c_ JOIN outbox_lease AS p_ ON p_.lease_key = 'outbox:t' AND
  p_.kind = 'i' AND p_.slot = 42 SET c_.seq = 900, p_.epoch = p_.epoch + 1 WHERE
  c_.table_name = 'outbox' AND c_.bucket IN (3,7) AND c_.seq < 900"
# (a) node 1's advance is open (not committed) when node 2 deletes the row.
mkfifo "$work/in"
"$OUTBOX_TEST_MARIADB_CLIENT" --no-defaults -uroot -S "$OUTBOX_TEST_GALERA_SOCKET1" -N -B --unbuffered $db \
  <"$work/in" >"$work/open.out" 2>"$work/open.err" &
client=$!
exec 3>"$work/in"
echo "BEGIN; $advance; SELECT CONCAT('moved ', ROW_COUNT());" >&3
wait_until 30 "the advance is open on node 1" grep -q 'moved 3' "$work/open.out"
GSQL 2 $db "DELETE FROM outbox_lease WHERE kind = 'i' AND slot = 42"
echo "COMMIT;" >&3
exec 3>&-
rc=0
wait "$client" || rc=$?
client=
sed 's/^/    /' "$work/open.err"
[ "$rc" != 0 ] || fail "the open advance committed after the presence row was deleted"
grep -q 'ERROR 1213' "$work/open.err" || fail "the open advance did not fail certification"
assert_eq "$(GSQL 1 $db "SELECT GROUP_CONCAT(seq) FROM outbox_cursor")" "0,0" \
  "cursors after the open advance failed"
# (b) the deletion applied: the advance changes nothing.
assert_eq "$(GSQL 1 $db "$advance; SELECT ROW_COUNT()")" 0 "rows the advance changed without its row"
assert_eq "$(GSQL 3 $db "SELECT GROUP_CONCAT(seq) FROM outbox_cursor")" "0,0" "cursors at the end"
# With its presence row, the same advance moves both cursors.
GSQL 1 $db "INSERT INTO outbox_lease (lease_key, kind, slot, holder, mode, stale_ms, renewed)
  VALUES ('outbox:t', 'i', 42, 42, 'c', 2000, NOW(6))"
assert_eq "$(GSQL 1 $db "$advance; SELECT ROW_COUNT()")" 3 "rows the advance changed with its row"
assert_eq "$(GSQL 2 $db "SELECT GROUP_CONCAT(seq) FROM outbox_cursor")" "900,900" "cursors moved"
