# SPDX-License-Identifier: Apache-2.0
# Issue 29, point 2: the README's "Grants" section, line by line. Each user
# below holds exactly the grants its line of the section gives, at table
# level, and runs its command or relay mode briefly:
#   - schema, piped to mariadb, and schema --migrate;
#   - the relay, plain (exit 0 on --drain, no warning, the pending gauge
#     exported), --ordered, --leader and --cursor;
#   - status (on a table without the cursor table too), cleanup, dead
#     list|replay|purge, partitions and cursor-reset.
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/private.sh"
db=it_grants pdb=it_grants_plain sdb=it_grants_schema stream=IT_GRANTS prefix=itgrants
users=(g_schema g_plain g_ordered g_cursor g_status g_cleanup g_dead g_parts g_reset)
work=$(mktemp -d); RELAY_PID=
drop_users() { local u; for u in "${users[@]}"; do MDB -e "DROP USER IF EXISTS '$u'@'127.0.0.1'"; done; }
trap 'kill -KILL $RELAY_PID 2>/dev/null || true; drop_users || true; rm -rf "$work"' EXIT
drop_users
for u in "${users[@]}"; do MDB -e "CREATE USER '$u'@'127.0.0.1' IDENTIFIED BY 'pw'"; done
url() { echo "$OUTBOX_TEST_DB_URL" | sed "s|//[^@]*@|//$1:pw@|"; } # url USER: the URL without the database
as() { # as USER DB command args...: an operator's command as USER on DB
  local u=$1 d=$2 cmd=$3; shift 3
  "$OUTBOX_TEST_RELAY" $cmd "$@" --db "$(url $u)$d"
}
drain_as() { # drain_as USER DB [flags...]: a relay with --drain as USER on DB; its log in $work/drain.log
  local u=$1 d=$2; shift 2
  timeout 60 "$OUTBOX_TEST_RELAY" --db "$(url $u)$d" --nats "$OUTBOX_TEST_NATS_URL" --stream $stream \
    --subject-prefix $prefix --no-progress --drain "$@" >"$work/drain.log" 2>&1
}
messages() { field "$(stream_summary $stream)" messages; }
no_warnings() { # no_warnings WHAT: the last relay log has no warn or error line
  if grep -E ' (warn|error) ' "$work/drain.log"; then fail "$1 logged warnings"; fi
}
stream_delete $stream

# --- schema: CREATE, ALTER, INDEX, TRIGGER, CREATE ROUTINE on the database.
MDB -e "DROP DATABASE IF EXISTS $sdb; CREATE DATABASE $sdb;
  GRANT CREATE, ALTER, INDEX, TRIGGER, CREATE ROUTINE ON $sdb.* TO 'g_schema'@'127.0.0.1'"
S() { "$OUTBOX_TEST_MARIADB_CLIENT" --no-defaults -ug_schema -ppw -h "$OUTBOX_TEST_DB_HOST" -P "$OUTBOX_TEST_DB_PORT" "$@"; }
"$OUTBOX_TEST_RELAY" schema --cursor | S $sdb
"$OUTBOX_TEST_RELAY" schema --table plain | S $sdb
"$OUTBOX_TEST_RELAY" schema --migrate --table plain | S $sdb
assert_eq "$(sql $sdb "SELECT COUNT(*) FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = '$sdb'")" 2 \
  "triggers made by g_schema"
echo "ok: schema and schema --migrate as g_schema"

# The tables of the other lines: $db in ordered layout with the cursor
# table, $pdb plain and partitioned.
db_fresh $db --cursor
db_fresh $pdb --partitioned

# --- the relay, plain: SELECT, UPDATE on the table.
MDB -e "GRANT SELECT, UPDATE ON $pdb.outbox TO 'g_plain'@'127.0.0.1'"
seed $pdb 50 128
rc=0; drain_as g_plain $pdb || rc=$?
assert_eq "$rc" 0 "plain relay as g_plain"
no_warnings "the plain relay"
assert_eq "$(messages)" 50 "messages after the plain relay"
seed $pdb 10 128
"$OUTBOX_TEST_RELAY" --db "$(url g_plain)$pdb" --nats "$OUTBOX_TEST_NATS_URL" --stream $stream \
  --subject-prefix $prefix --no-progress --http 127.0.0.1:0 2>"$work/relay.log" &
