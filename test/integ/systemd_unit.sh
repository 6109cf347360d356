# SPDX-License-Identifier: Apache-2.0
# The systemd recipe as installed: `systemd-analyze verify` accepts the unit
# without a warning, and the binary run the way the unit runs it (its own
# ExecStart= line, as an unprivileged user (nobody, standing in for the
# unit's User=, which install_deb.sh runs it as), with the files made by the unit's
# install comments, the password read from a credential directory as
# LoadCredential= exposes it, a log file in what LogsDirectory= makes) starts,
# tells systemd READY=1, pings the watchdog, delivers every row, and says
# STOPPING=1 on SIGTERM.
. "$(dirname "$0")/../harness/lib.sh"
# Making files owned by another user and switching to it takes root.
[ "$(id -u)" = 0 ] || { echo "skipped: the recipe's run as another user needs root"; exit 77; }
db=it_systemd stream=IT_SYSTEMD prefix=itsystemd
work=$(mktemp -d); RELAY_PID=; LISTEN_PID=
trap 'kill $RELAY_PID $LISTEN_PID 2>/dev/null || true; rm -rf "$work"' EXIT
chmod 0755 "$work"
cmake --install "$OUTBOX_TEST_BUILD" --prefix "$work/prefix" >/dev/null
share=$work/prefix/share/outbox-uvrelay/systemd
[ -f "$share/outbox-uvrelay.service" ] || fail "the unit is installed"
[ -f "$share/outbox-uvrelay.conf" ] || fail "the example config is installed"
bin=$work/prefix/bin/outbox-uvrelay

# 1. The unit as installed: its ExecStart= names the binary of this prefix.
unit=$work/outbox-uvrelay.service
cp "$share/outbox-uvrelay.service" "$unit"
grep -q "^ExecStart=$bin run " "$unit" || fail "ExecStart= names $bin: $(grep ^ExecStart= "$unit")"
command -v systemd-analyze >/dev/null || fail "systemd-analyze (package systemd, scripts/deps.sh)"
rc=0; out=$(cd "$work" && verify_unit "./outbox-uvrelay.service") || rc=$?
echo "$out" | sed 's/^/    /'
assert_eq "$rc" 0 "systemd-analyze verify exit status"
# Only our unit's lines: other units installed on the machine may warn
# (galera-arbitrator-4's garb.service, the Galera fixture's, runs as nobody).
assert_eq "$(grep 'outbox-uvrelay' <<<"$out" || true)" "" "systemd-analyze verify output on our unit"
for want in Type=notify WatchdogSec= User=outbox-uvrelay LogsDirectory=outbox-uvrelay \
  LoadCredential=db-password:/etc/outbox-uvrelay/db-password ProtectSystem=strict; do
  grep -q "^$want" "$unit" || fail "the unit sets $want"
done

# 2. The install comments, run as written with /etc moved into the work dir.
etc=$work/etc
mkdir -p "$etc"
pw=$OUTBOX_TEST_DB_PASSWORD
grep -E '^#   (install|\(umask).*/etc/outbox-uvrelay' "$unit" | sed 's/^#   //' |
  sed "s#/etc/outbox-uvrelay#$etc/outbox-uvrelay#g; s#'the database password'#'$pw'#" >"$work/recipe.sh"
cat "$work/recipe.sh" | sed 's/^/    recipe: /'
[ "$(wc -l <"$work/recipe.sh")" = 3 ] || fail "three install lines for /etc/outbox-uvrelay"
(cd "$share" && sh -e "$work/recipe.sh")
conf=$etc/outbox-uvrelay/relay.conf
assert_eq "$(stat -c '%a %U' "$etc/outbox-uvrelay")" "755 root" "config dir mode and owner"
assert_eq "$(stat -c '%a %U' "$conf")" "644 root" "config file mode and owner"
assert_eq "$(stat -c '%a %U' "$etc/outbox-uvrelay/db-password")" "600 root" "password file"
# The test's settings replace the example's in the same file (mode kept):
# a URL without the password, which comes from the credential.
url=$(sed "s#://\([^:@]*\):[^@]*@#://\1@#" <<<"$OUTBOX_TEST_DB_URL")
cat >"$conf" <<CONF
db = ${url}$db
nats = $OUTBOX_TEST_NATS_URL
stream = $stream
subject-prefix = $prefix
log-format = json
CONF
assert_eq "$(stat -c '%a' "$conf")" 644 "config file mode after the test's edit"

