# SPDX-License-Identifier: Apache-2.0
# --ordered on a three-node Galera cluster: a relay on each node (the third
# joins while the producers write), producers on all three nodes (60
# transactions of 30 rows each, one a 0.1 s), each aggregate written from
# one node. The bucket leases are rows of the lease
# table, so no bucket is owned twice (and `status` on node 3 names the three
# relays): outbox_relay_buckets_owned summed over
# the relays, sampled every 0.1 s (slower on a loaded machine), never exceeds
# 64, nor does the sum of the shares the relays log at each change. Every row ends
# processed and once in the stream, no aggregate out of order. Then a clean
# stop hands over at once: a relay started right after another stopped with
# SIGTERM owns the 64 buckets long before the stopped one's row could go
# stale, and the mode switch (stop every relay, start the other mode) runs
# without "already relayed".
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/galera.sh"
db=it_galera_ordered stream=IT_GALERA_ORDERED prefix=itgo
work=$(mktemp -d)
pids=() ports=() sampler=
cleanup() {
  [ -z "$sampler" ] || kill "$sampler" 2>/dev/null || true
  for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

galera_db_fresh $db --ordered
stream_delete $stream
for n in 1 2; do
  galera_relay $n "$work/relay$n.log" $db $stream $prefix --ordered --lease-timeout 3000 \
    --http 127.0.0.1:0
  pids+=($RELAY_PID)
  ports+=("$(http_port "$work/relay$n.log")")
done
series='outbox_relay_buckets_owned{table="outbox"}'
: >"$work/owned"
galera_sample "$work/owned" "$series" "${ports[@]}" &
sampler=$!
wait_until 30 "64 buckets owned by the two relays" \
  grep -q '^64 ' "$work/owned"

GALERA_PACE='DO SLEEP(0.1)' galera_agg_producers $db "$work" 60 30 1 2 3
# The third relay joins mid-run: buckets move to it while rows flow.
galera_first_delivery $db || fail "no row processed within 30 s"
galera_relay 3 "$work/relay3.log" $db $stream $prefix --ordered --lease-timeout 3000 \
  --http 127.0.0.1:0
pids+=($RELAY_PID)
ports+=("$(http_port "$work/relay3.log")")
kill "$sampler"
wait "$sampler" 2>/dev/null || true
galera_sample "$work/owned" "$series" "${ports[@]}" &
sampler=$!
for p in "${producers[@]}"; do wait "$p" || fail "a producer failed"; done
galera_drained $db
wait_until 30 "the third relay owns buckets" metric_at_least "${ports[2]}" "$series" 1
# `status` asked on node 3 names the three relays of the lease table, 64
# buckets in all (README "On a Galera cluster").
owners_seen() {
  local url
  eval "url=\$OUTBOX_TEST_GALERA_URL3"
  "$OUTBOX_TEST_RELAY" status --db "${url}$db" --json >"$work/status.json" || return 1
  [ "$(jq -r .owners_are "$work/status.json")" = relays ] &&
    [ "$(jq '.bucket_owners | length' "$work/status.json")" = 3 ] &&
    [ "$(jq '[.bucket_owners[] | length] | add' "$work/status.json")" = 64 ]
}
wait_until 30 "status on node 3 names three relays owning 64 buckets" owners_seen
kill "$sampler"
wait "$sampler" 2>/dev/null || true
sampler=

samples=$(wc -l <"$work/owned")
max=$(sort -n "$work/owned" | tail -1 | cut -d' ' -f1)
echo "buckets owned, summed over the relays: $samples samples, at most $max"
[ "$samples" -ge 5 ] || fail "too few samples of the buckets owned ($samples)"
[ "$max" -le 64 ] || { awk '$1 > 64' "$work/owned" | head; fail "a bucket was owned twice"; }
# Every change of every relay's share, from the logs, in time order (a
# relay logs a bucket dropped before its row is released, and one taken
# after its row is written): the sum of the shares never exceeds 64.
for n in 1 2 3; do
  sed -n "s/^\([^ ]*\) info  lease: \([0-9]*\) of 64 buckets owned.*/\1 $n \2/p" "$work/relay$n.log"
done | sort >"$work/shares"
peak=$(awk '{ own[$2] = $3; s = own[1] + own[2] + own[3]; if (s > m) m = s } END { print m + 0 }' \
  "$work/shares")
echo "buckets owned, summed over the relays at each of $(wc -l <"$work/shares") changes: at most $peak"
[ "$peak" -le 64 ] || { cat "$work/shares"; fail "a bucket was owned twice (relays' logs)"; }
grep -h 'lease:' "$work"/relay*.log | grep -v ' info ' | sed 's/^/    /' || true

galera_stop "$work"
galera_end $db $stream 5400 "$work"
out=$(streamcheck --stream $stream --subject '>' --check-order agg_seq) ||
  { echo "$out"; fail "an aggregate out of order"; }
echo "$out" | grep order_violations

# A clean stop hands over at once: the stopped relay gives its buckets and
# its presence row up as it exits, so that a relay started at once on
# another node owns all 64 at its next round. With --lease-timeout 60000
# the row left behind would go stale only after 40 s; the wait below ends
# long before.
galera_relay 1 "$work/first.log" $db $stream $prefix --ordered --lease-timeout 60000 \
  --http 127.0.0.1:0
pids+=($RELAY_PID)
first=$RELAY_PID
wait_until 30 "the first relay owns 64 buckets" metric_at_least "$(http_port "$work/first.log")" \
  "$series" 64
t_term=$(date +%s.%N)
kill -TERM $first
rc=0
wait $first || rc=$?
assert_eq "$rc" 0 "exit status of the relay stopped cleanly"
t_exit=$(date +%s.%N)
grep 'stopped cleanly' "$work/first.log" | sed 's/^/    /' ||
  { cat "$work/first.log" >&2; fail "the relay stopped cleanly did not give its rows up"; }
galera_relay 2 "$work/next.log" $db $stream $prefix --ordered --lease-timeout 60000 \
  --http 127.0.0.1:0
pids+=($RELAY_PID)
next=$RELAY_PID
wait_until 20 "64 buckets owned by the relay started after a clean stop" \
  metric_at_least "$(http_port "$work/next.log")" "$series" 64
t_own=$(date -d "$(grep -m1 'lease: 64 of 64 buckets owned' "$work/next.log" | cut -d' ' -f1)" +%s.%N)
awk -v a="$t_term" -v b="$t_exit" -v c="$t_own" 'BEGIN {
  printf "hand-over: 64 buckets owned on node 2 %.2f s after SIGTERM on node 1 (%.2f s after its exit)\n",
    c - a, c - b }'

# The mode switch (stop every relay, start the other mode) at once: the
# --ordered relay stops, an unordered one drains (the mode check passed),
# then an --ordered one again.
kill -TERM $next
rc=0
wait $next || rc=$?
assert_eq "$rc" 0 "exit status of the second relay stopped cleanly"
galera_relay 3 "$work/plain.log" $db $stream $prefix --drain
rc=0
wait $RELAY_PID || rc=$?
[ "$rc" = 0 ] || { cat "$work/plain.log" >&2; fail "an unordered relay started after the --ordered one stopped exited $rc"; }
galera_relay 1 "$work/again.log" $db $stream $prefix --ordered --drain
rc=0
wait $RELAY_PID || rc=$?
[ "$rc" = 0 ] || { cat "$work/again.log" >&2; fail "an --ordered relay started after the unordered one stopped exited $rc"; }
echo "mode switch on Galera: --ordered stopped, unordered drained, --ordered drained (each exit 0)"
