# SPDX-License-Identifier: Apache-2.0
# The binary's contract: usage errors exit 2 with a message that names the
# problem; --help and --version exit 0; unreachable servers at start-up are
# retried with backoff (counted, and logged); the password can come from the
# environment.
. "$(dirname "$0")/../harness/lib.sh"
bin=$OUTBOX_TEST_RELAY
work=$(mktemp -d); p=; trap 'kill -KILL $p 2>/dev/null || true; rm -rf "$work"' EXIT
db=it_cli
db_fresh $db

expect_usage() { # message-fragment args...
  local want=$1; shift
  local rc=0
  "$bin" "$@" >"$work/out" 2>"$work/err" || rc=$?
  assert_eq "$rc" 2 "exit status of: $*"
  grep -qF -- "$want" "$work/err" || { cat "$work/err"; fail "message for '$*' lacks '$want'"; }
}
good_db="${OUTBOX_TEST_DB_URL}$db"
expect_usage "unknown option '--bogus'" --bogus
expect_usage "--db is required" --nats nats://127.0.0.1:1
expect_usage "--nats is required" --db "$good_db"
expect_usage "must start with mysql://" --db postgres://u@h/d --nats "$OUTBOX_TEST_NATS_URL"
expect_usage "port" --db mysql://u@h:99999/d --nats "$OUTBOX_TEST_NATS_URL"
expect_usage "missing database name" --db mysql://u@h:3306 --nats "$OUTBOX_TEST_NATS_URL"
expect_usage "must start with nats://" --db "$good_db" --nats http://h:1
expect_usage "table name 'bad name'" --db "$good_db" --nats "$OUTBOX_TEST_NATS_URL" --table "bad name"
expect_usage "--connections: '1000' is out of range (1 to 256)" --db "$good_db" --nats "$OUTBOX_TEST_NATS_URL" --connections 1000
expect_usage "--batch: '0'" --db "$good_db" --nats "$OUTBOX_TEST_NATS_URL" --batch 0
expect_usage "not a duration" --db "$good_db" --nats "$OUTBOX_TEST_NATS_URL" --ack-timeout fast
expect_usage "subject prefix" --db "$good_db" --nats "$OUTBOX_TEST_NATS_URL" --subject-prefix "a.*"
expect_usage "wildcards" --db "$good_db" --nats "$OUTBOX_TEST_NATS_URL" --subject-prefix "a*b.c"
rc=0; OUTBOX_BATCH=lots "$bin" --db "$good_db" --nats "$OUTBOX_TEST_NATS_URL" 2>"$work/err" || rc=$?
assert_eq "$rc" 2 "exit status for a bad OUTBOX_BATCH"
grep -q "environment variable OUTBOX_BATCH: 'lots'" "$work/err" || fail "message names OUTBOX_BATCH"

# The hint to --help is said once, in text and in JSON.
for fmt in text json; do
  rc=0; "$bin" --bogus --log-format $fmt 2>"$work/err" || rc=$?
  assert_eq "$rc" 2 "exit status of --bogus ($fmt)"
  assert_eq "$(grep -o -- '--help' "$work/err" | wc -l)" 1 "hints to --help after --bogus ($fmt)"
done

# One rule for files: one that cannot be opened or read exits 1 with the
# option, the path and the cause, and no pointer to --help (the
# environment's fault); one that holds the wrong thing is a bad value, 2.
for opt in --db-password-file --nats-password-file --nats-token-file --nats-creds --nats-tls-ca \
  --db-tls-ca; do
  rc=0; "$bin" --db "$good_db" --nats "nats://u@127.0.0.1:1" $opt "$work/absent" 2>"$work/err" || rc=$?
  assert_eq "$rc" 1 "exit status with $opt naming a missing file"
  grep -qF -- "$opt: cannot read '$work/absent': No such file or directory" "$work/err" ||
    { cat "$work/err"; fail "message for $opt"; }
  ! grep -q -- "--help" "$work/err" || fail "a missing file is not bad usage ($opt)"
done
rc=0; OUTBOX_DB_PASSWORD_FILE=$work/absent "$bin" status --db "$good_db" 2>"$work/err" || rc=$?
assert_eq "$rc" 1 "exit status of status with OUTBOX_DB_PASSWORD_FILE missing"
mkdir "$work/adir"
expect_usage "must hold the secret on its first line" --db "$good_db" --nats "$OUTBOX_TEST_NATS_URL" \
  --db-password-file "$work/adir"

# `COMMAND --help` is that command's help only.
out=$("$bin" dead --help)
case "$out" in *"outbox-uvrelay dead replay"*) ;; *) fail "dead --help" ;; esac
[ "$(echo "$out" | wc -l)" -lt 30 ] || fail "dead --help prints more than dead's help"
! grep -q -- '--max-in-flight' <<<"$out" || fail "dead --help shows the relay's options"
grep -q -- '--ordered' <<<"$("$bin" schema --help)" || fail "schema --help names --ordered"
grep -qF -- 'schema [--table T] [--ordered | --leader | --cursor]' <<<"$("$bin" --help)" ||
  fail "the synopsis of schema in --help names --cursor"
