# SPDX-License-Identifier: Apache-2.0
# W3C Trace Context end to end: rows carry traceparent and tracestate in
# their headers, written with plain SQL and through the C producer API
# (outbox_enqueue_traced, outbox_enqueue_many_traced); the relay publishes
# them as the NATS headers of the same names, byte-identical, and invents
# none for rows without. A malformed traceparent or tracestate is the row's
# fault: the row goes dead with the reason and its neighbours are delivered.
# The producer API refuses a malformed one at once, writing nothing. The
# README's consumer, compiled from the README's text, reads the headers
# back from the stream.
. "$(dirname "$0")/../harness/lib.sh"
db=it_trace stream=IT_TRACE prefix=ittrace
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
db_fresh $db
stream_delete $stream

tp1=00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01
ts1='rojo=00f067aa0ba902b7, congo=t61rcWkgMzE'
tp2=00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00
ts2='vendor@sys=x"y\z,k=v'
tp3=00-5b8aa5a2d2c872e8321cf37308d69df2-051581bf3cb55c13-01
tp4=01-5b8aa5a2d2c872e8321cf37308d69df2-051581bf3cb55c13-03-extra
row() { # aggregate_id headers(SQL literal)
  sql $db "INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload, headers)
    VALUES (outbox_uuid_v7(), 'sql', '$1', 'created', '{}', $2)"
}
row ok-1 "JSON_OBJECT('traceparent', '$tp1', 'tracestate', '$ts1')"
row ok-2 "'{\"x-tenant\": \"acme\", \"traceparent\": \"$tp3\"}'"
row ok-3 "JSON_OBJECT('traceparent', '$tp4')"
row none "NULL"
row bad-short "'{\"traceparent\": \"00-4bf92f3577b34da6-00f067aa0ba902b7-01\"}'"
row bad-zeros "'{\"traceparent\": \"00-00000000000000000000000000000000-00f067aa0ba902b7-01\"}'"
row bad-upper "'{\"traceparent\": \"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01\"}'"
row bad-ff "'{\"traceparent\": \"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\"}'"
row bad-state "JSON_OBJECT('traceparent', '$tp1', 'tracestate', 'Rojo=1')"
row bad-alone "'{\"tracestate\": \"rojo=1\"}'"
row ok-4 "JSON_OBJECT('x-tenant', 'acme')"

# Through the C producer API: a batch of three with both headers beside an
# entry's own header, and one event with a traceparent alone.
tprod() { "$OUTBOX_TEST_BUILD/test/traceprod" "${OUTBOX_TEST_DB_URL}$db" "$@"; }
tprod "$tp2" "$ts2" 3 '{"x-tenant":"acme"}' >"$work/batch.ids"
assert_eq "$(wc -l <"$work/batch.ids")" 3 "events written by outbox_enqueue_many_traced"
tprod "$tp3" - 1 >"$work/one.ids"
assert_eq "$(sql $db "SELECT headers FROM outbox WHERE aggregate_type = 'trace' AND aggregate_id = 'api-1'
  AND JSON_VALUE(headers, '$.tracestate') IS NULL")" "{\"traceparent\":\"$tp3\"}" \
  "the headers object made for an entry without headers"
before=$(sql $db "SELECT COUNT(*) FROM outbox")
# Refused at once, with nothing written: a malformed traceparent, a
# malformed tracestate, and an entry that carries its own trace as well.
for args in "00-4bf92f3577b34da6-00f067aa0ba902b7-01|-|2" "$tp1|Rojo=1|2" \
  "$tp1|-|1|{\"traceparent\":\"$tp1\"}"; do
  IFS='|' read -r a b c d <<<"$args"
  rc=0
  if [ -n "${d:-}" ]; then tprod "$a" "$b" "$c" "$d" >"$work/refused" || rc=$?
  else tprod "$a" "$b" "$c" >"$work/refused" || rc=$?; fi
  cat "$work/refused"
  assert_eq "$rc" 3 "exit status of a refused traced call"
  grep -q "^refused: .*\(is not W3C Trace Context\|give it once\)" "$work/refused" ||
    fail "the refusal names the reason"
done
assert_eq "$(sql $db "SELECT COUNT(*) FROM outbox")" "$before" "rows after the refused calls"

