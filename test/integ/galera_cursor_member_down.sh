# SPDX-License-Identifier: Apache-2.0
# --cursor on Galera with one member the relay cannot reach (README "On a
# Galera cluster", "Cursor mode on the cluster"): cursor relays on node 1;
# on node 3 only, the relay's account is locked (in a session with
# wsrep_on = OFF, so the statement does not replicate) and the relay's
# member connection there is killed. Node 3 stays in the cluster, Synced,
# and refuses the relay:
#   - outbox_relay_cursor_members_down reads 1, /readyz answers 503 naming
#     the member and its error, and the relay's log says it once;
#   - a seq taken on node 3 and rolled back is a gap nobody can prove: rows
#     committed after it on nodes 1 and 2 are published, the cursors stay
#     below it;
#   - a cursor relay restarted meanwhile (on a second database whose cursors
#     exist) runs, delivers, and reports the refusal the same way: the
#     refusal is not fatal at start either;
# then the account is unlocked on node 3 only: the member answers again,
# members_down reads 0, /readyz 200, the cursors pass the gap and end at
# the last row, every row once in the stream, and SIGTERM ends the relays
# with exit 0. Node 3's account is unlocked however the test ends (the
# cluster serves the other galera tests of the run).
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/galera.sh"
db=it_galera_cursor_down stream=IT_GALERA_CURSOR_DOWN prefix=itgcd
db2=it_galera_cursor_down2 stream2=IT_GALERA_CURSOR_DOWN2 prefix2=itgcd2
work=$(mktemp -d)
pids=() account= second=
node3=127.0.0.1:$OUTBOX_TEST_GALERA_PORT3
# node3_account LOCK|UNLOCK: on node 3 only (not replicated).
node3_account() {
  GROOT 3 -e "SET SESSION wsrep_on = OFF; ALTER USER $account ACCOUNT $1"
}
cleanup() {
  [ -z "${show:-}" ] || tail -30 "$work/relay.log" | sed 's/^/    relay: /'
  [ -z "${show:-}" ] || tail -15 "$work/second.log" 2>/dev/null | sed 's/^/    second: /'
  for p in "${pids[@]}" $second; do kill -KILL "$p" 2>/dev/null || true; done
  [ -z "$account" ] || node3_account UNLOCK || echo "could not unlock $account on node 3" >&2
  rm -rf "$work"
}
trap cleanup EXIT
show=1

series='outbox_relay_cursor_members_down{table="outbox"}'
down_is() { [ "$(metric_value "$(metrics "$2")" "$series")" = "$1" ]; } # N PORT
readyz_names() { # PORT TEXT: /readyz answers 503 with TEXT in its body
  [ "$(http_code "$1" /readyz)" = 503 ] && curl -s -m 5 "http://127.0.0.1:$1/readyz" | grep -qF "$2"
}
locked_text="member $node3 cannot serve the gap proof (4151 Access denied, this account is locked"
published() { # PORT N: the relay has at least N rows acked by JetStream
  [ "$(metric_sum "$(metrics "$1")" outbox_relay_published_total)" -ge "$2" ]
}
cursors_at_end() { # DB
  [ "$(GSQL 1 "$1" 'SELECT (SELECT MIN(seq) FROM outbox_cursor) >= (SELECT MAX(seq) FROM outbox)')" = 1 ]
}
gap_age_at_least() {
  metric_at_least $port 'outbox_relay_cursor_gap_age_seconds{table="outbox"}' "$1"
}
# commit DB N NODE...: on each node named, N rows, one transaction each.
commit() {
  local db=$1 n=$2 node; shift 2
  for node in "$@"; do
    for i in $(seq 1 "$n"); do
      echo "INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload)
        VALUES (outbox_uuid_v7(), 'order', 'n$node-$i', 'created', '{}');"
    done | GROOT "$node" "$db"
  done
}
member_sessions() { # the relays' sessions on node 3: their member connections only
  GROOT 3 -e "SELECT ID FROM information_schema.PROCESSLIST WHERE USER = 'outbox'"
}
ms_from() { echo $((($(date +%s%N) - $1) / 1000000)); }
# second_relay: the cursor relay of DB2 (its pid in `second`, its port in port2).
second_relay() {
  galera_relay 1 "$work/second.log" $db2 $stream2 $prefix2 --cursor --http 127.0.0.1:0 \
    --lease-timeout 3s
  second=$RELAY_PID
  port2=$(http_port "$work/second.log")
}

galera_synced 3 # a test before may have stopped or frozen it
galera_db_fresh $db --cursor
galera_db_fresh $db2 --cursor
stream_delete $stream
stream_delete $stream2
galera_relay 1 "$work/relay.log" $db $stream $prefix --cursor --http 127.0.0.1:0
pids+=($RELAY_PID)
port=$(http_port "$work/relay.log")
# The second database's cursors made by a first run of its relay.
second_relay
cursors_made() { [ "$(GSQL 1 $db2 'SELECT COUNT(*) FROM outbox_cursor')" = 64 ]; }
wait_until 30 "the cursors of $db2 made" cursors_made
kill -TERM $second
rc=0
wait $second || rc=$?
second=
assert_eq "$rc" 0 "exit status of the second relay's first run"

commit $db 10 1 2 3
wait_until 30 "the first rows published" published $port 30
wait_until 30 "the cursors at the last row" cursors_at_end $db
wait_until 30 "every member up" down_is 0 $port
assert_eq "$(http_code $port /readyz)" 200 "/readyz with every member up"

