# SPDX-License-Identifier: Apache-2.0
# Issue 29, point 1: a producer that sets seq itself, below the cursors.
# Cursor mode takes every row at or below its bucket's cursor for delivered,
# so such a row would never be published. The schema's trigger (made by
# `schema --ordered|--cursor` and by `schema --migrate`) replaces any seq an
# INSERT gives with the counter's next: the row is published like any other.
#   - rows given seq 5 and 0, and NULL, after a drain moved the cursors
#     past 100: each gets a seq above the last row's and reaches the stream;
#   - `schema --migrate` adds the trigger to a table made without it.
. "$(dirname "$0")/../harness/lib.sh"
db=it_cursor_explicit_seq stream=IT_CURSOR_EXPLICIT_SEQ prefix=itcexseq
drain() { timeout 60 "$OUTBOX_TEST_RELAY" --db "${OUTBOX_TEST_DB_URL}$db" --nats "$OUTBOX_TEST_NATS_URL" \
  --stream $stream --subject-prefix $prefix --no-progress --cursor --drain 2>&1 | grep -v ' info ' || true; }

db_fresh $db --cursor
stream_delete $stream
seed $db 100 256
drain
assert_eq "$(field "$(stream_summary $stream)" messages)" 100 "messages after the first drain"
top=$(sql $db "SELECT MIN(seq) FROM outbox_cursor WHERE table_name = 'outbox'")
[ "$top" -ge 100 ] || fail "the cursors are at $top, not past the 100 rows"
sql $db "INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload, seq) VALUES
  (outbox_uuid_v7(), 'order', 'low-5', 'created', '{}', 5),
  (outbox_uuid_v7(), 'order', 'low-0', 'created', '{}', 0),
  (outbox_uuid_v7(), 'order', 'low-null', 'created', '{}', NULL)"
echo "seq of the rows given one: $(sql $db "SELECT GROUP_CONCAT(seq ORDER BY seq) FROM outbox WHERE aggregate_id LIKE 'low-%'")"
assert_eq "$(sql $db "SELECT COUNT(*) FROM outbox WHERE aggregate_id LIKE 'low-%' AND seq > $top")" 3 \
  "rows given a seq that got one above the cursors"
drain
stream_has_ids $db $stream 103 "$(mktemp)"

# schema --migrate on a table made without ordered delivery adds the trigger.
db_fresh $db
"$OUTBOX_TEST_RELAY" schema --migrate | MDB $db
assert_eq "$(sql $db "SELECT ACTION_STATEMENT FROM information_schema.TRIGGERS
  WHERE TRIGGER_SCHEMA = DATABASE() AND EVENT_OBJECT_TABLE = 'outbox' AND ACTION_TIMING = 'BEFORE'
  AND EVENT_MANIPULATION = 'INSERT'")" "SET NEW.seq = NULL" "the trigger schema --migrate made"
"$OUTBOX_TEST_RELAY" schema --migrate | MDB $db # twice: no error
sql $db "INSERT INTO outbox (aggregate_type, aggregate_id, event_type, payload) VALUES ('order', 'a', 'created', '{}')"
sql $db "INSERT INTO outbox (aggregate_type, aggregate_id, event_type, payload, seq) VALUES ('order', 'b', 'created', '{}', 1)"
assert_eq "$(sql $db "SELECT GROUP_CONCAT(seq ORDER BY seq) FROM outbox")" "1,2" "seq after migrate"
echo "cursor_explicit_seq: ok"
