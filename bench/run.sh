#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The benchmark: builds the tools, starts throwaway MariaDB and NATS servers,
# runs every scenario and writes a report into a dated folder.
#
#   bench/run.sh [--quick] [--out DIR] [--build DIR] [--no-build]
#                [--only drain,payload,mixed,enqueue,latency,idle,ordered,cursor,galera]
#
# --quick   about a minute: fewer rows, fewer grid points, shorter runs.
# --out     report folder (default bench/results/<UTC timestamp>[-quick]).
# --build   build folder (default build-bench); --no-build uses it as it is.
# --only    a comma-separated subset of the scenarios. "payload" and "mixed"
#           run at the best drain grid point, or at 2 x 500 without "drain".
#           "ordered" drains the same rows over 300 aggregates at 4 connections,
#           unordered and --ordered, and checks each aggregate's order.
#           "idle" runs a relay at its defaults on an empty table and counts
#           its CPU and the database statements it sends.
#           "cursor" drains rows of an ordered table with --cursor (without and
#           with headers) beside the same run's DB-only claim cycle on a lean
#           table and the JetStream-only limit, with mariadbd's CPU per row,
#           and measures its latency from plain SQL at 1,000 rows/s.
#           "galera" drains rows committed on the three nodes of a Galera
#           cluster (plain, one relay and three; cursor) beside the same
#           cluster's DB-only claim cycle, with the three mariadbd's CPU per
#           row (bench/galera.sh; not in the default set: it needs galera-4).
# Environment: BENCH_REPEAT (drain repeats), BENCH_PAYLOADS ("bytes:rows ..."),
#           BENCH_PAYLOAD_AT ("CxB", the payload scenario's grid point),
#           BENCH_GRID_CONNS, BENCH_GRID_BATCH, BENCH_DRAIN_ROWS (the drain grid).
#
# The report: results in CSV (drain.csv, payload.csv, mixed.csv,
# enqueue.csv, ordered.csv), meta.json (revision, machine, server settings), summary.md
# and PNG plots. Raw tool output goes to raw/ (git-ignored). The servers are
# always stopped on exit. See bench/README.md for the method.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
quick=0
out=""
build="$root/build-bench"
do_build=1
only="drain,payload,mixed,enqueue,latency,idle,ordered,cursor"
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1 ;;
    --out) out=$2; shift ;;
    --build) build=$2; shift ;;
    --no-build) do_build=0 ;;
    --only) only=$2; shift ;;
    -h|--help) sed -n '2,31p' "$0"; exit 0 ;;
    *) echo "bench: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
  shift
done
wants() { case ",$only," in *",$1,"*) return 0 ;; esac; return 1; }

stamp=$(date -u +%Y%m%dT%H%M%SZ)
[ -n "$out" ] || out="$root/bench/results/$stamp$([ $quick = 1 ] && echo -quick || true)"
mkdir -p "$out/raw"
out=$(cd "$out" && pwd)
raw="$out/raw"
t_start=$(date +%s)

loadavg() { cut -d' ' -f1-3 /proc/loadavg; }
log() { echo "[bench $(date -u +%H:%M:%S) load $(cut -d' ' -f1 /proc/loadavg)] $*" | tee -a "$raw/run.log" >&2; }
# kv KEY TEXT: the value of KEY=value in a line of "k=v k=v" pairs.
kv() { tr ' ' '\n' <<<"$2" | sed -n "s/^$1=//p" | head -1; }
# calc EXPR [DECIMALS]
calc() { awk "BEGIN { printf \"%.${2:-0}f\", ($1) }"; }
# proc_cpu_ns PID: the CPU time of every thread of PID in ns (schedstat,
# finer than the stat file's ticks); 0 when PID is gone.
proc_cpu_ns() {
  cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ n += $1 } END { printf "%.0f", n }'
}

# --- the scenarios' sizes --------------------------------------------------
if [ $quick = 1 ]; then
  DRAIN_ROWS=20000
  GRID_CONNS="1 4 8"; GRID_BATCH="500"
  PAYLOADS="128:20000 4096:5000 65536:1000"
  MIX_MS=4000; MIX_RATES="1000 5000 0"; MIX_PROCS=4
  ENQ_MS=1000; ENQ_ROUNDS=1
  ORD_ROWS=20000
  REPEAT=1
else
  DRAIN_ROWS=200000
  GRID_CONNS="1 2 4 8"; GRID_BATCH="100 200 500"
  PAYLOADS="128:200000 4096:50000 65536:5000"
  MIX_MS=15000; MIX_RATES="1000 5000 0"; MIX_PROCS=4
  ENQ_MS=4000; ENQ_ROUNDS=2
  ORD_ROWS=100000
  REPEAT=2
fi
REPEAT=${BENCH_REPEAT:-$REPEAT} # override the drain repeats from the environment
# The payload scenario's sizes ("bytes:rows ...") and grid point ("CxB"), from
# the environment, e.g. BENCH_PAYLOADS="262144:2000" BENCH_PAYLOAD_AT=8x500.
PAYLOADS=${BENCH_PAYLOADS:-$PAYLOADS}
# The drain grid and its rows, e.g. BENCH_GRID_CONNS="1 2 4 8" BENCH_GRID_BATCH=500.
GRID_CONNS=${BENCH_GRID_CONNS:-$GRID_CONNS}
GRID_BATCH=${BENCH_GRID_BATCH:-$GRID_BATCH}
DRAIN_ROWS=${BENCH_DRAIN_ROWS:-$DRAIN_ROWS}
POLL_MS=100
MAX_IN_FLIGHT=8192 # the relay's default, also the JetStream-only window cap
ENQ_CONFIGS="1:1 4:1 16:1 1:100 4:100" # producers:events per transaction

# --- build -------------------------------------------------------------------
if [ $do_build = 1 ]; then
  log "building into $build"
  "$root/scripts/build.sh" "$build" -DOUTBOX_BUILD_BENCH=ON -DBUILD_TESTING=ON \
    >"$raw/build.log" 2>&1 || { tail -30 "$raw/build.log" >&2; exit 1; }
fi
B="$build/bench"
RELAY="$build/outbox-uvrelay"
SC="$build/test/streamcheck"
for t in "$B/bench-claim" "$B/bench-jspub" "$B/bench-produce" "$B/bench-rusage" "$B/bench-latency" "$B/bench-notify" \
         "$RELAY" "$SC"; do
  [ -x "$t" ] || { echo "bench: $t is missing (build with -DOUTBOX_BUILD_BENCH=ON -DBUILD_TESTING=ON)" >&2; exit 1; }
done

