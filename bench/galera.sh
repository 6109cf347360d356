# SPDX-License-Identifier: Apache-2.0
# The Galera scenario of bench/run.sh (sourced by it; `--only galera`): a
# three-node cluster on loopback (scripts/servers.sh start-galera), rows
# committed a third on each node, then, on the same cluster and the same rows:
#   - the DB-only claim cycle (bench-claim) on node 1, the limit of the drain;
#   - the plain relay on node 1, alone, draining;
#   - three plain relays, one on each node, draining together;
#   - the same two with --ordered (leases as rows of outbox_lease);
#   - the cursor relay on node 1 (a relay that refuses the cluster is recorded);
# each with the relay's CPU (user + system, of all relays) and the three
# mariadbd's CPU (from /proc/<pid>/stat) per row. Certification conflicts
# between the three relays are counted from their logs and the duplicates
# JetStream dropped from their metrics' totals.
#
# Uses run.sh's B, RELAY, SC, NATS, raw, out, root, quick, log, kv, calc.
# Writes galera.csv and galera.md (summary.md includes it).

galera_scenario() {
  local gdir rows conns=4 batch=500 line n rate ru r0 r1 i pids code
  gdir=$(mktemp -d /tmp/outbox-bench-galera.XXXXXX)
  chmod 755 "$gdir"
  GALERA_DIR=$gdir
  log "galera: starting a three-node cluster in $gdir"
  if ! "$root/scripts/servers.sh" start-galera "$gdir" >"$raw/galera-start.log" 2>&1; then
    log "galera: the cluster did not start (raw/galera-start.log); scenario skipped"
    return 0
  fi
  . "$gdir/env"
  rows=$([ "$quick" = 1 ] && echo 30000 || echo 150000)
  gsql() { # N SQL: as root on node N, in the bench database
    local sock
    eval "sock=\$OUTBOX_TEST_GALERA_SOCKET$1"
    "$OUTBOX_TEST_MARIADB_CLIENT" --no-defaults -uroot -S "$sock" -N -B \
      --init-command="SET SESSION wsrep_sync_wait = 1" bench -e "$2"
  }
  gurl() { eval "echo \"\$OUTBOX_TEST_GALERA_URL$1\"bench"; }
  gcpu() { # the three nodes' CPU seconds so far
    local s=0 n pid
    for n in 1 2 3; do
      pid=$(cat "$gdir/g$n/db.pid" 2>/dev/null || echo 0)
      s=$(calc "$s + $(awk -v t="$tck" '{ printf "%.2f", ($14 + $15) / t }' "/proc/$pid/stat" 2>/dev/null || echo 0)" 2)
    done
    echo "$s"
  }
  "$OUTBOX_TEST_MARIADB_CLIENT" --no-defaults -uroot -S "$OUTBOX_TEST_GALERA_SOCKET1" \
    -e "CREATE DATABASE bench"
  "$RELAY" schema --ordered | "$OUTBOX_TEST_MARIADB_CLIENT" --no-defaults -uroot \
    -S "$OUTBOX_TEST_GALERA_SOCKET1" bench
  # gseed: ROWS rows of 512 B, a third committed on each node (batches of
  # 1,000 rows a transaction, as producers on every node would).
  gseed() {
    local n k per=$((rows / 3)) from
    # No relay runs between cases: the presence rows a stopped relay leaves
    # (they go stale after two thirds of --lease-timeout) are cleared, so
    # that a relay of another mode may start at once.
    gsql 1 "TRUNCATE outbox; DELETE FROM outbox_lease"
    for n in 1 2 3; do
      (
        for k in $(seq 0 1000 $((per - 1))); do
          from=$((k + 1))
          echo "INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload)
            SELECT outbox_uuid_v7(), 'order', CONCAT('n$n-', seq), 'created',
                   CONCAT('{\"n\":\"', LPAD(seq, 10, '0'), '\",\"pad\":\"', REPEAT('x', 485), '\"}')
            FROM seq_${from}_to_$((k + 1000 < per ? k + 1000 : per));"
        done
      ) | {
        eval "sock=\$OUTBOX_TEST_GALERA_SOCKET$n"
        "$OUTBOX_TEST_MARIADB_CLIENT" --no-defaults -uroot -S "$sock" bench
      } &
    done
    wait
    n=$(gsql 1 "SELECT COUNT(*) FROM outbox WHERE status = 0")
    [ "$n" = "$((per * 3))" ] || log "warning: galera: seeded $n of $((per * 3)) rows"
    echo "$n"
  }
  echo "case,relays,rows,rate,seconds,relay_cpu_us_per_msg,mariadb3_cpu_us_per_msg,complete,conflicts,stream_distinct,exit" \
    >"$out/galera.csv"

  # The DB-only claim cycle on node 1.
  n=$(gseed)
  r0=$(gcpu)
  line=$("$B/bench-claim" --db "$(gurl 1)" --connections "$conns" --batch "$batch" 2>>"$raw/galera-claim.err") ||
    line=""
  r1=$(gcpu)
  rate=$(kv rate "$line")
  echo "claim,0,$n,${rate:-0},$(kv seconds "$line"),0,$(calc "($r1 - $r0) * 1e6 / $n" 2),$([ "$(kv rows "$line")" = "$n" ] && echo yes || echo no),0,0,0" \
    >>"$out/galera.csv"
  log "  -> galera DB-only claim on node 1: ${rate:-0} rows/s"

  # galera_drain CASE NODES... [-- relay args]: relays on the nodes named drain
  # the seeded rows; one line of galera.csv.
  galera_drain() {
    local case=$1 nodes=() extra=() t0 t1 wall cpu=0 ok conflicts=0 dups=0 rc=0 k
    shift
    while [ $# -gt 0 ] && [ "$1" != -- ]; do nodes+=("$1"); shift; done
    [ $# -gt 0 ] && shift && extra=("$@")
    n=$(gseed)
    new_stream
    "$SC" --nats "$NATS" --stream "$stream" --create "$prefix.>" >/dev/null 2>&1 || true
    r0=$(gcpu)
    t0=$(date +%s%N)
    pids=()
    for k in "${nodes[@]}"; do
      "$B/bench-rusage" --out "$raw/galera-$case-$k.rusage" -- "$RELAY" --db "$(gurl "$k")" \
        --nats "$NATS" --drain --connections "$conns" --batch "$batch" --poll-interval 100ms \
        --stream "$stream" --subject-prefix "$prefix" --log-level info --no-progress "${extra[@]}" \
        2>"$raw/galera-$case-$k.log" &
      pids+=($!)
    done
    for k in "${pids[@]}"; do
      code=0; wait "$k" || code=$?
      [ "$code" = 0 ] || rc=$code
    done
    t1=$(date +%s%N)
    r1=$(gcpu)
    wall=$(calc "($t1 - $t0) / 1e9" 2)
    for k in "${nodes[@]}"; do
      ru=$(cat "$raw/galera-$case-$k.rusage" 2>/dev/null || echo "")
      [ -z "$ru" ] || cpu=$(calc "$cpu + $(kv user_s "$ru") + $(kv sys_s "$ru")" 3)
      conflicts=$((conflicts + $(grep -c '1213\|Deadlock' "$raw/galera-$case-$k.log" || true)))
    done
    line=$("$SC" --nats "$NATS" --stream "$stream" --subject ">" 2>>"$raw/galera-streamcheck.err" || echo "")
    dups=$(kv distinct "$line")
    # Complete: every row processed (status 1), or in cursor mode, which
    # writes no delivered row, every row's id in the stream.
    case "$case" in
      cursor*) ok=$([ "${dups:-0}" = "$n" ] && echo yes || echo no) ;;
      *) ok=$([ "$(gsql 1 "SELECT COUNT(*) FROM outbox WHERE status = 1")" = "$n" ] && echo yes || echo no) ;;
    esac
    drop_stream "$stream"
    echo "$case,${#nodes[@]},$n,$(calc "$n / ($wall > 0 ? $wall : 1)"),$wall,$(calc "$cpu * 1e6 / $n" 2),$(calc "($r1 - $r0) * 1e6 / $n" 2),$ok,$conflicts,${dups:-},$rc" \
      >>"$out/galera.csv"
    log "  -> galera $case: $(tail -1 "$out/galera.csv")"
  }
  galera_drain plain-node1 1
  galera_drain plain-3nodes 1 2 3
  galera_drain ordered-node1 1 -- --ordered
  galera_drain ordered-3nodes 1 2 3 -- --ordered
  galera_drain cursor-node1 1 -- --cursor

  "$root/scripts/servers.sh" stop "$gdir" >/dev/null 2>&1 || true
  GALERA_DIR=
  galera_report
}

