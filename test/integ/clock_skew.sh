# SPDX-License-Identifier: Apache-2.0
# Issue 37, item 7: a relay whose host clock runs 2 h ahead of the database's
# (libfaketime on the relay alone) reports the delivery lag on the
# database's clock. Asserts:
# - outbox_relay_clock_skew_seconds reads the skew (7,200 s, within 10 s);
# - 200 rows delivered: the lag histogram counts 200 rows whose mean is
#   under 10 s (it read about 7,200 s per row before);
# - the skew is said once, as a warning naming both clocks;
# - `status` (the database's clock on both sides) gives the oldest pending
#   row's age under a minute, from the same skewed host.
# Skipped (77) without libfaketime (Debian: faketime, see scripts/deps.sh).
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/private.sh"
db=it_clock_skew stream=IT_CLOCK_SKEW prefix=itclock
fake=$(ls /usr/lib/*/faketime/libfaketimeMT.so.1 2>/dev/null | head -1 || true)
[ -n "$fake" ] || { echo "SKIP: libfaketime is not installed (apt-get install faketime)"; exit 77; }
# A sanitized relay wants its runtime first among the preloaded libraries.
asan=$(ldd "$OUTBOX_TEST_RELAY" | awk '/libasan/ { print $3; exit }')
[ -z "$asan" ] || fake="$asan:$fake"
work=$(mktemp -d) RELAY_PID=
trap 'kill -KILL $RELAY_PID 2>/dev/null || true; rm -rf "$work"' EXIT
db_fresh $db
stream_delete $stream
skewed() { env LD_PRELOAD="$fake" FAKETIME=+2h "$@"; }
# env execs the relay: $! is the relay's pid.
env LD_PRELOAD="$fake" FAKETIME=+2h "$OUTBOX_TEST_RELAY" --db "${OUTBOX_TEST_DB_URL}$db" --nats "$OUTBOX_TEST_NATS_URL" \
  --stream $stream --subject-prefix $prefix --no-progress --http 127.0.0.1:0 2>"$work/relay.log" &
RELAY_PID=$!
hport=$(http_port "$work/relay.log")
series="outbox_relay_clock_skew_seconds{table=\"outbox\"}"
wait_until 30 "the skew gauge" metric_at_least $hport "$series" 0
skew=$(metric_value "$(metrics $hport)" "$series")
echo "skew gauge: $skew"
awk -v v="$skew" 'BEGIN { exit !(v > 7190 && v < 7210) }' || fail "the skew gauge reads $skew, not about 7200"

seed $db 200 128
wait_sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1' 200 60 ||
  { show_log "$work/relay.log" 20; fail "the 200 rows were not delivered"; }
wait_until 30 "the lag of 200 rows" metric_at_least $hport \
  "outbox_relay_delivery_lag_seconds_count{table=\"outbox\"}" 200
m=$(metrics $hport)
count=$(metric_value "$m" 'outbox_relay_delivery_lag_seconds_count{table="outbox"}')
sum=$(metric_value "$m" 'outbox_relay_delivery_lag_seconds_sum{table="outbox"}')
echo "delivery lag: $count rows, $sum s in all"
assert_eq "$count" 200 "rows in the lag histogram"
awk -v s="$sum" -v n="$count" 'BEGIN { exit !(s / n >= 0 && s / n < 10) }' ||
  fail "mean delivery lag $sum / $count s is not under 10 s"
assert_eq "$(log_count "$work/relay.log" "clock: this host's clock runs 7[0-9.]* s ahead of the database's")" 1 \
  "warnings of the skew"
kill -TERM $RELAY_PID
wait_exit $RELAY_PID 15
assert_eq "$WAIT_RC" 0 "relay exit status after SIGTERM"

seed $db 3 64
json=$(skewed "$OUTBOX_TEST_RELAY" status --db "${OUTBOX_TEST_DB_URL}$db" --json)
age=$(echo "$json" | jq '.oldest_pending_ms')
echo "status from the skewed host: oldest pending ${age} ms"
[ "$age" != null ] && [ "$age" -ge 0 ] && [ "$age" -lt 60000 ] ||
  fail "status gives the oldest pending row's age as $age ms"
stream_once $stream 200
