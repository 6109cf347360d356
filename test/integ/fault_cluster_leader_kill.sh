# SPDX-License-Identifier: Apache-2.0
# Issue 12, point 5 (the stall): on a private three-node cluster with an R3
# stream, rows flowing, the node that leads the stream is killed (SIGKILL).
# The relay must go on through the other nodes with nothing lost and no
# attempt counted: every row processed, none dead, each id once in the
# stream. The stall (the longest time with rows pending and none processed)
# is measured and printed; it must stay under OUTBOX_TEST_STALL_MAX_S.
# Most of the stall is the servers' own: a follower waits 4-9 s (at random)
# for a lost leader before it campaigns. The default bound is that longest
# wait, plus the relay's 2 s JetStream reply timeout that can run when the
# new leader comes, plus 1 s of sampling: 12 s. Typical stalls are 4.5-5.5 s;
# before the fixes of issue 12 they measured 10.4-10.7 s.
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/private.sh"
db=it_fault_leader stream=IT_FAULT_LEADER prefix=itfleader
stall_max=${OUTBOX_TEST_STALL_MAX_S:-12}
work=$(mktemp -d); RELAY_PID=; PROD_PID=
trap 'kill -KILL $RELAY_PID $PROD_PID 2>/dev/null || true; private_cleanup; rm -rf "$work"' EXIT
pnats_cluster "$work"
OUTBOX_TEST_NATS_URL=$CLUSTER_URLS
streamcheck --stream $stream --create "$prefix.>" --replicas 3
db_fresh $db
seed $db 2000 256

producer_start $db 256 "$work/stop-producer"
relay_bg "$work/relay.log" $db $stream $prefix --connections 2 --batch 100
# The leader dies once the seeded backlog is through and the producer's rows
# flow (the steady state the bound below is for), whatever the speed.
wait_until 60 "2000 rows processed" processed_at_least $db 2000
leader=$(streamcheck --stream $stream --info-only | head -1 | sed -n 's/.* leader=\(n[0-9]\).*/\1/p')
[ -n "$leader" ] || fail "no leader for the stream"
kill -KILL "$(cat "$work/$leader/nats.pid")"
killed_at=$(date +%s%N)
echo "killed the stream leader $leader"

# Sample the processed count for 20 s: the longest stretch without progress.
last=$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1'); last_t=$killed_at; stall=0
while [ $(( ($(date +%s%N) - killed_at) / 1000000000 )) -lt 20 ]; do
  sleep 0.25
  now=$(date +%s%N)
  n=$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1')
  if [ "$n" != "$last" ]; then last=$n; last_t=$now; fi
  gap=$(( (now - last_t) / 1000000 ))
  [ "$gap" -gt "$stall" ] && stall=$gap
done
echo "longest stall after the leader kill: $stall ms"
new_leader=$(streamcheck --stream $stream --info-only | head -1 | sed -n 's/.* leader=\(n[0-9]\).*/\1/p' || true)
echo "new leader: ${new_leader:-none}"
producer_stop "$work/stop-producer"
total=$(sql $db 'SELECT COUNT(*) FROM outbox')
wait_sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 0' 0 40 ||
  { show_log "$work/relay.log"; fail "rows still pending 40 s after the producer stopped"; }
kill -TERM $RELAY_PID
wait_exit $RELAY_PID 15
assert_eq "$WAIT_RC" 0 "relay exit status after SIGTERM"
grep -E ' warn | error ' "$work/relay.log" | head -8 | sed 's/^/    log: /' || true
assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1')" "$total" "processed rows"
assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = -1')" 0 "dead rows"
assert_eq "$(sql $db 'SELECT MAX(attempt_count) FROM outbox')" 0 "largest attempt_count"
# Read the stream back (a consumer on a stream whose leader just changed can
# come up slowly, or time out while the new leader settles: read again, for
# up to about a minute, if a read fell short).
for i in $(seq 1 8); do
  summary=$(streamcheck --stream $stream --subject '>' | grep '^messages=' || true)
  echo "$summary"
  [ -n "$summary" ] && [ "$(field "$summary" read)" = "$(field "$summary" messages)" ] && break
  sleep 2
done
assert_eq "$(field "$summary" messages)" "$total" "messages in the stream"
assert_eq "$(field "$summary" distinct)" "$total" "distinct ids in the stream"
[ "$stall" -lt $((stall_max * 1000)) ] || fail "the stall after the leader kill was $stall ms (bound ${stall_max} s)"
echo "ok: stall $stall ms, under ${stall_max} s"
