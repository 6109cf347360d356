#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Throwaway MariaDB and NATS (JetStream) servers on loopback, in one folder.
#
#   scripts/servers.sh start DIR       start both; writes DIR/env (shell exports)
#   scripts/servers.sh stop DIR        stop both and remove DIR
#   scripts/servers.sh restart-db DIR  restart mariadbd on the same port and data
#   scripts/servers.sh restart-nats DIR restart nats-server on the same port and store
#   scripts/servers.sh kill-db DIR | start-db DIR | kill-nats DIR | start-nats DIR
#   scripts/servers.sh start-secure DIR  TLS servers (see below); needs NKEYGEN=path
#   scripts/servers.sh start-cluster DIR three nats-servers -js as one cluster
#   scripts/servers.sh kill-node DIR NAME | start-node DIR NAME   (n1, n2, n3)
#   scripts/servers.sh start-galera DIR  three mariadbd as one Galera cluster
#   scripts/servers.sh kill-gnode DIR N | stop-gnode DIR N | start-gnode DIR N
#   scripts/servers.sh freeze-gnode DIR N | thaw-gnode DIR N   (N: 1, 2, 3)
#
# DIR/env exports:
#   OUTBOX_TEST_DB_HOST, OUTBOX_TEST_DB_PORT, OUTBOX_TEST_DB_SOCKET,
#   OUTBOX_TEST_DB_USER, OUTBOX_TEST_DB_PASSWORD,
#   OUTBOX_TEST_DB_URL (without a database name: append one),
#   OUTBOX_TEST_NATS_URL, OUTBOX_TEST_DIR
#
# start-secure writes DIR/env with OUTBOX_TEST_SECURE_*: a throwaway CA and a
# server certificate for 127.0.0.1 and localhost (..._CA, and ..._WRONG_CA
# from a second CA), a mariadbd with --require-secure-transport=ON and a user
# created REQUIRE SSL (..._DB_URL without a database), and two nats-servers
# with TLS and JetStream: one admits an NKey user (..._NKEY_URL, ..._NKEY_SEED
# file) and the user "relay" with a password (..._PASSWORD_FILE), the other a
# token (..._TOKEN_URL, ..._TOKEN_FILE). A client certificate from the same CA
# (..._CLIENT_CERT, ..._CLIENT_KEY) lets the user outbox_x509, created
# REQUIRE X509, connect to the database. A third nats-server presents a
# certificate from the right CA that names another host (..._OTHER_NAME_URL).
# start-cluster writes DIR/env with OUTBOX_TEST_CLUSTER_URL (three URLs) and
# OUTBOX_TEST_CLUSTER_DIR.
# start-galera writes DIR/env with OUTBOX_TEST_GALERA_DIR and, for N = 1..3,
# OUTBOX_TEST_GALERA_PORTN, ..._SOCKETN (root's way in) and ..._URLN (user
# outbox, without a database); OUTBOX_TEST_GALERA_ADDRESSES lists the three
# host:port. Needs galera-4 and rsync, and a mysql user to run the nodes as
# (OUTBOX_GALERA_USER); it returns once the three are Synced.
#
# Ports: every server takes a free port at random from OUTBOX_PORT_RANGE
# (LOW-HIGH, default 10000-29999: below the kernel's ephemeral range, so no
# outgoing connection holds one when a server binds it), and a server whose
# port was taken meanwhile is started again on another (the cluster as a
# whole, with three new pairs). Set it to keep the servers out of a range
# other software uses, or to give parallel runs ranges of their own.
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

# A connect that gets no answer within 2 s counts as in use: a listener that
# never accepts fills its queue, and a further connect to it would wait for
# the kernel's SYN retries (about two minutes).
port_in_use() {
  local rc=0
  timeout 2 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1"' _ "$1" 2>/dev/null || rc=$?
  [ "$rc" = 0 ] || [ "$rc" = 124 ]
}

