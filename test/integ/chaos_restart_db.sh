# SPDX-License-Identifier: Apache-2.0
# Restart mariadbd in the middle of a run: the relay reconnects by itself with
# fresh connections, the interrupted batches are redone, and nothing is lost or
# stored twice. The relay's counters say so: the lost connections counted,
# and connections up again at the end.
. "$(dirname "$0")/../harness/lib.sh"
db=it_restart_db
work=$(mktemp -d); RELAY_PID=; trap 'kill $RELAY_PID 2>/dev/null || true; rm -rf "$work"' EXIT
restart_mid_run $db IT_RESTART_DB itrdb restart-db "$work/relay.log"
m() { metric_value "$RUN_METRICS" "$1{table=\"outbox\"${2:-}}"; }
[ -n "$RUN_METRICS" ] || { cat "$work/relay.log"; fail "the relay's /metrics did not answer"; }
# Both connections were open when mariadbd went away; each loss is counted
# once. The other may still be in its reconnect backoff when the first has
# drained the table, so one connection up at the end is enough.
lost=$(m outbox_relay_database_reconnects_total)
up=$(m outbox_relay_database_connections)
echo "database: $lost connection(s) lost and re-made, $up up at the end, $(m outbox_relay_failures_total ',reason="database"') failed operations"
[ "${lost:-0}" -ge 1 ] || { cat "$work/relay.log"; fail "no lost connection counted (database_reconnects_total ${lost:-absent})"; }
[ "${up:-0}" -ge 1 ] && [ "${up:-0}" -le 2 ] ||
  { cat "$work/relay.log"; fail "database_connections at the end is ${up:-absent}, expected 1 or 2"; }
assert_eq "$(m outbox_relay_up ',dependency="database"')" 1 "up{dependency=database} at the end"
assert_eq "$(sql $db 'SELECT SUM(attempt_count) FROM outbox')" 0 "attempts counted"
