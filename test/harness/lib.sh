# SPDX-License-Identifier: Apache-2.0
# Sourced by the shell integration tests (test/integ/*.sh), which run under
# harness/run.sh with the servers' addresses exported.
set -euo pipefail
# A command that fails outside a condition ends the test (set -e); say which,
# since nothing else would. Only the main shell's own commands: with set -E
# (the trap in functions and subshells too) bash would no longer replace a
# subshell by its last command, and tests that kill `( ...; sleep N ) &`
# would leave the sleep holding the subshell's descriptors.
trap 'ob_rc=$?; [ "$BASHPID" != "$$" ] ||
  echo "FAIL: ${BASH_SOURCE[0]}:$LINENO: exit status $ob_rc: $BASH_COMMAND" >&2' ERR

MDB() { "$OUTBOX_TEST_MARIADB_CLIENT" --no-defaults -uroot -S "$OUTBOX_TEST_DB_SOCKET" "$@"; }

fail() { echo "FAIL: $*" >&2; exit 1; }

# expect_exit CODE WHAT command...: runs the command (its output indented),
# and checks its exit status.
expect_exit() {
  local want=$1 what=$2; shift 2
  local rc=0 out
  out=$("$@" 2>&1) || rc=$?
  echo "$out" | sed 's/^/    /'
  assert_eq "$rc" "$want" "exit status of $what"
}

assert_eq() { # actual expected what
  if [ "$1" != "$2" ]; then fail "$3: expected '$2', got '$1'"; fi
  echo "ok: $3 = $1"
}

# db_fresh DB [schema flags...]: a new database with an outbox table.
db_fresh() {
  local db=$1; shift
  MDB -e "DROP DATABASE IF EXISTS \`$db\`; CREATE DATABASE \`$db\`"
  "$OUTBOX_TEST_RELAY" schema "$@" | MDB "$db"
}

sql() { local db=$1; shift; MDB -N -B "$db" -e "$*"; }

# seed DB N [PAYLOAD_BYTES] [TABLE]: N pending rows with JSON payloads.
seed() {
  local db=$1 n=$2 bytes=${3:-512} table=${4:-outbox}
  local pad=$((bytes - 20))
  sql "$db" "INSERT INTO $table (id, aggregate_type, aggregate_id, event_type, payload)
    SELECT outbox_uuid_v7(), 'order', CONCAT('o', seq), 'created',
           JSON_OBJECT('n', seq, 'pad', REPEAT('x', $pad)) FROM seq_1_to_$n"
}

# canonical ids of the rows of DB matching WHERE (default all)
ids() {
  local db=$1 where=${2:-1}
  sql "$db" "SELECT LOWER(CONCAT_WS('-', SUBSTR(HEX(id),1,8), SUBSTR(HEX(id),9,4),
    SUBSTR(HEX(id),13,4), SUBSTR(HEX(id),17,4), SUBSTR(HEX(id),21))) FROM outbox WHERE $where"
}

# relay DB STREAM PREFIX [flags...]: runs the binary against the test servers.
relay() {
  local db=$1 stream=$2 prefix=$3; shift 3
  "$OUTBOX_TEST_RELAY" --db "${OUTBOX_TEST_DB_URL}$db" --nats "$OUTBOX_TEST_NATS_URL" \
    --stream "$stream" --subject-prefix "$prefix" --no-progress "$@"
}

# relay_bg LOG DB STREAM PREFIX [flags...]: starts the relay in the background,
# stderr to LOG; its pid is left in RELAY_PID (not a subshell's).
relay_bg() {
  local log=$1 db=$2 stream=$3 prefix=$4; shift 4
  "$OUTBOX_TEST_RELAY" --db "${OUTBOX_TEST_DB_URL}$db" --nats "$OUTBOX_TEST_NATS_URL" \
    --stream "$stream" --subject-prefix "$prefix" --no-progress "$@" 2>"$log" &
  RELAY_PID=$!
}

# show_log FILE [LINES]: the relay's log, indented, for a failing test's output.
show_log() { echo "--- $1"; sed 's/^/    /' "$1" | tail -${2:-60}; }

# wait_until SECONDS WHAT command...: runs the command every 0.05 s until it
# succeeds, and fails the test naming WHAT if SECONDS pass first. A test that
# acts at a moment (a kill, a freeze, a stop) waits so for the state the
# action needs (rows processed, a metric, a line of the relay's log) rather
# than for a fixed time, so that a fast machine and a slow one test the same.
wait_until() {
  local secs=$1 what=$2 t0; shift 2
  t0=$(date +%s%N)
  until "$@"; do
    [ $((($(date +%s%N) - t0) / 1000000)) -lt $((secs * 1000)) ] ||
      fail "not within $secs s: $what"
    sleep 0.05
  done
}

