# SPDX-License-Identifier: Apache-2.0
# Slow multi-row inserts in cursor mode: four producers at once, each
# running three INSERTs of 1,000 rows that take about 2 s each (a SLEEP per
# row). Such a statement reserves its 1,000 seqs when it starts and commits
# them all at its end, so later seqs of the other producers show long before
# it: the relay must keep their gaps open until the rows show, and deliver
# each row once, each producer's aggregates in order.
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/private.sh"
db=it_cursor_multi stream=IT_CURSOR_MULTI prefix=itcurm
work=$(mktemp -d); RELAY_PID=
trap 'rc=$?; [ $rc = 0 ] || show_log "$work/relay.log"; kill -KILL $RELAY_PID 2>/dev/null || true
  private_cleanup; rm -rf "$work"' EXIT
# Private servers: INNODB_TRX lists every transaction of the server, so
# another test's open transaction would hold back the gaps this one waits on.
private_db_and_nats "$work/srv"
cursor_relay_fresh $db $stream $prefix "$work/relay.log"
producer() { # P: three statements of 1,000 rows, aggregates p<P>-a0..9
  local s
  for s in 0 1 2; do
    seq 0 999 | awk -v p="$1" -v s="$s" 'BEGIN {
        printf "INSERT INTO outbox (aggregate_type, aggregate_id, event_type, payload, headers) VALUES\n" }
      { printf "%s(\x27order\x27, \x27p%s-a%d\x27, \x27created\x27, JSON_OBJECT(\x27n\x27, %d, \x27s\x27, SLEEP(0.002)), JSON_OBJECT(\x27agg_seq\x27, \x27%d\x27))\n",
          (NR > 1 ? "," : ""), p, $1 % 10, $1, s * 100 + int($1 / 10) }
      END { print ";" }'
  done | MDB $db
}
pids=
for p in 1 2 3 4; do producer $p & pids="$pids $!"; done
for p in $pids; do wait $p; done
echo "12,000 rows committed in 12 statements"
last=$(sql $db "SELECT MAX(seq) FROM outbox")
for i in $(seq 1 300); do
  [ "$(sql $db "SELECT COUNT(*) FROM outbox_cursor WHERE seq >= $last")" = 64 ] && break
  sleep 0.1
done
assert_eq "$(sql $db "SELECT COUNT(*) FROM outbox_cursor WHERE seq >= $last")" 64 \
  "cursors past the last row"
m=$(metrics $port)
assert_eq "$(metric_sum "$m" outbox_relay_published_total)" 12000 "rows acked"
cursor_relay_end $db $stream 12000 "$work/ids"
echo "cursor_multirow: ok"