# galera_refusal CASE: why the relay of CASE stopped, from its log.
galera_refusal() {
  grep -ho 'cannot go on: .*' "$raw/galera-$1-"*.log 2>/dev/null | head -1 | cut -c1-120 | tr '|' '/'
}

galera_report() {
  local c="$out/galera.csv" base
  base=$(awk -F, '$1 == "claim" { print $4 }' "$c")
  {
    echo "## 8. On a Galera cluster (three nodes on loopback), rows of 512 B committed a third on each node"
    echo
    echo "Beside the same cluster's DB-only claim cycle on node 1 ($(printf '%.0f' "${base:-0}") rows/s, 4 x 500)."
    echo "CPU per row: the relays' (user + system) and the three mariadbd's together."
    echo
    echo "| case | relays | rows | rows/s | to claim | relay µs/row | 3 x mariadbd µs/row | complete | 1213 logged | in the stream | exit |"
    echo "|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|"
    tail -n +2 "$c" | while IFS=, read -r case relays rows rate secs rcpu mcpu ok conf dups code; do
      if [ "$code" != 0 ]; then
        echo "| $case | $relays | $rows | exit $code: $(galera_refusal "$case") | | | | | | | $code |"
        continue
      fi
      echo "| $case | $relays | $rows | $rate | $(calc "${base:-0} > 0 ? $rate / $base : 0" 2) | $rcpu | $mcpu | $ok | $conf | $dups | $code |"
    done
  } >"$out/galera.md"
}
