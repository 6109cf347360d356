# SPDX-License-Identifier: Apache-2.0
# Cursor mode's retry lane reads its status-2 rows in pages of --batch rows:
# a row whose turn has come is delivered however many rows of other
# aggregates wait for a long backoff before it, and a row of an aggregate
# whose earlier row still waits on an earlier page is not (README,
# "Failures" under cursor mode).
. "$(dirname "$0")/../harness/lib.sh"
db=it_cursor_lane_pages stream=IT_CURSOR_LANE_PAGES prefix=itcurlp
db_fresh $db --cursor
stream_delete $stream
streamcheck --stream $stream --create "$prefix.>"
row() { # AGGREGATE N: N rows of the aggregate
  sql $db "INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload)
    SELECT outbox_uuid_v7(), 'order', '$1', 'created', JSON_OBJECT('n', seq) FROM seq_1_to_$2"
}
# Three pages of rows of a bad aggregate waiting an hour for their retry,
# x's row waiting as long, more of the bad aggregate, then x's next row
# (held behind it: status 2, no retry time) and a row of `good` due now.
row bad 25
row x 1
row bad 12
row x 1
row good 1
sql $db "UPDATE outbox SET status = 2, attempt_count = 1, last_error = 'bad subject',
  next_attempt_at = NOW(6) + INTERVAL 1 HOUR"
x2=$(sql $db "SELECT MAX(seq) FROM outbox WHERE aggregate_id = 'x'")
good=$(sql $db "SELECT seq FROM outbox WHERE aggregate_id = 'good'")
sql $db "UPDATE outbox SET attempt_count = 0, last_error = NULL, next_attempt_at = NULL
  WHERE seq IN ($x2, $good)"

log=$(mktemp)
RELAY_PID=
trap 'rc=$?; [ $rc = 0 ] || show_log "$log"; [ -z "$RELAY_PID" ] || kill -KILL $RELAY_PID 2>/dev/null || true' EXIT
relay_bg "$log" $db $stream $prefix --cursor --batch 10 --backoff-max 3s
delivered() { [ "$(sql $db "SELECT status FROM outbox WHERE seq = $good")" = 1 ]; }
wait_until 60 "the due row past four pages of rows waiting" delivered
kill -TERM $RELAY_PID
rc=0
wait "$RELAY_PID" || rc=$?
RELAY_PID=
assert_eq "$rc" 0 "the relay's exit status"
assert_eq "$(sql $db "SELECT status FROM outbox WHERE seq = $x2")" 2 \
  "x's row behind its waiting row, on a later page: still held"
assert_eq "$(sql $db "SELECT COUNT(*) FROM outbox WHERE status = 2 AND attempt_count = 1")" 38 \
  "the waiting rows untouched"
stream_once $stream 1
want=$(mktemp)
ids $db "seq = $good" >"$want"
out=$(streamcheck --stream $stream --subject '>' --expect-ids "$want" || true)
assert_eq "$(field "$(echo "$out" | grep '^expected=')" missing)" 0 "the due row in the stream"
echo "cursor_lane_pages: ok"