# --- servers -----------------------------------------------------------------
sdir=$(mktemp -d /tmp/outbox-bench.XXXXXX)
relay_pid=""
cleanup() {
  if [ -n "$relay_pid" ]; then kill -TERM "$relay_pid" 2>/dev/null || true; wait "$relay_pid" 2>/dev/null || true; fi
  "$root/scripts/servers.sh" stop "$sdir" >/dev/null 2>&1 || true
  [ -z "${GALERA_DIR:-}" ] || "$root/scripts/servers.sh" stop "$GALERA_DIR" >/dev/null 2>&1 || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM
log "starting servers in $sdir"
"$root/scripts/servers.sh" start "$sdir" >/dev/null
. "$sdir/env"
SQL=("$OUTBOX_TEST_MARIADB_CLIENT" --no-defaults -uroot -S "$OUTBOX_TEST_DB_SOCKET")
sql() { "${SQL[@]}" -N -B bench -e "$1"; }
"${SQL[@]}" -e "CREATE DATABASE bench"
"$RELAY" schema | "${SQL[@]}" bench
DB="${OUTBOX_TEST_DB_URL}bench"
NATS="$OUTBOX_TEST_NATS_URL"

# --- what this run ran on ----------------------------------------------------
var() { "${SQL[@]}" -N -B -e "SELECT @@$1"; }
rev=$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)
dirty=$(git -C "$root" status --porcelain -- src include cli CMakeLists.txt 2>/dev/null | wc -l)
cpu_model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
cores=$(nproc)
mem_mib=$(awk '/MemTotal/ { printf "%d", $2 / 1024 }' /proc/meminfo)
kernel=$(uname -r)
mariadb_version=$(var version)
nats_version=$("$(command -v nats-server || echo /usr/sbin/nats-server)" --version 2>&1 | head -1)
flush_trx=$(var innodb_flush_log_at_trx_commit)
sync_binlog=$(var sync_binlog)
log_bin=$(var log_bin)
pool_mib=$(( $(var innodb_buffer_pool_size) / 1048576 ))
doublewrite=$(var innodb_doublewrite)
flush_method=$(var innodb_flush_method)
log_file_mib=$(( $(var innodb_log_file_size) / 1048576 ))
cat >"$out/meta.json" <<EOF
{
  "date_utc": "$stamp",
  "mode": "$([ $quick = 1 ] && echo quick || echo full)",
  "git_revision": "$rev",
  "library_files_modified": $dirty,
  "machine": {"cores": $cores, "cpu_model": "$cpu_model", "memory_mib": $mem_mib, "kernel": "$kernel"},
  "mariadb": {"version": "$mariadb_version", "innodb_flush_log_at_trx_commit": $flush_trx,
              "sync_binlog": $sync_binlog, "log_bin": $log_bin, "innodb_doublewrite": $doublewrite,
              "innodb_flush_method": "$flush_method", "innodb_buffer_pool_mib": $pool_mib,
              "innodb_log_file_mib": $log_file_mib},
  "nats": {"version": "$nats_version", "jetstream_storage": "file", "replicas": 1,
           "sync": "server default (background fsync every 2 min)"},
  "relay": {"poll_interval_ms": $POLL_MS, "max_in_flight": $MAX_IN_FLIGHT, "processing": "keep (UPDATE status=1)"},
  "sizes": {"drain_rows": $DRAIN_ROWS, "grid_connections": "$GRID_CONNS", "grid_batch": "$GRID_BATCH",
            "payloads": "$PAYLOADS", "mixed_ms": $MIX_MS, "mixed_producers": $MIX_PROCS,
            "enqueue_ms": $ENQ_MS, "enqueue_rounds": $ENQ_ROUNDS,
            "drain_repeats": $REPEAT}
}
EOF
cat >"$out/meta.env" <<EOF
stamp='$stamp'
mode='$([ $quick = 1 ] && echo quick || echo full)'
rev='$rev'
dirty=$dirty
cpu_model='$cpu_model'
cores=$cores
mem_mib=$mem_mib
kernel='$kernel'
mariadb_version='$mariadb_version'
nats_version='$nats_version'
flush_trx=$flush_trx
sync_binlog=$sync_binlog
log_bin=$log_bin
pool_mib=$pool_mib
doublewrite=$doublewrite
flush_method='$flush_method'
poll_ms=$POLL_MS
max_in_flight=$MAX_IN_FLIGHT
drain_rows=$DRAIN_ROWS
mix_ms=$MIX_MS
mix_procs=$MIX_PROCS
enq_ms=$ENQ_MS
enq_rounds=$ENQ_ROUNDS
repeat=$REPEAT
load_start='$(loadavg)'
EOF
log "revision $rev, $cores cores ($cpu_model), MariaDB $mariadb_version, $nats_version"

# --- helpers -------------------------------------------------------------------
# seed ROWS SIZE: an empty table, then ROWS pending rows with SIZE-byte JSON
# payloads, inserted by the server itself.
seed() {
  local rows=$1 size=$2
  sql "TRUNCATE outbox;
       INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload)
       SELECT outbox_uuid_v7(), 'order', seq, 'created',
              CONCAT('{\"n\":\"', LPAD(seq, 10, '0'), '\",\"pad\":\"', REPEAT('x', $size - 27), '\"}')
       FROM seq_1_to_$rows;"
}
pending() { sql "SELECT COUNT(*) FROM outbox WHERE status = 0"; }
processed() { sql "SELECT COUNT(*) FROM outbox WHERE status = 1"; }
# CPU seconds used so far by a server process (from its pid file), for the
# servers' share of the CPU per message.
tck=$(getconf CLK_TCK)
srv_cpu() { awk -v t="$tck" '{ printf "%.2f", ($14 + $15) / t }' "/proc/$(cat "$sdir/$1.pid")/stat" 2>/dev/null || echo 0; }
nstream=0
new_stream() { nstream=$((nstream + 1)); stream="BENCH$nstream"; prefix="bench$nstream"; }
drop_stream() { "$SC" --nats "$NATS" --stream "$1" --delete >/dev/null 2>&1 || true; }

