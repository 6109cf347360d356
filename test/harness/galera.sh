# SPDX-License-Identifier: Apache-2.0
# Sourced by the tests on the Galera fixture (after lib.sh).

# GSQL N DB SQL: runs SQL as root on node N, after the node has applied
# every write-set committed in the cluster before it (wsrep_sync_wait).
GSQL() {
  local n=$1 db=$2 sock; shift 2
  eval "sock=\$OUTBOX_TEST_GALERA_SOCKET$n"
  "$OUTBOX_TEST_MARIADB_CLIENT" --no-defaults -uroot -S "$sock" -N -B \
    --init-command="SET SESSION wsrep_sync_wait = 1" "$db" -e "$*"
}

# galera_db_fresh DB [schema flags...]: a new database with an outbox table,
# made on node 1 (DDL reaches every node before it returns).
galera_db_fresh() {
  local db=$1; shift
  GSQL 1 "" "DROP DATABASE IF EXISTS \`$db\`; CREATE DATABASE \`$db\`"
  "$OUTBOX_TEST_RELAY" schema "$@" | "$OUTBOX_TEST_MARIADB_CLIENT" --no-defaults -uroot \
    -S "$OUTBOX_TEST_GALERA_SOCKET1" "$db"
}

# GROOT N args...: the mariadb client as root on node N, without a database
# and without waiting for the cluster (it answers on a node cut off too).
GROOT() {
  local n=$1 sock; shift
  eval "sock=\$OUTBOX_TEST_GALERA_SOCKET$n"
  "$OUTBOX_TEST_MARIADB_CLIENT" --no-defaults -uroot -S "$sock" -N -B "$@"
}

# galera_relays DB STREAM PREFIX WORK: a plain relay on each node, its log
# WORK/relayN.log; their pids in `pids`, their HTTP ports in `ports`.
galera_relays() {
  local db=$1 stream=$2 prefix=$3 work=$4 n url
  for n in 1 2 3; do
    eval "url=\$OUTBOX_TEST_GALERA_URL$n"
    "$OUTBOX_TEST_RELAY" --db "${url}$db" --nats "$OUTBOX_TEST_NATS_URL" --stream "$stream" \
      --subject-prefix "$prefix" --no-progress --http 127.0.0.1:0 2>"$work/relay$n.log" &
    pids+=($!)
    ports+=("$(http_port "$work/relay$n.log")")
  done
}

# galera_producers DB WORK NODE...: on each node named, a producer committing
# 5,000 rows in 100 transactions of 50, in the background; pids in
# `producers`. GALERA_PACE, when set, is a statement run after each.
galera_producers() {
  local db=$1 work=$2 n t sock; shift 2
  producers=()
  for n in "$@"; do
    for t in $(seq 1 100); do
      echo "INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload)
        SELECT outbox_uuid_v7(), 'order', CONCAT('n$n-$t-', seq), 'created',
               JSON_OBJECT('node', $n, 'trx', $t, 'n', seq) FROM seq_1_to_50;"
      [ -z "${GALERA_PACE:-}" ] || echo "$GALERA_PACE;"
    done >"$work/produce$n.sql"
    eval "sock=\$OUTBOX_TEST_GALERA_SOCKET$n"
    "$OUTBOX_TEST_MARIADB_CLIENT" --no-defaults -uroot -S "$sock" "$db" <"$work/produce$n.sql" &
    producers+=($!)
  done
}

# galera_first_delivery DB: waits up to 30 s for a row processed.
galera_first_delivery() {
  local i
  for i in $(seq 1 300); do
    grep -q . <(GSQL 1 "$1" 'SELECT 1 FROM outbox WHERE status = 1 LIMIT 1') && return 0
    sleep 0.1
  done
}

# galera_processed_at_least DB N: N rows or more processed (read on node 1).
galera_processed_at_least() {
  [ "$(GSQL 1 "$1" 'SELECT COUNT(*) FROM outbox WHERE status = 1')" -ge "$2" ]
}