# rows_processed DB [TABLE]: how many rows of the outbox table have status 1.
rows_processed() { sql "$1" "SELECT COUNT(*) FROM ${2:-outbox} WHERE status = 1"; }
# processed_at_least DB N: at least N rows of DB's outbox are processed.
processed_at_least() { [ "$(rows_processed "$1")" -ge "$2" ]; }
# log_has FILE REGEX: a line of FILE (a relay's log) matches REGEX (grep -E).
log_has() { grep -qE -- "$2" "$1" 2>/dev/null; }
# log_count FILE REGEX: how many lines of FILE match REGEX (0 when none).
log_count() { grep -cE -- "$2" "$1" 2>/dev/null || true; }

streamcheck() { "$OUTBOX_TEST_STREAMCHECK" --nats "$OUTBOX_TEST_NATS_URL" "$@"; }

# stream_summary STREAM: "messages=N read=N distinct=N duplicates=N without_id=N"
stream_summary() { streamcheck --stream "$1" --subject '>' | grep '^messages='; }
field() { echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
# stream_once STREAM N: the stream holds N messages, N distinct ids.
stream_once() {
  local s
  s=$(stream_summary "$1")
  echo "$s"
  assert_eq "$(field "$s" messages)" "$2" "messages in the stream"
  assert_eq "$(field "$s" distinct)" "$2" "distinct ids in the stream"
}

stream_delete() { streamcheck --stream "$1" --delete; }

# stream_holds_ids STREAM N FILE: the stream holds N messages, N distinct
# ids, and every id listed in FILE is among them.
stream_holds_ids() {
  local out summary
  out=$(streamcheck --stream "$1" --subject '>' --expect-ids "$3" || true)
  summary=$(echo "$out" | grep '^messages=')
  echo "$summary"
  assert_eq "$(field "$summary" messages)" "$2" "messages in $1"
  assert_eq "$(field "$summary" distinct)" "$2" "distinct ids in $1"
  assert_eq "$(field "$(echo "$out" | grep '^expected=')" missing)" 0 "ids missing from $1"
}

# stream_has_ids DB STREAM N FILE: the stream holds N messages, N distinct
# ids, and every id of DB's outbox table (listed into FILE) is among them.
stream_has_ids() {
  ids "$1" >"$4"
  stream_holds_ids "$2" "$3" "$4"
}

# restart_mid_run DB STREAM PREFIX SERVERS-COMMAND LOG: seeds 20,000 rows, starts
# the relay, runs `servers.sh SERVERS-COMMAND` (restart-db, restart-nats) once
# 1,000 rows are processed (mid-run on any machine), waits until nothing is pending, keeps the relay's /metrics in
# RUN_METRICS, stops the relay with SIGTERM, and checks that every row was
# processed and each id is once in the stream.
restart_mid_run() {
  local db=$1 stream=$2 prefix=$3 what=$4 log=$5 i rc=0 port
  db_fresh $db
  stream_delete $stream
  seed $db 20000 512
  relay_bg "$log" $db $stream $prefix --connections 2 --batch 50 --http 127.0.0.1:0
  port=$(http_port "$log")
  wait_until 60 "1000 rows processed before $what" processed_at_least $db 1000
  echo "$what with $(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1') rows processed"
  "$OUTBOX_TEST_SERVERS" "$what" "$OUTBOX_TEST_DIR"
  for i in $(seq 1 600); do
    [ "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 0')" = 0 ] && break
    sleep 0.1
  done
  RUN_METRICS=$(metrics $port)
  kill -TERM $RELAY_PID 2>/dev/null || echo "the relay had exited by itself"
  wait $RELAY_PID || rc=$?
  [ "$rc" = 0 ] || show_log "$log" 30
  assert_eq "$rc" 0 "relay exit status"
  assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1')" 20000 "processed rows"
  local summary
  summary=$(stream_summary $stream)
  echo "$summary"
  assert_eq "$(field "$summary" messages)" 20000 "messages in the stream"
  assert_eq "$(field "$summary" distinct)" 20000 "distinct ids in the stream"
}

# http_port LOG: the port the relay's --http responder listens on, from its
# log line (the tests listen on port 0, which picks a free one).
http_port() {
  local log=$1 i p
  # The log may not exist yet: the shell that started the relay in the
  # background makes it, and may not have run yet on a loaded machine.
  for i in $(seq 1 300); do
    p=$(sed -n 's/.*http: serving .* (port \([0-9]*\)).*/\1/p' "$log" 2>/dev/null | head -1 || true)
    [ -n "$p" ] && { echo "$p"; return 0; }
    sleep 0.1
  done
  cat "$log" >&2
  fail "the relay did not log its HTTP port"
}

# http_code PORT PATH: the status code of GET PATH ("000" when no answer).
http_code() { curl -s -o /dev/null -m 5 -w '%{http_code}' "http://127.0.0.1:$1$2" || true; }

# metrics PORT: the relay's /metrics text, empty when it does not answer.
metrics() { curl -sf -m 5 "http://127.0.0.1:$1/metrics" || true; }

# metrics_until_exit PID PORT FILE: scrapes /metrics every 0.2 s while PID
# runs (a relay that stops by itself, such as --drain), keeping the last
# answer in FILE; the counters in it are final but for the last 0.2 s.
metrics_until_exit() {
  local pid=$1 port=$2 file=$3 text
  : >"$file"
  while kill -0 "$pid" 2>/dev/null; do
    text=$(metrics "$port")
    [ -n "$text" ] && echo "$text" >"$file"
    sleep 0.2
  done
}

# metric_sum TEXT NAME: the sum of every sample of metric NAME in TEXT.
metric_sum() {
  echo "$1" | awk -v n="$2" '$1 == n || index($1, n "{") == 1 { s += $NF } END { printf "%d\n", s }'
}

# metric_value TEXT SERIES: the value of one series written as in TEXT
# (name{label="...",...}), empty when TEXT lacks it.
# (awk reads to the end: leaving early would end echo with SIGPIPE, which
# pipefail makes the status of the whole pipe.)
metric_value() { echo "$1" | awk -v s="$2" '$1 == s && !found { print $NF; found = 1 }'; }

# metric_at_least PORT SERIES N: the relay's /metrics has SERIES (written as
# metric_value takes it) at N or more.
metric_at_least() {
  local v
  v=$(metric_value "$(metrics "$1")" "$2")
  [ -n "$v" ] && awk -v v="$v" -v n="$3" 'BEGIN { exit !(v >= n) }'
}

# cursor_relay_fresh DB STREAM PREFIX LOG: a fresh --cursor table in DB and an
# empty STREAM, then a --cursor relay in the background (RELAY_PID) logging to
# LOG, with its HTTP port in $port.
cursor_relay_fresh() {
  db_fresh "$1" --cursor
  stream_delete "$2"
  relay_bg "$4" "$1" "$2" "$3" --cursor --http 127.0.0.1:0
  port=$(http_port "$4")
}

# cursor_relay_end DB STREAM ROWS IDS_FILE: stops the relay cursor_relay_fresh
# started (exit 0 expected) and checks what cursor mode promises: no row was
# written (status 0, no attempt), the ROWS rows of DB each once in STREAM, no
# aggregate out of order (header agg_seq).
cursor_relay_end() {
  local rc=0
  kill -TERM "$RELAY_PID"
  wait "$RELAY_PID" || rc=$?
  RELAY_PID=
  assert_eq "$rc" 0 "relay exit status"
  assert_eq "$(sql "$1" 'SELECT COUNT(*) FROM outbox WHERE status <> 0 OR attempt_count > 0')" 0 \
    "rows written"
  stream_has_ids "$1" "$2" "$3" "$4"
  streamcheck --stream "$2" --subject '>' --check-order agg_seq
}

# verify_ours UNIT: systemd-analyze verify's output (stdin) without the lines
# about another unit's file: verifying a unit loads the machine's units it
# names, and one of them may warn about itself (garb.service of
# galera-arbitrator-4: "Special user nobody configured").
verify_ours() {
  awk -v u="$1" 'NF == 0 { next }
    match($0, /^\/[^:]*:[0-9]+: /) { f = substr($0, 1, index($0, ":") - 1); sub(/.*\//, "", f); if (f != u) next }
    { print }'
}

# verify_unit FILE: `systemd-analyze verify FILE`, its exit status and the
# lines of its output about FILE's unit (verify_ours).
verify_unit() {
  local out rc=0
  out=$(SYSTEMD_LOG_COLOR=0 systemd-analyze verify "$1" 2>&1) || rc=$?
  verify_ours "$(basename "$1")" <<<"$out"
  return $rc
}
