# SPDX-License-Identifier: Apache-2.0
# A RENAME TABLE that swaps a new table in under a running plain relay: the
# new table's rows are delivered, the swap is said once (a warning naming
# the table swapped out, outbox_relay_table_replaced_total 1), and the rows
# left in the old table are delivered by draining it, as docs/modes.md says.
. "$(dirname "$0")/../harness/lib.sh"
db=it_plain_swap stream=IT_PLAIN_SWAP prefix=itpswap
work=$(mktemp -d) RELAY_PID=
trap 'kill -KILL $RELAY_PID 2>/dev/null || true; rm -rf "$work"' EXIT
db_fresh $db
stream_delete $stream
add() { # TABLE FROM TO
  sql $db "INSERT INTO $1 (id, aggregate_type, aggregate_id, event_type, payload)
    SELECT outbox_uuid_v7(), 'order', CONCAT('a', seq), 'created', JSON_OBJECT('n', seq)
    FROM seq_$2_to_$3"
}
add outbox 1 20
relay_bg "$work/relay.log" $db $stream $prefix --http 127.0.0.1:0 --pending-interval 200ms \
  --poll-interval 50ms
port=$(http_port "$work/relay.log")
wait_until 30 "the first rows delivered" processed_at_least $db 20
replaced() { metric_value "$(metrics "$port")" 'outbox_relay_table_replaced_total{table="outbox"}'; }
assert_eq "$(replaced)" 0 "replacements before the swap"
# CREATE_TIME counts seconds: the swap comes a second after the table was made.
later() { [ "$(sql $db "SELECT UNIX_TIMESTAMP() > UNIX_TIMESTAMP(CREATE_TIME) FROM
  information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'outbox'")" = 1 ]; }
wait_until 10 "a second after the table was made" later
sql $db "CREATE TABLE outbox_new LIKE outbox;
  RENAME TABLE outbox TO outbox_old, outbox_new TO outbox"
add outbox_old 21 23 # committed into the old table as the swap ran
add outbox 24 33
said() { [ "$(replaced)" = 1 ]; }
wait_until 30 "the swap said" said
wait_until 30 "the new table's rows delivered" processed_at_least $db 10
log_has "$work/relay.log" "table [a-z_.]*outbox was re-created or renamed.*same second: outbox_old" ||
  { show_log "$work/relay.log"; fail "the warning names the table swapped out"; }
# Five more samples: the swap is not said again.
sleep 1
assert_eq "$(log_count "$work/relay.log" "was re-created or renamed")" 1 "warnings of the swap"
kill -TERM "$RELAY_PID"; wait "$RELAY_PID"; RELAY_PID=
# The recipe: drain the old table before dropping it.
relay $db $stream $prefix --table outbox_old --drain 2>"$work/drain.log" ||
  { show_log "$work/drain.log"; fail "the old table's drain"; }
assert_eq "$(sql $db "SELECT COUNT(*) FROM outbox_old WHERE status <> 1")" 0 "rows left in the old table"
assert_eq "$(field "$(stream_summary $stream)" distinct)" 33 "distinct messages in the stream"
echo "plain_swap: ok"
