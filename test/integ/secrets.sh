# SPDX-License-Identifier: Apache-2.0
# No credential ever reaches a log line or an error message. The relay and
# the one-shot commands run with secrets in every place they accept them
# (the URLs, --db-password, the password and token files, their OUTBOX_*
# variables), through success and through every error path reachable here
# (bad URLs, wrong passwords, unreachable servers, misused files); then all
# their output is searched for the secrets and for fragments of them.
# Passwords hold '/', '@', ':', '?' and ',' as written in URLs.
. "$(dirname "$0")/../harness/lib.sh"
db=it_secrets stream=IT_SECRETS prefix=itsecrets
dbpw='Db/S3cr@t:pw?x'
natspw='Nats/P@ss:w0,rd'
token='T0kenS3cret'
wrong='Wr0ngS3cret'
fragments=("$dbpw" "$natspw" "$token" "$wrong" S3cr P@ss T0ken Wr0ng 'w0,rd')

work=$(mktemp -d)
out="$work/all.log"
cleanup() {
  for f in "$work"/nats-*.pid; do [ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null; done
  sleep 0.3
  rm -rf "$work"
}
trap cleanup EXIT
free_port() {
  local p
  while :; do
    p=$(((RANDOM * 32768 + RANDOM) % 30000 + 20000))
    (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
  done
}
nats_with() { # name authorization-block: prints the port
  local name=$1 auth=$2 port
  # A free port can be taken by a test running beside this one before the
  # server binds it: then try another.
  for _ in 1 2 3; do
    port=$(nats_try "$name" "$auth") && { echo "$port"; return; }
  done
  cat "$work/$name.log" >&2; fail "nats-server $name"
}
nats_try() {
  local name=$1 auth=$2 port
  port=$(free_port)
  cat >"$work/$name.conf" <<CONF
host: 127.0.0.1
port: $port
jetstream { store_dir: "$work/$name" }
authorization { $auth }
CONF
  nats-server -c "$work/$name.conf" -P "$work/nats-$name.pid" -l "$work/$name.log" \
    >/dev/null 2>&1 &
  local pid=$!
  for _ in $(seq 1 50); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
  (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null || { kill "$pid" 2>/dev/null; return 1; }
  # Bound, but perhaps by a neighbour: the server must say it is ready (it
  # exits when the port is taken).
  for _ in $(seq 1 100); do
    grep -q "Server is ready" "$work/$name.log" 2>/dev/null && break
    kill -0 "$pid" 2>/dev/null || return 1
    sleep 0.1
  done
  grep -q "Server is ready" "$work/$name.log" 2>/dev/null || { kill "$pid" 2>/dev/null; return 1; }
  echo "$port"
}
pwport=$(nats_with pw "user: relay, password: \"$natspw\"")
tokport=$(nats_with tok "token: \"$token\"")
deadport=$(free_port)

MDB -e "DROP USER IF EXISTS 'sec'@'127.0.0.1'; DROP USER IF EXISTS 'sec'@'localhost';
  CREATE USER 'sec'@'127.0.0.1' IDENTIFIED BY '$dbpw';
  GRANT ALL ON $db.* TO 'sec'@'127.0.0.1'"
db_fresh $db
host=127.0.0.1:$OUTBOX_TEST_DB_PORT
dburl="mysql://sec:$dbpw@$host/$db"
nouser_db="mysql://sec@$host/$db"
printf '%s\n' "$dbpw" >"$work/dbpw"
printf '%s\n' "$natspw" >"$work/natspw"
printf '%s' "$token" >"$work/token"
printf '%s\n' "$wrong" >"$work/wrong"

# run WHAT EXPECTED_STATUS command...: runs it with all output appended to
# the log (a timeout stops the runs that would retry for ever).
run() {
  local what=$1 want=$2 rc=0; shift 2
  echo "=== $what" >>"$out"
  timeout -s INT 60 "$@" >>"$out" 2>&1 || rc=$?
  if [ "$want" != any ] && [ "$rc" != "$want" ]; then
    sed -n '/^=== '"$what"'$/,$p' "$out" | tail -20 >&2
  fi
  if [ "$want" != any ]; then assert_eq "$rc" "$want" "exit status of: $what"; fi
}
R=(timeout -s INT 4 "$OUTBOX_TEST_RELAY" --stream $stream --subject-prefix $prefix --no-progress
  --log-level debug)
drained() { # what command...: a few rows, a drain, all of them processed
  seed $db 5
  run "$1" 0 "${@:2}" --drain
  assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 0')" 0 "nothing pending after: $1"
}
stream_delete $stream

# Success paths: every accepted place for every secret.
drained "passwords in both URLs" "${R[@]}" --db "$dburl" --nats "nats://relay:$natspw@127.0.0.1:$pwport"
drained "password files" "${R[@]}" --db "$nouser_db" --db-password-file "$work/dbpw" \
  --nats "nats://relay@127.0.0.1:$pwport" --nats-password-file "$work/natspw"
drained "password variables" env OUTBOX_DB_PASSWORD_FILE="$work/dbpw" \
  OUTBOX_NATS_PASSWORD_FILE="$work/natspw" "$OUTBOX_TEST_RELAY" --db "$nouser_db" \
  --nats "nats://relay@127.0.0.1:$pwport" --stream $stream --subject-prefix $prefix --no-progress \
  --log-level debug
drained "--db-password and a token in the URL" "${R[@]}" --db "$nouser_db" --db-password "$dbpw" \
  --nats "nats://$token@127.0.0.1:$tokport"
drained "OUTBOX_DB_PASSWORD and a token file" env OUTBOX_DB_PASSWORD="$dbpw" \
  OUTBOX_NATS_TOKEN_FILE="$work/token" "$OUTBOX_TEST_RELAY" --db "$nouser_db" \
  --nats "nats://127.0.0.1:$tokport" --stream $stream --subject-prefix $prefix --no-progress \
  --log-level debug
run "status with the password in the URL" 0 "$OUTBOX_TEST_RELAY" status --db "$dburl"
run "dead list with a password file" 0 "$OUTBOX_TEST_RELAY" dead list --db "$nouser_db" \
  --db-password-file "$work/dbpw"

# Runtime errors: wrong credentials, servers that are not there. The relay
# retries and logs; the timeout stops it.
run "wrong database password" any "${R[@]}" --db "mysql://sec:$wrong@$host/$db" \
  --nats "nats://relay:$natspw@127.0.0.1:$pwport"
run "wrong NATS password" any "${R[@]}" --db "$dburl" --nats "nats://relay:$wrong@127.0.0.1:$pwport"
run "wrong NATS token" any "${R[@]}" --db "$dburl" --nats "nats://$wrong@127.0.0.1:$tokport"
run "wrong token from a file" any "${R[@]}" --db "$dburl" --nats "nats://127.0.0.1:$tokport" \
  --nats-token-file "$work/wrong"
run "NATS not reachable, token" any "${R[@]}" --db "$dburl" --nats "nats://$token@127.0.0.1:$deadport"
run "NATS not reachable, password" any "${R[@]}" --db "$dburl" \
  --nats "nats://relay:$natspw@127.0.0.1:$deadport,nats://relay:$natspw@127.0.0.1:$pwport"
run "database not reachable" any "${R[@]}" --db "mysql://sec:$dbpw@127.0.0.1:$deadport/$db" \
  --nats "nats://relay:$natspw@127.0.0.1:$pwport"
run "status with a wrong password" 1 "$OUTBOX_TEST_RELAY" status --db "mysql://sec:$wrong@$host/$db"
run "cleanup, database not reachable" 1 timeout 30 "$OUTBOX_TEST_RELAY" cleanup --once \
  --db "mysql://sec:$dbpw@127.0.0.1:$deadport/$db"

# Usage errors: URLs that do not parse, files that do not fit.
for bad in "mysq://sec:$dbpw@$host/$db" "mysql://sec:$dbpw" "mysql://sec:$dbpw@$host" \
  "mysql://sec:$dbpw@$host:$wrong/$db" "mysql://sec:$dbpw%zz@$host/$db" \
  "mysql://sec:$dbpw@$host/$db?ssl=1" "$dbpw"; do
  run "bad database URL" 2 "$OUTBOX_TEST_RELAY" --db "$bad" --nats "nats://127.0.0.1:$tokport"
  run "bad database URL, status" 2 "$OUTBOX_TEST_RELAY" status --db "$bad"
done
for bad in "nats://relay:$natspw" "nats://relay:$natspw@127.0.0.1:$wrong" \
  "nats://relay:$natspw/x@127.0.0.1:$pwport/path" "nat://$token@127.0.0.1" \
  "nats://127.0.0.1,nat://$token@h" "nats://:$natspw@127.0.0.1" "$token"; do
  run "bad NATS URL" 2 "$OUTBOX_TEST_RELAY" --db "$dburl" --nats "$bad"
done
run "password file with a URL without a user" 2 "$OUTBOX_TEST_RELAY" --db "$dburl" \
  --nats "nats://127.0.0.1:$tokport" --nats-password-file "$work/natspw"
run "token file with a URL that has a password" 2 "$OUTBOX_TEST_RELAY" --db "$dburl" \
  --nats "nats://relay:$natspw@127.0.0.1:$pwport" --nats-token-file "$work/token"
run "both --db-password and its file" 2 "$OUTBOX_TEST_RELAY" --db "$dburl" \
  --db-password "$dbpw" --db-password-file "$work/dbpw" --nats "nats://127.0.0.1:$tokport"
run "a bad option after the secrets" 2 "$OUTBOX_TEST_RELAY" --db "$dburl" \
  --nats "nats://$token@127.0.0.1:$tokport" --batch many

echo "--- the output of $(grep -c '^===' "$out") runs: $(wc -l <"$out") lines"
grep -c "connected to nats://\*\*\*@\|connected to nats://relay:\*\*\*@" "$out" >/dev/null ||
  fail "the log shows the redacted NATS URLs"
for s in "${fragments[@]}"; do
  if grep -nF -- "$s" "$out" | head -5 | grep .; then
    fail "the output holds a secret or a part of one: '$s'"
  fi
done
echo "ok: no secret, and no fragment of one, in the output"
cp "$out" "$OUTBOX_TEST_DIR/secrets.log" # for reading after a run
