#!/usr/bin/env bash
# Throwaway MariaDB and NATS (JetStream) servers on loopback, in one folder.
#
#   scripts/servers.sh start DIR       start both; writes DIR/env (shell exports)
#   scripts/servers.sh stop DIR        stop both and remove DIR
#   scripts/servers.sh restart-db DIR  restart mariadbd on the same port and data
#   scripts/servers.sh restart-nats DIR restart nats-server on the same port and store
#   scripts/servers.sh kill-db DIR | start-db DIR | kill-nats DIR | start-nats DIR
#
# DIR/env exports:
#   OUTBOX_TEST_DB_HOST, OUTBOX_TEST_DB_PORT, OUTBOX_TEST_DB_SOCKET,
#   OUTBOX_TEST_DB_USER, OUTBOX_TEST_DB_PASSWORD,
#   OUTBOX_TEST_DB_URL (without a database name: append one),
#   OUTBOX_TEST_NATS_URL, OUTBOX_TEST_DIR
set -euo pipefail

die() { echo "servers.sh: $*" >&2; exit 1; }

find_bin() {
  for n in "$@"; do
    if command -v "$n" >/dev/null 2>&1; then command -v "$n"; return 0; fi
    for d in /usr/sbin /usr/local/sbin /usr/bin; do
      if [ -x "$d/$n" ]; then echo "$d/$n"; return 0; fi
    done
  done
  return 1
}

MARIADBD=$(find_bin mariadbd mysqld) || die "mariadbd not found (apt-get install mariadb-server)"
INSTALL_DB=$(find_bin mariadb-install-db mysql_install_db) || die "mariadb-install-db not found"
CLIENT=$(find_bin mariadb mysql) || die "the mariadb client is not found"
NATS_SERVER=$(find_bin nats-server) || die "nats-server not found (apt-get install nats-server)"

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

free_port() {
  local p i
  for i in $(seq 1 200); do
    p=$(( (RANDOM * 32768 + RANDOM) % 30000 + 20000 ))
    if ! port_in_use "$p"; then echo "$p"; return 0; fi
  done
  die "no free port found"
}

user_args() { if [ "$(id -u)" = 0 ]; then echo "--user=root"; fi; }

# Waits for a server started in the background: 0 once `check` succeeds, 1 as
# soon as the process has exited (a port taken meanwhile, say), 2 on timeout.
wait_started() { # pid seconds check...
  local pid=$1 t=$2 i; shift 2
  for i in $(seq 1 $((t * 10))); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    kill -0 "$pid" 2>/dev/null || return 1
    sleep 0.1
  done
  return 2
}

start_db() { # dir port
  local dir=$1 port=$2
  # Default durability, so that the figures resemble production. Only the
  # buffer pool is raised above the packaged default.
  # A temporary folder of its own: servers of parallel test runs share /tmp.
  mkdir -p "$dir/tmp"
  "$MARIADBD" --no-defaults $(user_args) --datadir="$dir/db" --tmpdir="$dir/tmp" --socket="$dir/db.sock" \
    --port="$port" --bind-address=127.0.0.1 --pid-file="$dir/db.pid" \
    --log-error="$dir/db.err" --skip-name-resolve --innodb-buffer-pool-size=256M \
    --max-connections=500 --max-allowed-packet=64M >/dev/null 2>&1 &
  wait_started $! 60 "$CLIENT" --no-defaults -uroot -S "$dir/db.sock" -e 'select 1'
}

start_nats() { # dir port
  local dir=$1 port=$2
  "$NATS_SERVER" -js -sd "$dir/nats" -p "$port" -a 127.0.0.1 -l "$dir/nats.log" \
    -P "$dir/nats.pid" >/dev/null 2>&1 &
  wait_started $! 20 port_in_use "$port" || return 1
  # JetStream answers a moment after the port opens.
  sleep 0.3
}

# Starts a server on a fresh free port, trying another port if the first one
# was taken in the meantime. Prints the port.
start_on_free_port() { # start_db|start_nats dir log
  local fn=$1 dir=$2 log=$3 port i
  for i in 1 2 3 4 5; do
    port=$(free_port)
    if "$fn" "$dir" "$port"; then echo "$port"; return 0; fi
  done
  tail -20 "$log" >&2
  die "$fn: the server did not start"
}

