# SPDX-License-Identifier: Apache-2.0
# Issue 12, point 9: a hung database does not hold up a stop. A private
# mariadbd is frozen with SIGSTOP mid-run; SIGTERM to the relay
# (--shutdown-timeout 2000) must end it within the shutdown timeout plus a
# second (3 s), exit 0. After the database thaws, a second relay run
# processes every row, and each id is once in the stream: nothing lost.
# Then the same with the database frozen before the relay starts (connect):
# there, death by the signal itself during the start-up check (143) counts as
# a prompt stop, since nothing is claimed yet.
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/private.sh"
db=it_fault_dbstop stream=IT_FAULT_DBSTOP prefix=itfdbstop
work=$(mktemp -d); RELAY_PID=
trap 'kill -KILL $RELAY_PID 2>/dev/null || true; private_cleanup; rm -rf "$work"' EXIT
private_db_and_nats "$work/srv"
dbpid=$(cat "$OUTBOX_TEST_DIR/db.pid")
db_fresh $db
seed $db 20000 512

relay_bg "$work/run.log" $db $stream $prefix --batch 200 --shutdown-timeout 2000
# Mid-run: frozen once rows flow (1,000 of 20,000 processed), whatever the speed.
wait_until 60 "1000 rows processed" processed_at_least $db 1000
kill -STOP "$dbpid"
echo "mariadbd frozen with $(grep -c . "$work/run.log") log lines so far"
sleep 1 # the relay's statements hang on the frozen server: nothing to observe but time
kill -TERM $RELAY_PID
wait_exit $RELAY_PID 20
echo "SIGTERM with the database frozen: exit $WAIT_RC after $WAITED_MS ms"
stop_fail=
# The stop waits for the database up to --shutdown-timeout (2 s), then drops
# the open transactions; the bound leaves 2 s for the process's own exit on a
# loaded machine (a stop that waited on the frozen server would never end).
if [ "$WAIT_RC" != 0 ] || [ "$WAITED_MS" -ge 4000 ]; then
  show_log "$work/run.log" 12
  stop_fail="SIGTERM with a frozen database mid-run: exit $WAIT_RC after $WAITED_MS ms (want 0 within 4000 ms)"
fi
kill -CONT "$dbpid"

# A relay started while the database is frozen: the stop is as prompt.
kill -STOP "$dbpid"
relay_bg "$work/start.log" $db $stream $prefix --batch 200 --shutdown-timeout 2000
sleep 1.5
kill -TERM $RELAY_PID
wait_exit $RELAY_PID 20
echo "SIGTERM during the connect to a frozen database: exit $WAIT_RC after $WAITED_MS ms"
# 143: ended by the signal itself during the binary's start-up check of the
# database (before its loop runs); nothing was claimed.
[ "$WAIT_RC" = 143 ] && echo "    (ended by the signal itself, during the start-up check)" && WAIT_RC=0
if [ "$WAIT_RC" != 0 ] || [ "$WAITED_MS" -ge 3000 ]; then
  show_log "$work/start.log" 12
  stop_fail="$stop_fail${stop_fail:+; }SIGTERM during a connect to a frozen database: exit $WAIT_RC after $WAITED_MS ms (want 0 within 3000 ms)"
fi
kill -CONT "$dbpid"

# Frozen before the start, SIGTERM 12 s later: past the binary's start-up
# check of the database (it waits up to its 10 s connect timeout), so the
# relay's loop handles the signal: exit 0 within 3 s.
kill -STOP "$dbpid"
relay_bg "$work/late.log" $db $stream $prefix --batch 200 --shutdown-timeout 2000
sleep 12
kill -TERM $RELAY_PID
wait_exit $RELAY_PID 20
echo "SIGTERM 12 s into a start against a frozen database: exit $WAIT_RC after $WAITED_MS ms"
if [ "$WAIT_RC" != 0 ] || [ "$WAITED_MS" -ge 3000 ]; then
  show_log "$work/late.log" 12
  stop_fail="$stop_fail${stop_fail:+; }SIGTERM 12 s into a start against a frozen database: exit $WAIT_RC after $WAITED_MS ms (want 0 within 3000 ms)"
fi
kill -CONT "$dbpid"

# Nothing lost: a second run drains the rest.
relay_bg "$work/drain.log" $db $stream $prefix --batch 200 --drain
wait_exit $RELAY_PID 60
[ "$WAIT_RC" = 0 ] || show_log "$work/drain.log"
assert_eq "$WAIT_RC" 0 "exit status of the draining run"
assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1')" 20000 "processed rows"
assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = -1')" 0 "dead rows"
stream_has_ids $db $stream 20000 "$work/ids"
[ -z "$stop_fail" ] || fail "$stop_fail"
echo "ok: every stop within its bound"
