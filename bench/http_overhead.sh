#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What --http costs: drains of N rows timed with the responder on and a
# scraper fetching /metrics every second, alternating with the same drain
# without --http, on throwaway servers.
#   bench/http_overhead.sh [BUILD_DIR] [ROWS] [ROUNDS]
# Prints one line per drain and the median rate of each mode.
set -euo pipefail
command -v /usr/bin/time >/dev/null || { echo "needs /usr/bin/time (apt-get install time)" >&2; exit 1; }
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
rows=${2:-100000}
rounds=${3:-3}
relay=$build/outbox-uvrelay
[ -x "$relay" ] || { echo "no $relay: build first (scripts/build.sh $build)" >&2; exit 1; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/outbox-bench-http.XXXXXX")
SCRAPER=
trap 'kill $SCRAPER 2>/dev/null || true; "$root/scripts/servers.sh" stop "$dir" >/dev/null 2>&1 || true' EXIT
"$root/scripts/servers.sh" start "$dir" >/dev/null
. "$dir/env"
MDB() { mariadb --no-defaults -uroot -S "$OUTBOX_TEST_DB_SOCKET" "$@"; }
MDB -e "CREATE DATABASE bench_http"
"$relay" schema | MDB bench_http
db="${OUTBOX_TEST_DB_URL}bench_http"

seed() {
  MDB bench_http -e "TRUNCATE outbox; INSERT INTO outbox (id, aggregate_type, aggregate_id,
    event_type, payload) SELECT outbox_uuid_v7(), 'order', CONCAT('o', seq), 'created',
    JSON_OBJECT('n', seq, 'pad', REPEAT('x', 492)) FROM seq_1_to_$rows"
}

# drain MODE: prints the mode, wall time, rate, the relay's CPU and the scrapes
drain() {
  local mode=$1 log=$dir/relay-$1.log t0 t1 flags=() scrapes=0
  [ "$mode" = http ] && flags=(--http 127.0.0.1:0)
  seed
  t0=$(date +%s%N)
  /usr/bin/time -f "%U %S" -o "$dir/cpu" "$relay" --db "$db" --nats "$OUTBOX_TEST_NATS_URL" --stream BENCH_HTTP \
    --subject-prefix benchhttp --connections 4 --batch 500 --drain --no-progress \
    "${flags[@]}" 2>"$log" &
  local pid=$!
  if [ "$mode" = http ]; then
    local port=
    for _ in $(seq 1 50); do
      port=$(sed -n 's/.*(port \([0-9]*\)).*/\1/p' "$log" | head -1)
      [ -n "$port" ] && break
      sleep 0.02
    done
    ( while kill -0 $pid 2>/dev/null; do
        curl -s -o /dev/null -m 2 "http://127.0.0.1:$port/metrics" && echo >>"$dir/scrapes"
        sleep 1
      done ) &
    SCRAPER=$!
  fi
  : >"$dir/scrapes"
  wait $pid
  t1=$(date +%s%N)
  [ -n "$SCRAPER" ] && { wait $SCRAPER 2>/dev/null || true; SCRAPER=; }
  scrapes=$(wc -l <"$dir/scrapes")
  local cpu
  cpu=$(awk '{ print $1 + $2 }' "$dir/cpu")
  awk -v m="$mode" -v ns=$((t1 - t0)) -v n="$rows" -v s="$scrapes" -v c="$cpu" \
    'BEGIN { printf "%-6s %6.2f s %8.0f rows/s  relay CPU %5.2f s (%.2f us/row)  scrapes %d\n",
             m, ns / 1e9, n / (ns / 1e9), c, c * 1e6 / n, s }'
}

echo "rows=$rows rounds=$rounds connections=4 batch=500 ($(nproc) cores)"
for r in $(seq 1 "$rounds"); do
  drain plain
  drain http
done | tee "$dir/results.txt"
for m in plain http; do
  awk -v m="$m" '$1 == m { print $4 }' "$dir/results.txt" | sort -n |
    awk -v m="$m" '{ v[NR] = $1 } END { printf "median %-6s %8.0f rows/s\n", m, v[int((NR + 1) / 2)] }'
done

# The cost of one scrape in the relay's own CPU: an idle relay, its CPU over
# 5,000 back-to-back scrapes minus its idle CPU over the same wall time.
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
seed_none() { MDB bench_http -e "TRUNCATE outbox"; }
seed_none
"$relay" --db "$db" --nats "$OUTBOX_TEST_NATS_URL" --stream BENCH_HTTP --subject-prefix benchhttp \
  --http 127.0.0.1:0 --no-progress 2>"$dir/idle.log" &
idle=$!
for _ in $(seq 1 50); do
  port=$(sed -n 's/.*(port \([0-9]*\)).*/\1/p' "$dir/idle.log" | head -1)
  [ -n "$port" ] && break
  sleep 0.1
done
sleep 2
urls=()
for _ in $(seq 1 5000); do urls+=("http://127.0.0.1:$port/metrics"); done
c0=$(cpu_ticks $idle); t0=$(date +%s%N)
curl -s "${urls[@]}" >/dev/null
c1=$(cpu_ticks $idle); t1=$(date +%s%N)
sleep "$(awk -v ns=$((t1 - t0)) 'BEGIN { printf "%.3f", ns / 1e9 }')"
c2=$(cpu_ticks $idle)
kill -TERM $idle; wait $idle || true
awk -v busy=$((c1 - c0)) -v quiet=$((c2 - c1)) -v hz="$(getconf CLK_TCK)" -v ns=$((t1 - t0)) \
  'BEGIN { us = (busy - quiet) / hz * 1e6 / 5000; if (us < 0) us = 0;
           printf "scrape cost: %.0f us of relay CPU per /metrics (5,000 scrapes in %.2f s); at one scrape a second, %.3f %% of one core\n",
                  us, ns / 1e9, us / 1e4 }'
