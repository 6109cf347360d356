# SPDX-License-Identifier: Apache-2.0
# Cursor mode drains a table with headers and a bad row among many: the bad
# row dies with its reason; its aggregate's later rows are held (status 2)
# and then delivered by the retry lane, in order; every other row is
# delivered without being written (status 0, no attempt, no processed_at);
# every bucket's cursor ends at the last row; each id is once in the stream.
# A table without the bucket index is said once and still drained.
# The table starts as --ordered leaves it (see below).
. "$(dirname "$0")/../harness/lib.sh"
db=it_cursor_basic stream=IT_CURSOR_BASIC prefix=itcurb
db_fresh $db --cursor
stream_delete $stream
streamcheck --stream $stream --create "$prefix.>" --max-msg-size 4096
rows() { # FROM TO: rows of 40 aggregates, each with its own counter in a header
  sql $db "INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload, headers)
    SELECT outbox_uuid_v7(), 'order', CONCAT('a', seq % 40), 'created',
           JSON_OBJECT('n', seq, 'pad', REPEAT('x', 300)),
           JSON_OBJECT('agg_seq', CAST(seq DIV 40 AS CHAR), 'x-tenant', 'acme')
    FROM seq_$1_to_$2"
}
rows 0 2999
# a7's row too large for the stream, then more of a7 and the rest
sql $db "INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload, headers)
  VALUES (outbox_uuid_v7(), 'order', 'a7', 'created', JSON_OBJECT('pad', REPEAT('y', 6000)),
          JSON_OBJECT('agg_seq', '75'))"
rows 3000 5999
# As --ordered leaves a table: its first 200 rows delivered (status 1), and
# a row of a3 waiting for its retry (status 0, a future next_attempt_at). The
# buckets have no cursor rows yet: the relay starts below their lowest
# pending rows, and the waiting row goes to the retry lane (status 2) with
# a3's later rows behind it. Its retry is an hour away, so that it still
# waits when the relay initialises the buckets, however long the start
# takes; once it is in the lane the test brings it within the drain's
# horizon.
sql $db "UPDATE outbox SET status = 1, processed_at = NOW(6) WHERE seq <= 200"
wait_row=$(sql $db "SELECT MIN(seq) FROM outbox WHERE aggregate_id = 'a3' AND seq > 200")
sql $db "UPDATE outbox SET attempt_count = 1, last_error = 'earlier try',
  next_attempt_at = NOW(6) + INTERVAL 1 HOUR WHERE seq = $wait_row"
a3=$(sql $db "SELECT COUNT(*) FROM outbox WHERE aggregate_id = 'a3' AND seq > 200")
bad=$(sql $db "SELECT seq FROM outbox WHERE payload LIKE '%yyyy%'")
after=$(sql $db "SELECT COUNT(*) FROM outbox WHERE aggregate_id = 'a7' AND seq > $bad")
total=$(sql $db "SELECT COUNT(*) FROM outbox")
echo "bad row seq $bad; $after later rows of a7; $total rows"

log=$(mktemp)
RELAY_PID=
trap 'rc=$?; [ $rc = 0 ] || show_log "$log"; [ -z "$RELAY_PID" ] || kill -KILL $RELAY_PID 2>/dev/null || true' EXIT
relay_bg "$log" $db $stream $prefix --cursor --drain --batch 200 --max-attempts 3 \
  --backoff-base 200ms --backoff-max 3s
# The drain waits for status-2 rows due within the longest backoff (and a
# second): the waiting row, once the relay has put it in the lane, is made
# due within that.
in_lane() { [ "$(sql $db "SELECT status FROM outbox WHERE seq = $wait_row")" = 2 ]; }
wait_until 60 "the waiting row in the retry lane" in_lane
sql $db "UPDATE outbox SET next_attempt_at = NOW(6) + INTERVAL 2 SECOND WHERE seq = $wait_row"
exited() { ! kill -0 "$RELAY_PID" 2>/dev/null; }
wait_until 60 "the relay's drain" exited
rc=0
wait "$RELAY_PID" || rc=$?
RELAY_PID=
assert_eq "$rc" 0 "the relay's exit status"
tail -5 "$log"
assert_eq "$(sql $db "SELECT status, attempt_count FROM outbox WHERE seq = $bad" | tr '\t' ' ')" \
  "-1 1" "the bad row: dead after one attempt"
reason=$(sql $db "SELECT last_error FROM outbox WHERE seq = $bad")
case "$reason" in *"JetStream error 400"*) ;; *) fail "the bad row's reason: $reason" ;; esac
assert_eq "$(sql $db "SELECT COUNT(*) FROM outbox WHERE aggregate_id = 'a7' AND seq > $bad
  AND status = 1 AND attempt_count = 0 AND processed_at IS NOT NULL")" "$after" \
  "a7's later rows held, then delivered by the retry lane"
assert_eq "$(sql $db "SELECT COUNT(*) FROM outbox WHERE aggregate_id = 'a3' AND seq > 200
  AND status = 1 AND processed_at IS NOT NULL")" "$a3" \
  "a3's row waiting for an ordered retry, and a3's later rows, delivered by the retry lane"
assert_eq "$(sql $db "SELECT attempt_count FROM outbox WHERE seq = $wait_row")" 1 \
  "the waiting row's attempts (its delivery counted none)"
assert_eq "$(sql $db "SELECT COUNT(*) FROM outbox WHERE status = 0 AND attempt_count = 0
  AND processed_at IS NULL AND last_error IS NULL")" "$((total - 200 - 1 - after - a3))" \
  "every other row delivered without a write"
assert_eq "$(sql $db "SELECT COUNT(*), MIN(seq) = (SELECT MAX(seq) FROM outbox)
  FROM outbox_cursor WHERE table_name = 'outbox'" | tr '\t' ' ')" "64 1" \
  "every bucket's cursor at the last row"
sql $db "DELETE FROM outbox WHERE seq = $bad OR seq <= 200"
stream_has_ids $db $stream $((total - 201)) "$(mktemp)"
streamcheck --stream $stream --subject '>' --check-order agg_seq
# The buckets' first cursors are found through the table's bucket index,
# named in the statement (statistics left stale by a bulk load could make
# the server read every pending row once per bucket); the start-up probe
# found it. A table without it is said once and still drained.
log_has "$log" "has no index" && fail "the relay did not find the table's bucket index"
sql $db "ALTER TABLE outbox DROP INDEX idx_bucket_seq; DELETE FROM outbox_cursor"
log2=$(mktemp)
relay $db $stream $prefix --cursor --drain 2>"$log2" || { show_log "$log2"; fail "drain without the index"; }
assert_eq "$(log_count "$log2" "has no index idx_bucket_seq")" 1 "the missing index, said once"
stream_has_ids $db $stream $((total - 201)) "$(mktemp)"
echo "cursor_basic: ok"
