# SPDX-License-Identifier: Apache-2.0
# 2,000 rolled-back transactions interleaved with 2,000 committed ones, from
# two sessions at once, while a cursor relay runs. A rolled-back insert leaves
# its seq empty for ever: the relay must prove each such gap empty (no
# transaction that could hold it is alive, and a later read still misses
# it) and pass it. Every cursor passes the last committed row within a few
# seconds of the last rollback; each committed row is once in the stream,
# no aggregate out of order, no rolled-back row published.
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/private.sh"
db=it_cursor_rb stream=IT_CURSOR_RB prefix=itcurrb
work=$(mktemp -d); RELAY_PID=
trap 'kill -KILL $RELAY_PID 2>/dev/null || true; private_cleanup; rm -rf "$work"' EXIT
# Private servers: INNODB_TRX lists every transaction of the server, so
# another test's open transaction would hold back the gaps this one times.
private_db_and_nats "$work/srv"
cursor_relay_fresh $db $stream $prefix "$work/relay.log"
session() { # S: 1,000 rolled back and 1,000 committed, interleaved
  local i
  for i in $(seq 0 999); do
    echo "BEGIN; INSERT INTO outbox (aggregate_type, aggregate_id, event_type, payload, headers)
      VALUES ('order', 'rolled-back', 'created', '{}', NULL); ROLLBACK;
      INSERT INTO outbox (aggregate_type, aggregate_id, event_type, payload, headers)
      VALUES ('order', 's$1-a$((i % 20))', 'created', '{}', JSON_OBJECT('agg_seq', '$i'));"
  done | MDB $db
}
session 1 & s1=$!
session 2 & s2=$!
wait $s1; wait $s2
t_end=$(date +%s.%N)
last=$(sql $db "SELECT MAX(seq) FROM outbox")
echo "last committed seq $last; the table's AUTO_INCREMENT is past $(sql $db "SELECT AUTO_INCREMENT - 1
  FROM information_schema.TABLES WHERE TABLE_SCHEMA = '$db' AND TABLE_NAME = 'outbox'")"
passed=
for i in $(seq 1 300); do
  if [ "$(sql $db "SELECT COUNT(*) FROM outbox_cursor WHERE seq >= $last")" = 64 ]; then
    passed=$(echo "$(date +%s.%N) - $t_end" | bc); break
  fi
  sleep 0.1
done
[ -n "$passed" ] || fail "the cursors did not pass seq $last within 30 s: $(sql $db "SELECT MIN(seq) FROM outbox_cursor")"
echo "every cursor passed the last committed row $passed s after the last rollback"
[ "$(echo "$passed <= 5" | bc)" = 1 ] || fail "the cursors took more than 5 s: $passed s"
assert_eq "$(sql $db "SELECT COUNT(*) FROM outbox WHERE aggregate_id = 'rolled-back'")" 0 \
  "rolled-back rows in the table"
cursor_relay_end $db $stream 2000 "$work/ids"
echo "cursor_rollbacks: ok"
