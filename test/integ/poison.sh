# SPDX-License-Identifier: Apache-2.0
# Rows the broker cannot take end dead after one attempt, with their reason,
# while the rows around them flow:
#   - a payload over the stream's max message size (JetStream refuses it),
#   - a payload over the server's max_payload (the client refuses it),
#   - an aggregate_type that cannot be a subject token.
. "$(dirname "$0")/../harness/lib.sh"
db=it_poison stream=IT_POISON prefix=itpoison
db_fresh $db
stream_delete $stream
streamcheck --stream $stream --create "$prefix.>" --max-msg-size 4096
seed $db 300 512
sql $db "INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload) VALUES
  (outbox_uuid_v7(), 'order', 'big', 'created', JSON_OBJECT('pad', REPEAT('x', 6000))),
  (outbox_uuid_v7(), 'order', 'huge', 'created', JSON_OBJECT('pad', REPEAT('y', 1100000))),
  (outbox_uuid_v7(), 'bad type', 'subj', 'created', '{}')"
seed $db 300 512

relay $db $stream $prefix --drain --batch 50 2>/dev/null
assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1')" 600 "good rows processed"
assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = -1 AND attempt_count = 1')" 3 \
  "poison rows dead after one attempt"
big=$(sql $db "SELECT last_error FROM outbox WHERE aggregate_id = 'big'")
huge=$(sql $db "SELECT last_error FROM outbox WHERE aggregate_id = 'huge'")
subj=$(sql $db "SELECT last_error FROM outbox WHERE aggregate_id = 'subj'")
echo "big:  $big"; echo "huge: $huge"; echo "subj: $subj"
case "$big" in *"JetStream error 400"*) ;; *) fail "reason for the oversized message: $big" ;; esac
case "$huge" in *max_payload*) ;; *) fail "reason for the over-max_payload message: $huge" ;; esac
case "$subj" in *aggregate_type*) ;; *) fail "reason for the bad subject: $subj" ;; esac
summary=$(stream_summary $stream)
assert_eq "$(field "$summary" messages)" 600 "messages in the stream"
assert_eq "$(field "$summary" distinct)" 600 "distinct ids in the stream"
