# SPDX-License-Identifier: Apache-2.0
# The duplicate-window guard: a stream whose window is shorter than the
# relay's retry horizon (ack timeout + the longer of the maximum backoff and
# the database's operation timeout with a reconnect) gets a warning, or a
# refusal under --strict-dup-window.
. "$(dirname "$0")/../harness/lib.sh"
db=it_dupwin stream=IT_DUPWIN prefix=itdupwin
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
db_fresh $db
stream_delete $stream
streamcheck --stream $stream --create "$prefix.>" --dup-window-ms 10000
seed $db 10 100

rc=0; relay $db $stream $prefix --drain 2>"$work/warn.log" || rc=$?
assert_eq "$rc" 0 "exit status without --strict-dup-window"
grep -q "keeps Msg-Ids for 10000 ms, shorter than the relay's retry horizon of 75000 ms" \
  "$work/warn.log" || { cat "$work/warn.log"; fail "warning about the window"; }
assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1')" 10 "rows relayed despite the warning"

seed $db 10 100
rc=0; relay $db $stream $prefix --drain --strict-dup-window 2>"$work/strict.log" || rc=$?
assert_eq "$rc" 1 "exit status with --strict-dup-window"
grep -q "refusing to run" "$work/strict.log" || { cat "$work/strict.log"; fail "refusal logged"; }
assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 0')" 10 "rows left untouched"

# With a horizon inside the window there is nothing to say.
stream_delete $stream
streamcheck --stream $stream --create "$prefix.>" --dup-window-ms 100000
rc=0; relay $db $stream $prefix --drain --strict-dup-window --ack-timeout 2s --backoff-max 5s \
  --backoff-base 1s 2>"$work/ok.log" || rc=$?
assert_eq "$rc" 0 "exit status with a horizon inside the window"
grep -q "shorter than" "$work/ok.log" && fail "no warning expected"
assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1')" 20 "rows relayed"
