# SPDX-License-Identifier: Apache-2.0
# A log reader that stops reading does not stop delivery: the relay's stderr
# is a FIFO with a one-page pipe, read by a process that is then frozen
# (SIGSTOP) for 10 s while 3,000 rows flow. The relay's lines (--log-level
# debug: a few per batch of 20) fill the pipe and the relay's buffer: lines
# are dropped and counted (outbox_relay_log_dropped_total), every row reaches
# the stream while the reader is still frozen, and once it reads again one
# line says how many lines were dropped. The relay leaves its stderr's shared description
# blocking (the non-blocking writes go through a description of its own), and
# it stops with status 0, its last lines reaching the reader.
. "$(dirname "$0")/../harness/lib.sh"
db=it_logstall stream=IT_LOGSTALL prefix=itlogstall
work=$(mktemp -d); RELAY_PID= READER_PID=
cleanup() {
  [ -z "$READER_PID" ] || kill -CONT $READER_PID 2>/dev/null || true
  kill $RELAY_PID $READER_PID 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
db_fresh $db
stream_delete $stream
seed $db 200 256

# The reader: opens the FIFO, shrinks its pipe to one page, copies it to a file.
mkfifo "$work/stderr.fifo"
: >"$work/relay.log"
python3 - "$work/stderr.fifo" "$work/relay.log" <<'PY' &
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
fcntl.fcntl(fd, 1031, 4096)  # F_SETPIPE_SZ
with open(sys.argv[2], 'wb', buffering=0) as out:
    while True:
        b = os.read(fd, 65536)
        if not b:
            break
        out.write(b)
PY
READER_PID=$!
"$OUTBOX_TEST_RELAY" --db "${OUTBOX_TEST_DB_URL}$db" --nats "$OUTBOX_TEST_NATS_URL" \
  --stream $stream --subject-prefix $prefix --no-progress --http 127.0.0.1:0 --log-level debug --batch 20 \
  2>"$work/stderr.fifo" &
RELAY_PID=$!
port=$(http_port "$work/relay.log")
wait_until 30 "the first rows delivered" processed_at_least $db 200
flags=$(sed -n 's/^flags:[[:space:]]*//p' /proc/$RELAY_PID/fdinfo/2)
assert_eq "$(((8#$flags & 8#4000) != 0))" 0 "O_NONBLOCK on the relay's stderr description"

# Frozen while rows flow: every row reaches the stream, lines are dropped.
kill -STOP $READER_PID
frozen_at=$SECONDS
dropped() { metric_value "$(metrics $port)" outbox_relay_log_dropped_total; }
some_dropped() { [ "$(dropped)" -gt 0 ] 2>/dev/null; }
seed $db 3000 256
wait_until 60 "every row delivered while the log's reader is frozen" processed_at_least $db 3200
stream_once $stream 3200
assert_eq "$(awk '{ print $3 }' /proc/$READER_PID/stat)" T "the reader's state once every row is delivered"
wait_until 30 "log lines dropped while the reader is frozen" some_dropped
echo "ok: log lines dropped while the reader is frozen: $(dropped)"
# The stall lasts 10 s in all, whatever the rows took.
while [ $((SECONDS - frozen_at)) -lt 10 ]; do sleep 0.5; done
assert_eq "$(awk '{ print $3 }' /proc/$READER_PID/stat)" T "the reader's state after 10 s"
! grep -q 'line(s) dropped' "$work/relay.log" || fail "the drop said before the reader read again"

# Read again: one line says how many were dropped, as the metric counts them.
kill -CONT $READER_PID
wait_until 30 "the line saying the drop" log_has "$work/relay.log" 'line\(s\) dropped'
said=$(sed -n 's/.*log output: \([0-9]*\) line(s) dropped.*/\1/p' "$work/relay.log")
assert_eq "$(echo "$said" | wc -l)" 1 "lines saying the drop"
assert_eq "$said" "$(dropped)" "lines said dropped and outbox_relay_log_dropped_total"

kill -TERM $RELAY_PID
rc=0; wait $RELAY_PID || rc=$?; RELAY_PID=
assert_eq "$rc" 0 "relay exit status"
wait $READER_PID || true; READER_PID=
grep -q 'stopped' "$work/relay.log" || { show_log "$work/relay.log" 10; fail "the last lines reach the reader"; }
echo "ok: $(wc -l <"$work/relay.log") lines read, $said dropped and said once"
