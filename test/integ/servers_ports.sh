# SPDX-License-Identifier: Apache-2.0
# scripts/servers.sh takes its ports from OUTBOX_PORT_RANGE: a three-node
# cluster started in a 24-port range, where one port is listened on (seen as
# taken) and one is bound without listening (seen as free, refused at bind),
# runs on six distinct ports of the range, neither of those two, started again
# on other ports when a node could not bind; a bad range stops at once.
. "$(dirname "$0")/../harness/lib.sh"
work=$(mktemp -d); HOLD_PID=
trap 'kill $HOLD_PID 2>/dev/null || true; "$OUTBOX_TEST_SERVERS" stop "$work/c" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
port_in_use() {
  local rc=0
  timeout 2 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1"' _ "$1" 2>/dev/null || rc=$?
  [ "$rc" = 0 ] || [ "$rc" = 124 ]
}
# 24 free consecutive ports above the fixture's range.
for try in $(seq 1 50); do
  lo=$(((RANDOM * 32768 + RANDOM) % 2000 + 30000)) busy=0
  for p in $(seq $lo $((lo + 23))); do port_in_use $p && busy=1; done
  [ $busy = 0 ] && break
done
hi=$((lo + 23)) listening=$((lo + 3)) bound=$((lo + 9))
python3 - $listening $bound "$work/held" <<'PY' &
import socket, sys, time
a = socket.socket(); a.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
a.bind(("127.0.0.1", int(sys.argv[1]))); a.listen(1)
b = socket.socket(); b.bind(("127.0.0.1", int(sys.argv[2])))
open(sys.argv[3], "w").close()
time.sleep(300)
PY
HOLD_PID=$!
for i in $(seq 1 100); do [ -f "$work/held" ] && break; sleep 0.1; done
rc=0
OUTBOX_PORT_RANGE=$lo-$hi "$OUTBOX_TEST_SERVERS" start-cluster "$work/c" >"$work/out" 2>&1 || rc=$?
grep -v '^\[' "$work/out" | sed 's/^/    /'
assert_eq "$rc" 0 "start-cluster in $lo-$hi"
. "$work/c/ports"
ports="$client_n1 $route_n1 $client_n2 $route_n2 $client_n3 $route_n3"
for p in $ports; do
  [ "$p" -ge $lo ] && [ "$p" -le $hi ] || fail "port $p outside $lo-$hi"
  [ "$p" != $listening ] && [ "$p" != $bound ] || fail "port $p was taken"
done
assert_eq "$(tr ' ' '\n' <<<"$ports" | sort -u | wc -l)" 6 "distinct ports"
. "$work/c/env"
created=0
for i in $(seq 1 60); do
  "$OUTBOX_TEST_STREAMCHECK" --nats "$OUTBOX_TEST_CLUSTER_URL" --stream PORTS --create 'ports.>' \
    --replicas 3 2>/dev/null && { created=1; break; }
  sleep 0.5
done
assert_eq "$created" 1 "an R3 stream created on the cluster"
"$OUTBOX_TEST_STREAMCHECK" --nats "$OUTBOX_TEST_CLUSTER_URL" --stream PORTS --delete
echo "ok: cluster on $ports ($(grep -c 'again on other ports' "$work/out" || true) restart(s))"
"$OUTBOX_TEST_SERVERS" stop "$work/c"
rc=0
OUTBOX_PORT_RANGE=80-70000 "$OUTBOX_TEST_SERVERS" start-cluster "$work/bad" 2>"$work/bad.log" || rc=$?
assert_eq "$rc" 1 "a bad OUTBOX_PORT_RANGE"
grep -q "OUTBOX_PORT_RANGE: '80-70000' must lie within 1024-65535" "$work/bad.log" || fail "$(cat "$work/bad.log")"