RELAY_PID=$!
port=$(http_port "$work/relay.log")
wait_sql $pdb "SELECT COUNT(*) FROM outbox WHERE status = 0" 0 30 || { show_log "$work/relay.log"; fail "plain relay"; }
for i in $(seq 1 50); do [ -n "$(metric_value "$(metrics $port)" 'outbox_relay_pending_rows{table="outbox"}')" ] && break; sleep 0.1; done
[ -n "$(metric_value "$(metrics $port)" 'outbox_relay_pending_rows{table="outbox"}')" ] ||
  fail "the plain relay does not export outbox_relay_pending_rows"
kill -TERM $RELAY_PID
wait_exit $RELAY_PID 15
RELAY_PID=
assert_eq "$WAIT_RC" 0 "exit status of the plain relay"
if grep -E ' (warn|error) ' "$work/relay.log"; then fail "the plain relay logged warnings"; fi
echo "ok: the plain relay as g_plain"

# --- status: SELECT on the table (and on outbox_cursor when it exists).
MDB -e "GRANT SELECT ON $pdb.outbox TO 'g_status'@'127.0.0.1';
  GRANT SELECT ON $db.outbox TO 'g_status'@'127.0.0.1';
  GRANT SELECT ON $db.outbox_cursor TO 'g_status'@'127.0.0.1'"
rc=0; out=$(as g_status $pdb status 2>&1) || rc=$?
assert_eq "$rc" 0 "status as g_status on a table without a cursor table"
assert_eq "$(echo "$out" | sed -n 's/^processed  *//p')" 60 "processed rows in status"

# --- dead list: SELECT; dead replay: SELECT, UPDATE; dead purge: SELECT, DELETE.
MDB -e "GRANT SELECT, UPDATE, DELETE ON $pdb.outbox TO 'g_dead'@'127.0.0.1'"
sql $pdb "UPDATE outbox SET status = -1, attempt_count = 5 ORDER BY id LIMIT 4"
as g_dead $pdb dead list >/dev/null
assert_eq "$(as g_dead $pdb dead replay --all 2>/dev/null)" "dead replay: 4 row(s) changed (pending again, attempts reset)" "dead replay as g_dead"
sql $pdb "UPDATE outbox SET status = -1, attempt_count = 5 WHERE status = 0"
assert_eq "$(as g_dead $pdb dead purge --older-than 0s 2>/dev/null)" "dead purge: 4 row(s) changed (deleted)" "dead purge as g_dead"

# --- cleanup: SELECT, DELETE on the table (and SELECT on outbox_cursor).
MDB -e "GRANT SELECT, DELETE ON $pdb.outbox TO 'g_cleanup'@'127.0.0.1';
  GRANT SELECT, DELETE ON $db.outbox TO 'g_cleanup'@'127.0.0.1';
  GRANT SELECT ON $db.outbox_cursor TO 'g_cleanup'@'127.0.0.1'"
sleep 1.1 # the rows must be older than --older-than
assert_eq "$(as g_cleanup $pdb cleanup --once --older-than 1s 2>/dev/null)" "cleanup: 56 row(s) deleted (56 processed, 0 dead)" \
  "cleanup as g_cleanup"

# --- partitions: SELECT, ALTER, DROP on the table. Its daily partitions
# made to start four days ago: with --retention 1, two expire.
day0=$(( $(sql $pdb "SELECT UNIX_TIMESTAMP(UTC_DATE())") * 1000 )) day=86400000 parts=""
for d in -4 -3 -2 -1 0; do
  start=$((day0 + d * day))
  parts="$parts PARTITION $(date -u -d "@$((start / 1000))" +p%Y%m%d) VALUES LESS THAN (X'$(printf '%012x' $((start + day)))00000000000000000000'),"
done
sql $pdb "ALTER TABLE outbox PARTITION BY RANGE COLUMNS(id) ($parts PARTITION pmax VALUES LESS THAN (MAXVALUE))"
MDB -e "GRANT SELECT, ALTER, DROP ON $pdb.outbox TO 'g_parts'@'127.0.0.1'"
assert_eq "$(as g_parts $pdb partitions --once --lookahead 1 --retention 1 2>/dev/null)" \
  "partitions: 1 created, 3 dropped, 0 kept (expired, but holding pending rows)" "partitions as g_parts"

