# SPDX-License-Identifier: Apache-2.0
# Issue 12, point 10: permanent errors at start-up are not retried forever.
# A wrong NATS password or token, a database login refused, an unknown
# database, a missing table or a missing column: the binary exits 1 within
# 30 s (also with --drain), with a message that names the cause. Nothing is
# claimed. (TLS required by the server is covered by the TLS tests.)
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/private.sh"
db=it_fault_perm stream=IT_FAULT_PERM prefix=itfperm
work=$(mktemp -d); RELAY_PID=
trap 'kill -KILL $RELAY_PID 2>/dev/null || true; private_cleanup; rm -rf "$work"' EXIT
db_fresh $db
seed $db 20 100
good_db="${OUTBOX_TEST_DB_URL}$db"
bin=$OUTBOX_TEST_RELAY

# expect_fatal NAME PATTERN args...: exit 1 within 30 s, PATTERN (grep -E -i)
# in the output. A failure is recorded and the other cases still run.
failures=()
expect_fatal() {
  local name=$1 pat=$2; shift 2
  "$bin" --no-progress --stream $stream --subject-prefix $prefix "$@" >"$work/$name.log" 2>&1 &
  RELAY_PID=$!
  wait_exit $RELAY_PID 30
  echo "$name: exit $WAIT_RC after $WAITED_MS ms"
  if [ "$WAIT_RC" != 1 ]; then
    show_log "$work/$name.log" 8
    failures+=("$name: exit status $WAIT_RC, expected 1 within 30 s")
  elif ! grep -Eiq -- "$pat" "$work/$name.log"; then
    show_log "$work/$name.log" 8
    failures+=("$name: the output does not name the cause ($pat)")
  else
    echo "ok: $name: $(grep -Ei -- "$pat" "$work/$name.log" | head -1)"
  fi
}

# NATS with a user and password, and NATS with a token.
np=$(free_port)
pnats_config "$work/npw" "$np" 'authorization { user: relay, password: right }'
pnats_start "$work/npw"
nt=$(free_port)
pnats_config "$work/ntok" "$nt" 'authorization { token: s3cret }'
pnats_start "$work/ntok"

expect_fatal nats-password 'authori[sz]ation' --db "$good_db" --nats "nats://relay:wrong@127.0.0.1:$np"
expect_fatal nats-password-drain 'authori[sz]ation' --db "$good_db" --nats "nats://relay:wrong@127.0.0.1:$np" --drain
expect_fatal nats-no-credentials 'authori[sz]ation' --db "$good_db" --nats "nats://127.0.0.1:$np" --drain
expect_fatal nats-token 'authori[sz]ation' --db "$good_db" --nats "nats://wrong@127.0.0.1:$nt" --drain
# Passwords never appear in logs.
if grep -q wrong "$work/nats-password.log"; then show_log "$work/nats-password.log"; fail "the password is in the log"; fi

nats=$OUTBOX_TEST_NATS_URL
expect_fatal db-login 'access denied' --db "mysql://outbox:wrong@127.0.0.1:$OUTBOX_TEST_DB_PORT/$db" --nats "$nats"
expect_fatal db-login-drain 'access denied' --db "mysql://outbox:wrong@127.0.0.1:$OUTBOX_TEST_DB_PORT/$db" --nats "$nats" --drain
expect_fatal db-unknown 'unknown database' --db "${OUTBOX_TEST_DB_URL}it_fault_no_such_db" --nats "$nats" --drain
expect_fatal db-table "doesn't exist|no such table|missing table" --db "$good_db" --nats "$nats" --table no_such_table --drain

# A table without one of the columns the relay needs.
sql $db "CREATE TABLE outbox_nocol LIKE outbox; ALTER TABLE outbox_nocol DROP COLUMN attempt_count"
sql $db "INSERT INTO outbox_nocol (id, aggregate_type, aggregate_id, event_type, payload)
  SELECT outbox_uuid_v7(), 'order', 'c', 'created', '{}' FROM seq_1_to_5"
expect_fatal db-column 'unknown column|attempt_count' --db "$good_db" --nats "$nats" --table outbox_nocol --drain
expect_fatal db-column-run 'unknown column|attempt_count' --db "$good_db" --nats "$nats" --table outbox_nocol

assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status <> 0 OR attempt_count <> 0')" 0 "rows touched"
assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox_nocol WHERE status <> 0')" 0 "rows of the broken table touched"
if [ ${#failures[@]} -gt 0 ]; then
  printf 'FAIL: %s\n' "${failures[@]}" >&2
  exit 1
fi
echo "ok: every permanent error exits 1 with its cause"