# A new table for cursor mode, as the README's Cursor section makes it.
grep -q '^CREATE TABLE IF NOT EXISTS outbox_cursor ' <<<"$("$bin" schema --cursor)" ||
  fail "schema --cursor makes the cursor table"

# Config files that are not config files (issues 19 §4, 20): an unreadable
# one is exit 1 with the path and the cause (not bad usage); a directory, a
# device or a FIFO is exit 2 at once (a FIFO is never waited on); a NUL byte,
# a repeated [relay] and a number out of range name the line.
echo "batch = 5" >"$work/private.conf"; chmod 600 "$work/private.conf"; chmod 755 "$work"
if setpriv --reuid=65534 --regid=65534 --clear-groups true 2>/dev/null; then
  rc=0; setpriv --reuid=65534 --regid=65534 --clear-groups "$bin" --config "$work/private.conf" \
    --db "$good_db" --nats "$OUTBOX_TEST_NATS_URL" 2>"$work/err" || rc=$?
  assert_eq "$rc" 1 "exit status when the config file is not readable"
  grep -qF "config file $work/private.conf: Permission denied" "$work/err" || { cat "$work/err"; fail "path and cause"; }
  ! grep -q -- "--help" "$work/err" || fail "an unreadable file is not bad usage"
fi
mkfifo "$work/fifo"
for f in "$work" /dev/zero "$work/fifo"; do
  rc=0; timeout 20 "$bin" --config "$f" 2>"$work/err" || rc=$?
  assert_eq "$rc" 2 "exit status with --config $f"
  grep -qF "config file $f: not a regular file" "$work/err" || { cat "$work/err"; fail "message for $f"; }
done
printf 'batch = 5\n[relay]\n[relay]\n' >"$work/twice.conf"
expect_usage "twice.conf:3: section [relay] is repeated" --config "$work/twice.conf"
printf 'connections = 100000\n' >"$work/many.conf"
expect_usage "many.conf:1: key 'connections': '100000' is out of range (1 to 256)" --config "$work/many.conf"
printf 'batch = 5\nstream = A\0B\n' >"$work/nul.conf"
expect_usage "nul.conf:2: a NUL byte" --config "$work/nul.conf"

# The schema files in sql/ are what `schema` prints (the partitioned one is
# an example with dated bounds, so only its table part is compared).
src=$(cd "$(dirname "$0")/../.." && pwd)
# Each file's licence line is the file's own, not the command's.
nospdx() { grep -v 'SPDX-License-Identifier' "$1"; }
"$bin" schema | diff - <(nospdx "$src/sql/outbox.sql") || fail "sql/outbox.sql differs from 'schema'"
"$bin" schema --binary | diff - <(nospdx "$src/sql/outbox_binary.sql") || fail "sql/outbox_binary.sql differs"
diff <("$bin" schema --partitioned | sed '/^PARTITION BY/,$d' | grep -v '^-- ') \
  <(sed '/^PARTITION BY/,$d' "$src/sql/outbox_partitioned.sql" | grep -v '^-- ') ||
  fail "sql/outbox_partitioned.sql differs from 'schema --partitioned'"
head -1 "$src/sql/outbox_partitioned.sql" | grep -q '^-- EXAMPLE ONLY' ||
  fail "sql/outbox_partitioned.sql says that it is an example"
echo "ok: sql/ matches the schema command"

