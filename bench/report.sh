#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Writes summary.md (and headline.md, the table docs/benchmark.md shows) from the
# CSV files and meta.env of one benchmark run.
#   bench/report.sh RESULTS_DIR
set -euo pipefail
dir=${1:?usage: report.sh RESULTS_DIR}
. "$dir/meta.env"
best_c=${best_c:-2}; best_b=${best_b:-500}

# col FILE NAME: the index of column NAME in FILE's header.
col() { head -1 "$1" | tr ',' '\n' | grep -nx "$2" | cut -d: -f1; }
# get FILE MATCH_AWK_EXPR NAME: the first value of column NAME on a matching row.
get() {
  [ -f "$1" ] || return 0
  awk -F, -v c="$(col "$1" "$3")" "NR > 1 && ($2) { print \$c; exit }" "$1"
}
mib() { awk -v k="$1" 'BEGIN { if (k == "") print "-"; else printf "%.1f", k / 1024 }'; }
pct() { awk -v r="$1" 'BEGIN { if (r == "") print "-"; else printf "%.0f %%", r * 100 }'; }
num() { awk -v x="$1" 'BEGIN { if (x == "") print "-"; else printf "%\047.0f", x }'; }
met() { awk -v v="$1" -v t="$2" -v op="$3" 'BEGIN { if (v == "") { print "not run"; exit }
  ok = op == "ge" ? v + 0 >= t + 0 : v + 0 <= t + 0; print ok ? "met" : "missed" }'; }
export LC_NUMERIC=C

# Cursor mode (--cursor): cursor.md, the scenario's table with the issue's
# targets, from cursor.csv and cursor.env; summary.md includes it.
cursor_report() {
  local c="$dir/cursor.csv" lean hd
  rm -f "$dir/cursor.md"
  [ -f "$c" ] || return 0
  cursor_lat_p99=""; cursor_lat_p50=""; cursor_lat_cpu_us=""
  [ -f "$dir/cursor.env" ] && . "$dir/cursor.env"
  cursor_inc1_seconds=""; cursor_inc3_seconds=""; cursor_inc3_ratio=""
  [ -f "$dir/cursor_stride.env" ] && . "$dir/cursor_stride.env"
  # The best rows per variant (without headers: 0, with: 1).
  lean=$(tail -n +2 "$c" | awk -F, '$1 == 0' | sort -t, -k5,5gr | head -1)
  hd=$(tail -n +2 "$c" | awk -F, '$1 == 1' | sort -t, -k5,5gr | head -1)
  f() { cut -d, -f"$2" <<<"$1"; }
  {
    echo "## 7. Cursor mode (--cursor), $(f "$lean" 4) rows of 512 B, ordered table, batch 500"
    echo
    echo "The cursor relay drains an ordered table (300 aggregates), beside the same run's DB-only"
    echo "claim cycle (bench-claim) on a lean table without the ordering columns at its best"
    echo "connection count, and the JetStream-only limit (bench-jspub). mariadbd's CPU per row is"
    echo "read from /proc/<pid>/stat of the server around each run."
    echo
    echo "| headers | connections | msg/s | relay CPU µs/msg | mariadbd CPU µs/row | nats CPU µs/msg | every row once | order violations |"
    echo "|---|---:|---:|---:|---:|---:|---|---:|"
    tail -n +2 "$c" | while IFS=, read -r h cn b rows rate secs cpu mcpu ncpu ok viol rest; do
      echo "| $([ "$h" = 1 ] && echo yes || echo no) | $cn | $(num "$rate") | $cpu | $mcpu | $ncpu | $ok | $viol |"
    done
    echo
    echo "| figure | this run | target |"
    echo "|---|---|---|"
    echo "| cursor drain, no headers (best: $(f "$lean" 2) connections) | $(num "$(f "$lean" 5)") msg/s | |"
    echo "| cursor drain, with headers (best: $(f "$hd" 2) connections) | $(num "$(f "$hd" 5)") msg/s | |"
    echo "| DB-only claim cycle, lean table, best ($(f "$lean" 13) conn x 500) | $(num "$(f "$lean" 12)") msg/s (mariadbd $(f "$lean" 14) µs/row) | |"
    echo "| JetStream-only limit | $(num "$(f "$lean" 15)") msg/s | |"
    echo "| cursor drain / claim cycle | $(awk -v r="$(f "$lean" 16)" 'BEGIN { printf "%.2f x", r }') | >= 2 x: $(met "$(f "$lean" 16)" 2 ge) |"
    echo "| cursor drain / JetStream-only | $(pct "$(f "$lean" 17)") | >= 90 %: $(met "$(f "$lean" 17)" 0.9 ge) |"
    if [ -n "$(f "$lean" 19)" ]; then
      echo "| the same, steady (the relay's fixed cost, an empty table's drain of $(f "$lean" 18) s, left out as the limits leave out theirs) | $(num "$(f "$lean" 19)") msg/s: $(awk -v r="$(f "$lean" 20)" 'BEGIN { printf "%.2f x", r }') the claim cycle, $(pct "$(f "$lean" 21)") of JetStream-only | >= 2 x: $(met "$(f "$lean" 20)" 2 ge); >= 90 %: $(met "$(f "$lean" 21)" 0.9 ge) |"
    fi
    echo "| mariadbd CPU per delivered row | $(f "$lean" 8) µs | <= 10 µs: $(met "$(f "$lean" 8)" 10 le) |"
    echo "| relay CPU per row | $(f "$lean" 7) µs | |"
    echo "| commit -> stored at 1,000 rows/s, plain SQL, defaults: p50 / p99 | ${cursor_lat_p50:--} / ${cursor_lat_p99:--} ms | p99 <= 10 ms: $(met "$cursor_lat_p99" 10 le) |"
    echo "| drain with seq stepping by 3 / by 1 (auto_increment_increment, cursor rows at 0) | ${cursor_inc3_seconds:--} / ${cursor_inc1_seconds:--} s: $(awk -v r="$cursor_inc3_ratio" 'BEGIN { if (r == "") print "-"; else printf "%.2f x", r }') | <= 1.2 x: $(met "$cursor_inc3_ratio" 1.2 le) |"
  } >"$dir/cursor.md"
}