# limits_and_drain C B SIZE ROWS: prints "db js wall user sys rss ok mcpu ncpu ccpu
# jscpu csw threads jscsw" after running the DB-only limit, the JetStream-only
# limit and the relay drain on freshly seeded rows. The DB-only limit and the
# relay run REPEAT times each, alternating, and the fastest run of each counts.
# jscpu and jscsw: the JetStream-only tool's CPU µs and context switches per
# message; csw and threads: the relay's context switches per message and the
# most threads it had.
limits_and_drain() {
  local c=$1 b=$2 size=$3 rows=$4 tag="c$1-b$2-p$3" line db=0 js win ru ok r rate
  local db0 db1 n0 n1 cdb=0 best_wall="" best_relay="" best_more="" jscpu=0 jscsw=0
  for r in $(seq 1 "$REPEAT"); do
    seed "$rows" "$size"
    db0=$(srv_cpu db)
    line=$("$B/bench-claim" --db "$DB" --connections "$c" --batch "$b" 2>>"$raw/claim.err") || line=""
    db1=$(srv_cpu db)
    echo "$line" >"$raw/claim-$tag-$r.txt"
    [ "$(kv rows "$line")" = "$rows" ] || log "warning: DB-only claimed '$(kv rows "$line")' of $rows rows"
    rate=$(kv rate "$line")
    if [ "$(calc "${rate:-0} > $db ? 1 : 0")" = 1 ]; then
      db=$rate; cdb=$(calc "($db1 - $db0) * 1e6 / $rows" 2)
    fi

    seed "$rows" "$size"
    if [ "$r" = 1 ]; then
      # The JetStream-only publisher reads the rows and leaves them pending.
      win=$(( c * b < MAX_IN_FLIGHT ? c * b : MAX_IN_FLIGHT ))
      new_stream
      line=$("$B/bench-jspub" --db "$DB" --nats "$NATS" --stream "$stream" --subject-prefix "$prefix" \
               --window "$win" 2>>"$raw/jspub.err") || line=""
      echo "$line" >"$raw/jspub-$tag.txt"
      drop_stream "$stream"
      js=$(kv rate "$line"); js=${js:-0}
      jscpu=$(kv cpu_us_per_msg "$line"); jscpu=${jscpu:-0}
      jscsw=$(kv csw_per_msg "$line"); jscsw=${jscsw:-0}
    fi

    new_stream
    db0=$(srv_cpu db); n0=$(srv_cpu nats)
    "$B/bench-rusage" --out "$raw/relay-$tag-$r.rusage" -- "$RELAY" --db "$DB" --nats "$NATS" --drain \
      --connections "$c" --batch "$b" --poll-interval "${POLL_MS}ms" --max-in-flight "$MAX_IN_FLIGHT" \
      --stream "$stream" --subject-prefix "$prefix" --log-level warn --no-progress \
      2>>"$raw/relay.log" || true
    db1=$(srv_cpu db); n1=$(srv_cpu nats)
    ru=$(cat "$raw/relay-$tag-$r.rusage")
    ok=$([ "$(processed)" = "$rows" ] && echo yes || echo no)
    [ $ok = yes ] || log "warning: the relay left rows unprocessed ($tag: $ru)"
    drop_stream "$stream"
    if [ -z "$best_wall" ] || [ "$(calc "$(kv wall_s "$ru") < $best_wall ? 1 : 0")" = 1 ]; then
      best_wall=$(kv wall_s "$ru")
      best_relay="$(kv wall_s "$ru") $(kv user_s "$ru") $(kv sys_s "$ru") $(kv maxrss_kb "$ru") $ok"
      best_relay="$best_relay $(calc "($db1 - $db0) * 1e6 / $rows" 2) $(calc "($n1 - $n0) * 1e6 / $rows" 2)"
      best_more="$(calc "($(kv vcsw "$ru") + $(kv ivcsw "$ru")) / $rows" 3) $(kv threads_max "$ru")"
    fi
  done
  echo "$db $js $best_relay $cdb $jscpu $best_more $jscsw"
}

DRAIN_HDR="connections,batch,payload_bytes,rows,relay_rate,relay_seconds,relay_cpu_us_per_msg,relay_peak_rss_kib,db_only_rate,js_only_rate,limit_rate,binding_limit,relay_to_limit,complete,mariadb_cpu_us_per_msg,nats_cpu_us_per_msg,claim_mariadb_cpu_us_per_msg,js_only_cpu_us_per_msg,relay_csw_per_msg,relay_threads,js_only_csw_per_msg"
# drain_row C B SIZE ROWS RESULT: one CSV line.
drain_row() {
  local c=$1 b=$2 size=$3 rows=$4
  set -- $5
  local db=$1 js=$2 wall=$3 user=$4 sys=$5 rss=$6 ok=$7 mcpu=$8 ncpu=$9 ccpu=${10} jscpu=${11:-0}
  local csw=${12:-0} threads=${13:-0} jscsw=${14:-0} rate lim bind
  rate=$(calc "$rows / $wall")
  if [ "$(calc "$db <= $js ? 1 : 0")" = 1 ]; then lim=$db; bind=db-only; else lim=$js; bind=jetstream-only; fi
  echo "$c,$b,$size,$rows,$rate,$(calc "$wall" 3),$(calc "($user + $sys) * 1e6 / $rows" 2),$rss,$db,$js,$lim,$bind,$(calc "$lim > 0 ? $rate / $lim : 0" 3),$ok,$mcpu,$ncpu,$ccpu,$jscpu,$csw,$threads,$jscsw"
}

best_c=2; best_b=500

