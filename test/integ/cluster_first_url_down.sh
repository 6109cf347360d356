# SPDX-License-Identifier: Apache-2.0
# A three-node cluster with the first URL of the relay's list down at
# start-up: the relay starts on the others, creates its stream with
# --stream-replicas 3, and delivers every row.
. "$(dirname "$0")/../harness/lib.sh"
db=it_cluster_first stream=IT_CLUSTER_FIRST prefix=itclf
urls=$OUTBOX_TEST_CLUSTER_URL
work=$(mktemp -d)
trap '"$OUTBOX_TEST_SERVERS" start-node "$OUTBOX_TEST_CLUSTER_DIR" n1 >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
cs() { "$OUTBOX_TEST_STREAMCHECK" --nats "$urls" "$@"; }

db_fresh $db
seed $db 2000 512
for i in $(seq 1 60); do cs --stream $stream --delete 2>/dev/null && break; sleep 0.5; done
"$OUTBOX_TEST_SERVERS" kill-node "$OUTBOX_TEST_CLUSTER_DIR" n1
rc=0
timeout 60 "$OUTBOX_TEST_RELAY" --db "${OUTBOX_TEST_DB_URL}$db" --nats "$urls" --stream $stream \
  --subject-prefix $prefix --stream-replicas 3 --no-progress --drain 2>"$work/relay.log" || rc=$?
tail -5 "$work/relay.log"
assert_eq "$rc" 0 "relay exit status with the first URL down"
assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1')" 2000 "processed rows"
# --info prints the stream's settings first; reading the messages after it
# may be refused while a node is down, which does not matter here.
# The cluster may still be electing after the kill: ask a few times.
info=
for i in $(seq 1 20); do
  info=$(cs --stream $stream --info 2>/dev/null | head -1 || true)
  [ -n "$info" ] && break
  sleep 0.5
done
assert_eq "$(echo "$info" | tr ' ' '\n' | sed -n 's/^replicas=//p')" 3 "replicas of the created stream"
