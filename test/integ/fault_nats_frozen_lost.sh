# SPDX-License-Identifier: Apache-2.0
# Issue 23: a broker frozen until the connection is declared lost, then
# killed and started again, while rows are inserted and relayed. The relay
# must not crash (the sanitized build aborts on a use after free or a double
# close of the socket's poll), lose nothing, and store each id once. Run
# twice by the suite: nats.c on the relay's loop (the default), and on its
# own threads (OUTBOX_NATS_EVENT_LOOP=0, fault_nats_frozen_lost_threaded).
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/private.sh"
sfx=$([ "${OUTBOX_NATS_EVENT_LOOP:-}" = 0 ] && echo _th || true)
db=it_fault_lost$sfx stream=IT_FAULT_LOST$sfx prefix=itflost${sfx#_}
work=$(mktemp -d); RELAY_PID=; PROD_PID=
trap 'kill -KILL $RELAY_PID $PROD_PID 2>/dev/null || true; private_cleanup; rm -rf "$work"' EXIT
pnats_alone "$work/nats"
db_fresh $db
seed $db 2000 512

producer_start $db 512 "$work/stop-producer"
relay_bg "$work/relay.log" $db $stream $prefix --connections 2 --batch 100
# Frozen once rows flow (500 processed), whatever the speed.
wait_until 60 "500 rows processed" processed_at_least $db 500
lines=$(wc -l <"$work/relay.log")
kill -STOP "$PNATS_PID"
# Wait (bounded) until the relay declares the connection lost: nats.c's
# threads report a disconnect; on the loop the liveness probe closes it
# (and the link says it is disconnected).
for i in $(seq 1 300); do
  tail -n +$((lines + 1)) "$work/relay.log" |
    grep -q "nats: disconnected" && break
  sleep 0.1
done
grep -q "nats: disconnected" <<<"$(tail -n +$((lines + 1)) "$work/relay.log")" ||
  { show_log "$work/relay.log"; fail "the connection was not declared lost within 30 s of the freeze"; }
echo "declared lost after ~$((i / 10)) s"
kill -KILL "$PNATS_PID"
sleep 2
kill -0 $RELAY_PID 2>/dev/null || { show_log "$work/relay.log"; fail "the relay exited"; }
pnats_start "$work/nats"
sleep 3
producer_stop "$work/stop-producer"
total=$(sql $db 'SELECT COUNT(*) FROM outbox')
echo "$total rows inserted"
wait_sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 0' 0 60 ||
  { show_log "$work/relay.log"; fail "rows still pending 60 s after the restart"; }
kill -TERM $RELAY_PID
wait_exit $RELAY_PID 20
grep -E "AddressSanitizer|runtime error|LeakSanitizer" "$work/relay.log" && fail "sanitizer report"
assert_eq "$WAIT_RC" 0 "relay exit status after SIGTERM"
assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = -1')" 0 "dead rows"
assert_eq "$(sql $db 'SELECT MAX(attempt_count) FROM outbox')" 0 "largest attempt_count"
assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1')" "$total" "processed rows"
stream_has_ids $db $stream "$total" "$work/ids"
