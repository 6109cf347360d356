# SPDX-License-Identifier: Apache-2.0
# Two outbox tables in one relay, from one config file: one is flooded, and
# the other's events still flow meanwhile. Each table has its own stream and
# its own series in /metrics; logs come out as JSON with a table field. The
# binary refuses a bad file naming file, line and key, and --print-config
# masks secrets.
. "$(dirname "$0")/../harness/lib.sh"
db=it_tables
work=$(mktemp -d); RELAY_PID=; trap 'kill $RELAY_PID 2>/dev/null || true; rm -rf "$work"' EXIT
MDB -e "DROP DATABASE IF EXISTS $db; CREATE DATABASE $db"
"$OUTBOX_TEST_RELAY" schema --table orders_outbox | MDB $db
"$OUTBOX_TEST_RELAY" schema --table billing_outbox --no-function | MDB $db
stream_delete IT_TABLES_ORDERS
stream_delete IT_TABLES_BILLING

cat >"$work/relay.conf" <<CONF
# Two tables, one relay.
db = ${OUTBOX_TEST_DB_URL}$db
nats = $OUTBOX_TEST_NATS_URL
log-format = json
http = 127.0.0.1:0
pending-interval = 200ms
no-progress = true

[table orders]
table = orders_outbox
stream = IT_TABLES_ORDERS
subject-prefix = ittables_orders
connections = 2
batch = 100

[table billing]
table = billing_outbox
stream = IT_TABLES_BILLING
subject-prefix = ittables_billing
connections = 1
poll-interval = 20ms
CONF

# --print-config: the effective values, where they came from, no password.
"$OUTBOX_TEST_RELAY" --config "$work/relay.conf" --print-config --batch 300 >"$work/print.txt"
grep -q '^\[table billing\]$' "$work/print.txt" || fail "print-config shows the billing table"
# origin KEY VALUE: the line before "KEY = VALUE" is the comment "# ORIGIN".
origin() { grep -B1 -x "$1 = $2" "$work/print.txt" | head -1; }
assert_eq "$(origin batch 300)" "# --batch" "print-config: the flag wins, and says so"
assert_eq "$(origin connections 1)" "# $work/relay.conf:20" "print-config names file and line"
# It reads back as a config file with the same settings: the same keys and
# values (only the origin comments change).
"$OUTBOX_TEST_RELAY" --config "$work/print.txt" --print-config >"$work/print2.txt" ||
  fail "print-config output does not parse as a config"
diff <(grep -v '^#' "$work/print.txt") <(grep -v '^#' "$work/print2.txt") ||
  fail "print-config of its own output differs"
! grep -q '4294967295' "$work/print.txt" || fail "print-config shows the unset limit as a number"
grep -qx 'wake-subject = outbox_wake.orders_outbox' "$work/print.txt" || fail "the doorbell subject in use"
if [ -n "${OUTBOX_TEST_DB_PASSWORD:-}" ]; then
  ! grep -qF ":$OUTBOX_TEST_DB_PASSWORD@" "$work/print.txt" || fail "the password is masked"
fi
echo "ok: --print-config"

# The example config file shipped with the project parses.
example=$(dirname "$0")/../../examples/outbox-uvrelay.conf
"$OUTBOX_TEST_RELAY" --config "$example" --print-config >"$work/example.txt" ||
  fail "examples/outbox-uvrelay.conf parses"
grep -q '^\[table billing\]$' "$work/example.txt" || fail "the example's tables"
echo "ok: the example config parses"

