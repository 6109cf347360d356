# SPDX-License-Identifier: Apache-2.0
# The lease timeout's three spellings are read and checked. One mode per
# table: a relay of another mode than one already running on
# the table exits 1 at start naming the mode it found (an unordered relay
# beside an ordered one, a leader-mode relay beside it, an ordered relay
# beside an unordered one), and a running relay that sees another mode's
# lock appear warns once, not every round, and keeps running.
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/lease.sh"
db=it_lease_mode_mix stream=IT_LEASE_MODE_MIX prefix=itlmm
lease_setup $db $stream
seed $db 100

# The leases' lock name prefix: "obx:" and FNV-1a 64 of "<database>.<table>".
h=1469598103934665603 # the offset basis as src/lease.c writes it
s="$db.outbox"
for ((i = 0; i < ${#s}; i++)); do
  h=$(((h ^ $(printf '%d' "'${s:i:1}")) * 1099511628211))
done
base=$(printf 'obx:%016x' "$h")

# A relay that would run until stopped (no --drain): exit 1 is the refusal.
R=(timeout 20 "$OUTBOX_TEST_RELAY" --db "${OUTBOX_TEST_DB_URL}$db" --nats "$OUTBOX_TEST_NATS_URL"
  --stream $stream --subject-prefix $prefix --no-progress)

echo "== --lease-timeout, OUTBOX_LEASE_TIMEOUT and the config key lease-timeout"
expect_exit 2 "--lease-timeout 1s" relay $db $stream $prefix --ordered --lease-timeout 1s
printf '[relay]\nlease-timeout = 2s\n' >"$work/relay.ini"
expect_exit 2 "lease-timeout = 2s in a config file" relay $db $stream $prefix --config "$work/relay.ini"
assert_eq "$(OUTBOX_LEASE_TIMEOUT=20s relay $db $stream $prefix --print-config | grep -c '^lease-timeout = 20s$')" \
  1 "OUTBOX_LEASE_TIMEOUT in the effective configuration"

echo "== an ordered relay runs; other modes are refused"
relay_bg "$work/ord.log" $db $stream $prefix --ordered
pids+=($RELAY_PID)
wait_log "$work/ord.log" "buckets owned" 10 || fail "the ordered relay owns nothing"
[ "$(sql $db "SELECT IS_USED_LOCK('$base:b0') IS NOT NULL")" = 1 ] ||
  fail "the lock prefix computed here ($base) is not the relay's"
expect_exit 1 "an unordered relay beside an ordered one" "${R[@]}"
out=$("${R[@]}" 2>&1) &&
  fail "an unordered relay started beside an ordered one"
grep -q "already relayed in --ordered mode" <<<"$out" || fail "the message names the ordered mode"
# Its final counters (it has no other way to tell): nothing was published.
grep -q "relay stopped: 0 acked, 0 dead" <<<"$out" || fail "the refused relay published rows"
expect_exit 1 "a leader-mode relay beside an ordered one" "${R[@]}" --leader
kill -TERM "${pids[0]}"; wait "${pids[0]}" || true

echo "== an unordered relay runs; an ordered one is refused"
relay_bg "$work/plain.log" $db $stream $prefix
pids+=($RELAY_PID)
for i in $(seq 1 100); do
  [ "$(sql $db "SELECT COUNT(*) FROM seq_0_to_63 WHERE IS_USED_LOCK(CONCAT('$base:p', seq))")" = 1 ] && break
  sleep 0.1
done
[ "$(sql $db "SELECT COUNT(*) FROM seq_0_to_63 WHERE IS_USED_LOCK(CONCAT('$base:p', seq))")" = 1 ] ||
  fail "the unordered relay holds no mode lock"
out=$("${R[@]}" --ordered 2>&1) && fail "an ordered relay started beside an unordered one"
echo "$out" | grep "already relayed in unordered mode" || fail "the message names the unordered mode"

echo "== a newcomer's lock appears beside the running relay: one warning"
MDB -N -B $db -e "SELECT GET_LOCK('$base:m9', 0); DO SLEEP(11)" >/dev/null
warned=$(grep -c "in --ordered mode started on table" "$work/plain.log" || true)
assert_eq "$warned" 1 "warnings of the other mode over 2 rounds (every 5 s)"
kill -0 "${pids[1]}" || fail "the running relay stopped"
kill -TERM "${pids[1]}"
rc=0; wait "${pids[1]}" || rc=$?
assert_eq "$rc" 0 "exit status of the unordered relay"
echo "lease_mode_mix: ok"
