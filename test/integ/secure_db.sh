# SPDX-License-Identifier: Apache-2.0
# MariaDB over TLS against a server started with --require-secure-transport=ON
# and a user created REQUIRE SSL: the relay and the one-shot commands connect
# with the CA flag, and are refused at start-up, with exit status 1 within
# 30 s and the cause named, without TLS, without the CA, or with a wrong CA.
. "$(dirname "$0")/../harness/lib.sh"
db=it_secure_db
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
SMDB() { "$OUTBOX_TEST_MARIADB_CLIENT" --no-defaults -uroot -S "$OUTBOX_TEST_SECURE_DB_SOCKET" "$@"; }
SMDB -e "DROP DATABASE IF EXISTS $db; CREATE DATABASE $db"
"$OUTBOX_TEST_RELAY" schema | SMDB $db
url="${OUTBOX_TEST_SECURE_DB_URL}$db"
ca=$OUTBOX_TEST_SECURE_CA

# refused URL [flags...]: the relay exits 1 within 30 s; its output is left in $work/out.
refused() {
  local start rc=0 secs
  start=$(date +%s%N)
  timeout 60 "$OUTBOX_TEST_RELAY" --db "$@" --nats "$OUTBOX_TEST_NATS_URL" --stream IT_SECURE_DB \
    --subject-prefix itsdb --no-progress >"$work/out" 2>&1 || rc=$?
  secs=$(( ($(date +%s%N) - start) / 1000000000 ))
  sed 's/^/    /' "$work/out"
  assert_eq "$rc" 1 "exit status"
  [ "$secs" -lt 30 ] || fail "took $secs s to give up"
  echo "ok: gave up after $secs s"
}

echo "== no TLS flag: the server requires TLS"
refused "$url"
grep -q "TLS" "$work/out" || fail "the message names TLS"

echo "== --db-tls without the CA: the system store does not know the test CA"
refused "$url" --db-tls
grep -q "certificate check failed" "$work/out" || fail "the message names the certificate check"

echo "== a wrong CA"
refused "$url" --db-tls-ca "$OUTBOX_TEST_SECURE_WRONG_CA"
grep -q "certificate check failed" "$work/out" || fail "the message names the certificate check"

echo "== the one-shot commands take the same settings"
expect_exit 0 "status with the CA" "$OUTBOX_TEST_RELAY" status --db "$url" --db-tls-ca "$ca"
expect_exit 1 "status without TLS" "$OUTBOX_TEST_RELAY" status --db "$url"
expect_exit 0 "dead list with the CA" "$OUTBOX_TEST_RELAY" dead list --db "$url" --db-tls-ca "$ca"
expect_exit 0 "cleanup with the CA (environment)" env OUTBOX_DB_TLS_CA="$ca" \
  "$OUTBOX_TEST_RELAY" cleanup --once --db "$url"
out=$("$OUTBOX_TEST_RELAY" partitions --once --db "$url" 2>&1) && fail "partitions without TLS ran"
grep -q TLS <<<"$out" || fail "partitions without TLS names TLS: $out"

echo "== the host name is checked: localhost is in the certificate too"
expect_exit 0 "status via localhost" "$OUTBOX_TEST_RELAY" status \
  --db "mysql://outbox:outbox@localhost:$OUTBOX_TEST_SECURE_DB_PORT/$db" --db-tls-ca "$ca"

echo "== a client certificate for a user created REQUIRE X509"
x509url="mysql://outbox_x509:outbox@127.0.0.1:$OUTBOX_TEST_SECURE_DB_PORT/$db"
expect_exit 0 "status with a client certificate" "$OUTBOX_TEST_RELAY" status --db "$x509url" \
  --db-tls-ca "$ca" --db-tls-cert "$OUTBOX_TEST_SECURE_CLIENT_CERT" \
  --db-tls-key "$OUTBOX_TEST_SECURE_CLIENT_KEY"
expect_exit 1 "status without it" "$OUTBOX_TEST_RELAY" status --db "$x509url" --db-tls-ca "$ca"

echo "== without the host-name check the chain is still verified"
refused "$url" --db-tls --db-tls-no-verify-host
grep -q "certificate check failed" "$work/out" || fail "the message names the certificate check"
SSL_CERT_FILE=/nonexistent refused "$url" --db-tls --db-tls-no-verify-host
grep -q "no CA to verify" "$work/out" || fail "no CA at all is refused, not trusted"
expect_exit 0 "status with the CA, no host-name check" "$OUTBOX_TEST_RELAY" status --db "$url" \
  --db-tls-ca "$ca" --db-tls-no-verify-host

echo "== a server 60 ms away (a round trip through a delaying proxy)"
# Connector/C 3.3 alone gives each handshake wait 10 ms and fails here.
for i in $(seq 1 50); do
  pport=$(( (RANDOM * 32768 + RANDOM) % 30000 + 20000 ))
  (exec 3<>"/dev/tcp/127.0.0.1/$pport") 2>/dev/null || break
done
"$OUTBOX_TEST_BUILD/test/delayproxy" "$pport" "$OUTBOX_TEST_SECURE_DB_PORT" 30 >"$work/proxy" &
proxy=$!
trap 'kill $proxy 2>/dev/null || true; rm -rf "$work"' EXIT
for i in $(seq 1 50); do grep -q ready "$work/proxy" && break; sleep 0.1; done
far="mysql://outbox:outbox@127.0.0.1:$pport/$db"
out=$("$OUTBOX_TEST_RELAY" status --db "$far" --db-tls-ca "$ca" --log-level debug 2>&1) ||
  { echo "$out"; fail "TLS over a 60 ms round trip"; }
echo "$out" | grep "longest connect call"
echo "ok: TLS connect over a 60 ms round trip"
