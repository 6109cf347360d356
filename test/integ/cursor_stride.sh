# SPDX-License-Identifier: Apache-2.0
# Issue 29, point 5: a counter that steps by 3 (auto_increment_increment = 3,
# what Galera sets on a three-node cluster, each node with an offset of its
# own). Two seqs of every three are never used, so every row read leaves a
# gap behind it, and the relay may pass those only once it has proven them
# empty. Rows come from sessions with offsets 1, 2 and 3 (no one offset to
# count on) and one rolled-back transaction leaves a gap of another shape.
# First a backlog drained by `--cursor --drain` (its buckets without cursor
# rows), then a relay already running (cursor rows made) while rows are
# written: every row delivered once, each aggregate in order, no row
# written, every cursor past the last row, and the drain exits 0.
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/private.sh"
db=it_cursor_stride stream=IT_CURSOR_STRIDE prefix=itcurs
work=$(mktemp -d); RELAY_PID=
trap 'rc=$?; [ $rc = 0 ] || show_log "$work/relay.log"; kill -KILL $RELAY_PID 2>/dev/null || true
  private_cleanup; rm -rf "$work"' EXIT
# Private servers: the gaps wait for checks that another test's open
# transaction would hold back.
private_db_and_nats "$work/srv"
db_fresh $db --cursor
stream_delete $stream
rows() { # OFFSET FROM TO: rows of 50 aggregates from a session stepping by 3 from OFFSET
  sql $db "SET SESSION auto_increment_increment = 3, auto_increment_offset = $1;
    INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload, headers)
    SELECT outbox_uuid_v7(), 'order', CONCAT('a', seq % 50), 'created', JSON_OBJECT('n', seq),
           JSON_OBJECT('agg_seq', CAST(seq DIV 50 AS CHAR)) FROM seq_$2_to_$3"
}
rows 1 0 9999
sql $db "SET SESSION auto_increment_increment = 3; START TRANSACTION;
  INSERT INTO outbox (aggregate_type, aggregate_id, event_type, payload)
  SELECT 'order', 'gone', 'created', '{}' FROM seq_1_to_100; ROLLBACK"
rows 2 10000 19999
sql $db "SELECT COUNT(*), MIN(seq), MAX(seq), COUNT(DISTINCT seq % 3) FROM outbox" |
  { read -r n lo hi res; echo "backlog: $n rows, seq $lo..$hi, $res residues mod 3"; }

out=$(timeout 120 "$OUTBOX_TEST_RELAY" --db "${OUTBOX_TEST_DB_URL}$db" --nats "$OUTBOX_TEST_NATS_URL" \
  --stream $stream --subject-prefix $prefix --no-progress --cursor --drain --batch 500 2>&1) ||
  { echo "$out" | tail -20; fail "the --cursor --drain of the backlog did not exit 0 within 120 s"; }
echo "ok: the backlog's --cursor --drain exited 0"
assert_eq "$(sql $db "SELECT COUNT(*) FROM outbox_cursor WHERE seq >= (SELECT MAX(seq) FROM outbox)")" \
  64 "cursors past the backlog's last row"
stream_has_ids $db $stream 20000 "$work/ids1"

# The relay runs (its cursor rows exist); rows come in statements of 1,000
# from the three offsets in turn.
relay_bg "$work/relay.log" $db $stream $prefix --cursor --batch 500 --http 127.0.0.1:0
port=$(http_port "$work/relay.log")
for i in $(seq 0 9); do
  rows $((i % 3 + 1)) $((20000 + i * 1000)) $((20999 + i * 1000))
done
last=$(sql $db "SELECT MAX(seq) FROM outbox")
for i in $(seq 1 600); do
  [ "$(sql $db "SELECT COUNT(*) FROM outbox_cursor WHERE seq >= $last")" = 64 ] && break
  sleep 0.1
done
assert_eq "$(sql $db "SELECT COUNT(*) FROM outbox_cursor WHERE seq >= $last")" 64 \
  "cursors past the last row (within 60 s)"
m=$(metrics $port)
assert_eq "$(metric_sum "$m" outbox_relay_published_total)" 10000 "rows acked by the running relay"
cursor_relay_end $db $stream 30000 "$work/ids2"
echo "cursor_stride: ok"
