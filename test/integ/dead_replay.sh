# SPDX-License-Identifier: Apache-2.0
# Dead letters through the CLI:
#   - a row the stream refuses dies, and `dead list` shows it;
#   - bad input (missing/extra flags, bad ids, bad table) exits 2 and changes
#     nothing; a replay of a row that is not dead exits 1 and changes nothing;
#   - once the cause is fixed, `dead replay --id` makes the row pending with
#     its attempts reset, and the relay delivers it to the stream;
#   - `dead replay --all` and `dead purge --older-than` act on dead rows only
#     and say how many rows they changed.
. "$(dirname "$0")/../harness/lib.sh"
db=it_dead_replay stream=IT_DEAD prefix=itdead
db_fresh $db
stream_delete $stream

ops() { "$OUTBOX_TEST_RELAY" "$@" --db "${OUTBOX_TEST_DB_URL}$db"; }
count() { sql $db "SELECT COUNT(*) FROM outbox WHERE status = $1"; }

# A stream that refuses messages over 4 KiB: the big row dies at once.
streamcheck --stream $stream --create "$prefix.>" --max-msg-size 4096
seed $db 20 512
sql $db "INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload) VALUES
  (outbox_uuid_v7(), 'order', 'big', 'created', JSON_OBJECT('pad', REPEAT('x', 6000)))"
relay $db $stream $prefix --drain 2>/dev/null
assert_eq "$(count -1)" 1 "dead rows after the first run"
big=$(ids $db "aggregate_id = 'big'")
good=$(ids $db "aggregate_id = 'o1'")

summary=$(mktemp); trap 'rm -f "$summary"' EXIT
out=$(ops dead list 2>"$summary")
echo "$out"
case "$out" in *"$big	1	"*) ;; *) fail "dead list does not show $big with 1 attempt" ;; esac
case "$out" in *"JetStream error 400"*) ;; *) fail "dead list does not show the last error" ;; esac
grep -q "dead list: 1 of 1 dead row(s) listed, 0 changed" "$summary" || fail "dead list summary on stderr"
# The TSV is a header line and one line per row, each with 7 fields, even
# when a field holds tabs or newlines (they are escaped as \t and \n).
sql $db "UPDATE outbox SET last_error = CONCAT('two', CHAR(9), 'fields', CHAR(10), 'two lines\\\\')
  WHERE status = -1"
out=$(ops dead list 2>/dev/null)
assert_eq "$(echo "$out" | wc -l)" 2 "dead list lines for one dead row"
assert_eq "$(echo "$out" | awk -F'\t' '{print NF}' | sort -u)" 7 "fields on every dead list line"
case "$out" in *'two\tfields\ntwo lines\\') ;; *) fail "dead list escapes tabs, newlines and backslashes" ;; esac
expect_exit 2 "dead list --limit 0" ops dead list --limit 0

# Bad input: usage errors, nothing changed.
expect_exit 2 "replay without --id or --all" ops dead replay
expect_exit 2 "replay with both --id and --all" ops dead replay --id "$big" --all
expect_exit 2 "replay of a malformed id" ops dead replay --id not-a-uuid
expect_exit 2 "purge of a malformed id" ops dead purge --id 0123
expect_exit 2 "list --all" ops dead list --all
expect_exit 2 "an unknown action" ops dead resurrect
expect_exit 2 "a bad table name" ops dead replay --all --table 'outbox;drop'
expect_exit 2 "a bad duration" ops dead purge --older-than soon
# Runtime refusals: exit 1, nothing changed.
expect_exit 1 "replay of a processed row" ops dead replay --id "$good"
expect_exit 1 "replay of an unknown id" ops dead replay --id 019a6f1e-7c2b-7d3e-8f00-0123456789ab
expect_exit 1 "a missing table" ops dead replay --all --table nosuch
assert_eq "$(count -1)" 1 "dead rows after bad input"
assert_eq "$(count 1)" 20 "processed rows after bad input"

# The operator fixes the cause (a stream that takes larger messages), then
# replays the row: it is pending again with its attempts reset...
stream_delete $stream
streamcheck --stream $stream --create "$prefix.>" --max-msg-size 65536
out=$(ops dead replay --id "$big")
echo "$out"
assert_eq "$out" "dead replay: 1 row(s) changed (pending again, attempts reset)" "replay output"
assert_eq "$(sql $db "SELECT CONCAT(status, ' ', attempt_count, ' ', next_attempt_at IS NULL)
  FROM outbox WHERE aggregate_id = 'big'")" "0 0 1" "replayed row: status, attempts, no delay"

# ...and the relay delivers it.
relay $db $stream $prefix --drain 2>/dev/null
echo "$big" > "$OUTBOX_TEST_DIR/dead_replay.ids"
streamcheck --stream $stream --subject '>' --expect-ids "$OUTBOX_TEST_DIR/dead_replay.ids"
assert_eq "$(sql $db "SELECT status FROM outbox WHERE aggregate_id = 'big'")" 1 "replayed row processed"

# replay --all: every dead row, nothing else.
sql $db "UPDATE outbox SET status = -1, attempt_count = 5, last_error = 'boom'
  WHERE aggregate_id IN ('o1', 'o2', 'o3')"
out=$(ops dead replay --all)
assert_eq "$out" "dead replay: 3 row(s) changed (pending again, attempts reset)" "replay --all"
assert_eq "$(count 0)" 3 "pending rows after replay --all"
relay $db $stream $prefix --drain 2>/dev/null
assert_eq "$(field "$(stream_summary $stream)" distinct)" 4 "distinct ids in the stream"

# purge: dead rows older than the given age only.
sql $db "UPDATE outbox SET status = -1, created_at = NOW(6) - INTERVAL 10 DAY
  WHERE aggregate_id IN ('o4', 'o5')"
sql $db "UPDATE outbox SET status = -1 WHERE aggregate_id = 'o6'"
sql $db "UPDATE outbox SET status = 0 WHERE aggregate_id = 'o7'"
out=$(ops dead purge --older-than 7d)
assert_eq "$out" "dead purge: 2 row(s) changed (deleted)" "purge --older-than 7d"
out=$(ops dead purge --older-than 7d)
assert_eq "$out" "dead purge: 0 row(s) changed (deleted)" "purge again"
assert_eq "$(count -1)" 1 "recent dead row kept"
assert_eq "$(count 0)" 1 "pending row kept"
assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox')" 19 "rows left"
echo "dead_replay: ok"
