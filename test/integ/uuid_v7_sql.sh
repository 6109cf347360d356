# SPDX-License-Identifier: Apache-2.0
# outbox_uuid_v7(), the SQL function producers call in plain INSERTs:
#   - every value is a UUIDv7 (version 7, RFC 9562 variant), and distinct;
#   - its time is the insert's time (between the test's clock readings, and
#     within a few ms of the row's created_at);
#   - ids of inserts in successive milliseconds sort in insertion order;
#   - the relay delivers exactly those ids to the stream.
. "$(dirname "$0")/../harness/lib.sh"
db=it_uuid_sql stream=IT_UUID prefix=ituuid
db_fresh $db
stream_delete $stream

t0=$(date +%s%3N)
{
  for i in $(seq 1 50); do
    echo "INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload)
          VALUES (outbox_uuid_v7(), 'order', '$i', 'created', JSON_OBJECT('n', $i));"
    echo "DO SLEEP(0.003);"
  done
} | MDB $db
t1=$(date +%s%3N)
# Many in one statement: same milliseconds, random bits must keep them apart.
sql $db "INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload)
  SELECT outbox_uuid_v7(), 'bulk', seq, 'created', '{}' FROM seq_1_to_2000"

assert_eq "$(sql $db "SELECT COUNT(*) FROM outbox
  WHERE ASCII(SUBSTR(id, 7, 1)) >> 4 = 7 AND ASCII(SUBSTR(id, 9, 1)) >> 6 = 2")" 2050 \
  "ids with version 7 and variant 10"
assert_eq "$(sql $db "SELECT COUNT(DISTINCT id) FROM outbox")" 2050 "distinct ids"
assert_eq "$(sql $db "SELECT COUNT(*) FROM outbox WHERE aggregate_type = 'order'
  AND CONV(HEX(LEFT(id, 6)), 16, 10) BETWEEN $t0 AND $t1")" 50 "id times within the inserts"
assert_eq "$(sql $db "SELECT COUNT(*) FROM outbox
  WHERE ABS(CONV(HEX(LEFT(id, 6)), 16, 10) - UNIX_TIMESTAMP(created_at) * 1000) > 50")" 0 \
  "id times against created_at"
assert_eq "$(sql $db "SELECT GROUP_CONCAT(aggregate_id ORDER BY id SEPARATOR ',')
  FROM outbox WHERE aggregate_type = 'order'")" "$(seq -s, 1 50)" "id order = insertion order"

ids $db > "$OUTBOX_TEST_DIR/uuid_v7_sql.ids"
relay $db $stream $prefix --drain 2>/dev/null
streamcheck --stream $stream --subject '>' --expect-ids "$OUTBOX_TEST_DIR/uuid_v7_sql.ids"
assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1')" 2050 "rows processed"
echo "uuid_v7_sql: ok"