d="$dir/drain.csv"; p="$dir/payload.csv"; m="$dir/mixed.csv"; e="$dir/enqueue.csv"
best="\$1 == $best_c && \$2 == $best_b"

b_rate=$(get "$d" "$best" relay_rate)
b_db=$(get "$d" "$best" db_only_rate)
b_js=$(get "$d" "$best" js_only_rate)
b_bind=$(get "$d" "$best" binding_limit)
b_ratio=$(get "$d" "$best" relay_to_limit)
b_cpu=$(get "$d" "$best" relay_cpu_us_per_msg)
b_rss=$(get "$d" "$best" relay_peak_rss_kib)
b_dbratio=$(awk -v a="$b_rate" -v b="$b_db" 'BEGIN { if (a == "" || b + 0 == 0) print ""; else printf "%.3f", a / b }')
rss_8x500=$(get "$d" '$1 == 8 && $2 == 500' relay_peak_rss_kib)
p99_1000=$(get "$m" '$1 == 1000' latency_p99_ms)
p50_1000=$(get "$m" '$1 == 1000' latency_p50_ms)
commit_1000=$(get "$m" '$1 == 1000' commit_p50_ms)
lat_target=$((poll_ms + 5))
cpu_min=""; cpu_max=""
if [ -f "$d" ]; then
  cpu_min=$(tail -n +2 "$d" | cut -d, -f7 | sort -g | head -1)
  cpu_max=$(tail -n +2 "$d" | cut -d, -f7 | sort -g | tail -1)
fi

cursor_report
{
  echo "| figure | this run | target |"
  echo "|---|---|---|"
  echo "| drain at the best grid point ($best_c conn x batch $best_b), 512 B | $(num "$b_rate") msg/s | |"
  echo "| DB-only limit, same run | $(num "$b_db") msg/s | |"
  echo "| JetStream-only limit, same run | $(num "$b_js") msg/s | |"
  echo "| relay / lower limit (binding: $b_bind) | $(pct "$b_ratio") | |"
  echo "| relay / DB-only limit | $(pct "$b_dbratio") | >= 90 %: $(met "$b_dbratio" 0.9 ge) |"
  echo "| relay CPU per message (best point; grid range $cpu_min-$cpu_max) | $b_cpu µs | <= 3 µs: $(met "$b_cpu" 3 le) |"
  echo "| relay peak RSS at 8 conn x batch 500 | $(mib "$rss_8x500") MiB | <= 16 MiB: $(met "$(mib "$rss_8x500")" 16 le) |"
  echo "| commit -> stored p99 at 1,000 msg/s (p50 $p50_1000 ms) | ${p99_1000:--} ms | <= poll $poll_ms + 5 = $lat_target ms: $(met "$p99_1000" "$lat_target" le) |"
  if [ -f "$e" ]; then
    echo "| enqueue, 1 event/tx, 1 producer: API / raw INSERT | $(num "$(get "$e" '$1 == 1 && $2 == 1' api_rate)") / $(num "$(get "$e" '$1 == 1 && $2 == 1' raw_rate)") events/s | |"
    echo "| enqueue, 100 events/tx, 1 producer: API / raw INSERT | $(num "$(get "$e" '$1 == 1 && $2 == 100' api_rate)") / $(num "$(get "$e" '$1 == 1 && $2 == 100' raw_rate)") events/s | |"
  fi
} >"$dir/headline.md"

