# SPDX-License-Identifier: Apache-2.0
# The plain mode on a three-node Galera cluster: one relay on each node and
# a producer on each node committing 5,000 rows (100 transactions of 50).
# Two nodes' claims of one row meet at COMMIT, where certification makes
# the loser's fail with 1213: its batch, already published, goes back
# untouched and is published again, and the stream drops the copy by its
# Nats-Msg-Id. So every row ends processed and once in the stream, none
# dead, none charged an attempt. The duplicates the stream dropped are
# counted from the relays' metrics and printed (the README quotes them).
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/galera.sh"
db=it_galera_plain stream=IT_GALERA_PLAIN prefix=itgp
work=$(mktemp -d)
pids=() ports=()
trap 'for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT

galera_db_fresh $db
stream_delete $stream

galera_relays $db $stream $prefix "$work"

# The producers, one per node, at once.
galera_producers $db "$work" 1 2 3
for p in "${producers[@]}"; do wait "$p" || fail "a producer failed"; done
echo "produced $(GSQL 1 $db 'SELECT COUNT(*) FROM outbox') rows"

galera_drained $db

dups=0
for n in 1 2 3; do
  text=$(metrics "${ports[n-1]}")
  d=$(echo "$text" | awk '/^outbox_relay_published_total\{/ && /result="duplicate"/ { s += $NF } END { printf "%d\n", s }')
  dups=$((dups + d))
done
galera_stop "$work"
# Each conflict line counts itself and those it says were not said.
conflicts=$(cat "$work"/relay*.log | awk '/transaction conflict while/ {
  n++; if (match($0, /\(([0-9]+) more since/)) n += substr($0, RSTART + 1, RLENGTH - 12) }
  END { printf "%d\n", n }')

galera_end $db $stream 15000 "$work"
echo "galera plain: 15000 rows from 3 nodes by 3 relays: $conflicts certification conflicts" \
  "retried, $dups duplicate publishes dropped by the stream"
