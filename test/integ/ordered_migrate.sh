# SPDX-License-Identifier: Apache-2.0
# A table made before ordered delivery: the relay refuses --ordered and
# --leader with a message that says what to run; schema --migrate prints the
# ALTER TABLE (safe to apply twice); then the relay runs ordered. Rows that
# were there get their seq in id order (here ids increase with insertion);
# rows inserted after the migration are ordered by seq whatever their ids.
. "$(dirname "$0")/../harness/lib.sh"
db=it_ord_migrate stream=IT_ORD_MIGRATE prefix=itordm
db_fresh $db
stream_delete $stream
# A table made without --ordered (as earlier versions made it): no seq, no bucket.
sql $db "INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload, headers)
  SELECT UNHEX(CONCAT('019AA5A1B000', LPAD(HEX(seq), 20, '0'))), 'order', CONCAT('a', seq % 10),
         'created', '{}', JSON_OBJECT('agg_seq', CAST(seq DIV 10 AS CHAR)) FROM seq_0_to_999"
for mode in --ordered --leader; do
  rc=0; out=$(relay $db $stream $prefix $mode --drain 2>&1) || rc=$?
  assert_eq "$rc" 1 "exit status with $mode on a table without the columns"
  grep -q "outbox-uvrelay schema --migrate --table outbox" <<<"$out" ||
    fail "the message does not say what to run: $out"
done
"$OUTBOX_TEST_RELAY" schema --migrate | tee /dev/stderr | MDB $db
"$OUTBOX_TEST_RELAY" schema --migrate | MDB $db
assert_eq "$(sql $db "SELECT COUNT(DISTINCT seq) FROM outbox")" 1000 "rows numbered by the migration"
sql $db "INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload, headers)
  SELECT outbox_uuid_v7(), 'order', CONCAT('a', seq % 10), 'created', '{}',
         JSON_OBJECT('agg_seq', CAST(seq DIV 10 AS CHAR)) FROM seq_1000_to_1999"
relay $db $stream $prefix --ordered --connections 3 --drain 2>/dev/null
assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1')" 2000 "processed rows"
streamcheck --stream $stream --subject '>' --check-order agg_seq
echo "ordered_migrate: ok"
