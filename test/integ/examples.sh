# The examples: the producer writes each order and its event in one
# transaction; the embedding program runs the relay next to its own timer,
# stops it, and closes its loop cleanly. They use the default stream OUTBOX
# and subjects outbox.>, which no other test uses.
. "$(dirname "$0")/../harness/lib.sh"
db=it_examples
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
db_fresh $db
stream_delete OUTBOX
"$OUTBOX_TEST_BUILD/example-producer" "${OUTBOX_TEST_DB_URL}$db" 300 7 | tee "$work/producer"
assert_eq "$(sql $db 'SELECT COUNT(*) FROM orders')" 300 "orders"
assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE aggregate_type = "order"')" 300 "events"
assert_eq "$(sql $db 'SELECT COUNT(*) FROM orders o JOIN outbox e ON e.aggregate_id = o.id')" 300 \
  "each order has its event"

rc=0
"$OUTBOX_TEST_BUILD/example-embed" "${OUTBOX_TEST_DB_URL}$db" "$OUTBOX_TEST_NATS_URL" 3 \
  >"$work/embed" 2>"$work/embed.log" || rc=$?
cat "$work/embed"
assert_eq "$rc" 0 "example-embed exit status"
grep -q "^tick 2:" "$work/embed" || fail "the program's own timer ran beside the relay"
grep -q "acked=300, loop_close=0" "$work/embed" || fail "relay stopped with every event acked and a clean loop"
assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1')" 300 "events processed"
summary=$(stream_summary OUTBOX)
assert_eq "$(field "$summary" distinct)" 300 "distinct events in the stream"

# The service writes its orders and their events on the relay's loop
# through the non-blocking connection and notifies the relay after each
# commit (its poll interval is 10 s: only the notify can deliver in time).
rc=0
timeout 60 "$OUTBOX_TEST_BUILD/example-service" "${OUTBOX_TEST_DB_URL}$db" "$OUTBOX_TEST_NATS_URL" 40 \
  >"$work/service" 2>"$work/service.log" || rc=$?
cat "$work/service" "$work/service.log"
assert_eq "$rc" 0 "example-service exit status"
grep -q "orders written: 40, events published: 40" "$work/service" || fail "every order's event published"
assert_eq "$(sql $db "SELECT COUNT(*) FROM outbox WHERE aggregate_id LIKE 'service-%' AND status = 1")" 40 \
  "the service's events processed"
summary=$(stream_summary OUTBOX)
assert_eq "$(field "$summary" distinct)" 340 "distinct events in the stream"