# --- the relay, --cursor: SELECT, UPDATE on the table, SELECT, INSERT,
# UPDATE on outbox_cursor, PROCESS.
MDB -e "GRANT SELECT, UPDATE ON $db.outbox TO 'g_cursor'@'127.0.0.1';
  GRANT SELECT, INSERT, UPDATE ON $db.outbox_cursor TO 'g_cursor'@'127.0.0.1';
  GRANT PROCESS ON *.* TO 'g_cursor'@'127.0.0.1'"
seed $db 40 128
rc=0; drain_as g_cursor $db --cursor || rc=$?
assert_eq "$rc" 0 "cursor relay as g_cursor"
no_warnings "the cursor relay"
assert_eq "$(messages)" 100 "messages after the cursor relay"
# --- partitions on the cursor mode table: without SELECT on outbox_cursor
# its rows cannot be told delivered; the command says which grant is missing
# (it used to keep every expired partition as "holding pending rows", exit 0).
MDB -e "GRANT SELECT, ALTER, DROP ON $db.outbox TO 'g_parts'@'127.0.0.1'"
rc=0; out=$(as g_parts $db partitions --once 2>&1) || rc=$?
assert_eq "$rc" 1 "exit status of partitions on a cursor mode table without SELECT on outbox_cursor"
echo "$out" | grep -q "GRANT SELECT ON $db.outbox_cursor TO 'g_parts'@'<host>'" ||
  { echo "$out"; fail "partitions did not name the missing grant"; }
echo "$out" | sed 's/^/    /'
MDB -e "GRANT SELECT ON $db.outbox_cursor TO 'g_parts'@'127.0.0.1'"
rc=0; out=$(as g_parts $db partitions --once 2>&1) || rc=$?
if echo "$out" | grep -q 'GRANT'; then echo "$out"; fail "partitions with SELECT on outbox_cursor still names a grant"; fi
echo "    with the grant: $out"
rc=0; out=$(as g_status $db status 2>&1) || rc=$?
assert_eq "$rc" 0 "status as g_status in cursor mode"
assert_eq "$(echo "$out" | sed -n 's/^cursor mode  *//p')" "64 of 64 buckets have a cursor" "status in cursor mode"
sleep 1.1
# (one delivered row stays: the witness of the table's cursors)
assert_eq "$(as g_cleanup $db cleanup --once --older-than 1s 2>/dev/null)" "cleanup: 39 row(s) deleted (39 processed, 0 dead)" \
  "cleanup as g_cleanup in cursor mode"

# --- cursor-reset: SELECT on the table, SELECT, UPDATE on outbox_cursor.
MDB -e "GRANT SELECT ON $db.outbox TO 'g_reset'@'127.0.0.1';
  GRANT SELECT, UPDATE ON $db.outbox_cursor TO 'g_reset'@'127.0.0.1'"
sql $db "TRUNCATE outbox"
assert_eq "$(as g_reset $db cursor-reset 2>/dev/null)" \
  "cursor-reset: 64 cursor(s) set to 0 (the highest was 40, the table's counter 1)" "cursor-reset as g_reset"

# --- the relay, --ordered and --leader: SELECT, UPDATE on the table, SELECT,
# DELETE on outbox_cursor (taking a bucket from cursor mode ends its cursor).
MDB -e "GRANT SELECT, UPDATE ON $db.outbox TO 'g_ordered'@'127.0.0.1';
  GRANT SELECT, DELETE ON $db.outbox_cursor TO 'g_ordered'@'127.0.0.1'"
seed $db 30 128
rc=0; drain_as g_ordered $db --ordered || rc=$?
assert_eq "$rc" 0 "ordered relay as g_ordered"
no_warnings "the ordered relay"
assert_eq "$(sql $db "SELECT COUNT(*) FROM outbox_cursor")" 0 "cursor rows left after --ordered"
seed $db 30 128
rc=0; drain_as g_ordered $db --leader || rc=$?
assert_eq "$rc" 0 "leader relay as g_ordered"
no_warnings "the leader relay"
assert_eq "$(messages)" 160 "messages after the ordered and leader relays"
assert_eq "$(field "$(stream_summary $stream)" distinct)" 160 "distinct ids in the stream"
echo "grants: ok"
