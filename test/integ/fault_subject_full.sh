# SPDX-License-Identifier: Apache-2.0
# Issue 37, point 5: a per-subject limit must not kill rows. The stream keeps
# 5 messages per subject and discards new ones per subject; 12 'invoice'
# rows of one aggregate share the subject <prefix>.invoice.created, and a
# 13th row of that aggregate ('paid') and 60 'order' rows each have a
# subject of their own. JetStream refuses the invoice rows past the fifth:
# that is the stream's configuration, not the rows'. The subject pauses: its
# 7 rows wait with no attempt counted and none dead (--max-attempts 2 and a
# 200 ms backoff would kill them within a second if they were charged), the
# other subjects flow, the log says it once, outbox_relay_subjects_paused is
# 1 and /readyz (200: the rest flows) names the subject. The limit raised,
# every row arrives once. In --ordered and --cursor modes the aggregate's
# later 'paid' row waits behind its paused rows, and the stream holds each
# aggregate in order. Run in the three modes, one after the other.
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/private.sh"
db=it_fault_subjfull stream=IT_FAULT_SUBJFULL prefix=itfsubjfull
work=$(mktemp -d); RELAY_PID=
trap 'rc=$?; [ $rc = 0 ] || show_log "$work/relay.log" 30; kill -KILL $RELAY_PID 2>/dev/null || true
  rm -rf "$work"' EXIT

run() { # MODE: plain, ordered or cursor
  local mode=$1 flags= schema= waiting=0
  case $mode in
  ordered) flags=--ordered schema=--ordered ;;
  cursor) flags=--cursor schema=--cursor waiting=2 ;;
  esac
  echo "--- $mode"
  db_fresh $db $schema
  stream_delete $stream
  streamcheck --stream $stream --create "$prefix.>" --max-msgs-per-subject 5 --discard-new \
    --discard-new-per-subject
  sql $db "INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload, headers)
    SELECT outbox_uuid_v7(), 'invoice', 'i1', 'created', JSON_OBJECT('n', seq),
           JSON_OBJECT('agg_seq', CAST(seq AS CHAR)) FROM seq_1_to_12"
  sql $db "INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload, headers)
    VALUES (outbox_uuid_v7(), 'invoice', 'i1', 'paid', '{}', JSON_OBJECT('agg_seq', '13'))"
  sql $db "INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload, headers)
    SELECT outbox_uuid_v7(), 'order', CONCAT('o', seq), CONCAT('e', seq), JSON_OBJECT('n', seq),
           JSON_OBJECT('agg_seq', '1') FROM seq_1_to_60"
  : >"$work/relay.log"
  relay_bg "$work/relay.log" $db $stream $prefix $flags --batch 20 --max-attempts 2 \
    --backoff fixed --backoff-base 200ms --backoff-max 200ms --backoff-jitter 0 --http 127.0.0.1:0
  local port; port=$(http_port "$work/relay.log")
  # Plain mode publishes the 'paid' row; the ordered modes hold it. Each
  # time the pause is tried, plain mode tries its 7 rows, the ordered modes
  # the aggregate's first.
  local flowing=65 held=8 tries=1
  [ $mode = plain ] && flowing=66 held=7 tries=7
  paused_and_flowing() {
    kill -0 $RELAY_PID 2>/dev/null || fail "the relay exited"
    local m; m=$(metrics $port)
    [ "$(metric_value "$m" 'outbox_relay_subjects_paused{table="outbox"}')" = 1 ] &&
      [ "$(field "$(stream_summary $stream)" messages)" = $flowing ] &&
      [ "$(metric_value "$m" 'outbox_relay_subject_waits_total{table="outbox"}')" -ge $((tries * 2)) ]
  }
  # The refused rows waited twice: the pause was tried again.
  wait_until 30 "the subject paused, twice, and the others delivered" paused_and_flowing
  sql $db "SELECT status, COUNT(*), MAX(attempt_count) FROM outbox GROUP BY status" |
    sed 's/^/    status count max_attempts: /'
  assert_eq "$(sql $db "SELECT COUNT(*) FROM outbox WHERE aggregate_type = 'invoice'
    AND status = $waiting AND attempt_count = 0")" $held "$mode: invoice rows waiting with no attempt"
  assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = -1')" 0 "$mode: dead rows"
  assert_eq "$(sql $db 'SELECT MAX(attempt_count) FROM outbox')" 0 "$mode: largest attempt_count"
  assert_eq "$(http_code $port /readyz)" 200 "$mode: /readyz while one subject is paused"
  local reason; reason=$(curl -s -m 5 "http://127.0.0.1:$port/readyz")
  echo "    readyz: $reason"
  grep -q "1 subject(s) paused.*'$prefix.invoice.created'" <<<"$reason" ||
    fail "$mode: /readyz names the paused subject: '$reason'"
  assert_eq "$(log_count "$work/relay.log" "subject '$prefix.invoice.created' is full")" 1 \
    "$mode: log lines saying the subject is full"
  assert_eq "$(log_count "$work/relay.log" 'per subject|per_subject')" 1 \
    "$mode: log lines about the per-subject limit"

  streamcheck --stream $stream --set-max-msgs-per-subject 100
  all_in() { [ "$(field "$(stream_summary $stream)" messages)" = 73 ]; }
  wait_until 30 "every row in the stream once the limit is raised" all_in
  resumed() { [ "$(metric_value "$(metrics $port)" 'outbox_relay_subjects_paused{table="outbox"}')" = 0 ]; }
  wait_until 10 "the pause ended" resumed
  assert_eq "$(curl -s -m 5 "http://127.0.0.1:$port/readyz")" ready "$mode: /readyz after the pause"
  assert_eq "$(log_count "$work/relay.log" "subject '$prefix.invoice.created' takes messages again")" \
    1 "$mode: log lines saying the subject resumed"
  kill -TERM $RELAY_PID
  wait_exit $RELAY_PID 15
  assert_eq "$WAIT_RC" 0 "$mode: relay exit status after SIGTERM"
  assert_eq "$(sql $db 'SELECT MAX(attempt_count) FROM outbox')" 0 "$mode: largest attempt_count"
  assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = -1')" 0 "$mode: dead rows"
  stream_has_ids $db $stream 73 "$work/ids"
  if [ $mode != plain ]; then
    streamcheck --stream $stream --subject '>' --check-order agg_seq
    # The aggregate's 'paid' row came after its 12 'created' rows.
    local after; after=$(streamcheck --stream $stream --subject '>' --dump 100 |
      awk '/^subject: / { s = $2 } /^header agg_seq: / && s ~ /[.]invoice[.]/ { printf "%s ", $3 }')
    assert_eq "$after" "1 2 3 4 5 6 7 8 9 10 11 12 13 " "$mode: the aggregate's rows in the stream"
  fi
  echo "ok: $mode"
}

run plain
run ordered
run cursor
echo "fault_subject_full: ok"
