# SPDX-License-Identifier: Apache-2.0
# --cursor needs the PROCESS privilege (to see in information_schema.INNODB_TRX
# which transactions may still commit a missing seq). A relay whose user lacks
# it exits 1 at start naming the grant to give, and publishes nothing. So does
# one on a database without the cursor table, naming `schema --migrate`.
. "$(dirname "$0")/../harness/lib.sh"
db=it_cursor_noproc stream=IT_CURSOR_NOPROC prefix=itcurnp user=it_noproc
trap 'MDB -e "DROP USER IF EXISTS '"'$user'"'@'"'127.0.0.1'"'" || true' EXIT
db_fresh $db --cursor
stream_delete $stream
streamcheck --stream $stream --create "$prefix.>"
MDB -e "DROP USER IF EXISTS '$user'@'127.0.0.1'; CREATE USER '$user'@'127.0.0.1' IDENTIFIED BY 'np';
  GRANT SELECT, INSERT, UPDATE, DELETE ON $db.* TO '$user'@'127.0.0.1'"
url=$(echo "$OUTBOX_TEST_DB_URL" | sed "s|//[^@]*@|//$user:np@|")$db
seed $db 100 256
run_as_user() { # the relay as $user, with --cursor --drain: its exit status in rc, its log in out
  rc=0
  out=$(timeout 60 "$OUTBOX_TEST_RELAY" --db "$url" --nats "$OUTBOX_TEST_NATS_URL" --stream $stream \
    --subject-prefix $prefix --no-progress --cursor --drain 2>&1) || rc=$?
  echo "$out" | tail -3
}
run_as_user
assert_eq "$rc" 1 "exit status without PROCESS"
grep -qF "GRANT PROCESS ON *.* TO '$user'@" <<<"$out" || fail "the message does not name the grant"
assert_eq "$(field "$(stream_summary $stream)" messages)" 0 "messages published without PROCESS"
assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status <> 0 OR attempt_count > 0')" 0 \
  "rows written without PROCESS"

# With PROCESS granted but no cursor table: exit 1 naming schema --migrate.
MDB -e "GRANT PROCESS ON *.* TO '$user'@'127.0.0.1'"
sql $db "DROP TABLE outbox_cursor"
run_as_user
assert_eq "$rc" 1 "exit status without the cursor table"
grep -qF "outbox-uvrelay schema --migrate" <<<"$out" || fail "the message does not name schema --migrate"
assert_eq "$(field "$(stream_summary $stream)" messages)" 0 "messages published without the cursor table"

# --cursor with --ordered or --leader is a usage error.
for mode in --ordered --leader; do
  rc=0
  relay $db $stream $prefix --cursor $mode --drain 2>/dev/null || rc=$?
  assert_eq "$rc" 2 "exit status of --cursor $mode"
done
echo "cursor_no_process: ok"
