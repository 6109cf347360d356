# SPDX-License-Identifier: Apache-2.0
# The schema on a server with the binary log on and
# log_bin_trust_function_creators off (as most production servers run), for
# a user without SUPER:
#   - creating outbox_uuid_v7() fails with error 1419, as the schema's
#     comment and the README say; so does the ordered schemas' trigger, once
#     the tables are made;
#   - `schema --no-function` works, and INSERTs that leave id out get UUIDv7
#     ids from the column's default, distinct and of the insert's time;
#   - the relay delivers those rows.
# It starts its own mariadbd (the shared one has no binary log).
. "$(dirname "$0")/../harness/lib.sh"
stream=IT_UUID_BINLOG prefix=itbinlog
dir=$(mktemp -d /tmp/outbox-binlog.XXXXXX)
cleanup() {
  if [ -f "$dir/pid" ]; then kill "$(cat "$dir/pid")" 2>/dev/null || true; fi
  for _ in $(seq 1 100); do [ -f "$dir/pid" ] || break; sleep 0.1; done
  rm -rf "$dir"
}
trap cleanup EXIT
find_bin() { for n in "$@"; do command -v "$n" 2>/dev/null && return 0; [ -x "/usr/sbin/$n" ] && { echo "/usr/sbin/$n"; return 0; }; done; return 1; }
mariadbd=$(find_bin mariadbd mysqld) || fail "mariadbd not found"
install_db=$(find_bin mariadb-install-db mysql_install_db) || fail "mariadb-install-db not found"
user=(); [ "$(id -u)" = 0 ] && user=(--user=root)
mkdir "$dir/tmp"
"$install_db" --no-defaults --datadir="$dir/db" --tmpdir="$dir/tmp" --auth-root-authentication-method=normal \
  "${user[@]}" >"$dir/install.log" 2>&1 || { cat "$dir/install.log"; fail "mariadb-install-db"; }
"$mariadbd" --no-defaults "${user[@]}" --datadir="$dir/db" --tmpdir="$dir/tmp" --socket="$dir/sock" \
  --skip-networking \
  --pid-file="$dir/pid" --log-error="$dir/err" --log-bin="$dir/binlog" --server-id=1 \
  >/dev/null 2>&1 &
B() { "$OUTBOX_TEST_MARIADB_CLIENT" --no-defaults -S "$dir/sock" "$@"; }
for _ in $(seq 1 100); do B -uroot -e 'SELECT 1' >/dev/null 2>&1 && break; sleep 0.2; done
B -uroot -e 'SELECT 1' >/dev/null || { tail "$dir/err"; fail "the binlog server did not start"; }
assert_eq "$(B -uroot -N -e 'SELECT @@log_bin, @@log_bin_trust_function_creators')" "1	0" \
  "binary log on, function creators not trusted"
B -uroot -e "CREATE DATABASE app; CREATE USER app@localhost IDENTIFIED BY 'app-pw';
  GRANT ALL ON app.* TO app@localhost"
A() { B -uapp -papp-pw app "$@"; }

rc=0; "$OUTBOX_TEST_RELAY" schema | A >"$dir/out" 2>&1 || rc=$?
cat "$dir/out"
[ "$rc" != 0 ] || fail "creating the function without SUPER should fail on this server"
grep -q "ERROR 1419" "$dir/out" || fail "the failure is error 1419"
echo "ok: outbox_uuid_v7() needs SUPER here (error 1419)"

# The ordered schemas end with the trigger that keeps seq the server's: it
# too needs SUPER here, and everything before it is made.
A -e 'DROP TABLE outbox'
rc=0; "$OUTBOX_TEST_RELAY" schema --cursor --no-function | A >"$dir/out" 2>&1 || rc=$?
[ "$rc" != 0 ] || fail "creating the trigger without SUPER should fail on this server"
grep -q "ERROR 1419" "$dir/out" || fail "the trigger's failure is error 1419"
assert_eq "$(A -N -e "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'app'
  AND TABLE_NAME IN ('outbox', 'outbox_cursor')")" 2 "tables made before the trigger"
echo "ok: the trigger needs SUPER here (error 1419), after the tables were made"

A -e 'DROP TABLE outbox, outbox_cursor'
"$OUTBOX_TEST_RELAY" schema --no-function | A
t0=$(date +%s%3N)
A -e "INSERT INTO outbox (aggregate_type, aggregate_id, event_type, payload)
  SELECT 'order', seq, 'created', JSON_OBJECT('n', seq) FROM seq_1_to_500"
t1=$(date +%s%3N)
assert_eq "$(A -N -e "SELECT COUNT(DISTINCT id) FROM outbox
  WHERE ASCII(SUBSTR(id, 7, 1)) >> 4 = 7 AND ASCII(SUBSTR(id, 9, 1)) >> 6 = 2
  AND CONV(HEX(LEFT(id, 6)), 16, 10) BETWEEN $t0 AND $t1")" 500 \
  "distinct UUIDv7 ids of the insert's time from the column default"

A -N -e "SELECT LOWER(CONCAT_WS('-', SUBSTR(HEX(id),1,8), SUBSTR(HEX(id),9,4),
  SUBSTR(HEX(id),13,4), SUBSTR(HEX(id),17,4), SUBSTR(HEX(id),21))) FROM outbox" >"$dir/ids"
stream_delete $stream
"$OUTBOX_TEST_RELAY" --db "mysql://app:app-pw@localhost/app?socket=$dir/sock" \
  --nats "$OUTBOX_TEST_NATS_URL" --stream $stream --subject-prefix $prefix --drain --no-progress \
  2>"$dir/relay.log" || { cat "$dir/relay.log"; fail "relay"; }
streamcheck --stream $stream --subject '>' --expect-ids "$dir/ids"
assert_eq "$(A -N -e 'SELECT COUNT(*) FROM outbox WHERE status = 1')" 500 "rows processed"
stream_delete $stream