# 3. What systemd makes: the credential directory (the service user's, 0500,
# its file 0400) and the logs directory (the service user's).
user=nobody group=$(id -gn nobody)
creds=$work/credentials
mkdir -m 0500 "$creds"
install -m 0400 -o "$user" "$etc/outbox-uvrelay/db-password" "$creds/db-password"
chown "$user" "$creds"
logs=$work/log/outbox-uvrelay
mkdir -p "$logs" && chown "$user" "$logs"
exec_start=$(sed -n 's/^ExecStart=//p' "$unit" | sed "s#%d#$creds#g; s#/etc/outbox-uvrelay#$etc/outbox-uvrelay#g")
read -r -a argv <<<"$exec_start"
argv+=(--log-file "$logs/relay.log")

# A datagram socket in place of systemd's, to hear READY=1, WATCHDOG=1, STOPPING=1.
python3 - "$work/notify.sock" "$work/notify.log" <<'PY' &
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1]); os.chmod(sys.argv[1], 0o777)
with open(sys.argv[2], "a", buffering=1) as f:
    while True:
        f.write(s.recv(4096).decode() + "\n")
PY
LISTEN_PID=$!
for i in $(seq 1 100); do [ -S "$work/notify.sock" ] && break; sleep 0.1; done

db_fresh $db
stream_delete $stream
seed $db 200 256
env -i PATH=/usr/bin:/bin NOTIFY_SOCKET="$work/notify.sock" WATCHDOG_USEC=1000000 \
  CREDENTIALS_DIRECTORY="$creds" ASAN_OPTIONS="${ASAN_OPTIONS:-}" \
  setpriv --reuid="$user" --regid="$group" --clear-groups --no-new-privs -- "${argv[@]}" \
  2>"$work/stderr.log" &
RELAY_PID=$!
for i in $(seq 1 300); do grep -q '^READY=1' "$work/notify.log" 2>/dev/null && break; sleep 0.1; done
grep -q '^READY=1' "$work/notify.log" || { cat "$work/stderr.log" "$logs/relay.log"; fail "READY=1"; }
for i in $(seq 1 300); do
  [ "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 0')" = 0 ] && break
  sleep 0.1
done
assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1')" 200 "rows delivered as nobody"
summary=$(stream_summary $stream)
assert_eq "$(field "$summary" distinct)" 200 "distinct ids in the stream"
sleep 1.5 # the watchdog at half of WATCHDOG_USEC: about three pings
pings=$(grep -c '^WATCHDOG=1' "$work/notify.log" || true)
[ "$pings" -ge 2 ] || fail "WATCHDOG=1 at half the interval: $pings pings"
echo "ok: $pings watchdog pings"
kill -TERM $RELAY_PID
rc=0; wait $RELAY_PID || rc=$?
assert_eq "$rc" 0 "relay exit status"
grep -q '^STOPPING=1' "$work/notify.log" || fail "STOPPING=1 on SIGTERM"
assert_eq "$(stat -c '%U' "$logs/relay.log")" "$user" "the log file's owner"
python3 -c 'import json, sys
for l in open(sys.argv[1]): json.loads(l)' "$logs/relay.log" || fail "every log line is JSON"
! grep -qF ":$pw@" "$logs/relay.log" "$work/stderr.log" || fail "the password in a log"
[ ! -s "$work/stderr.log" ] || { cat "$work/stderr.log"; fail "nothing on stderr with --log-file"; }
echo "ok: the unit verifies, and the recipe runs as $user"