# --- 4: enqueue, API beside raw INSERT (first: the server is at its cleanest) -----
if wants enqueue; then
  echo "producers,events_per_tx,api_rate,raw_rate,api_to_raw,api_txn_p50_ms,raw_txn_p50_ms,api_txn_p99_ms,raw_txn_p99_ms,api_cpu_us_per_event,raw_cpu_us_per_event" >"$out/enqueue.csv"
  for e in $ENQ_CONFIGS; do
    procs=${e%%:*}; per=${e##*:}
    declare -A R=()
    R[api]=""; R[raw]=""
    # API and raw alternate, ENQ_ROUNDS times each; the best round counts.
    for round in $(seq 1 "$ENQ_ROUNDS"); do
      for mode in api raw; do
        log "enqueue: $mode, $procs producer(s), $per event(s) per transaction (round $round)"
        sql "TRUNCATE outbox"
        sleep 0.5
        line=$("$B/bench-rusage" --out "$raw/enqueue-$mode-$procs-$per-$round.rusage" -- \
                 "$B/bench-produce" --db "$DB" --procs "$procs" --per-tx "$per" --mode "$mode" \
                 --duration-ms "$ENQ_MS" 2>>"$raw/produce.err") || line=""
        echo "$line" >"$raw/enqueue-$mode-$procs-$per-$round.txt"
        # The producers' own CPU per event (all processes; the server's is not in it).
        ru=$(cat "$raw/enqueue-$mode-$procs-$per-$round.rusage")
        n=$(kv events "$line")
        line="$line cpu_us=$(calc "${n:-0} > 0 ? ($(kv user_s "$ru") + $(kv sys_s "$ru")) * 1e6 / ${n:-1} : 0" 2)"
        new=$(kv rate "$line"); old=$(kv rate "${R[$mode]}")
        if [ "$(calc "${new:-0} > ${old:-0} ? 1 : 0")" = 1 ]; then R[$mode]=$line; fi
      done
    done
    a=$(kv rate "${R[api]}"); r=$(kv rate "${R[raw]}")
    row="$procs,$per,${a:-0},${r:-0},$(calc "${r:-0} > 0 ? ${a:-0} / ${r:-0} : 0" 3),$(kv txn_ms_p50 "${R[api]}"),$(kv txn_ms_p50 "${R[raw]}"),$(kv txn_ms_p99 "${R[api]}"),$(kv txn_ms_p99 "${R[raw]}"),$(kv cpu_us "${R[api]}"),$(kv cpu_us "${R[raw]}")"
    echo "$row" >>"$out/enqueue.csv"
    log "  -> $row"
  done
fi


# --- 1 + 2: the drain grid beside its limits -------------------------------------
if wants drain; then
  echo "$DRAIN_HDR" >"$out/drain.csv"
  for c in $GRID_CONNS; do
    for b in $GRID_BATCH; do
      log "drain: $c connection(s) x batch $b, $DRAIN_ROWS rows"
      r=$(limits_and_drain "$c" "$b" 512 "$DRAIN_ROWS")
      row=$(drain_row "$c" "$b" 512 "$DRAIN_ROWS" "$r")
      echo "$row" >>"$out/drain.csv"
      log "  -> $row"
    done
  done
  best=$(tail -n +2 "$out/drain.csv" | sort -t, -k5,5nr | head -1)
  best_c=$(cut -d, -f1 <<<"$best"); best_b=$(cut -d, -f2 <<<"$best")
  log "best grid point: $best_c x $best_b"

  # nats.c on the relay's loop (the default) beside nats.c on its own threads
  # (OUTBOX_NATS_EVENT_LOOP=0), at 4 x 500 and at the best grid point, run
  # alternately REPEAT times; the fastest run of each mode counts.
  # Beside them, the JetStream-only tool in both modes (bench-jspub and
  # bench-jspub --event-loop, window c x b): what publishing alone costs.
  echo "nats_mode,connections,batch,rows,relay_rate,relay_cpu_us_per_msg,relay_csw_per_msg,relay_vcsw_per_msg,relay_threads,js_only_cpu_us_per_msg,relay_to_js_cpu,js_only_same_mode_cpu_us_per_msg,js_only_same_mode_csw_per_msg" >"$out/nats_modes.csv"
  points="4x500"; [ "${best_c}x${best_b}" = 4x500 ] || points="$points ${best_c}x${best_b}"
  for point in $points; do
    c=${point%x*}; b=${point#*x}
    jscpu=$(kv cpu_us_per_msg "$(cat "$raw/jspub-c$c-b$b-p512.txt" 2>/dev/null || true)"); jscpu=${jscpu:-0}
    declare -A M=() J=()
    for mode in loop threaded; do
      seed "$DRAIN_ROWS" 512
      new_stream
      J[$mode]=$("$B/bench-jspub" --db "$DB" --nats "$NATS" --stream "$stream" --subject-prefix "$prefix" \
                   --window $(( c * b < MAX_IN_FLIGHT ? c * b : MAX_IN_FLIGHT )) \
                   $([ $mode = loop ] && echo --event-loop || true) 2>>"$raw/jspub.err") || J[$mode]=""
      echo "${J[$mode]}" >"$raw/jspub-$mode-c$c-b$b.txt"
      drop_stream "$stream"
    done
    [ "$jscpu" != 0 ] || jscpu=$(kv cpu_us_per_msg "${J[threaded]}"); jscpu=${jscpu:-0}
    for r in $(seq 1 "$REPEAT"); do
      for mode in loop threaded; do
        log "nats modes: $mode, $c x $b, $DRAIN_ROWS rows (run $r)"
        seed "$DRAIN_ROWS" 512
        new_stream
        OUTBOX_NATS_EVENT_LOOP=$([ $mode = loop ] && echo 1 || echo 0) \
          "$B/bench-rusage" --out "$raw/nats-$mode-c$c-b$b-$r.rusage" -- "$RELAY" --db "$DB" --nats "$NATS" \
          --drain --connections "$c" --batch "$b" --poll-interval "${POLL_MS}ms" --max-in-flight "$MAX_IN_FLIGHT" \
          --stream "$stream" --subject-prefix "$prefix" --log-level warn --no-progress 2>>"$raw/relay.log" || true
        drop_stream "$stream"
        [ "$(processed)" = "$DRAIN_ROWS" ] || log "warning: the relay left rows unprocessed ($mode, $c x $b)"
        ru=$(cat "$raw/nats-$mode-c$c-b$b-$r.rusage")
        if [ -z "${M[$mode]:-}" ] || [ "$(calc "$(kv wall_s "$ru") < $(kv wall_s "${M[$mode]}") ? 1 : 0")" = 1 ]; then
          M[$mode]=$ru
        fi
      done
    done
    for mode in loop threaded; do
      ru=${M[$mode]}
      cpu=$(calc "($(kv user_s "$ru") + $(kv sys_s "$ru")) * 1e6 / $DRAIN_ROWS" 2)
      row="$mode,$c,$b,$DRAIN_ROWS,$(calc "$DRAIN_ROWS / $(kv wall_s "$ru")"),$cpu"
      row="$row,$(calc "($(kv vcsw "$ru") + $(kv ivcsw "$ru")) / $DRAIN_ROWS" 3),$(calc "$(kv vcsw "$ru") / $DRAIN_ROWS" 3)"
      row="$row,$(kv threads_max "$ru"),$jscpu,$(calc "$jscpu > 0 ? $cpu / $jscpu : 0" 2)"
      row="$row,$(kv cpu_us_per_msg "${J[$mode]}"),$(kv csw_per_msg "${J[$mode]}")"
      echo "$row" >>"$out/nats_modes.csv"
      log "  -> $row"
    done
    unset M J
  done
fi
echo "best_c=$best_c" >>"$out/meta.env"
echo "best_b=$best_b" >>"$out/meta.env"

# --- 5: payload sizes at the best grid point -----------------------------------
if wants payload; then
  if [ -n "${BENCH_PAYLOAD_AT:-}" ]; then best_c=${BENCH_PAYLOAD_AT%x*}; best_b=${BENCH_PAYLOAD_AT#*x}; fi
  echo "$DRAIN_HDR" >"$out/payload.csv"
  for p in $PAYLOADS; do
    size=${p%%:*}; rows=${p##*:}
    log "payload: $size bytes, $rows rows at $best_c x $best_b"
    r=$(limits_and_drain "$best_c" "$best_b" "$size" "$rows")
    row=$(drain_row "$best_c" "$best_b" "$size" "$rows" "$r")
    echo "$row" >>"$out/payload.csv"
    log "  -> $row"
  done
fi

# --- 3: mixed, producers and relay together ------------------------------------
if wants mixed; then
  echo "offered_rate,producers,connections,batch,poll_interval_ms,produced,produce_seconds,achieved_rate,stored,latency_p50_ms,latency_p95_ms,latency_p99_ms,latency_max_ms,commit_p50_ms,commit_p99_ms,relay_cpu_us_per_msg,relay_peak_rss_kib" >"$out/mixed.csv"
  for rate in $MIX_RATES; do
    label=$([ "$rate" = 0 ] && echo max || echo "$rate")
    log "mixed: offered $label msg/s, $MIX_PROCS producers, relay $best_c x $best_b"
    sql "TRUNCATE outbox"
    new_stream
    "$B/bench-rusage" --out "$raw/mixed-$label.rusage" -- "$RELAY" --db "$DB" --nats "$NATS" \
      --connections "$best_c" --batch "$best_b" --poll-interval "${POLL_MS}ms" \
      --max-in-flight "$MAX_IN_FLIGHT" --stream "$stream" --subject-prefix "$prefix" \
      --log-level warn --no-progress 2>>"$raw/relay.log" &
    relay_pid=$!
    sleep 1
    line=$("$B/bench-produce" --db "$DB" --procs "$MIX_PROCS" --rate "$rate" --duration-ms "$MIX_MS" \
             --ts-header bench-ns 2>>"$raw/produce.err") || line=""
    echo "$line" >"$raw/mixed-$label-produce.txt"
    for _ in $(seq 1 1200); do [ "$(pending)" = 0 ] && break; sleep 0.1; done
    sleep 0.5
    kill -TERM "$relay_pid" 2>/dev/null || true
    wait "$relay_pid" || true
    relay_pid=""
    ru=$(cat "$raw/mixed-$label.rusage")
    lat=$("$B/bench-latency" --nats "$NATS" --stream "$stream" --header bench-ns 2>&1 || true)
    echo "$lat" >"$raw/mixed-$label-stream.txt"
    drop_stream "$stream"
    produced=$(kv events "$line"); produced=${produced:-0}
    stored=$(kv read "$(grep '^messages=' <<<"$lat")")
    l=$(grep '^latency_ms' <<<"$lat" || echo "")
    cpu=$(calc "$produced > 0 ? ($(kv user_s "$ru") + $(kv sys_s "$ru")) * 1e6 / $produced : 0" 2)
    row="$rate,$MIX_PROCS,$best_c,$best_b,$POLL_MS,$produced,$(kv seconds "$line"),$(kv rate "$line"),${stored:-0},$(kv p50 "$l"),$(kv p95 "$l"),$(kv p99 "$l"),$(kv max "$l"),$(kv txn_ms_p50 "$line"),$(kv txn_ms_p99 "$line"),$cpu,$(kv maxrss_kb "$ru")"
    echo "$row" >>"$out/mixed.csv"
    log "  -> $row"
  done
fi

# --- 5: prompt delivery, one event per transaction -------------------------------
if wants latency; then
  LAT_MS=$([ $quick = 1 ] && echo 4000 || echo 15000)
  echo "mode,offered_rate,produced,stored,latency_p50_ms,latency_p95_ms,latency_p99_ms,latency_max_ms,relay_cpu_us_per_msg" >"$out/latency.csv"
  lat_row() { # mode rate produced lat-output cpu
    local l; l=$(grep '^latency_ms' <<<"$4" || echo "")
    echo "$1,$2,$3,$(kv read "$(grep '^messages=' <<<"$4")"),$(kv p50 "$l"),$(kv p95 "$l"),$(kv p99 "$l"),$(kv max "$l"),$5" >>"$out/latency.csv"
    log "  -> $(tail -1 "$out/latency.csv")"
  }
  for rate in 200 1000; do
    for mode in plain doorbell; do
      log "latency: $mode SQL, $rate msg/s, one event per transaction, relay at its defaults"
      sql "TRUNCATE outbox"
      new_stream
      "$B/bench-rusage" --out "$raw/lat-$mode-$rate.rusage" -- "$RELAY" --db "$DB" --nats "$NATS" \
        --stream "$stream" --subject-prefix "$prefix" --log-level warn --no-progress 2>>"$raw/relay.log" &
      relay_pid=$!
      sleep 1
      ring=(); [ $mode = doorbell ] && ring=(--ring "$NATS")
      # The relay's CPU while the rows come (its start and its stop left
      # out): bench-rusage's child is the relay.
      rp=$(pgrep -P "$relay_pid" | head -1 || true)
      c0=$(proc_cpu_ns "$rp")
      # A second at the rate first, not measured: the figures are the steady
      # state, not the relay's first polls (README: Prompt delivery).
      line=$("$B/bench-produce" --db "$DB" --mode raw --rate "$rate" --duration-ms "$LAT_MS" \
               --warmup-ms 1000 --ts-header bench-ns "${ring[@]}" 2>>"$raw/produce.err") || line=""
      c1=$(proc_cpu_ns "$rp")
      echo "$line" >"$raw/lat-$mode-$rate-produce.txt" # txn_ms: the producer's own commit
      for _ in $(seq 1 200); do [ "$(pending)" = 0 ] && break; sleep 0.1; done
      kill -TERM "$relay_pid" 2>/dev/null || true
      wait "$relay_pid" || true
      relay_pid=""
      lat=$("$B/bench-latency" --nats "$NATS" --stream "$stream" --header bench-ns 2>&1 || true)
      drop_stream "$stream"
      produced=$(kv events "$line"); produced=${produced:-0}
      cpu=$(calc "$produced > 0 && $c1 > 0 ? ($c1 - $c0) / 1e3 / $produced : 0" 1)
      lat_row "$mode" "$rate" "$produced" "$lat" "$cpu"
    done
    log "latency: in-process notify, $rate msg/s"
    sql "TRUNCATE outbox"
    new_stream
    line=$("$B/bench-notify" --db "$DB" --nats "$NATS" --stream "$stream" --prefix "$prefix" \
             --rate "$rate" --duration-ms "$LAT_MS" 2>>"$raw/relay.log") || line=""
    echo "$line" >"$raw/lat-notify-$rate-produce.txt" # txn_ms: the producer's own commit
    lat=$("$B/bench-latency" --nats "$NATS" --stream "$stream" --header bench-ns 2>&1 || true)
    drop_stream "$stream"
    lat_row notify "$rate" "$(kv events "$line")" "$lat" "$(kv cpu_us_per_msg "$line")"
  done
fi

# --- 5b: the idle cost: CPU and database statements of a relay with nothing to do --
if wants idle; then
  # The relay polls at its poll interval for a minute after its start (and
  # after it last found rows), then slower: the figure is its state at rest,
  # on an empty table, counted from 65 s after its start over IDLE_S seconds.
  IDLE_S=$([ $quick = 1 ] && echo 20 || echo 60)
  log "idle relay for $IDLE_S s"
  sql "TRUNCATE outbox"
  new_stream
  "$RELAY" --db "$DB" --nats "$NATS" --stream "$stream" --subject-prefix "$prefix" \
    --log-level warn --no-progress 2>>"$raw/relay.log" &
  relay_pid=$!
  # The relay's context switches, over all its threads.
  switches() { cat /proc/"$relay_pid"/task/*/status | awk '/ctxt_switches/ { n += $2 } END { print n }'; }
  questions() { sql "SHOW GLOBAL STATUS LIKE 'Questions'" | awk '{print $2}'; }
  # window AFTER SECONDS: from AFTER s on, over SECONDS s, the relay's CPU in
  # ns, its context switches and the statements mariadbd received (less the
  # one that counts them), into W_CPU, W_SW and W_Q; then stops the relay.
  window() {
    local q0 t0 s0 q1 t1 s1
    sleep "$1"
    q0=$(questions); t0=$(proc_cpu_ns "$relay_pid"); s0=$(switches)
    sleep "$2"
    t1=$(proc_cpu_ns "$relay_pid"); s1=$(switches); q1=$(questions)
    kill -TERM "$relay_pid" 2>/dev/null || true
    wait "$relay_pid" || true
    relay_pid=""
    drop_stream "$stream"
    W_CPU=$((t1 - t0)) W_SW=$((s1 - s0)) W_Q=$((q1 - q0 - 1))
  }
  window 65 "$IDLE_S"
  icpu=$W_CPU isw=$W_SW iq=$W_Q
  # What one wake-up of the loop costs on this machine: the same relay
  # polling an empty table every 5 ms (the busy pace), each poll a timer, one
  # statement and its answer; 10 s counted from 3 s after its start.
  log "an empty table polled every 5 ms for 10 s (the cost of a wake-up)"
  new_stream
  "$RELAY" --db "$DB" --nats "$NATS" --stream "$stream" --subject-prefix "$prefix" \
    --poll-interval 5ms --log-level warn --no-progress 2>>"$raw/relay.log" &
  relay_pid=$!
  window 3 10
  bcpu=$W_CPU bsw=$W_SW bq=$W_Q
  { echo "idle_s=$IDLE_S"
    echo "idle_cpu_s_per_min=$(calc "$icpu / 1e9 * 60 / $IDLE_S" 3)"
    echo "idle_qps=$(calc "$iq / $IDLE_S" 1)"
    echo "idle_switches_per_s=$(calc "$isw / $IDLE_S" 1)"
    echo "busy_polls_per_s=$(calc "$bq / 10" 1)"
    echo "busy_cpu_us_per_poll=$(calc "$bcpu / 1e3 / ($bq > 0 ? $bq : 1)" 1)"
    echo "busy_cpu_us_per_switch=$(calc "$bcpu / 1e3 / ($bsw > 0 ? $bsw : 1)" 1)"
  } >"$out/idle.env"
  log "  -> $(tr '\n' ' ' <"$out/idle.env")"
fi

# --- 6: ordered delivery beside unordered, 300 aggregates --------------------------
if wants ordered; then
  echo "mode,connections,batch,aggregates,rows,relay_rate,relay_seconds,complete,order_violations" >"$out/ordered.csv"
  declare -A OW=()
  for r in $(seq 1 "$REPEAT"); do
    for mode in unordered ordered; do
      log "ordered: $mode, 4 connections x batch 500, $ORD_ROWS rows over 300 aggregates (run $r)"
      # Each mode on its table: the ordered one carries seq, bucket and their indexes.
      flag=$([ $mode = ordered ] && echo --ordered || true)
      sql "DROP TABLE outbox"
      "$RELAY" schema $flag | "${SQL[@]}" bench
      sql "INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload, headers)
           SELECT outbox_uuid_v7(), 'order', CONCAT('a', seq % 300), 'created',
                  CONCAT('{\"n\":\"', LPAD(seq, 10, '0'), '\",\"pad\":\"', REPEAT('x', 485), '\"}'),
                  JSON_OBJECT('agg_seq', CAST(seq DIV 300 AS CHAR))
           FROM seq_1_to_$ORD_ROWS;"
      new_stream
      "$B/bench-rusage" --out "$raw/ordered-$mode-$r.rusage" -- "$RELAY" --db "$DB" --nats "$NATS" \
        --drain --connections 4 --batch 500 --poll-interval "${POLL_MS}ms" \
        --max-in-flight "$MAX_IN_FLIGHT" --stream "$stream" --subject-prefix "$prefix" $flag \
        --log-level warn --no-progress 2>>"$raw/relay.log" || true
      ru=$(cat "$raw/ordered-$mode-$r.rusage")
      ok=$([ "$(processed)" = "$ORD_ROWS" ] && echo yes || echo no)
      chk=$("$SC" --nats "$NATS" --stream "$stream" --subject '>' --check-order agg_seq 2>&1 || true)
      viol=$(sed -n 's/.*order_violations=\([0-9]*\).*/\1/p' <<<"$chk")
      drop_stream "$stream"
      wall=$(kv wall_s "$ru")
      row="$mode,4,500,300,$ORD_ROWS,$(calc "$ORD_ROWS / $wall"),$(calc "$wall" 3),$ok,${viol:-?}"
      log "  -> $row"
      old=${OW[$mode]:-}
      if [ -z "$old" ] || [ "$(calc "$(cut -d, -f6 <<<"$row") > $(cut -d, -f6 <<<"$old") ? 1 : 0")" = 1 ]; then
        OW[$mode]=$row
      fi
    done
  done
  echo "${OW[unordered]}" >>"$out/ordered.csv"
  echo "${OW[ordered]}" >>"$out/ordered.csv"
  u=$(cut -d, -f6 <<<"${OW[unordered]}"); o=$(cut -d, -f6 <<<"${OW[ordered]}")
  log "ordered: $o msg/s against $u unordered ($(calc "$u > 0 ? 100 * $o / $u : 0") %)"
fi

# --- 7: cursor mode (--cursor) beside the claim cycle's limit ---------------------
# cseed TABLE ROWS HEADERS [INCREMENT [KEEP]]: an empty TABLE (and no cursor
# rows for it, unless KEEP=1), then ROWS rows of 512 B over 300 aggregates;
# HEADERS=1 adds a small headers object; INCREMENT is the inserting session's
# auto_increment_increment (default 1).
cseed() {
  local t=$1 rows=$2 h=NULL inc=${4:-1}
  [ "$3" = 1 ] && h="JSON_OBJECT('agg_seq', CAST(seq DIV 300 AS CHAR), 'tenant', 'acme')"
  sql "TRUNCATE $t"
  [ "${5:-0}" = 1 ] || sql "DELETE FROM outbox_cursor WHERE table_name = '$t'"
  [ "$rows" -gt 0 ] || return 0 # seq_1_to_0 would count down: two rows
  sql "SET SESSION auto_increment_increment = $inc;
       INSERT INTO $t (id, aggregate_type, aggregate_id, event_type, payload, headers)
       SELECT outbox_uuid_v7(), 'order', CONCAT('a', seq % 300), 'created',
              CONCAT('{\"n\":\"', LPAD(seq, 10, '0'), '\",\"pad\":\"', REPEAT('x', 485), '\"}'), $h
       FROM seq_1_to_$rows;"
}

cursor_scenario() {
  local rows=$CUR_ROWS t=outbox_cur lean=outbox_lean c b r line rate best=0 best_c=1 db0 db1 n0 n1
  local ccpu=0 js=0 hdr ru ok wall viol chk cpu mcpu ncpu row
  sql "DROP TABLE IF EXISTS $t, $lean"
  "$RELAY" schema --ordered --table $t | "${SQL[@]}" bench
  "$RELAY" schema --table $lean --no-function | "${SQL[@]}" bench
  if [ "$(sql "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'bench'
             AND TABLE_NAME = 'outbox_cursor'")" != 1 ]; then
    log "cursor: schema --ordered made no outbox_cursor table (no cursor mode in this build): skipped"
    return 0
  fi
  # The DB-only claim cycle on the lean table (no ordering columns), its best
  # point over the connections, batch 500.
  for c in $CUR_CLAIM_CONNS; do
    for r in $(seq 1 "$REPEAT"); do
      log "cursor: DB-only claim cycle, lean table, $c connection(s) x 500, $rows rows (run $r)"
      cseed $lean "$rows" 0
      db0=$(srv_cpu db)
      line=$("$B/bench-claim" --db "$DB" --table $lean --connections "$c" --batch 500 \
               2>>"$raw/claim.err") || line=""
      db1=$(srv_cpu db)
      echo "$line" >"$raw/cursor-claim-c$c-$r.txt"
      rate=$(kv rate "$line")
      if [ "$(calc "${rate:-0} > $best ? 1 : 0")" = 1 ]; then
        best=$rate; best_c=$c; ccpu=$(calc "($db1 - $db0) * 1e6 / $rows" 2)
      fi
    done
  done
  log "  -> claim cycle best: $best rows/s at $best_c x 500 (mariadbd $ccpu µs/row)"
  # The JetStream-only limit: the same rows, read once and published with the
  # relay's default window.
  cseed $t "$rows" 0
  new_stream
  line=$("$B/bench-jspub" --db "$DB" --table $t --nats "$NATS" --stream "$stream" \
           --subject-prefix "$prefix" --window "$MAX_IN_FLIGHT" 2>>"$raw/jspub.err") || line=""
  echo "$line" >"$raw/cursor-jspub.txt"
  drop_stream "$stream"
  js=$(kv rate "$line"); js=${js:-0}
  log "  -> JetStream-only: $js msg/s"

  # The relay's fixed cost: the same drain of an empty table (start, connect,
  # the leases, the first cursors, the drain's last check and the stop),
  # which the limits above leave out of their timing (their connections are
  # made before the clock starts). The faster of two runs counts.
  local empty=""
  for r in 1 2; do
    cseed $t 0 0
    new_stream
    "$B/bench-rusage" --out "$raw/cursor-empty-$r.rusage" -- "$RELAY" --db "$DB" --nats "$NATS" \
      --table $t --cursor --drain --batch 500 --poll-interval "${POLL_MS}ms" --stream "$stream" \
      --subject-prefix "$prefix" --log-level warn --no-progress 2>>"$raw/relay.log" || true
    drop_stream "$stream"
    wall=$(kv wall_s "$(cat "$raw/cursor-empty-$r.rusage")")
    if [ -z "$empty" ] || [ "$(calc "$wall < $empty ? 1 : 0")" = 1 ]; then empty=$wall; fi
  done
  log "  -> an empty table's --cursor --drain: $empty s"

  echo "headers,connections,batch,rows,relay_rate,relay_seconds,relay_cpu_us_per_msg,mariadb_cpu_us_per_msg,nats_cpu_us_per_msg,complete,order_violations,claim_best_rate,claim_best_connections,claim_mariadb_cpu_us_per_msg,js_only_rate,relay_to_claim,relay_to_js,empty_drain_seconds,steady_rate,steady_to_claim,steady_to_js" >"$out/cursor.csv"
  for hdr in 0 1; do
    for c in $CUR_CONNS; do
      local bw="" brow=""
      for r in $(seq 1 "$REPEAT"); do
        log "cursor: --cursor --drain, headers=$hdr, $c connection(s) x 500, $rows rows (run $r)"
        cseed $t "$rows" "$hdr"
        new_stream
        db0=$(srv_cpu db); n0=$(srv_cpu nats)
        "$B/bench-rusage" --out "$raw/cursor-h$hdr-c$c-$r.rusage" -- "$RELAY" --db "$DB" --nats "$NATS" \
          --table $t --cursor --drain --connections "$c" --batch 500 --poll-interval "${POLL_MS}ms" \
          --max-in-flight "$MAX_IN_FLIGHT" --stream "$stream" --subject-prefix "$prefix" \
          --log-level warn --no-progress 2>>"$raw/relay.log" || true
        db1=$(srv_cpu db); n1=$(srv_cpu nats)
        ru=$(cat "$raw/cursor-h$hdr-c$c-$r.rusage")
        line=$("$SC" --nats "$NATS" --stream "$stream" --subject '>' \
                 $([ "$hdr" = 1 ] && echo "--check-order agg_seq") 2>&1 || true)
        drop_stream "$stream"
        ok=$([ "$(kv distinct "$(grep '^messages=' <<<"$line")")" = "$rows" ] && echo yes || echo no)
        [ $ok = yes ] || log "warning: the cursor relay did not deliver every row once ($ru)"
        viol=$(sed -n 's/.*order_violations=\([0-9]*\).*/\1/p' <<<"$line")
        wall=$(kv wall_s "$ru")
        cpu=$(calc "($(kv user_s "$ru") + $(kv sys_s "$ru")) * 1e6 / $rows" 2)
        mcpu=$(calc "($db1 - $db0) * 1e6 / $rows" 2); ncpu=$(calc "($n1 - $n0) * 1e6 / $rows" 2)
        rate=$(calc "$rows / $wall")
        local steady
        steady=$(calc "$wall > $empty ? $rows / ($wall - $empty) : 0")
        row="$hdr,$c,500,$rows,$rate,$(calc "$wall" 3),$cpu,$mcpu,$ncpu,$ok,${viol:--},$best,$best_c,$ccpu,$js,$(calc "$best > 0 ? $rate / $best : 0" 3),$(calc "$js > 0 ? $rate / $js : 0" 3),$empty,$steady,$(calc "$best > 0 ? $steady / $best : 0" 3),$(calc "$js > 0 ? $steady / $js : 0" 3)"
        if [ -z "$bw" ] || [ "$(calc "$wall < $bw ? 1 : 0")" = 1 ]; then bw=$wall; brow=$row; fi
      done
      echo "$brow" >>"$out/cursor.csv"
      log "  -> $brow"
    done
  done

  # A counter stepping by 3 (auto_increment_increment = 3, as on a
  # three-node Galera cluster) against one stepping by 1: the same rows,
  # drained by a relay whose cursor rows exist (a drain of the empty table
  # made them, at seq 0), so every gap waits for a proof made while it runs.
  # The runs alternate; the faster of each counts.
  local s1="" s3="" inc
  for r in $(seq 1 "$REPEAT"); do
    for inc in 1 3; do
      cseed $t 0 0
      new_stream
      "$RELAY" --db "$DB" --nats "$NATS" --table $t --cursor --drain --stream "$stream" \
        --subject-prefix "$prefix" --log-level warn --no-progress 2>>"$raw/relay.log" || true
      cseed $t "$rows" 0 $inc 1
      log "cursor: --cursor --drain, seq stepping by $inc, cursor rows at 0, $rows rows (run $r)"
      "$B/bench-rusage" --out "$raw/cursor-inc$inc-$r.rusage" -- "$RELAY" --db "$DB" --nats "$NATS" \
        --table $t --cursor --drain --batch 500 --poll-interval "${POLL_MS}ms" \
        --max-in-flight "$MAX_IN_FLIGHT" --stream "$stream" --subject-prefix "$prefix" \
        --log-level warn --no-progress 2>>"$raw/relay.log" || true
      line=$("$SC" --nats "$NATS" --stream "$stream" --subject '>' 2>&1 || true)
      drop_stream "$stream"
      [ "$(kv distinct "$(grep '^messages=' <<<"$line")")" = "$rows" ] ||
        log "warning: the cursor relay (seq stepping by $inc) did not deliver every row once"
      wall=$(kv wall_s "$(cat "$raw/cursor-inc$inc-$r.rusage")")
      if [ $inc = 1 ]; then
        if [ -z "$s1" ] || [ "$(calc "$wall < $s1 ? 1 : 0")" = 1 ]; then s1=$wall; fi
      elif [ -z "$s3" ] || [ "$(calc "$wall < $s3 ? 1 : 0")" = 1 ]; then s3=$wall; fi
    done
  done
  { echo "cursor_inc1_seconds=$s1"
    echo "cursor_inc3_seconds=$s3"
    echo "cursor_inc3_ratio=$(calc "$s1 > 0 ? $s3 / $s1 : 0" 3)"
  } >"$out/cursor_stride.env"
  log "  -> $(tr '\n' ' ' <"$out/cursor_stride.env")"

  # Latency from plain SQL at 1,000 rows/s, one row per transaction, the
  # cursor relay at its defaults.
  local lat_ms produced stored l
  lat_ms=$([ $quick = 1 ] && echo 4000 || echo 15000)
  log "cursor: latency, plain SQL at 1,000 rows/s, --cursor at its defaults"
  cseed $t 0 0
  new_stream
  "$B/bench-rusage" --out "$raw/cursor-lat.rusage" -- "$RELAY" --db "$DB" --nats "$NATS" --table $t \
    --cursor --stream "$stream" --subject-prefix "$prefix" --log-level warn --no-progress \
    2>>"$raw/relay.log" &
  relay_pid=$!
  sleep 1
  line=$("$B/bench-produce" --db "$DB" --table $t --mode raw --rate 1000 --duration-ms "$lat_ms" \
           --ts-header bench-ns 2>>"$raw/produce.err") || line=""
  produced=$(kv events "$line"); produced=${produced:-0}
  for _ in $(seq 1 200); do
    [ "$(sql "SELECT COUNT(*) FROM $t o LEFT JOIN outbox_cursor c ON c.table_name = '$t'
          AND c.bucket = o.bucket WHERE o.status = 0 AND o.seq > IFNULL(c.seq, 0)")" = 0 ] && break
    sleep 0.1
  done
  sleep 0.5
  kill -TERM "$relay_pid" 2>/dev/null || true
  wait "$relay_pid" || true
  relay_pid=""
  line=$("$B/bench-latency" --nats "$NATS" --stream "$stream" --header bench-ns 2>&1 || true)
  drop_stream "$stream"
  stored=$(kv read "$(grep '^messages=' <<<"$line")")
  l=$(grep '^latency_ms' <<<"$line" || echo "")
  ru=$(cat "$raw/cursor-lat.rusage")
  { echo "cursor_lat_rate=1000"
    echo "cursor_lat_produced=$produced"
    echo "cursor_lat_stored=${stored:-0}"
    echo "cursor_lat_p50=$(kv p50 "$l")"
    echo "cursor_lat_p99=$(kv p99 "$l")"
    echo "cursor_lat_max=$(kv max "$l")"
    echo "cursor_lat_cpu_us=$(calc "$produced > 0 ? ($(kv user_s "$ru") + $(kv sys_s "$ru")) * 1e6 / $produced : 0" 1)"
  } >"$out/cursor.env"
  log "  -> $(tr '\n' ' ' <"$out/cursor.env")"
  sql "DROP TABLE IF EXISTS $t, $lean; DELETE FROM outbox_cursor WHERE table_name = '$t'"
}
if wants cursor; then
  CUR_ROWS=$([ $quick = 1 ] && echo 20000 || echo 100000)
  CUR_CONNS=$([ $quick = 1 ] && echo "2" || echo "1 4")
  CUR_CLAIM_CONNS=$([ $quick = 1 ] && echo "1 4" || echo "1 2 4 8")
  cursor_scenario
fi

if wants galera; then
  . "$root/bench/galera.sh"
  galera_scenario
fi

echo "duration_s=$(( $(date +%s) - t_start ))" >>"$out/meta.env"
echo "load_end='$(loadavg)'" >>"$out/meta.env"

# --- the report ------------------------------------------------------------------
"$root/bench/report.sh" "$out"
if command -v gnuplot >/dev/null 2>&1; then
  gnuplot -e "dir='$out'" "$root/bench/plot.gp" 2>>"$raw/gnuplot.log" || log "warning: gnuplot failed (see raw/gnuplot.log)"
else
  log "gnuplot is not installed (scripts/deps.sh gnuplot-nox): no plots"
fi
log "done in $(( $(date +%s) - t_start )) s: $out/summary.md"