# galera_drained DB: waits up to 60 s for no pending row (read on node 1).
galera_drained() {
  local i
  for i in $(seq 1 600); do
    [ "$(GSQL 1 "$1" 'SELECT COUNT(*) FROM outbox WHERE status = 0')" = 0 ] && return 0
    sleep 0.1
  done
}

# galera_stop WORK: SIGTERM to the relays of `pids`, each of which must exit 0.
galera_stop() {
  local n rc
  for n in 1 2 3; do kill -TERM "${pids[n-1]}"; done
  for n in 1 2 3; do
    rc=0
    wait "${pids[n-1]}" || rc=$?
    assert_eq "$rc" 0 "exit status of the relay on node $n"
    grep 'relay stopped' "$1/relay$n.log" | sed "s/^/    node $n: /"
  done
  pids=()
}

# galera_stream_once DB STREAM ROWS WORK: DB holds ROWS rows, and each is
# once in STREAM, none missing.
galera_stream_once() {
  local db=$1 stream=$2 rows=$3 work=$4
  GSQL 1 "$db" "SELECT LOWER(CONCAT_WS('-', SUBSTR(HEX(id),1,8), SUBSTR(HEX(id),9,4),
    SUBSTR(HEX(id),13,4), SUBSTR(HEX(id),17,4), SUBSTR(HEX(id),21))) FROM outbox" >"$work/ids"
  assert_eq "$(wc -l <"$work/ids")" "$rows" "rows committed in $db"
  stream_holds_ids "$stream" "$rows" "$work/ids"
}

# galera_end DB STREAM ROWS WORK: every one of ROWS rows processed, none dead,
# none charged an attempt, and each once in the stream.
galera_end() {
  local db=$1 stream=$2 rows=$3 work=$4
  assert_eq "$(GSQL 1 "$db" 'SELECT COUNT(*) FROM outbox WHERE status = 1')" "$rows" "processed rows"
  assert_eq "$(GSQL 1 "$db" 'SELECT COUNT(*) FROM outbox WHERE status = -1')" 0 "dead rows"
  assert_eq "$(GSQL 1 "$db" 'SELECT COUNT(*) FROM outbox WHERE attempt_count > 0')" 0 \
    "rows charged an attempt"
  galera_stream_once "$db" "$stream" "$rows" "$work"
}

# galera_relay N LOG DB STREAM PREFIX args...: a relay on node N in the
# background, its log LOG; its pid in RELAY_PID.
galera_relay() {
  local n=$1 log=$2 db=$3 stream=$4 prefix=$5 url; shift 5
  eval "url=\$OUTBOX_TEST_GALERA_URL$n"
  "$OUTBOX_TEST_RELAY" --db "${url}$db" --nats "$OUTBOX_TEST_NATS_URL" --stream "$stream" \
    --subject-prefix "$prefix" --no-progress "$@" 2>"$log" &
  RELAY_PID=$!
}

# galera_agg_producers DB WORK TRX AGGS NODE...: on each node named, a
# producer committing TRX transactions, each one row for each of AGGS
# aggregates of its own ('n<node>-<j>': an aggregate is written from one
# node), header agg_seq the transaction's number; in the background, pids in
# `producers`. GALERA_PACE, when set, is a statement run after each;
# GALERA_AGG, when set, replaces the aggregates' leading 'n' (a test that
# runs producers on one node twice keeps each run's aggregates apart).
galera_agg_producers() {
  local db=$1 work=$2 trx=$3 aggs=$4 n t sock; shift 4
  producers=()
  for n in "$@"; do
    for t in $(seq 1 "$trx"); do
      echo "INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload, headers)
        SELECT outbox_uuid_v7(), 'order', CONCAT('${GALERA_AGG:-n}$n-', seq), 'changed',
               JSON_OBJECT('node', $n, 'trx', $t), JSON_OBJECT('agg_seq', '$t')
        FROM seq_1_to_$aggs;"
      [ -z "${GALERA_PACE:-}" ] || echo "$GALERA_PACE;"
    done >"$work/produce$n.sql"
    eval "sock=\$OUTBOX_TEST_GALERA_SOCKET$n"
    "$OUTBOX_TEST_MARIADB_CLIENT" --no-defaults -uroot -S "$sock" "$db" <"$work/produce$n.sql" &
    producers+=($!)
  done
}