# A bad file: exit status 2, the message names the file, the line and the key.
printf 'db = mysql://h/d\nnats = nats://h:1\n[table a]\nconections = 2\n' >"$work/bad.conf"
rc=0; out=$("$OUTBOX_TEST_RELAY" --config "$work/bad.conf" 2>&1) || rc=$?
assert_eq "$rc" 2 "exit status with an unknown key"
grep -qF "$work/bad.conf:4: unknown key 'conections'" <<<"$out" || fail "message: $out"
printf 'batch = lots\n' >"$work/bad2.conf"
rc=0; out=$(OUTBOX_CONFIG="$work/bad2.conf" "$OUTBOX_TEST_RELAY" 2>&1) || rc=$?
assert_eq "$rc" 2 "exit status with a bad value (file from OUTBOX_CONFIG)"
grep -qF "$work/bad2.conf:1: key 'batch': 'lots'" <<<"$out" || fail "message: $out"
rc=0; out=$("$OUTBOX_TEST_RELAY" --db mysql://h/d --nats nats://h:1 --table a --table b 2>&1) ||
  rc=$?
assert_eq "$rc" 2 "exit status with --table twice"

# The flood: 60,000 rows in orders before the relay starts.
seed $db 60000 512 orders_outbox
"$OUTBOX_TEST_RELAY" --config "$work/relay.conf" 2>"$work/relay.log" &
RELAY_PID=$!
port=$(http_port "$work/relay.log")
for i in $(seq 1 100); do
  [ "$(sql $db 'SELECT COUNT(*) FROM orders_outbox WHERE status = 1')" -gt 0 ] && break
  sleep 0.1
done
# Billing events arrive while orders is still busy, and flow at once.
t0=$(date +%s%N)
seed $db 200 256 billing_outbox
for i in $(seq 1 100); do
  [ "$(sql $db 'SELECT COUNT(*) FROM billing_outbox WHERE status = 0')" = 0 ] && break
  sleep 0.05
done
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
left=$(sql $db 'SELECT COUNT(*) FROM orders_outbox WHERE status = 0')
assert_eq "$(sql $db 'SELECT COUNT(*) FROM billing_outbox WHERE status = 1')" 200 \
  "billing rows delivered during the flood"
echo "billing drained in $ms ms with $left orders rows still pending"
[ "$left" -gt 0 ] || fail "the orders flood was over before billing was served: nothing proven"

# The counter moves when the relay reads the COMMIT's reply, a moment after
# the rows changed in the database: wait for it a little.
# (grep -q reads from a here-string, not from echo through a pipe: grep -q
# leaves at the first match, and echo writing the rest of the text then dies
# of SIGPIPE, which pipefail makes the pipe's status: a match read as none.)
for _ in $(seq 1 50); do
  text=$(curl -sf -m 5 "http://127.0.0.1:$port/metrics" || true)
  grep -qF 'outbox_relay_published_total{table="billing",result="stored"} 200' <<<"$text" &&
    grep -qF 'outbox_relay_published_total{table="orders",result="stored"}' <<<"$text" && break
  sleep 0.1
done
grep -qF 'outbox_relay_published_total{table="billing",result="stored"} 200' <<<"$text" ||
  { grep 'published_total' <<<"$text"; fail "billing's published_total"; }
grep -qF 'outbox_relay_published_total{table="orders",result="stored"}' <<<"$text" ||
  { grep 'published_total' <<<"$text" | sed 's/^/    /'; fail "orders' series"; }

for i in $(seq 1 600); do
  [ "$(sql $db 'SELECT COUNT(*) FROM orders_outbox WHERE status = 0')" = 0 ] && break
  sleep 0.1
done
kill -TERM $RELAY_PID
rc=0; wait $RELAY_PID || rc=$?
assert_eq "$rc" 0 "relay exit status"
assert_eq "$(field "$(stream_summary IT_TABLES_ORDERS)" distinct)" 60000 "ids in the orders stream"
assert_eq "$(field "$(stream_summary IT_TABLES_BILLING)" distinct)" 200 "ids in the billing stream"
grep -q '^{"ts":"[^"]*","level":"info","table":"billing","msg":' "$work/relay.log" ||
  { head "$work/relay.log"; fail "JSON log lines with the table"; }
if grep -qv '^{' "$work/relay.log"; then
  grep -v '^{' "$work/relay.log" | head; fail "every log line is JSON"
fi
if command -v python3 >/dev/null; then
  python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1])]' "$work/relay.log" ||
    fail "the log lines parse as JSON"
fi
echo "ok: JSON logs"
