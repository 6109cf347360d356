# SPDX-License-Identifier: Apache-2.0
# Restart nats-server in the middle of a run: the relay pauses, resumes by
# itself, and the outage costs no row an attempt. Nothing is lost or stored
# twice. The relay's counters say so: the outage counted, NATS up again at
# the end.
. "$(dirname "$0")/../harness/lib.sh"
db=it_restart_nats
work=$(mktemp -d); RELAY_PID=; trap 'kill $RELAY_PID 2>/dev/null || true; rm -rf "$work"' EXIT
restart_mid_run $db IT_RESTART_NATS itrnats restart-nats "$work/relay.log"
m() { metric_value "$RUN_METRICS" "$1{table=\"outbox\"${2:-}}"; }
[ -n "$RUN_METRICS" ] || { cat "$work/relay.log"; fail "the relay's /metrics did not answer"; }
outages=$(m outbox_relay_nats_outages_total)
echo "nats: $outages outage(s) counted"
[ "${outages:-0}" -ge 1 ] || { cat "$work/relay.log"; fail "no NATS outage counted (nats_outages_total ${outages:-absent})"; }
assert_eq "$(m outbox_relay_up ',dependency="nats"')" 1 "up{dependency=nats} at the end (the stream checked again)"
assert_eq "$(m outbox_relay_dead_total)" 0 "dead_total"
assert_eq "$(sql $db 'SELECT MAX(attempt_count) FROM outbox')" 0 "largest attempt_count"