# galera_sample OUT SERIES PORT...: every 0.1 s until killed, one line in
# OUT: the sum of SERIES over the relays' /metrics, then each value (an
# empty value: that relay did not answer, as a stopped one does not).
galera_sample() {
  local out=$1 series=$2 p v sum line; shift 2
  while :; do
    sum=0 line=
    for p in "$@"; do
      v=$({ curl -sf -m 0.5 "http://127.0.0.1:$p/metrics" 2>/dev/null || true; } |
        awk -v s="$series" '$1 == s && !f { print $NF; f = 1 }')
      sum=$((sum + ${v:-0}))
      line="$line ${v:--}"
    done
    echo "$sum$line $(date +%s.%N)" >>"$out"
    sleep 0.1
  done
}

# galera_url DB N...: one --db URL naming nodes N... in that order
# (mysql://outbox:outbox@127.0.0.1:P3,127.0.0.1:P1,127.0.0.1:P2/DB).
galera_url() {
  local db=$1 n url hosts=; shift
  for n in "$@"; do
    eval "url=\$OUTBOX_TEST_GALERA_URL$n"
    url=${url#*@}
    hosts+=${hosts:+,}${url%/}
  done
  echo "mysql://outbox:outbox@$hosts/$db"
}

# galera_now: the cluster's clock (node 1) as a Unix time with microseconds.
galera_now() { GSQL 1 "" 'SELECT UNIX_TIMESTAMP(NOW(6))'; }

# galera_move_times DB LOG T: "M F": seconds from T (galera_now, read just
# before the node was killed or frozen) to the relay's first connection made
# on another node (its log line), and to the first row processed after that
# (through the new node: the old one commits nothing after it was left).
# Empty when the relay did not move.
galera_move_times() {
  local db=$1 log=$2 t0=$3 ts moved first
  ts=$(grep -m1 -E ': on database node [0-9]+ of [0-9]+ ' "$log" | cut -d' ' -f1)
  [ -n "$ts" ] || return 0
  moved=$(date -d "$ts" +%s.%N)
  first=$(GSQL 1 "$db" "SELECT MIN(UNIX_TIMESTAMP(processed_at)) FROM outbox
    WHERE status = 1 AND UNIX_TIMESTAMP(processed_at) > $moved")
  [ "$first" != NULL ] || return 0
  awk -v m="$moved" -v f="$first" -v t="$t0" 'BEGIN { printf "%.2f %.2f\n", m - t, f - t }'
}

# galera_moves LOG: each connection of the relay logs its move to another
# node once (never once per retry); prints the lines.
galera_moves() {
  local log=$1 name
  grep -E ': on database node [0-9]+ of [0-9]+ ' "$log" | sed 's/^/    /' || true
  for name in $(grep -E ': on database node [0-9]+ of [0-9]+ ' "$log" | sed -E 's/.* (info|warn) +([^:]*): on database node.*/\2/' | tr ' ' '_' | sort | uniq -d); do
    fail "connection $name logged more than one move"
  done
}

# galera_node3_lost DB STREAM PREFIX WORK PACE ACTION PAST WHY: a plain
# relay with --db naming nodes 3, 1 and 2 (so on node 3; its pid in pids;
# GALERA_RELAY_ARGS, when set, adds flags),
# producers on nodes 1 and 2 paced by PACE, and once it delivers, node 3
# handed to `servers.sh ACTION` (kill-gnode, freeze-gnode; PAST says it:
# killed, frozen). Waits for the producers and the drain, prints the time
# from then to the relay's move and to its first row published through
# node 1 (that one in `took`), and checks that the move was logged once per
# connection, "given up" followed by WHY.
galera_node3_lost() {
  local db=$1 stream=$2 prefix=$3 work=$4 pace=$5 action=$6 past=$7 why=$8 t0 times
  "$OUTBOX_TEST_RELAY" --db "$(galera_url "$db" 3 1 2)" --nats "$OUTBOX_TEST_NATS_URL" \
    --stream "$stream" --subject-prefix "$prefix" --no-progress --http 127.0.0.1:0 \
    ${GALERA_RELAY_ARGS:-} 2>"$work/relay.log" &
  pids+=($!)
  http_port "$work/relay.log" >/dev/null # listening: started
  GALERA_PACE="$pace" galera_producers "$db" "$work" 1 2
  galera_first_delivery "$db"
  t0=$(galera_now)
  "$OUTBOX_TEST_SERVERS" "$action" "$OUTBOX_TEST_GALERA_DIR" 3
  echo "node 3 $past with $(GSQL 1 "$db" 'SELECT COUNT(*) FROM outbox WHERE status = 1') rows processed"
  for p in "${producers[@]}"; do wait "$p" || fail "a producer failed"; done
  galera_drained "$db"
  times=$(galera_move_times "$db" "$work/relay.log" "$t0")
  [ -n "$times" ] || { cat "$work/relay.log" >&2; fail "the relay published nothing through another node"; }
  took=${times#* }
  echo "the relay moved ${times% *} s, and published its first row through node 1 ${took} s, after node 3 was $past"
  grep -q "on database node 2 of 3 (127.0.0.1:[0-9]*); node 1 of 3 (127.0.0.1:[0-9]*) given up$why" \
    "$work/relay.log" || { cat "$work/relay.log" >&2; fail "the relay did not log its move to node 1"; }
  galera_moves "$work/relay.log"
}

# galera_synced N: waits up to 90 s for node N to be back: node 1 sees a
# cluster of 3 (a thawed node first reports its old view, Synced in a cluster
# of 3, until it learns it was evicted), and node N is Synced and ready.
galera_synced() {
  local i
  for i in $(seq 1 900); do
    [ "$(GROOT 1 -e "SHOW STATUS LIKE 'wsrep_cluster_size'" 2>/dev/null | cut -f2)" = 3 ] &&
      [ "$(GROOT "$1" -e "SELECT GROUP_CONCAT(VARIABLE_VALUE ORDER BY VARIABLE_NAME)
        FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME IN
        ('WSREP_CLUSTER_SIZE', 'WSREP_LOCAL_STATE_COMMENT', 'WSREP_READY')" 2>/dev/null)" = \
        "3,Synced,ON" ] && GSQL "$1" "" 'SELECT 1' >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  fail "node $1 is not back, Synced in a cluster of 3"
}

# galera_garbd LOG: a Galera Arbitrator (garbd, package galera-arbitrator-4,
# or OUTBOX_TEST_GARBD) joins the fixture's cluster in the background, its
# output in LOG and its pid in GARBD_PID; waits up to 60 s for a cluster of
# 4. galera_garbd_stop ends it and waits for a cluster of 3 again.
galera_garbd() {
  local log=$1 bin=${OUTBOX_TEST_GARBD:-$(command -v garbd || true)} peers port m i
  [ -n "$bin" ] || fail "garbd (package galera-arbitrator-4, scripts/deps.sh)"
  . "$OUTBOX_TEST_GALERA_DIR/gports"
  for m in 1 2 3; do eval "peers+=\${peers:+,}127.0.0.1:\$gcomm_g$m"; done
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  "$bin" --address "gcomm://$peers" --group outbox-test \
    --options "gmcast.listen_addr=tcp://127.0.0.1:$port" >"$log" 2>&1 &
  GARBD_PID=$!
  for i in $(seq 1 600); do
    [ "$(GROOT 1 -e "SHOW STATUS LIKE 'wsrep_cluster_size'" | cut -f2)" = 4 ] && return 0
    sleep 0.1
  done
  cat "$log" >&2
  fail "the arbitrator did not join the cluster"
}

galera_garbd_stop() {
  local i
  [ -n "${GARBD_PID:-}" ] || return 0
  kill -INT "$GARBD_PID" 2>/dev/null || true
  wait "$GARBD_PID" 2>/dev/null || true
  GARBD_PID=
  for i in $(seq 1 600); do
    [ "$(GROOT 1 -e "SHOW STATUS LIKE 'wsrep_cluster_size'" | cut -f2)" = 3 ] && return 0
    sleep 0.1
  done
  fail "the cluster is not back to 3 nodes after the arbitrator left"
}
