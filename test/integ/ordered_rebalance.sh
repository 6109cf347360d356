# SPDX-License-Identifier: Apache-2.0
# Bucket leases rebalance by themselves: a relay alone owns all 64 buckets;
# a second one joins and gets half within a few lease rounds; when it dies
# (SIGKILL), the first takes them back. `status` shows who owns what.
. "$(dirname "$0")/../harness/lib.sh"
db=it_ord_rebalance stream=IT_ORD_REBALANCE prefix=itordr
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
db_fresh $db --ordered
stream_delete $stream
# owned PORT: the buckets_owned gauge of the relay whose /metrics is on PORT.
owned() { metric_value "$(metrics "$1")" 'outbox_relay_buckets_owned{table="outbox"}'; }
# wait_owned PORT N: until that relay owns N buckets (10 s at most).
wait_owned() {
  local t0=$(date +%s%N)
  while [ $((($(date +%s%N) - t0) / 1000000)) -le 10000 ]; do
    [ "$(owned "$1")" = "$2" ] && return 0
    sleep 0.05
  done
  fail "the relay on port $1 owns $(owned "$1") buckets (outbox_relay_buckets_owned), not $2"
}
status() { "$OUTBOX_TEST_RELAY" status --db "${OUTBOX_TEST_DB_URL}$db"; }

relay_bg "$work/a.log" $db $stream $prefix --ordered --connections 2 --http 127.0.0.1:0
pids+=($RELAY_PID)
a=$(http_port "$work/a.log")
wait_owned $a 64
status | tee "$work/status1"
assert_eq "$(grep -c '^buckets .*owns 64 of 64' "$work/status1")" 1 "status: one session owns every bucket"

t0=$(date +%s%N)
relay_bg "$work/b.log" $db $stream $prefix --ordered --connections 2 --http 127.0.0.1:0
pids+=($RELAY_PID)
b=$(http_port "$work/b.log")
wait_owned $b 32
wait_owned $a 32
echo "a joiner got its half $((($(date +%s%N) - t0) / 1000000)) ms after it started"
status | tee "$work/status2"
assert_eq "$(grep -c '^buckets .*owns 32 of 64' "$work/status2")" 2 "status: two sessions own 32 each"

kill -KILL "${pids[1]}"
t0=$(date +%s%N)
wait_owned $a 64
echo "the survivor owned every bucket again $((($(date +%s%N) - t0) / 1000000)) ms after the kill"
kill -TERM "${pids[0]}"
rc=0; wait "${pids[0]}" || rc=$?
assert_eq "$rc" 0 "exit status of the first relay"
status | tee "$work/status3"
assert_eq "$(grep -c 'none owned' "$work/status3")" 1 "status: no bucket owned once the relays are gone"
echo "ordered_rebalance: ok"
