# SPDX-License-Identifier: Apache-2.0
# A three-node JetStream cluster: the stream is R3, the relay is given all
# three URLs, and the stream's leader is killed with SIGKILL mid-run. Every
# row is processed, each id is once in the stream, and the stall (the
# longest time without a row processed after the kill) is reported.
. "$(dirname "$0")/../harness/lib.sh"
db=it_cluster_kill stream=IT_CLUSTER_KILL prefix=itclk
urls=$OUTBOX_TEST_CLUSTER_URL
work=$(mktemp -d); RELAY_PID=; SAMPLER=
trap 'kill $RELAY_PID $SAMPLER 2>/dev/null || true; rm -rf "$work"' EXIT
cs() { "$OUTBOX_TEST_STREAMCHECK" --nats "$urls" "$@"; }
n=30000

db_fresh $db
seed $db $n 512
# The cluster elects its meta leader a few seconds after it starts.
for i in $(seq 1 60); do
  cs --stream $stream --delete 2>/dev/null &&
    cs --stream $stream --create "$prefix.>" --replicas 3 2>/dev/null && break
  sleep 0.5
done
info=$(cs --stream $stream --info | head -1)
echo "$info"
assert_eq "$(echo "$info" | tr ' ' '\n' | sed -n 's/^replicas=//p')" 3 "stream replicas"
leader=$(cs --stream $stream --leader)
echo "stream leader: $leader"
[ -n "$leader" ] || fail "the stream has a leader"

"$OUTBOX_TEST_RELAY" --db "${OUTBOX_TEST_DB_URL}$db" --nats "$urls" --stream $stream \
  --subject-prefix $prefix --no-progress --connections 2 --batch 50 2>"$work/relay.log" &
RELAY_PID=$!

# Samples the processed count every 50 ms: "ms count" lines.
( while :; do
    echo "$(date +%s%3N) $(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1')"
    sleep 0.05
  done ) >"$work/samples" &
SAMPLER=$!

for i in $(seq 1 200); do
  [ "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1')" -ge $((n / 5)) ] && break
  sleep 0.05
done
kill_ms=$(date +%s%3N)
echo "kill -9 $leader with $(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1') rows processed"
"$OUTBOX_TEST_SERVERS" kill-node "$OUTBOX_TEST_CLUSTER_DIR" "$leader"

for i in $(seq 1 1200); do
  [ "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 0')" = 0 ] && break
  sleep 0.1
done
kill $SAMPLER; wait $SAMPLER 2>/dev/null || true; SAMPLER=
rc=0; kill -TERM $RELAY_PID; wait $RELAY_PID || rc=$?
RELAY_PID=
"$OUTBOX_TEST_SERVERS" start-node "$OUTBOX_TEST_CLUSTER_DIR" "$leader"
grep -E "warn|error" "$work/relay.log" | head -10 || true
assert_eq "$rc" 0 "relay exit status"
assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1')" $n "processed rows"

# The stall: the longest stretch after the kill in which the count stood still.
stall=$(awk -v k="$kill_ms" '$1 >= k { if (prev != "" && $2 == pc) { if ($1 - since > m) m = $1 - since } else since = $1; prev = $1; pc = $2 } END { print m + 0 }' "$work/samples")
echo "stall after killing the stream leader: ${stall} ms"

ids $db >"$work/ids"
for i in $(seq 1 60); do
  out=$(cs --stream $stream --subject '>' --expect-ids "$work/ids" 2>&1) && break
  sleep 0.5
done
echo "$out" | tail -3
summary=$(echo "$out" | grep '^messages=')
exp=$(echo "$out" | grep '^expected=')
assert_eq "$(field "$summary" messages)" $n "messages in the stream"
assert_eq "$(field "$summary" duplicates) $(field "$exp" missing) $(field "$exp" extra)" "0 0 0" \
  "duplicates, missing and extra ids"
