# SPDX-License-Identifier: Apache-2.0
# The examples: the producer writes each order and its event in one
# transaction; the embedding program runs the relay next to its own timer,
# stops it, and closes its loop cleanly; the README's embedding program drains a
# table. They use the default stream OUTBOX
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

# The README's embedding program, compiled from the README's text with the
# command its comment gives (against an install in a fresh prefix), relays a
# table's pending rows, prints its outbox_stats and ends with a clean loop.
src=$(cd "$(dirname "$0")/../.." && pwd)
awk '/^# Embedding the relay in a libuv program/ { s = 1 } s && /^```c$/ { c = 1; next }
  c && /^```$/ { exit } c { print }' "$src/docs/embedding.md" >"$work/drain.c"
head -1 "$work/drain.c" | grep -q '^/\* drain.c: ' || fail "the README's program found: $(head -3 "$work/drain.c")"
cmake --install "$OUTBOX_TEST_BUILD" --prefix "$work/prefix" >/dev/null
export PKG_CONFIG_PATH=$(dirname "$(find "$work/prefix" -name outbox.pc)")
build=$(sed -n 's/^ \*   \(cc drain.c .*\)$/\1/p' "$work/drain.c")
assert_eq "$build" 'cc drain.c $(pkg-config --cflags --libs outbox) -o drain' "the README's build line"
(cd "$work" && eval "${build/cc /cc -Wall -Wextra -Werror ${OUTBOX_TEST_CFLAGS:-} }")
db_fresh it_readme
seed it_readme 250 256
export LD_LIBRARY_PATH=$(pkg-config --variable=libdir outbox)
rc=0
"$work/drain" "${OUTBOX_TEST_DB_URL}it_readme" "$OUTBOX_TEST_NATS_URL" >"$work/drain.out" \
  2>"$work/drain.log" || rc=$?
cat "$work/drain.out"
assert_eq "$rc" 0 "the README's program: exit status"
assert_eq "$(cat "$work/drain.out")" "acked 250, dead 0, retried 0" "the README's program: its outbox_stats"
grep -q '^info: ' "$work/drain.log" || fail "the log callback got the relay's lines"
assert_eq "$(sql it_readme 'SELECT COUNT(*) FROM outbox WHERE status = 1')" 250 "rows relayed by the README's program"
assert_eq "$(field "$(stream_summary OUTBOX)" distinct)" 590 "distinct events in the stream"
rc=0; "$work/drain" >/dev/null 2>&1 || rc=$?
assert_eq "$rc" 2 "the README's program without arguments"

db_fresh it_examples_nodes
# outbox_connect with several nodes: the first that accepts, in order (a
# port where nothing listens, then the test server).
hostport=${OUTBOX_TEST_DB_URL#*@}; hostport=${hostport%/}
"$OUTBOX_TEST_BUILD/example-producer" "mysql://outbox:outbox@127.0.0.1:1,$hostport/it_examples_nodes" 5 7 \
  >"$work/producer2" || fail "the producer with a node down first in the list"
assert_eq "$(sql it_examples_nodes 'SELECT COUNT(*) FROM orders')" 5 "orders written through the second node"
rc=0
"$OUTBOX_TEST_BUILD/example-producer" "mysql://outbox:outbox@127.0.0.1:1,127.0.0.1:2/it_examples_nodes" 5 7 \
  >"$work/producer3" 2>&1 || rc=$?
[ "$rc" != 0 ] || fail "the producer with no node up succeeded"
grep -q "node 2 of 2 (127.0.0.1)" "$work/producer3" || fail "the message names the last node: $(cat "$work/producer3")"
