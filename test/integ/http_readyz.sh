# SPDX-License-Identifier: Apache-2.0
# /readyz follows NATS: 200 with both servers up, 503 (with a reason) within
# 10 s of nats-server going away, 200 again within 20 s of its return;
# /healthz answers 200 throughout.
. "$(dirname "$0")/../harness/lib.sh"
db=it_readyz stream=IT_READYZ prefix=itreadyz
work=$(mktemp -d); RELAY_PID=; nats_down=0
# Brings nats-server back only if this test left it stopped: starting a second
# one would fail on the taken port and leave a stale pid file behind.
trap 'if [ $nats_down = 1 ]; then "$OUTBOX_TEST_SERVERS" start-nats "$OUTBOX_TEST_DIR" || true; fi
      kill $RELAY_PID 2>/dev/null || true; rm -rf "$work"' EXIT
db_fresh $db
stream_delete $stream
seed $db 200 256
relay_bg "$work/relay.log" $db $stream $prefix --http 127.0.0.1:0
port=$(http_port "$work/relay.log")

# wait_code PATH CODE SECONDS: polls PATH until it answers CODE; checks that
# /healthz says 200 at every step; prints the seconds it took.
wait_code() {
  local path=$1 want=$2 limit=$3 t0 code
  t0=$(date +%s%N)
  while :; do
    code=$(http_code $port "$path")
    [ "$code" = "$want" ] && break
    [ "$(http_code $port /healthz)" = 200 ] || fail "/healthz while waiting for $path $want"
    [ $(( ($(date +%s%N) - t0) / 1000000000 )) -lt "$limit" ] ||
      { cat "$work/relay.log"; fail "$path did not answer $want within $limit s (last $code)"; }
    sleep 0.2
  done
  echo "ok: $path = $want after $(( ($(date +%s%N) - t0) / 1000000 )) ms"
}

wait_code /readyz 200 20
nats_down=1
"$OUTBOX_TEST_SERVERS" kill-nats "$OUTBOX_TEST_DIR"
wait_code /readyz 503 10
reason=$(curl -s -m 5 "http://127.0.0.1:$port/readyz")
echo "reason: $reason"
grep -q "NATS" <<<"$reason" || fail "the 503 names NATS: '$reason'"
grep -q 'outbox_relay_up{table="outbox",dependency="nats"} 0' \
  <(curl -s -m 5 "http://127.0.0.1:$port/metrics") || fail "up{nats} is 0 while NATS is down"
assert_eq "$(http_code $port /healthz)" 200 "/healthz with NATS down"
"$OUTBOX_TEST_SERVERS" start-nats "$OUTBOX_TEST_DIR"
nats_down=0
wait_code /readyz 200 20

# The relay delivers what was written while NATS was away.
seed $db 300 256
for i in $(seq 1 300); do
  [ "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 0')" = 0 ] && break
  sleep 0.1
done
assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1')" 500 "processed rows"
kill -TERM $RELAY_PID
rc=0; wait $RELAY_PID || rc=$?
assert_eq "$rc" 0 "relay exit status"
