# SPDX-License-Identifier: Apache-2.0
# TLS on both sides: 5,000 rows from a MariaDB that requires TLS to a
# nats-server with TLS that admits an NKey user, then rows through a second
# nats-server that admits a token. Each id is once in the stream, every row
# is processed, and neither the seed nor the token appears in any output.
# Also reports the longest blocking call of each database connect (the TLS
# handshake's wait).
. "$(dirname "$0")/../harness/lib.sh"
db=it_secure_drain stream=IT_SECURE prefix=itsec
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
SMDB() { "$OUTBOX_TEST_MARIADB_CLIENT" --no-defaults -uroot -S "$OUTBOX_TEST_SECURE_DB_SOCKET" "$@"; }
ssql() { local d=$1; shift; SMDB -N -B "$d" -e "$*"; }
ca=$OUTBOX_TEST_SECURE_CA
seed_value=$(cat "$OUTBOX_TEST_SECURE_NKEY_SEED")
token_value=$(cat "$OUTBOX_TEST_SECURE_TOKEN_FILE")
[ -n "$seed_value" ] && [ -n "$token_value" ] || fail "the fixture wrote the secrets"

fresh() {
  SMDB -e "DROP DATABASE IF EXISTS $db; CREATE DATABASE $db"
  "$OUTBOX_TEST_RELAY" schema | SMDB $db
  ssql $db "INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload)
    SELECT outbox_uuid_v7(), 'order', CONCAT('o', seq), 'created',
           JSON_OBJECT('n', seq, 'pad', REPEAT('x', 400)) FROM seq_1_to_$1"
  ssql $db "SELECT LOWER(CONCAT_WS('-', SUBSTR(HEX(id),1,8), SUBSTR(HEX(id),9,4),
    SUBSTR(HEX(id),13,4), SUBSTR(HEX(id),17,4), SUBSTR(HEX(id),21))) FROM outbox" >"$work/ids"
}

no_secret() { # file
  if grep -qF -e "$seed_value" -e "$token_value" "$1"; then fail "a secret appears in $1"; fi
  echo "ok: no secret in $(basename "$1")"
}

check_stream() { # url creds-flags...
  local url=$1 out summary exp; shift
  out=$("$OUTBOX_TEST_STREAMCHECK" --nats "$url" --tls-ca "$ca" "$@" --stream $stream \
    --subject '>' --expect-ids "$work/ids")
  echo "$out"
  summary=$(echo "$out" | grep '^messages=')
  exp=$(echo "$out" | grep '^expected=')
  assert_eq "$(field "$summary" duplicates) $(field "$exp" missing) $(field "$exp" extra)" \
    "0 0 0" "duplicates, missing and extra ids"
}

echo "== 5,000 rows: MariaDB TLS, NATS TLS with an NKey seed file"
fresh 5000
"$OUTBOX_TEST_STREAMCHECK" --nats "$OUTBOX_TEST_SECURE_NKEY_URL" --tls-ca "$ca" \
  --nkey "$OUTBOX_TEST_SECURE_NKEY_SEED" --stream $stream --delete
rc=0
"$OUTBOX_TEST_RELAY" --db "${OUTBOX_TEST_SECURE_DB_URL}$db" --db-tls-ca "$ca" \
  --nats "$OUTBOX_TEST_SECURE_NKEY_URL" --nats-tls-ca "$ca" \
  --nats-nkey "$OUTBOX_TEST_SECURE_NKEY_SEED" --stream $stream --subject-prefix $prefix \
  --connections 4 --batch 200 --drain --no-progress --log-level debug \
  >"$work/nkey.out" 2>"$work/nkey.log" || rc=$?
grep -E "outbox-uvrelay:|warn|error|relay stopped" "$work/nkey.log" | head -20 || true
assert_eq "$rc" 0 "relay exit status (NKey)"
assert_eq "$(ssql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1')" 5000 "processed rows"
grep -q "TLS TLS_" "$work/nkey.log" || fail "the database connections use TLS"
grep -q "nats: connected to .*(nats.c on its own threads)" "$work/nkey.log" ||
  fail "over TLS nats.c keeps its own reader thread (docs/internals.md)"
check_stream "$OUTBOX_TEST_SECURE_NKEY_URL" --nkey "$OUTBOX_TEST_SECURE_NKEY_SEED"
no_secret "$work/nkey.out"
no_secret "$work/nkey.log"

echo "== the TLS handshake's wait: the longest call into connect, per connection"
sed -n 's/.*longest connect call \([0-9]*\) us.*/\1/p' "$work/nkey.log" | sort -n >"$work/waits"
[ -s "$work/waits" ] || fail "connect waits were logged"
echo "connects=$(wc -l <"$work/waits") min_us=$(head -1 "$work/waits") max_us=$(tail -1 "$work/waits")"