rc=0; "$bin" --help >"$work/out" || rc=$?
assert_eq "$rc" 0 "--help exit status"
grep -q "^usage: outbox-uvrelay" "$work/out" || fail "--help prints usage"
rc=0; "$bin" --version >"$work/out" || rc=$?
assert_eq "$rc" 0 "--version exit status"
# The version is the project's (CMakeLists.txt), the commit the tree's: a
# commit of this checkout (git describe: vX.Y.Z-N-gHASH or HASH, maybe
# -dirty), "unknown" only outside one.
want=$(sed -n 's/^project(outbox-uvrelay VERSION \([0-9.]*\) .*/\1/p' "$src/CMakeLists.txt")
read -r name version rest <"$work/out"
assert_eq "$name $version" "outbox-uvrelay $want" "--version's version"
commit=$(sed -n 's/^(commit \([^;]*\);.*/\1/p' <<<"$rest")
[ -n "$commit" ] || fail "--version names the commit: $rest"
if [ "$(git -C "$src" rev-parse --show-toplevel 2>/dev/null)" = "$src" ]; then
  hash=${commit%-dirty}
  hash=${hash##*-g}
  git -C "$src" cat-file -e "$hash^{commit}" || fail "--version's commit $commit is not of $src"
else
  assert_eq "$commit" unknown "--version's commit outside a git checkout"
fi
echo "ok: --version says $version, commit $commit"

# Unreachable database and NATS: logged, retried with backoff, and SIGTERM
# still ends the process cleanly.
run_for() { # seconds log args...
  local secs=$1 log=$2; shift 2
  "$bin" --no-progress "$@" 2>"$log" & local p=$!
  sleep "$secs"
  kill -TERM $p
  local rc=0; wait $p || rc=$?
  echo $rc
}
# run_until REGEX LOG args...: runs the binary until its log has a line
# matching REGEX (30 s at most), then stops it with SIGTERM; prints its exit
# status.
run_until() {
  local re=$1 log=$2 i; shift 2
  "$bin" --no-progress "$@" 2>"$log" & local p=$!
  for i in $(seq 1 600); do log_has "$log" "$re" && break; sleep 0.05; done
  kill -TERM $p
  local rc=0; wait $p || rc=$?
  echo $rc
}
# The database's failed connects are counted (failures_total, reason
# database), read from /metrics before the stop.
"$bin" --no-progress --db mysql://outbox:outbox@127.0.0.1:1/$db --nats "$OUTBOX_TEST_NATS_URL" \
  --stream IT_CLI --subject-prefix itcli --http 127.0.0.1:0 2>"$work/nodb" &
p=$!
hport=$(http_port "$work/nodb")
sleep 3
n=$(metric_value "$(metrics $hport)" 'outbox_relay_failures_total{table="outbox",reason="database"}')
kill -TERM $p
rc=0; wait $p || rc=$?
p=
assert_eq "$rc" 0 "exit status after SIGTERM with the database down"
[ "${n:-0}" -ge 4 ] || { cat "$work/nodb"; fail "database connect retries counted (${n:-no metrics})"; }
echo "ok: $n failed database connects counted in 3 s"

rc=$(run_for 3 "$work/nonats" --db "$good_db" --nats nats://127.0.0.1:1 --stream IT_CLI --subject-prefix itcli)
assert_eq "$rc" 0 "exit status after SIGTERM with NATS down"
n=$(grep -c "nats: cannot connect to" "$work/nonats" || true)
[ "$n" -ge 3 ] || { cat "$work/nonats"; fail "NATS connect retries logged ($n)"; }
echo "ok: $n NATS connect attempts logged in 3 s"

rc=$(run_until "Access denied" "$work/badpw" --db mysql://outbox:wrong@127.0.0.1:$OUTBOX_TEST_DB_PORT/$db --nats "$OUTBOX_TEST_NATS_URL" --stream IT_CLI --subject-prefix itcli)
grep -q "Access denied" "$work/badpw" || { cat "$work/badpw"; fail "a wrong password is reported"; }

# The password from the environment, not argv.
sql $db "INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload) VALUES (outbox_uuid_v7(), 'a', '1', 'b', '{}')"
rc=0
OUTBOX_DB_PASSWORD=outbox OUTBOX_STREAM=IT_CLI OUTBOX_SUBJECT_PREFIX=itcli OUTBOX_DRAIN=1 \
  "$bin" --db "mysql://outbox@127.0.0.1:$OUTBOX_TEST_DB_PORT/$db" --nats "$OUTBOX_TEST_NATS_URL" \
  --no-progress 2>"$work/envpw" || rc=$?
assert_eq "$rc" 0 "drain with the password from OUTBOX_DB_PASSWORD"
assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1')" 1 "row relayed"
if grep -q "outbox:outbox@" "$work/nodb" "$work/envpw"; then fail "a password appears in the log"; fi

# A relative db-password-file in a config file is found beside the config
# file, whatever the working folder.
mkdir "$work/conf"
printf 'outbox\n' >"$work/conf/db-password"
printf 'db = mysql://outbox@127.0.0.1:%s/%s\nnats = %s\ndb-password-file = db-password\nstream = IT_CLI\nsubject-prefix = itcli\n' \
  "$OUTBOX_TEST_DB_PORT" "$db" "$OUTBOX_TEST_NATS_URL" >"$work/conf/relay.conf"
sql $db "INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload) VALUES (outbox_uuid_v7(), 'a', '2', 'b', '{}')"
rc=0; (cd / && "$bin" --config "$work/conf/relay.conf" --drain --no-progress 2>"$work/relpw") || rc=$?
[ "$rc" = 0 ] || cat "$work/relpw"
assert_eq "$rc" 0 "drain with db-password-file relative to the config file, run from /"
assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1')" 2 "rows relayed"
grep -qxF "db-password-file = $work/conf/db-password" <<<"$(cd / && "$bin" --config "$work/conf/relay.conf" --print-config)" ||
  fail "--print-config shows the file it read"