# The relay's member connection on node 3, and the account it logs in as
# (the relay connects over TCP from 127.0.0.1).
one_session() { [ "$(member_sessions | wc -l)" = 1 ]; }
wait_until 10 "the relay's member connection on node 3, and no other session" one_session
id=$(member_sessions)
[ "$(GROOT 3 -e "SELECT COUNT(*) FROM mysql.user WHERE User = 'outbox' AND Host = '127.0.0.1'")" = 1 ] ||
  fail "no account outbox@127.0.0.1 on node 3"
account="'outbox'@'127.0.0.1'"

node3_account LOCK
locked() { # N: 1 when the relay's account is locked on node N, else 0
  GROOT "$1" -e "SELECT IFNULL(JSON_VALUE(Priv, '\$.account_locked'), 0) FROM mysql.global_priv
    WHERE User = 'outbox' AND Host = '127.0.0.1'"
}
assert_eq "$(locked 1) $(locked 2) $(locked 3)" "0 0 1" "the account locked on nodes 1, 2, 3"
t0=$(date +%s%N)
GROOT 3 -e "KILL CONNECTION $id"
wait_until 30 "members_down at 1" down_is 1 $port
down_ms=$(ms_from $t0)
wait_until 10 "/readyz 503 naming the member and its error" readyz_names $port "$locked_text"
echo "readyz: $(curl -s -m 5 "http://127.0.0.1:$port/readyz")"

# The second relay restarted while node 3 refuses it: it runs, reports the
# refusal the same way, and delivers from its cursors.
second_relay
wait_until 30 "the restarted relay reports the refusal" readyz_names $port2 "$locked_text"
down_is 1 $port2 || fail "members_down is not 1 on the restarted relay"
commit $db2 5 2

# A gap on node 3: a seq taken and rolled back, rows committed after it on
# nodes 1 and 2 (their counters may stand below it for a row or two).
gap=$(GROOT 3 $db -e "START TRANSACTION;
  INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload)
  VALUES (outbox_uuid_v7(), 'order', 'gap', 'created', '{}');
  SELECT LAST_INSERT_ID(); ROLLBACK")
commit $db 10 1 2
[ "$(GSQL 1 $db "SELECT COUNT(*) FROM outbox WHERE seq > $gap")" -ge 10 ] ||
  fail "fewer than 10 rows above the rolled back seq $gap"
wait_until 30 "the rows after the gap published" published $port 50
wait_until 30 "the gap open 3 s" gap_age_at_least 3
commit $db 5 1 2
wait_until 30 "rows published while the member is down" published $port 60
wait_until 30 "the restarted relay's rows published" published $port2 5
assert_eq "$(GSQL 1 $db "SELECT MAX(seq) < $gap FROM outbox_cursor")" 1 "cursors below the gap $gap"
down_is 1 $port || fail "members_down is not 1 while node 3 refuses the relay"
readyz_names $port "$locked_text" || fail "/readyz is not 503 while node 3 refuses the relay"
down_is 1 $port2 || fail "members_down is not 1 on the restarted relay"

t1=$(date +%s%N)
node3_account UNLOCK
account=
wait_until 30 "members_down at 0" down_is 0 $port
up_ms=$(ms_from $t1)
wait_until 30 "members_down at 0 on the restarted relay" down_is 0 $port2
up2_ms=$(ms_from $t1)
wait_until 30 "the cursors at the last row" cursors_at_end $db
wait_until 30 "the restarted relay's cursors at the last row" cursors_at_end $db2
ready() { [ "$(http_code "$1" /readyz)" = 200 ]; }
wait_until 10 "/readyz 200" ready $port
wait_until 10 "/readyz 200 on the restarted relay" ready $port2
echo "members_down 1 after $down_ms ms (the kill), 0 after $up_ms ms (the unlock;" \
  "$up2_ms ms on the restarted relay)"
said() { grep -c "cluster member $node3 $2" "$work/$1" || true; }
grep 'cluster member' "$work/relay.log" | sed 's/^/    /'
assert_eq "$(said relay.log 'cannot serve the gap proof: 4151')" 1 "lines saying the refusal"
assert_eq "$(said relay.log 'cannot serve')" 2 "lines saying the member's failures (lost, refused)"
assert_eq "$(said relay.log 'serves the gap proof again')" 1 "lines saying it serves again"
grep 'cluster member' "$work/second.log" | sed 's/^/    restarted: /'
assert_eq "$(said second.log 'cannot serve the gap proof: 4151')" 1 \
  "lines saying the refusal (restarted relay)"
assert_eq "$(said second.log 'cannot serve')" 1 "lines saying a failure (restarted relay)"
assert_eq "$(said second.log 'serves the gap proof again')" 1 \
  "lines saying it serves again (restarted relay)"

kill -TERM "${pids[0]}" $second
for p in "${pids[0]}" $second; do
  rc=0
  wait "$p" || rc=$?
  assert_eq "$rc" 0 "exit status of a cursor relay"
done
pids=() second=
show=
galera_stream_once $db $stream 60 "$work"
galera_stream_once $db2 $stream2 5 "$work"
for d in $db $db2; do
  assert_eq "$(GSQL 1 $d 'SELECT COUNT(*) FROM outbox WHERE status <> 0 OR attempt_count > 0')" 0 \
    "rows of $d written or charged"
done