stop_pid() { # pidfile, signal
  local f=$1 sig=${2:-TERM} pid i
  [ -f "$f" ] || return 0
  pid=$(cat "$f" 2>/dev/null || true)
  [ -n "$pid" ] || return 0
  kill -"$sig" "$pid" 2>/dev/null || true
  for i in $(seq 1 300); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
  rm -f "$f"
}

cmd=${1:-}
dir=${2:-}
[ -n "$cmd" ] && [ -n "$dir" ] || die "usage: servers.sh start|stop|restart-db|restart-nats|kill-db|start-db|kill-nats|start-nats DIR"

case "$cmd" in
start)
  mkdir -p "$dir/db" "$dir/nats" "$dir/tmp"
  dir=$(cd "$dir" && pwd)
  "$INSTALL_DB" --no-defaults $(user_args) --datadir="$dir/db" --tmpdir="$dir/tmp" \
    --auth-root-authentication-method=normal --skip-test-db >"$dir/install.log" 2>&1 ||
    { tail -20 "$dir/install.log" >&2; die "mariadb-install-db failed"; }
  dbport=$(start_on_free_port start_db "$dir" "$dir/db.err")
  "$CLIENT" --no-defaults -uroot -S "$dir/db.sock" -e "
    CREATE USER IF NOT EXISTS 'outbox'@'127.0.0.1' IDENTIFIED BY 'outbox';
    CREATE USER IF NOT EXISTS 'outbox'@'localhost' IDENTIFIED BY 'outbox';
    GRANT ALL PRIVILEGES ON *.* TO 'outbox'@'127.0.0.1' WITH GRANT OPTION;
    GRANT ALL PRIVILEGES ON *.* TO 'outbox'@'localhost' WITH GRANT OPTION;
    SET GLOBAL log_bin_trust_function_creators = 1;"
  natsport=$(start_on_free_port start_nats "$dir" "$dir/nats.log")
  cat >"$dir/env" <<EOF
export OUTBOX_TEST_DIR='$dir'
export OUTBOX_TEST_DB_HOST=127.0.0.1
export OUTBOX_TEST_DB_PORT=$dbport
export OUTBOX_TEST_DB_SOCKET='$dir/db.sock'
export OUTBOX_TEST_DB_USER=outbox
export OUTBOX_TEST_DB_PASSWORD=outbox
export OUTBOX_TEST_DB_URL='mysql://outbox:outbox@127.0.0.1:$dbport/'
export OUTBOX_TEST_NATS_PORT=$natsport
export OUTBOX_TEST_NATS_URL='nats://127.0.0.1:$natsport'
export OUTBOX_TEST_MARIADB_CLIENT='$CLIENT'
EOF
  echo "$dir"
  ;;
stop)
  [ -d "$dir" ] || exit 0
  stop_pid "$dir/nats.pid"
  stop_pid "$dir/db.pid"
  case "$dir" in
    /tmp/*|"${TMPDIR:-/nonexistent}"/*) rm -rf "$dir" ;;
    *) echo "servers.sh: leaving $dir in place (not under a temporary folder)" >&2 ;;
  esac
  ;;
kill-db)
  stop_pid "$dir/db.pid" KILL ;;
start-db)
  . "$dir/env"; start_db "$dir" "$OUTBOX_TEST_DB_PORT" || die "mariadbd did not start" ;;
restart-db)
  . "$dir/env"; stop_pid "$dir/db.pid"
  start_db "$dir" "$OUTBOX_TEST_DB_PORT" || die "mariadbd did not start" ;;
kill-nats)
  stop_pid "$dir/nats.pid" KILL ;;
start-nats)
  . "$dir/env"; start_nats "$dir" "$OUTBOX_TEST_NATS_PORT" || die "nats-server did not start" ;;
restart-nats)
  . "$dir/env"; stop_pid "$dir/nats.pid"
  start_nats "$dir" "$OUTBOX_TEST_NATS_PORT" || die "nats-server did not start" ;;
*)
  die "unknown command '$cmd'" ;;
esac