{
  echo "# Benchmark run $stamp ($mode)"
  echo
  echo "- Revision \`$rev\`$([ "$dirty" -gt 0 ] && echo " with $dirty modified library file(s) in the work tree" || true)."
  echo "- Machine: $cores cores, $cpu_model, $mem_mib MiB, Linux $kernel."
  echo "- MariaDB $mariadb_version: innodb_flush_log_at_trx_commit=$flush_trx, sync_binlog=$sync_binlog, log_bin=$log_bin, doublewrite=$doublewrite, flush_method=$flush_method, buffer pool $pool_mib MiB."
  echo "- $nats_version, JetStream file storage, 1 replica, server default sync."
  echo "- Relay: poll interval $poll_ms ms, max in flight $max_in_flight, processed rows kept (UPDATE status=1)."
  echo "- Wall time of the whole run: ${duration_s:-?} s. Load average (1/5/15 min) at the start: ${load_start:-?}; at the end: ${load_end:-?}."
  echo
  echo "## Headline"
  echo
  cat "$dir/headline.md"
  echo
  echo "Targets are figures to chase, not assertions. Rates are messages per second; CPU is the relay"
  echo "process's user+system time (all threads, nats.c's included) divided by the messages it moved;"
  echo "RSS is its peak resident set."

  drain_table() {
    echo "| conn | batch | payload B | rows | relay msg/s | DB-only msg/s | JetStream-only msg/s | binding limit | relay / limit | relay CPU µs/msg | MariaDB + NATS CPU µs/msg | peak RSS MiB | all rows processed |"
    echo "|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---|"
    tail -n +2 "$1" | while IFS=, read -r c b sz rows rate secs cpu rss db js lim bind ratio ok mcpu ncpu ccpu; do
      echo "| $c | $b | $sz | $rows | $(num "$rate") | $(num "$db") | $(num "$js") | $bind | $(pct "$ratio") | $cpu | ${mcpu:--} + ${ncpu:--} | $(mib "$rss") | $ok |"
    done
  }
  if [ -f "$d" ]; then
    echo
    echo "## 1-2. Drain of $drain_rows pending 512-byte rows, beside the same-run limits"
    echo
    echo "Each grid point reseeds the table before every run: the DB-only claim cycle, the JetStream-only"
    echo "publisher (window = min(conn x batch, $max_in_flight)), then the relay with \`--drain\`."
    echo "The DB-only cycle and the relay run ${repeat:-1} time(s) each, alternating; the fastest of each counts."
    echo "The servers' CPU is what mariadbd and nats-server used during the relay's run, per message:"
    echo "on a small machine the relay, MariaDB and NATS share the cores, so their sum bounds the rate."
    echo
    drain_table "$d"
    echo
    echo "![drain](drain.png)"
  fi
  if [ -f "$dir/nats_modes.csv" ]; then
    echo
    echo "### nats.c on the relay's loop and on its own threads"
    echo
    echo "The same drain with nats.c on the loop (the default) and with OUTBOX_NATS_EVENT_LOOP=0, beside"
    echo "bench-jspub (threaded, and in the same mode). Context switches are the process's, all threads."
    echo
    echo "| nats.c | conn | batch | relay msg/s | relay CPU µs/msg | switches/msg (voluntary) | threads | JetStream-only CPU µs/msg | relay / JetStream-only | JetStream-only, same mode: CPU µs/msg, switches/msg |"
    echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    tail -n +2 "$dir/nats_modes.csv" | while IFS=, read -r mode c b rows rate cpu csw vcsw thr jscpu ratio jsm jsmcsw; do
      echo "| $mode | $c | $b | $(num "$rate") | $cpu | $csw ($vcsw) | $thr | $jscpu | $ratio | $jsm, $jsmcsw |"
    done
  fi
  if [ -f "$p" ]; then
    echo
    echo "## 5. Payload size, at $best_c connection(s) x batch $best_b"
    echo
    drain_table "$p"
    echo
    echo "![payload](payload.png)"
  fi
  if [ -f "$m" ]; then
    echo
    echo "## 3. Mixed: $mix_procs producers (C enqueue API, 1 event per transaction) while the relay runs"
    echo
    echo "Latency is JetStream's stored time minus the producer's timestamp header, read back from the"
    echo "stream. The timestamp is taken just before the statement that commits, so the figure includes"
    echo "that commit (its p50 is in the commit column). Offered 0 = the producers' maximum."
    echo
    echo "| offered msg/s | achieved msg/s | produced | stored | p50 ms | p95 ms | p99 ms | max ms | commit p50 ms | relay CPU µs/msg | peak RSS MiB |"
    echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    tail -n +2 "$m" | while IFS=, read -r off procs c b poll prod secs ach stored p50 p95 p99 mx cp50 cp99 cpu rss; do
      echo "| $([ "$off" = 0 ] && echo max || num "$off") | $(num "$ach") | $prod | $stored | $p50 | $p95 | $p99 | $mx | $cp50 | $cpu | $(mib "$rss") |"
    done
    echo
    echo "![latency](latency.png)"
  fi
  if [ -f "$e" ]; then
    echo
    echo "## 4. Enqueue: the C API beside a raw multi-row INSERT of the same rows (no relay running)"
    echo
    echo "Each transaction is one autocommit INSERT. The API validates payload and headers as JSON"
    echo "before building the statement; the raw baseline only escapes."
    echo
    echo "| producers | events/tx | API events/s | raw events/s | API / raw | API tx p50 ms | raw tx p50 ms | API tx p99 ms | raw tx p99 ms | API client CPU µs/event | raw client CPU µs/event |"
    echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    tail -n +2 "$e" | while IFS=, read -r procs per a r ratio ap50 rp50 ap99 rp99 acpu rcpu; do
      echo "| $procs | $per | $(num "$a") | $(num "$r") | $(pct "$ratio") | $ap50 | $rp50 | $ap99 | $rp99 | ${acpu:--} | ${rcpu:--} |"
    done
    echo
    echo "![enqueue](enqueue.png)"
  fi
  l="$dir/latency.csv"
  if [ -f "$l" ]; then
    echo
    echo "## 5. Prompt delivery: one event per transaction, commit -> stored"
    echo
    echo "Plain SQL producers at the relay's defaults (adaptive polling), the same with the doorbell"
    echo "(outbox_ring after each commit), and an embedded producer that calls outbox_relay_notify()"
    echo "on the relay's own loop (CPU there is the whole process's, producer included). The relay's"
    echo "CPU per message is counted while the rows come (warm-up included), its start and stop left out."
    echo
    echo "| mode | offered msg/s | produced | stored | p50 ms | p95 ms | p99 ms | max ms | relay CPU µs/msg |"
    echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
    tail -n +2 "$l" | while IFS=, read -r mode rate prod stored p50 p95 p99 mx cpu; do
      echo "| $mode | $(num "$rate") | $prod | $stored | $p50 | $p95 | $p99 | $mx | $cpu |"
    done
    if [ -f "$dir/idle.env" ]; then
      . "$dir/idle.env"
      echo
      echo "An idle relay (defaults, 2 connections) over ${idle_s} s: ${idle_cpu_s_per_min} s of CPU per minute,"
      echo "${idle_qps} database statements per second."
      if [ -n "${busy_cpu_us_per_poll:-}" ]; then
        echo
        echo "The cost of a wake-up: the same relay polling an empty table every 5 ms spent"
        echo "${busy_cpu_us_per_poll} µs of CPU per poll (a timer, one statement and its answer;"
        echo "${busy_polls_per_s} polls/s), ${busy_cpu_us_per_switch} µs per context switch of the process."
      fi
    fi
  fi
  o="$dir/ordered.csv"
  if [ -f "$o" ]; then
    echo
    echo "## 6. Ordered delivery beside unordered (4 connections x 500, 300 aggregates, 512 B)"
    echo
    echo "Both drain the same rows; order_violations counts messages of an aggregate stored after a"
    echo "later one of the same aggregate (read back from the stream)."
    echo
    echo "| mode | rows | msg/s | seconds | complete | order violations |"
    echo "|---|---:|---:|---:|---|---:|"
    tail -n +2 "$o" | while IFS=, read -r mode c b aggs rows rate secs ok viol; do
      echo "| $mode | $rows | $(num "$rate") | $secs | $ok | $viol |"
    done
  fi
  if [ -f "$dir/cursor.md" ]; then
    echo
    cat "$dir/cursor.md"
  fi
  if [ -f "$dir/galera.md" ]; then
    echo
    cat "$dir/galera.md"
  fi
  echo
  echo "Method and caveats: bench/README.md. Raw tool output is in raw/ (not committed)."
} >"$dir/summary.md"
