# SPDX-License-Identifier: Apache-2.0
# Two relay processes with four connections each drain one table together:
# every row is processed once, every id is in the stream once, and both
# processes did part of the work.
. "$(dirname "$0")/../harness/lib.sh"
db=it_concurrent stream=IT_CONC prefix=itconc
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
db_fresh $db
stream_delete $stream
seed $db 20000 512

relay_bg "$work/a.log" $db $stream $prefix --connections 4 --batch 100 --drain
a=$RELAY_PID
relay_bg "$work/b.log" $db $stream $prefix --connections 4 --batch 100 --drain
b=$RELAY_PID
rc_a=0; rc_b=0
wait $a || rc_a=$?
wait $b || rc_b=$?
assert_eq "$rc_a $rc_b" "0 0" "exit status of both relays"

acked() { sed -n 's/.*relay stopped: \([0-9]*\) acked.*/\1/p' "$1"; }
na=$(acked "$work/a.log") nb=$(acked "$work/b.log")
echo "relay a acked $na, relay b acked $nb"
assert_eq "$((na + nb))" 20000 "rows acked by the two relays together"
[ "$na" -gt 0 ] && [ "$nb" -gt 0 ] || fail "one relay did no work ($na/$nb)"

assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1')" 20000 "processed rows"
ids $db >"$work/ids"
out=$(streamcheck --stream $stream --subject '>' --expect-ids "$work/ids")
echo "$out"
summary=$(echo "$out" | grep '^messages=')
assert_eq "$(field "$summary" messages)" 20000 "messages in the stream"
assert_eq "$(field "$summary" distinct)" 20000 "distinct Nats-Msg-Id values"
exp=$(echo "$out" | grep '^expected=')
assert_eq "$(field "$exp" missing) $(field "$exp" extra)" "0 0" "missing and extra ids"