echo "== 500 rows: NATS TLS with a token file (and the variables instead of flags)"
fresh 500
"$OUTBOX_TEST_STREAMCHECK" --nats "$OUTBOX_TEST_SECURE_TOKEN_URL" --tls-ca "$ca" \
  --token-file "$OUTBOX_TEST_SECURE_TOKEN_FILE" --stream $stream --delete
rc=0
OUTBOX_DB_TLS_CA="$ca" OUTBOX_NATS_TLS_CA="$ca" \
  OUTBOX_NATS_TOKEN_FILE="$OUTBOX_TEST_SECURE_TOKEN_FILE" \
  "$OUTBOX_TEST_RELAY" --db "${OUTBOX_TEST_SECURE_DB_URL}$db" --nats "$OUTBOX_TEST_SECURE_TOKEN_URL" \
  --stream $stream --subject-prefix $prefix --drain --no-progress --log-level debug \
  >"$work/token.out" 2>"$work/token.log" || rc=$?
grep -E "outbox-uvrelay:|warn|error" "$work/token.log" | head -20 || true
assert_eq "$rc" 0 "relay exit status (token)"
assert_eq "$(ssql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1')" 500 "processed rows"
check_stream "$OUTBOX_TEST_SECURE_TOKEN_URL" --token-file "$OUTBOX_TEST_SECURE_TOKEN_FILE"
no_secret "$work/token.out"
no_secret "$work/token.log"

echo "== 300 rows: NATS TLS with a user and a password file"
password_value=$(cat "$OUTBOX_TEST_SECURE_PASSWORD_FILE")
fresh 300
"$OUTBOX_TEST_STREAMCHECK" --nats "$OUTBOX_TEST_SECURE_NKEY_URL" --tls-ca "$ca" \
  --nkey "$OUTBOX_TEST_SECURE_NKEY_SEED" --stream $stream --delete
rc=0
"$OUTBOX_TEST_RELAY" --db "${OUTBOX_TEST_SECURE_DB_URL}$db" --db-tls-ca "$ca" \
  --nats "${OUTBOX_TEST_SECURE_NKEY_URL/tls:\/\//tls://relay@}" --nats-tls-ca "$ca" \
  --nats-password-file "$OUTBOX_TEST_SECURE_PASSWORD_FILE" --stream $stream \
  --subject-prefix $prefix --drain --no-progress --log-level debug \
  >"$work/password.out" 2>"$work/password.log" || rc=$?
grep -E "outbox-uvrelay:|warn|error" "$work/password.log" | head -20 || true
assert_eq "$rc" 0 "relay exit status (password file)"
assert_eq "$(ssql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1')" 300 "processed rows"
check_stream "$OUTBOX_TEST_SECURE_NKEY_URL" --nkey "$OUTBOX_TEST_SECURE_NKEY_SEED"
if grep -qF "$password_value" "$work/password.out" "$work/password.log"; then
  fail "the password appears in the output"
fi
echo "ok: no password in the output"

echo "== refusals end the run at start-up: exit 1 within 30 s, the cause named, no secret shown"
echo "not-the-token" >"$work/bad-token"
"$OUTBOX_TEST_RELAY" schema >/dev/null
refused() { # what pattern flags...
  local what=$1 pattern=$2 rc=0 start secs; shift 2
  start=$(date +%s)
  timeout 60 "$OUTBOX_TEST_RELAY" --db "${OUTBOX_TEST_SECURE_DB_URL}$db" --db-tls-ca "$ca" \
    --stream $stream --subject-prefix $prefix --no-progress "$@" >"$work/refused.log" 2>&1 || rc=$?
  secs=$(($(date +%s) - start))
  sed 's/^/    /' "$work/refused.log"
  assert_eq "$rc" 1 "exit status ($what)"
  [ "$secs" -lt 30 ] || fail "$what: took $secs s"
  grep -q "$pattern" "$work/refused.log" || fail "$what: the message names the cause"
  if grep -qF -e "not-the-token" -e "$token_value" -e "$seed_value" "$work/refused.log"; then
    fail "$what: a secret appears in the output"
  fi
}
refused "refused token" "refused the credentials" --nats "$OUTBOX_TEST_SECURE_TOKEN_URL" \
  --nats-tls-ca "$ca" --nats-token-file "$work/bad-token"
"$OUTBOX_TEST_BUILD/test/nkeygen" "$work/other.nk" >/dev/null
refused "unknown NKey" "refused the credentials" --nats "$OUTBOX_TEST_SECURE_NKEY_URL" \
  --nats-tls-ca "$ca" --nats-nkey "$work/other.nk"
refused "wrong NATS CA" "certificate check" --nats "$OUTBOX_TEST_SECURE_TOKEN_URL" \
  --nats-tls-ca "$OUTBOX_TEST_SECURE_WRONG_CA" --nats-token-file "$OUTBOX_TEST_SECURE_TOKEN_FILE"
refused "certificate for another host" "mismatch" --nats "$OUTBOX_TEST_SECURE_OTHER_NAME_URL" \
  --nats-tls-ca "$ca"