relay $db $stream $prefix --drain 2>"$work/relay.log" || { cat "$work/relay.log"; fail "relay --drain"; }
assert_eq "$(sql $db "SELECT GROUP_CONCAT(aggregate_id ORDER BY aggregate_id) FROM outbox WHERE status = -1")" \
  "bad-alone,bad-ff,bad-short,bad-state,bad-upper,bad-zeros" "dead rows"
sql $db "SELECT aggregate_id, attempt_count, last_error FROM outbox WHERE status = -1" | sed 's/^/    /'
reason() { sql $db "SELECT last_error FROM outbox WHERE aggregate_id = '$1'"; }
case "$(reason bad-short)" in *"'traceparent' is refused: not a W3C traceparent: shorter than"*) ;;
  *) fail "reason of bad-short: $(reason bad-short)" ;; esac
case "$(reason bad-zeros)" in *"trace-id is all zeros"*) ;; *) fail "reason of bad-zeros" ;; esac
case "$(reason bad-upper)" in *"trace-id is not 32 lowercase hex"*) ;; *) fail "reason of bad-upper" ;; esac
case "$(reason bad-ff)" in *"version ff is invalid"*) ;; *) fail "reason of bad-ff" ;; esac
case "$(reason bad-state)" in *"'tracestate' is refused: not a W3C tracestate"*) ;;
  *) fail "reason of bad-state" ;; esac
case "$(reason bad-alone)" in *"tracestate without a traceparent"*) ;; *) fail "reason of bad-alone" ;; esac
assert_eq "$(sql $db "SELECT COUNT(*) FROM outbox WHERE status = 1")" 9 "delivered rows"

summary=$(stream_summary $stream)
assert_eq "$(field "$summary" messages)" 9 "messages in the stream"
streamcheck --stream $stream --subject '>' --dump 9 >"$work/dump"
count() { grep -cxF -- "$1" "$work/dump" || true; }
assert_eq "$(count "header traceparent: $tp1")" 1 "messages with the SQL row's traceparent"
assert_eq "$(count "header tracestate: $ts1")" 1 "messages with the SQL row's tracestate"
assert_eq "$(count "header traceparent: $tp4")" 1 "messages with a later version's traceparent"
assert_eq "$(count "header traceparent: $tp2")" 3 "messages with the batch's traceparent"
assert_eq "$(count "header tracestate: $ts2")" 3 "messages with the batch's tracestate"
assert_eq "$(count "header traceparent: $tp3")" 2 "messages with the third traceparent"
assert_eq "$(grep -c '^header traceparent: ' "$work/dump")" 7 "messages with a traceparent (none invented)"
assert_eq "$(grep -c '^header tracestate: ' "$work/dump")" 4 "messages with a tracestate"
assert_eq "$(count "header x-tenant: acme")" 5 "the entries' own headers beside the trace"

# The README's consumer, compiled from the README's text with the command its
# comment gives, prints each message's trace.
src=$(cd "$(dirname "$0")/../.." && pwd)
awk '/^## Carrying the trace/ { s = 1 } s && /^```c$/ { n++; if (n == 2) { c = 1; next } }
  c && /^```$/ { exit } c { print }' "$src/docs/producing.md" >"$work/trace_consumer.c"
head -1 "$work/trace_consumer.c" | grep -q '^/\* trace_consumer.c: ' ||
  fail "the README's consumer found: $(head -3 "$work/trace_consumer.c")"
build=$(sed -n 's/^ \*   \(cc trace_consumer.c .*\)$/\1/p' "$work/trace_consumer.c")
assert_eq "$build" 'cc trace_consumer.c $(pkg-config --cflags --libs libnats) -o trace_consumer' \
  "the README's build line"
(cd "$work" && eval "${build/cc /cc -Wall -Wextra -Werror ${OUTBOX_TEST_CFLAGS:-} }")
"$work/trace_consumer" "$OUTBOX_TEST_NATS_URL" $stream "$prefix.>" >"$work/consumed"
cat "$work/consumed"
assert_eq "$(wc -l <"$work/consumed")" 9 "messages the consumer read"
assert_eq "$(grep -cxF "$prefix.trace.created trace-id=${tp2:3:32} parent-id=${tp2:36:16} tracestate=$ts2" \
  "$work/consumed")" 3 "the batch's trace as the consumer reads it"
assert_eq "$(grep -c 'no trace$' "$work/consumed")" 2 "messages the consumer finds without a trace"