# The range of OUTBOX_PORT_RANGE, checked: sets port_lo and port_hi.
port_range() {
  local r=${OUTBOX_PORT_RANGE:-10000-29999}
  [[ "$r" =~ ^([0-9]+)-([0-9]+)$ ]] || die "OUTBOX_PORT_RANGE: '$r' is not LOW-HIGH"
  port_lo=$((10#${BASH_REMATCH[1]})) port_hi=$((10#${BASH_REMATCH[2]}))
  [ "$port_lo" -ge 1024 ] && [ "$port_hi" -le 65535 ] && [ "$port_lo" -le "$port_hi" ] ||
    die "OUTBOX_PORT_RANGE: '$r' must lie within 1024-65535, LOW <= HIGH"
}

free_port() { # [ports already chosen, to leave out]
  local p i port_lo port_hi
  port_range
  for i in $(seq 1 200); do
    p=$(( (RANDOM * 32768 + RANDOM) % (port_hi - port_lo + 1) + port_lo ))
    [[ " $* " == *" $p "* ]] && continue
    if ! port_in_use "$p"; then echo "$p"; return 0; fi
  done
  die "no free port found in $port_lo-$port_hi (OUTBOX_PORT_RANGE)"
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

# --- TLS servers ---------------------------------------------------------

make_certs() { # dir
  local d=$1
  mkdir -p "$d"
  ( cd "$d"
    for ca in ca wrong-ca; do
      openssl req -x509 -newkey rsa:2048 -nodes -keyout $ca.key -out $ca.pem -days 2 \
        -subj "/CN=outbox test $ca" 2>/dev/null
    done
    openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr \
      -subj "/CN=localhost" 2>/dev/null
    printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' >server.ext
    openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial \
      -out server.pem -days 2 -extfile server.ext 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -keyout other.key -out other.csr \
      -subj "/CN=other.example" 2>/dev/null
    printf 'subjectAltName=DNS:other.example\n' >other.ext
    openssl x509 -req -in other.csr -CA ca.pem -CAkey ca.key -CAcreateserial \
      -out other.pem -days 2 -extfile other.ext 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -keyout client.key -out client.csr \
      -subj "/CN=outbox relay" 2>/dev/null
    openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial \
      -out client.pem -days 2 2>/dev/null
    chmod 600 ./*.key )
}

start_secure_db() { # dir port
  local dir=$1 port=$2
  "$MARIADBD" --no-defaults $(user_args) --datadir="$dir/db" --socket="$dir/db.sock" \
    --port="$port" --bind-address=127.0.0.1 --pid-file="$dir/db.pid" \
    --log-error="$dir/db.err" --skip-name-resolve --max-connections=200 \
    --ssl-ca="$dir/tls/ca.pem" --ssl-cert="$dir/tls/server.pem" --ssl-key="$dir/tls/server.key" \
    --require-secure-transport=ON >/dev/null 2>&1 &
  wait_started $! 60 "$CLIENT" --no-defaults -uroot -S "$dir/db.sock" -e 'select 1'
}

# nats_conf dir name port auth: a config with TLS, JetStream and an
# authorization block.
nats_conf() {
  local dir=$1 name=$2 port=$3 auth=$4
  cat >"$dir/$name.conf" <<EOF
listen: 127.0.0.1:$port
server_name: $name
jetstream { store_dir: "$dir/$name" }
tls { cert_file: "$dir/tls/server.pem", key_file: "$dir/tls/server.key", ca_file: "$dir/tls/ca.pem" }
authorization { $auth }
EOF
}

start_conf_nats() { # dir name port
  local dir=$1 name=$2 port=$3
  "$NATS_SERVER" -c "$dir/$name.conf" -l "$dir/$name.log" -P "$dir/$name.pid" >/dev/null 2>&1 &
  wait_started $! 20 port_in_use "$port" || return 1
  sleep 0.3
}

start_secure() { # dir
  local dir=$1 dbport kport tport oport pub token password
  [ -n "${NKEYGEN:-}" ] && [ -x "$NKEYGEN" ] || die "start-secure needs NKEYGEN=path/to/nkeygen"
  mkdir -p "$dir/db"
  make_certs "$dir/tls"
  "$INSTALL_DB" --no-defaults $(user_args) --datadir="$dir/db" \
    --auth-root-authentication-method=normal --skip-test-db >"$dir/install.log" 2>&1 ||
    { tail -20 "$dir/install.log" >&2; die "mariadb-install-db failed"; }
  dbport=$(start_on_free_port start_secure_db "$dir" "$dir/db.err")
  "$CLIENT" --no-defaults -uroot -S "$dir/db.sock" -e "
    CREATE USER 'outbox'@'127.0.0.1' IDENTIFIED BY 'outbox' REQUIRE SSL;
    CREATE USER 'outbox'@'localhost' IDENTIFIED BY 'outbox' REQUIRE SSL;
    GRANT ALL PRIVILEGES ON *.* TO 'outbox'@'127.0.0.1';
    GRANT ALL PRIVILEGES ON *.* TO 'outbox'@'localhost';
    CREATE USER 'outbox_x509'@'127.0.0.1' IDENTIFIED BY 'outbox' REQUIRE X509;
    GRANT ALL PRIVILEGES ON *.* TO 'outbox_x509'@'127.0.0.1';
    SET GLOBAL log_bin_trust_function_creators = 1;"
  pub=$("$NKEYGEN" "$dir/tls/user.nk")
  token=$(openssl rand -hex 24)
  printf '%s\n' "$token" >"$dir/tls/token"
  chmod 600 "$dir/tls/token"
  password=$(openssl rand -hex 16)
  printf '%s\n' "$password" >"$dir/tls/password"
  chmod 600 "$dir/tls/password"
  kport=$(free_port)
  nats_conf "$dir" nkey "$kport" "users = [ { nkey: $pub }, { user: relay, password: \"$password\" } ]"
  start_conf_nats "$dir" nkey "$kport" ||
    { tail -20 "$dir/nkey.log" >&2; die "nats-server (nkey) did not start"; }
  tport=$(free_port); nats_conf "$dir" token "$tport" "token: \"$token\""
  start_conf_nats "$dir" token "$tport" ||
    { tail -20 "$dir/token.log" >&2; die "nats-server (token) did not start"; }
  # A server whose certificate (from the right CA) names another host.
  oport=$(free_port)
  cat >"$dir/other.conf" <<EOF
listen: 127.0.0.1:$oport
tls { cert_file: "$dir/tls/other.pem", key_file: "$dir/tls/other.key" }
EOF
  start_conf_nats "$dir" other "$oport" ||
    { tail -20 "$dir/other.log" >&2; die "nats-server (other) did not start"; }
  cat >"$dir/env" <<EOF
export OUTBOX_TEST_SECURE_DIR='$dir'
export OUTBOX_TEST_SECURE_DB_PORT=$dbport
export OUTBOX_TEST_SECURE_DB_SOCKET='$dir/db.sock'
export OUTBOX_TEST_SECURE_DB_URL='mysql://outbox:outbox@127.0.0.1:$dbport/'
export OUTBOX_TEST_SECURE_CA='$dir/tls/ca.pem'
export OUTBOX_TEST_SECURE_WRONG_CA='$dir/tls/wrong-ca.pem'
export OUTBOX_TEST_SECURE_NKEY_URL='tls://127.0.0.1:$kport'
export OUTBOX_TEST_SECURE_NKEY_SEED='$dir/tls/user.nk'
export OUTBOX_TEST_SECURE_TOKEN_URL='tls://127.0.0.1:$tport'
export OUTBOX_TEST_SECURE_TOKEN_FILE='$dir/tls/token'
export OUTBOX_TEST_SECURE_PASSWORD_FILE='$dir/tls/password'
export OUTBOX_TEST_SECURE_OTHER_NAME_URL='tls://127.0.0.1:$oport'
export OUTBOX_TEST_SECURE_CLIENT_CERT='$dir/tls/client.pem'
export OUTBOX_TEST_SECURE_CLIENT_KEY='$dir/tls/client.key'
EOF
}

# --- a three-node JetStream cluster ----------------------------------------

start_node() { # dir name
  local dir=$1 name=$2 cport rport routes=() n
  . "$dir/ports"
  eval "cport=\$client_$name rport=\$route_$name"
  for n in n1 n2 n3; do
    [ "$n" = "$name" ] && continue
    eval "routes+=(nats://127.0.0.1:\$route_$n)"
  done
  "$NATS_SERVER" -js -sd "$dir/$name" -p "$cport" -a 127.0.0.1 -n "$name" \
    --cluster_name outbox-test --cluster "nats://127.0.0.1:$rport" \
    --routes "$(IFS=,; echo "${routes[*]}")" -l "$dir/$name.log" -P "$dir/$name.pid" \
    >/dev/null 2>&1 &
  wait_started $! 20 port_in_use "$cport"
}

# Three nodes on six fresh ports; 1 (the started nodes stopped again) when one
# does not start, as when another process took its port meanwhile.
# CLUSTER_AVOID: the ports of nodes that failed to start, not tried again.
CLUSTER_AVOID=()
start_cluster_once() { # dir
  local dir=$1 n c r taken=("${CLUSTER_AVOID[@]}") failed=()
  : >"$dir/ports"
  for n in n1 n2 n3; do
    c=$(free_port "${taken[@]}") && taken+=("$c") || return 1
    r=$(free_port "${taken[@]}") && taken+=("$r") || return 1
    echo "client_$n=$c route_$n=$r" >>"$dir/ports"
    rm -rf "${dir:?}/$n" # no JetStream state of an earlier try
  done
  for n in n1 n2 n3; do start_node "$dir" $n || { failed+=($n); break; }; done
  # A node whose route port was taken opens its client port, then exits.
  if [ ${#failed[@]} = 0 ]; then
    sleep 0.5
    for n in n1 n2 n3; do kill -0 "$(cat "$dir/$n.pid" 2>/dev/null)" 2>/dev/null || failed+=($n); done
  fi
  [ ${#failed[@]} = 0 ] && return 0
  . "$dir/ports"
  for n in "${failed[@]}"; do eval "CLUSTER_AVOID+=(\$client_$n \$route_$n)"; done
  for n in n1 n2 n3; do stop_pid "$dir/$n.pid" KILL; done
  return 1
}

start_cluster() { # dir
  local dir=$1 n urls=() i port_lo port_hi
  port_range # a bad OUTBOX_PORT_RANGE stops here, not in a subshell
  for i in 1 2 3 4 5; do
    start_cluster_once "$dir" && break
    [ "$i" = 5 ] && die "the three-node cluster did not start (5 tries)"
    echo "servers.sh: a cluster node did not start (a port taken?); again on other ports" >&2
  done
  . "$dir/ports"
  for n in n1 n2 n3; do eval "urls+=(nats://127.0.0.1:\$client_$n)"; done
  cat >"$dir/env" <<EOF
export OUTBOX_TEST_CLUSTER_DIR='$dir'
export OUTBOX_TEST_CLUSTER_URL='$(IFS=,; echo "${urls[*]}")'
EOF
}

# --- a three-node Galera cluster ---------------------------------------------
# Each node g1..g3 in DIR/gN (datadir db, socket db.sock, pid db.pid, log
# db.err), four ports each (client, group communication, IST, SST) in
# DIR/gports. The nodes run as the mysql user: as root the rsync state
# transfer is refused ("Permission denied") and a joiner aborts.

GALERA_PROVIDER=${OUTBOX_GALERA_PROVIDER:-/usr/lib/galera/libgalera_smm.so}
# As root, the nodes run as mysql (OUTBOX_GALERA_USER); otherwise as the
# user who starts them.
if [ "$(id -u)" = 0 ]; then GALERA_USER=${OUTBOX_GALERA_USER:-mysql}; else GALERA_USER=$(id -un); fi

gnode_ports() { # dir n: sets gc gg gi gs (client, gcomm, IST, SST) and peers
  local dir=$1 n=$2 m list=()
  . "$dir/gports"
  eval "gc=\$client_g$n gg=\$gcomm_g$n gi=\$ist_g$n gs=\$sst_g$n"
  for m in 1 2 3; do eval "list+=(127.0.0.1:\$gcomm_g$m)"; done
  peers=$(IFS=,; echo "${list[*]}")
}

gnode_sql() { # dir n sql...
  local dir=$1 n=$2; shift 2
  "$CLIENT" --no-defaults -uroot -S "$dir/g$n/db.sock" -N -B "$@"
}

gnode_provider_options() { # dir n
  local gc gg gi gs peers
  gnode_ports "$1" "$2"
  echo "gmcast.listen_addr=tcp://127.0.0.1:$gg;ist.recv_addr=127.0.0.1:$gi;gcache.size=32M"
}

# start_gnode_bg dir n [extra mariadbd options]: launches node n in the
# background (its pid in DIR/gN/launch.pid). A later option wins, such as
# another --wsrep-provider-options.
start_gnode_bg() {
  local dir=$1 n=$2 gc gg gi gs peers; shift 2
  gnode_ports "$dir" "$n"
  "$MARIADBD" --no-defaults --user="$GALERA_USER" --datadir="$dir/g$n/db" \
    --tmpdir="$dir/g$n/tmp" --socket="$dir/g$n/db.sock" --port="$gc" --bind-address=127.0.0.1 \
    --pid-file="$dir/g$n/db.pid" --log-error="$dir/g$n/db.err" --skip-name-resolve \
    --innodb-buffer-pool-size=128M --max-connections=300 --max-allowed-packet=64M \
    --log-bin-trust-function-creators=1 --binlog-format=ROW --innodb-autoinc-lock-mode=2 \
    --wsrep-on=ON --wsrep-provider="$GALERA_PROVIDER" --wsrep-cluster-name=outbox-test \
    --wsrep-cluster-address="gcomm://$peers" --wsrep-node-name="g$n" \
    --wsrep-node-address=127.0.0.1 --wsrep-node-incoming-address="127.0.0.1:$gc" \
    --wsrep-provider-options="$(gnode_provider_options "$dir" "$n")" \
    --wsrep-sst-receive-address="127.0.0.1:$gs" --wsrep-sst-method=rsync "$@" >/dev/null 2>&1 &
  echo $! >"$dir/g$n/launch.pid"
}

# start_gnode dir n [options]: starts node n; 0 once it answers on its socket
# (after its state transfer), 1 if it exited, 2 on timeout.
start_gnode() {
  start_gnode_bg "$@"
  wait_started "$(cat "$1/g$2/launch.pid")" 120 gnode_sql "$1" "$2" -e 'select 1'
}

# gnode_synced dir n [size]: node n answers, is Synced, and sees size members.
gnode_synced() {
  local out
  out=$(gnode_sql "$1" "$2" -e "SELECT GROUP_CONCAT(VARIABLE_VALUE ORDER BY VARIABLE_NAME)
    FROM information_schema.GLOBAL_STATUS
    WHERE VARIABLE_NAME IN ('wsrep_cluster_size', 'wsrep_local_state_comment')" 2>/dev/null) ||
    return 1
  [ "$out" = "${3:-3},Synced" ]
}

# wait_synced dir seconds: every running node Synced in a cluster of those.
wait_synced() {
  local dir=$1 t=$2 i n up ok
  for i in $(seq 1 $((t * 10))); do
    up=() ok=1
    for n in 1 2 3; do [ -n "$(gnode_pid "$dir" $n)" ] && up+=("$n"); done
    for n in "${up[@]}"; do gnode_synced "$dir" "$n" "${#up[@]}" || { ok=0; break; }; done
    [ "$ok" = 1 ] && [ ${#up[@]} -gt 0 ] && return 0
    sleep 0.1
  done
  return 1
}

# The pid of node n, empty when it is not running: from its pid file, or
# from its launch before it wrote one. Never 0: `kill 0` signals the
# caller's whole process group.
gnode_pid() { # dir n
  local pid f
  for f in "$1/g$2/db.pid" "$1/g$2/launch.pid"; do
    pid=$(cat "$f" 2>/dev/null || true)
    if [[ "$pid" =~ ^[1-9][0-9]*$ ]] && kill -0 "$pid" 2>/dev/null; then echo "$pid"; return 0; fi
  done
  return 0
}

gnode_log_tail() { local n; for n in 1 2 3; do echo "== g$n" >&2; tail -15 "$1/g$n/db.err" >&2 || true; done; }

# The three datadirs are one copy of a fresh one with the users made in it,
# each with the same saved position (grastate.dat): the joiners then need no
# state transfer, which through rsync takes about a minute a node here.
galera_datadirs() { # dir
  local dir=$1 n uuid ids
  rm -rf "${dir:?}/gtemplate"
  mkdir -p "$dir/gtemplate/db" "$dir/gtemplate/tmp"
  chown -R "$GALERA_USER" "$dir/gtemplate"
  "$INSTALL_DB" --no-defaults --user="$GALERA_USER" --datadir="$dir/gtemplate/db" \
    --tmpdir="$dir/gtemplate/tmp" --auth-root-authentication-method=normal --skip-test-db \
    >"$dir/install.log" 2>&1 || { tail -20 "$dir/install.log" >&2; return 1; }
  # Bootstrap mode skips the grant tables until they are flushed in.
  printf '%s\n' "FLUSH PRIVILEGES;" \
    "CREATE USER 'outbox'@'127.0.0.1' IDENTIFIED BY 'outbox';" \
    "CREATE USER 'outbox'@'localhost' IDENTIFIED BY 'outbox';" \
    "GRANT ALL PRIVILEGES ON *.* TO 'outbox'@'127.0.0.1' WITH GRANT OPTION;" \
    "GRANT ALL PRIVILEGES ON *.* TO 'outbox'@'localhost' WITH GRANT OPTION;" |
    "$MARIADBD" --no-defaults --user="$GALERA_USER" --datadir="$dir/gtemplate/db" \
      --tmpdir="$dir/gtemplate/tmp" --bootstrap --log-error="$dir/gtemplate/boot.err" 2>/dev/null ||
    { tail -20 "$dir/gtemplate/boot.err" >&2; return 1; }
  uuid=$(cat /proc/sys/kernel/random/uuid)
  printf '# GALERA saved state\nversion: 2.1\nuuid:    %s\nseqno:   0\nsafe_to_bootstrap: 1\n' \
    "$uuid" >"$dir/gtemplate/db/grastate.dat"
  chown "$GALERA_USER" "$dir/gtemplate/db/grastate.dat"
  ids=()
  for n in 1 2 3; do ids+=("$(cat /proc/sys/kernel/random/uuid)"); done
  for n in 1 2 3; do
    rm -rf "${dir:?}/g$n"
    cp -a "$dir/gtemplate" "$dir/g$n"
    { printf 'my_uuid: %s\n#vwbeg\nview_id: 3 %s 3\nbootstrap: 0\n' "${ids[n-1]}" "${ids[0]}"
      printf 'member: %s 0\n' "${ids[@]}"
      printf '#vwend\n'; } >"$dir/g$n/db/gvwstate.dat"
    chown "$GALERA_USER" "$dir/g$n/db/gvwstate.dat"
  done
  rm -rf "${dir:?}/gtemplate"
}

start_galera_once() { # dir
  local dir=$1 n taken=() p k
  : >"$dir/gports"
  for n in 1 2 3; do
    for k in client gcomm ist sst; do
      p=$(free_port "${taken[@]}") && taken+=("$p") || return 1
      echo "${k}_g$n=$p" >>"$dir/gports"
    done
  done
  galera_datadirs "$dir" || die "the Galera datadirs were not made"
  # The three come up at once and find the primary component they were in
  # written down (gvwstate.dat, as after a power loss of the whole cluster):
  # they form it again among themselves, and at one saved position none
  # needs a state transfer. About 10 s, where a bootstrap and two joins
  # through rsync take about 3 minutes here.
  for n in 1 2 3; do start_gnode_bg "$dir" $n; done
  for n in 1 2 3; do
    wait_started "$(cat "$dir/g$n/launch.pid")" 90 gnode_sql "$dir" $n -e 'select 1' || return 1
  done
  wait_synced "$dir" 60
}

stop_galera() { # dir: every node stopped, all at once
  local dir=$1 n
  local pid
  for n in 1 2 3; do
    pid=$(gnode_pid "$dir" $n)
    # A frozen node (freeze-gnode) must run to stop.
    [ -z "$pid" ] || { kill -CONT "$pid" 2>/dev/null; kill -TERM "$pid" 2>/dev/null; } || true
  done
  for n in 1 2 3; do stop_pid "$dir/g$n/db.pid"; stop_pid "$dir/g$n/launch.pid"; done
}

start_galera() { # dir
  local dir=$1 i n urls=() port_lo port_hi
  port_range
  [ -r "$GALERA_PROVIDER" ] || die "no Galera provider at $GALERA_PROVIDER (apt-get install galera-4 rsync)"
  command -v rsync >/dev/null || die "rsync not found (apt-get install rsync)"
  id "$GALERA_USER" >/dev/null 2>&1 || die "no user '$GALERA_USER' to run the nodes as (OUTBOX_GALERA_USER)"
  chmod 755 "$dir" # the nodes' user walks into it
  for i in 1 2 3; do
    start_galera_once "$dir" && break
    gnode_log_tail "$dir"
    stop_galera "$dir"
    [ "$i" = 3 ] && die "the Galera cluster did not start (3 tries)"
    echo "servers.sh: a Galera node did not start or sync; again on other ports" >&2
  done
  . "$dir/gports"
  {
    echo "export OUTBOX_TEST_GALERA_DIR='$dir'"
    for n in 1 2 3; do
      eval "p=\$client_g$n"
      urls+=("127.0.0.1:$p")
      echo "export OUTBOX_TEST_GALERA_PORT$n=$p"
      echo "export OUTBOX_TEST_GALERA_SOCKET$n='$dir/g$n/db.sock'"
      echo "export OUTBOX_TEST_GALERA_URL$n='mysql://outbox:outbox@127.0.0.1:$p/'"
    done
    echo "export OUTBOX_TEST_GALERA_ADDRESSES='$(IFS=,; echo "${urls[*]}")'"
  } >"$dir/env"
}

cmd=${1:-}
dir=${2:-}
[ -n "$cmd" ] && [ -n "$dir" ] || die "usage: servers.sh start|stop|restart-db|restart-nats|kill-db|start-db|kill-nats|start-nats DIR"

case "$cmd" in
start)
  port_range
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
start-secure)
  mkdir -p "$dir"; dir=$(cd "$dir" && pwd)
  start_secure "$dir"; echo "$dir" ;;
start-cluster)
  mkdir -p "$dir"; dir=$(cd "$dir" && pwd)
  start_cluster "$dir"; echo "$dir" ;;
kill-node)
  stop_pid "$dir/${3:?node name}.pid" KILL ;;
start-galera)
  mkdir -p "$dir"; dir=$(cd "$dir" && pwd)
  start_galera "$dir"; echo "$dir" ;;
kill-gnode|stop-gnode)
  sig=TERM; [ "$cmd" = kill-gnode ] && sig=KILL
  stop_pid "$dir/g${3:?node number}/db.pid" $sig
  stop_pid "$dir/g$3/launch.pid" $sig ;;
start-gnode)
  # A node that left (killed or stopped) joins again, by a state transfer.
  start_gnode "$dir" "${3:?node number}" || die "Galera node g$3 did not start"
  wait_synced "$dir" 60 || die "Galera node g$3 did not reach Synced" ;;
freeze-gnode|thaw-gnode)
  pid=$(gnode_pid "$dir" "${3:?node number}")
  [ -n "$pid" ] || die "Galera node g$3 is not running"
  if [ "$cmd" = freeze-gnode ]; then kill -STOP "$pid"; else kill -CONT "$pid"; fi ;;
start-node)
  start_node "$dir" "${3:?node name}" || die "nats-server $3 did not start" ;;
stop)
  [ -d "$dir" ] || exit 0
  for f in "$dir"/*.pid; do
    case "$f" in */db.pid|*/nats.pid) ;; *) stop_pid "$f" ;; esac
  done
  [ -f "$dir/gports" ] && stop_galera "$dir"
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
