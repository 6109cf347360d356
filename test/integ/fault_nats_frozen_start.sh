# SPDX-License-Identifier: Apache-2.0
# Issue 12, point 3: nothing on the loop waits on the network. A private
# nats-server frozen with SIGSTOP before the relay starts (its port accepts
# connections, nothing answers): SIGTERM to the relay is handled promptly,
# whenever it comes during the connect (exit 0 within 3 s, or death by the
# signal itself while the binary still runs its start-up check), and nothing
# is claimed.
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/private.sh"
db=it_fault_frozen stream=IT_FAULT_FROZEN prefix=itffrozen
work=$(mktemp -d); RELAY_PID=
trap 'kill -KILL $RELAY_PID 2>/dev/null || true; private_cleanup; rm -rf "$work"' EXIT
db_fresh $db
seed $db 100 256
port=$(free_port)
pnats_config "$work/nats" "$port"
pnats_start "$work/nats"
kill -STOP "$PNATS_PID"

# The binary's start-up check waits up to 5 s for the server; the 7 s case
# comes after it, when the relay's own loop runs the connect.
for delay in 0.3 2.5 7.0; do
  "$OUTBOX_TEST_RELAY" --db "${OUTBOX_TEST_DB_URL}$db" --nats "nats://127.0.0.1:$port" \
    --stream $stream --subject-prefix $prefix --no-progress 2>"$work/relay-$delay.log" &
  RELAY_PID=$!
  sleep "$delay"
  kill -0 $RELAY_PID 2>/dev/null || { show_log "$work/relay-$delay.log"; fail "the relay exited by itself"; }
  kill -TERM $RELAY_PID
  wait_exit $RELAY_PID 20
  echo "SIGTERM $delay s after the start: exit $WAIT_RC after $WAITED_MS ms"
  # 143: the signal came during the binary's start-up check (before its
  # loop and its signal handlers run) and ended it at once; nothing was
  # claimed yet, so that is a prompt stop too.
  case "$WAIT_RC" in
    0) ;;
    143) [ "$delay" != 7.0 ] || { show_log "$work/relay-$delay.log"; fail "SIGTERM 7 s after the start was not handled (143)"; }
         echo "    (ended by the signal itself, during the start-up check)" ;;
    *) show_log "$work/relay-$delay.log"
       fail "exit status after SIGTERM $delay s into a connect to a frozen server: $WAIT_RC" ;;
  esac
  [ "$WAITED_MS" -lt 3000 ] || show_log "$work/relay-$delay.log"
  [ "$WAITED_MS" -lt 3000 ] || fail "SIGTERM $delay s after the start took $WAITED_MS ms (bound 3000)"
done
assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status <> 0 OR attempt_count <> 0')" 0 "rows touched"

# The server thaws: a relay started meanwhile goes on by itself and drains.
"$OUTBOX_TEST_RELAY" --db "${OUTBOX_TEST_DB_URL}$db" --nats "nats://127.0.0.1:$port" \
  --stream $stream --subject-prefix $prefix --no-progress --drain 2>"$work/thaw.log" &
RELAY_PID=$!
sleep 3
kill -CONT "$PNATS_PID"
wait_exit $RELAY_PID 40
echo "relay started against the frozen server: exit $WAIT_RC $WAITED_MS ms after the thaw"
[ "$WAIT_RC" = 0 ] || show_log "$work/thaw.log"
assert_eq "$WAIT_RC" 0 "exit status of --drain once the server thawed"
assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1')" 100 "processed rows"
assert_eq "$(sql $db 'SELECT MAX(attempt_count)  FROM outbox')" 0 "largest attempt_count"
