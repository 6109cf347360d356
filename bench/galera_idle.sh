#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What an idle cursor relay costs a Galera cluster: a three-node cluster on
# loopback and a nats-server (throwaway), then, ROUNDS times in turn, SECS
# seconds with no relay (the cluster's own idle cost) and SECS seconds with
# one idle `--cursor` relay on node 1 for each RELAY binary given (so two
# builds can be compared in the same run). Each line: the three mariadbd's
# CPU (user + system, from /proc/<pid>/stat) and the relay's, over SECS.
#   bench/galera_idle.sh RELAY [RELAY ...]      (SECS=30 ROUNDS=2 by default)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 1 ] || { echo "usage: bench/galera_idle.sh RELAY [RELAY ...]" >&2; exit 2; }
for r in "$@"; do [ -x "$r" ] || { echo "no $r: build first" >&2; exit 1; }; done
secs=${SECS:-30}
rounds=${ROUNDS:-2}
tck=$(getconf CLK_TCK)
g=$(mktemp -d "${TMPDIR:-/tmp}/outbox-bench-gidle.XXXXXX")
n=$(mktemp -d "${TMPDIR:-/tmp}/outbox-bench-gidle-nats.XXXXXX")
chmod 755 "$g" "$n"
pid=
stop_all() {
  [ -z "$pid" ] || kill -KILL "$pid" 2>/dev/null || true
  "$root/scripts/servers.sh" stop "$g" >/dev/null 2>&1 || true
  "$root/scripts/servers.sh" stop "$n" >/dev/null 2>&1 || true
}
trap stop_all EXIT
"$root/scripts/servers.sh" start-galera "$g" >/dev/null
"$root/scripts/servers.sh" start "$n" >/dev/null
nats=$(. "$n/env" && echo "$OUTBOX_TEST_NATS_URL")
. "$g/env"
MDB() { mariadb --no-defaults -uroot -S "$OUTBOX_TEST_GALERA_SOCKET1" "$@"; }
MDB -e "CREATE DATABASE bench_idle"
"$1" schema --cursor | MDB bench_idle

cpu_of() { awk -v k="$tck" '{ printf "%.2f", ($14 + $15) / k }' "/proc/$1/stat"; }
nodes_cpu() {
  local s=0 i
  for i in 1 2 3; do s=$(echo "$s + $(cpu_of "$(cat "$g/g$i/db.pid")")" | bc); done
  echo "$s"
}

# measure NAME [RELAY]: SECS seconds, after 10 s of settling
measure() {
  local name=$1 relay=${2:-} c0 c1 r0=0 r1=0
  pid=
  if [ -n "$relay" ]; then
    "$relay" --db "${OUTBOX_TEST_GALERA_URL1}bench_idle" --nats "$nats" --stream BENCH_IDLE \
      --subject-prefix benchidle --cursor --no-progress 2>"$g/relay.log" &
    pid=$!
    sleep 10
    r0=$(cpu_of "$pid")
  fi
  c0=$(nodes_cpu)
  sleep "$secs"
  c1=$(nodes_cpu)
  if [ -n "$pid" ]; then
    r1=$(cpu_of "$pid")
    kill -TERM "$pid"
    wait "$pid" || true
    pid=
    # the presence row would keep the buckets for two thirds of the lease timeout
    MDB bench_idle -e "DELETE FROM outbox_lease"
  fi
  printf '%-40s mariadbd x3 %5.2f s  relay %5.2f s  in %s s\n' "$name" \
    "$(echo "$c1 - $c0" | bc)" "$(echo "$r1 - $r0" | bc)" "$secs"
}

for ((k = 1; k <= rounds; k++)); do
  measure "round $k: no relay"
  for r in "$@"; do measure "round $k: $r" "$r"; done
done
