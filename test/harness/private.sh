# SPDX-License-Identifier: Apache-2.0
# Private servers for the tests that kill, freeze or restart a server: sourced
# after lib.sh. Each test starts its own, in its own folder, and stops them
# with `private_cleanup` from its EXIT trap, so the shared fixture servers are
# never disturbed and the test can run beside the others.

NATS_SERVER_BIN=$(command -v nats-server || echo /usr/sbin/nats-server)

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# From OUTBOX_PORT_RANGE (LOW-HIGH), as scripts/servers.sh takes them: by
# default 10000-29999, below the kernel's ephemeral range (32768-60999), so
# that no outgoing connection holds the port when the server binds it.
free_port() {
  local p i r=${OUTBOX_PORT_RANGE:-10000-29999} lo hi
  lo=${r%-*} hi=${r#*-}
  for i in $(seq 1 200); do
    p=$(((RANDOM * 32768 + RANDOM) % (hi - lo + 1) + lo))
    if ! port_in_use "$p"; then echo "$p"; return 0; fi
  done
  fail "no free port found in $lo-$hi (OUTBOX_PORT_RANGE)"
}

# The pid files of every private server this test started, for the cleanup.
PRIVATE_PIDFILES=()
PRIVATE_DIRS=()

# private_db_and_nats DIR: a private mariadbd and nats-server pair (the
# fixture's own script, in DIR); this test's OUTBOX_TEST_* variables then point
# at them, so lib.sh's helpers (sql, relay, streamcheck) use them.
private_db_and_nats() {
  local dir=$1
  PRIVATE_DIRS+=("$dir")
  PRIVATE_PIDFILES+=("$dir/db.pid" "$dir/nats.pid")
  "$OUTBOX_TEST_SERVERS" start "$dir" >/dev/null
  . "$dir/env"
}

# pnats_config DIR PORT [extra config text]: writes DIR/nats.conf for one
# nats-server with JetStream in DIR/store, listening on 127.0.0.1:PORT.
pnats_config() {
  local dir=$1 port=$2 extra=${3:-}
  mkdir -p "$dir/store"
  cat >"$dir/nats.conf" <<CONF
listen: 127.0.0.1:$port
jetstream { store_dir: "$dir/store" }
$extra
CONF
}

# pnats_start DIR: starts nats-server -c DIR/nats.conf in the background and
# waits for its port; the pid is in DIR/nats.pid (and PNATS_PID).
pnats_start() {
  local dir=$1 port i
  port=$(sed -n 's/^listen: 127.0.0.1:\([0-9]*\)$/\1/p' "$dir/nats.conf")
  : >"$dir/nats.log"
  "$NATS_SERVER_BIN" -c "$dir/nats.conf" -l "$dir/nats.log" -P "$dir/nats.pid" >/dev/null 2>&1 &
  PNATS_PID=$!
  PRIVATE_PIDFILES+=("$dir/nats.pid")
  echo "$PNATS_PID" >"$dir/nats.pid"
  for i in $(seq 1 200); do
    grep -q "Server is ready" "$dir/nats.log" 2>/dev/null && break
    kill -0 "$PNATS_PID" 2>/dev/null || { tail -20 "$dir/nats.log" >&2; fail "nats-server in $dir exited"; }
    sleep 0.1
  done
  grep -q "Server is ready" "$dir/nats.log" ||
    { tail -20 "$dir/nats.log" >&2; fail "nats-server in $dir did not get ready on port $port"; }
  sleep 0.3 # JetStream answers a moment after the port opens
}

# pnats_alone DIR [extra config text]: one private nats-server with
# JetStream on a free port, started, and this test's OUTBOX_TEST_NATS_URL
# pointed at it (its pid in PNATS_PID).
pnats_alone() {
  local dir=$1 port
  port=$(free_port)
  pnats_config "$dir" "$port" "${2:-}"
  pnats_start "$dir"
  OUTBOX_TEST_NATS_URL="nats://127.0.0.1:$port"
}

# producer_start DB SIZE FLAG: inserts 40 rows of SIZE bytes every 0.1 s in
# the background until the file FLAG exists (its pid in PROD_PID);
# producer_stop FLAG ends it and waits for its last insert.
producer_start() {
  local db=$1 size=$2 flag=$3
  ( while [ ! -f "$flag" ]; do seed "$db" 40 "$size"; sleep 0.1; done ) &
  PROD_PID=$!
}
producer_stop() { touch "$1"; wait "$PROD_PID"; PROD_PID=; }

# pnats_stop DIR: stops the nats-server of DIR (SIGKILL: it may be frozen).
pnats_stop() {
  local f=$1/nats.pid pid i
  [ -f "$f" ] || return 0
  pid=$(cat "$f")
  kill -CONT "$pid" 2>/dev/null || true
  kill -TERM "$pid" 2>/dev/null || true
  for i in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
  for i in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  rm -f "$f"
}

# private_cleanup: resumes and stops every private server; for EXIT traps.
private_cleanup() {
  local f pid d
  for f in "${PRIVATE_PIDFILES[@]}"; do
    [ -f "$f" ] || continue
    pid=$(cat "$f" 2>/dev/null || true)
    [ -n "$pid" ] || continue
    kill -CONT "$pid" 2>/dev/null || true
    kill -KILL "$pid" 2>/dev/null || true
  done
  for d in "${PRIVATE_DIRS[@]}"; do
    "$OUTBOX_TEST_SERVERS" stop "$d" >/dev/null 2>&1 || true
  done
}

# wait_exit PID SECONDS: waits for a background child of this shell (call it
# directly, not in $(...)); sets WAIT_RC to its exit status and WAITED_MS to
# the time waited. If it still runs after SECONDS it is killed (SIGKILL) and
# WAIT_RC is "timeout".
wait_exit() {
  local pid=$1 secs=$2 t0
  t0=$(date +%s%N)
  WAIT_RC=0
  while kill -0 "$pid" 2>/dev/null; do
    if [ $((($(date +%s%N) - t0) / 1000000)) -ge $((secs * 1000)) ]; then
      kill -KILL "$pid" 2>/dev/null || true
      wait "$pid" 2>/dev/null || true
      WAITED_MS=$((($(date +%s%N) - t0) / 1000000))
      WAIT_RC=timeout
      return 0
    fi
    sleep 0.05
  done
  wait "$pid" || WAIT_RC=$?
  WAITED_MS=$((($(date +%s%N) - t0) / 1000000))
}

# wait_sql DB SQL WANT SECONDS: polls until the query prints WANT; 0 if it
# did, 1 on timeout.
wait_sql() {
  local db=$1 q=$2 want=$3 secs=$4 i
  for i in $(seq 1 $((secs * 5))); do
    [ "$(sql "$db" "$q")" = "$want" ] && return 0
    sleep 0.2
  done
  return 1
}

# pnats_cluster DIR: a private three-node JetStream cluster (nodes n0..n2 in
# DIR/n0..n2, pid files DIR/nI/nats.pid); sets CLUSTER_PORTS (client ports)
# and CLUSTER_URLS (comma-separated), and waits until it can place an R3
# stream.
pnats_cluster() {
  local dir=$1 try
  for try in 1 2 3; do
    pnats_cluster_try "$dir" && return 0
    echo "the cluster did not start (a port taken meanwhile?); again with other ports" >&2
    for i in 0 1 2; do pnats_stop "$dir/n$i"; done
  done
  fail "the three-node cluster did not start"
}

pnats_cluster_try() {
  local dir=$1 i cports=() routes
  CLUSTER_PORTS=()
  for i in 0 1 2; do CLUSTER_PORTS+=($(free_port)); cports+=($(free_port)); done
  routes="nats-route://127.0.0.1:${cports[0]}, nats-route://127.0.0.1:${cports[1]}, nats-route://127.0.0.1:${cports[2]}"
  for i in 0 1 2; do
    rm -rf "$dir/n$i"
    pnats_config "$dir/n$i" "${CLUSTER_PORTS[$i]}" "server_name: n$i
cluster { name: c12, listen: 127.0.0.1:${cports[$i]}, routes: [$routes] }"
    (pnats_start "$dir/n$i") || return 1
    PRIVATE_PIDFILES+=("$dir/n$i/nats.pid")
  done
  CLUSTER_URLS="nats://127.0.0.1:${CLUSTER_PORTS[0]},nats://127.0.0.1:${CLUSTER_PORTS[1]},nats://127.0.0.1:${CLUSTER_PORTS[2]}"
  for i in $(seq 1 60); do
    "$OUTBOX_TEST_STREAMCHECK" --nats "$CLUSTER_URLS" --stream PROBE --create 'probe.>' --replicas 3 \
      2>/dev/null && break
    sleep 0.5
  done
  "$OUTBOX_TEST_STREAMCHECK" --nats "$CLUSTER_URLS" --stream PROBE --delete
}
