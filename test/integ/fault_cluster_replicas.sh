# SPDX-License-Identifier: Apache-2.0
# Issue 12, point 5: a JetStream cluster. On a private three-node cluster:
#   - a stream the relay creates without being told the replicas is R1: the
#     relay must warn at start-up that the servers form a cluster and the
#     stream has a single replica (a lost node stalls everything);
#   - the same warning for an existing R1 stream it uses;
#   - --stream-replicas 3 creates an R3 stream (streamcheck --info shows
#     replicas=3), without the warning;
# each run drains its rows (--drain exits 0).
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/private.sh"
db=it_fault_cluster prefix=itfcluster
work=$(mktemp -d); RELAY_PID=
trap 'kill -KILL $RELAY_PID 2>/dev/null || true; private_cleanup; rm -rf "$work"' EXIT

pnats_cluster "$work"
urls=$CLUSTER_URLS
OUTBOX_TEST_NATS_URL=$urls
echo "ok: three-node JetStream cluster on ports ${CLUSTER_PORTS[*]}"
db_fresh $db
failures=()

# run_drain NAME STREAM [flags...]: 200 rows, relay --drain, exit 0 within 45 s.
run_drain() {
  local name=$1 stream=$2; shift 2
  seed $db 200 256
  "$OUTBOX_TEST_RELAY" --db "${OUTBOX_TEST_DB_URL}$db" --nats "$urls" --stream $stream \
    --subject-prefix $prefix --no-progress --drain "$@" 2>"$work/$name.log" &
  RELAY_PID=$!
  wait_exit $RELAY_PID 45
  echo "$name: exit $WAIT_RC after $WAITED_MS ms; $(streamcheck --stream $stream --info-only 2>&1 | head -1)"
  if [ "$WAIT_RC" != 0 ]; then
    show_log "$work/$name.log" 10
    failures+=("$name: --drain exit status $WAIT_RC, expected 0")
  fi
}
replica_warning() { grep -Ei 'replica' "$work/$1.log" | grep -Ei ' warn ' || true; }

# 1. A stream the relay creates, with no replica count given: R1, and a warning.
run_drain created IT_FAULT_R1
info=$(streamcheck --stream IT_FAULT_R1 --info-only | head -1)
case "$info" in
  *"replicas=1 "*) echo "ok: the stream the relay created is R1" ;;
  *) failures+=("without --stream-replicas the relay's stream is not R1: $info") ;;
esac
w=$(replica_warning created)
if [ -n "$w" ]; then echo "ok: warned: $w"; else
  grep -E ' warn |stream' "$work/created.log" | head -5 | sed 's/^/    /' || true
  failures+=("the relay created an R1 stream on a three-node cluster without a warning about replicas")
fi

# 2. An existing R1 stream on the cluster: the same warning.
stream_delete IT_FAULT_R1
streamcheck --stream IT_FAULT_R1_OLD --create "$prefix.>" --replicas 1
run_drain existing IT_FAULT_R1_OLD
w=$(replica_warning existing)
if [ -n "$w" ]; then echo "ok: warned: $w"; else
  failures+=("the relay used an R1 stream on a three-node cluster without a warning about replicas")
fi
stream_delete IT_FAULT_R1_OLD

# 3. --stream-replicas 3.
if grep -q -- '--stream-replicas' <<<"$("$OUTBOX_TEST_RELAY" --help)"; then
  # On a loaded machine the cluster may briefly see a peer as offline and
  # refuse to place three replicas: wait until it places them again.
  for i in $(seq 1 120); do
    streamcheck --stream PROBE3 --create 'probe3.>' --replicas 3 2>/dev/null && break
    sleep 0.5
  done
  streamcheck --stream PROBE3 --delete || true
  run_drain r3 IT_FAULT_R3 --stream-replicas 3
  info=$(streamcheck --stream IT_FAULT_R3 --info-only | head -1)
  case "$info" in *"replicas=3 "*) echo "ok: --stream-replicas 3 created an R3 stream" ;;
    *) failures+=("--stream-replicas 3: the stream is not R3: $info") ;; esac
  [ -z "$(replica_warning r3)" ] || failures+=("a replica warning for an R3 stream: $(replica_warning r3)")
else
  failures+=("the relay has no --stream-replicas flag (--help does not list it)")
fi
assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status <> 1')" 0 "rows not processed"
if [ ${#failures[@]} -gt 0 ]; then
  printf 'FAIL: %s\n' "${failures[@]}" >&2
  exit 1
fi
