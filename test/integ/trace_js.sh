# SPDX-License-Identifier: Apache-2.0
# The README's nats.js consumer continues the trace: installed from the npm
# registry (nats, @opentelemetry/api, @opentelemetry/core) into the build
# folder once, it reads a durable consumer of the stream the relay filled and
# starts each span as the child of the row's traceparent; a row without one
# gets no trace (all-zero trace-id: the relay invented none). Skipped (77)
# without node and npm, or when the registry cannot be reached.
. "$(dirname "$0")/../harness/lib.sh"
command -v node >/dev/null && command -v npm >/dev/null ||
  { echo "skipped: node and npm are not installed"; exit 77; }
db=it_trace_js stream=IT_TRACE_JS prefix=ittracejs
js=$OUTBOX_TEST_BUILD/npm-trace
work=$(mktemp -d); p=
trap 'kill $p 2>/dev/null || true; rm -rf "$work"' EXIT
if [ ! -f "$js/node_modules/@opentelemetry/core/package.json" ]; then
  mkdir -p "$js"
  echo '{ "private": true }' >"$js/package.json"
  (cd "$js" && timeout 180 npm install --no-audit --no-fund --loglevel=error \
    nats@2 @opentelemetry/api@1 @opentelemetry/core@2) ||
    { echo "skipped: npm install failed (is the registry reachable?)"; exit 77; }
fi

db_fresh $db
stream_delete $stream
tp1=00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01
tp2=00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00
for h in "JSON_OBJECT('traceparent', '$tp1', 'tracestate', 'rojo=1')" "NULL" \
  "JSON_OBJECT('traceparent', '$tp2')"; do
  sql $db "INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload, headers)
    VALUES (outbox_uuid_v7(), 'order', '1', 'created', '{}', $h)"
done
relay $db $stream $prefix --drain 2>"$work/relay.log" || { cat "$work/relay.log"; fail "relay --drain"; }

# A durable consumer named as in the README, then the README's program with
# the test's server and stream.
url=$OUTBOX_TEST_NATS_URL
cat >"$js/setup-$stream.mjs" <<JS
import { connect, AckPolicy } from "nats";
const nc = await connect({ servers: "$url" });
const jsm = await nc.jetstreamManager();
await jsm.consumers.add("$stream", { durable_name: "billing", ack_policy: AckPolicy.Explicit });
await nc.close();
JS
timeout 30 node "$js/setup-$stream.mjs"
src=$(cd "$(dirname "$0")/../.." && pwd)
awk '/^In Node with nats.js/ { s = 1 } s && /^```js$/ { c = 1; next } c && /^```$/ { exit } c { print }' \
  "$src/docs/producing.md" >"$work/consumer.mjs"
grep -q 'W3CTraceContextPropagator' "$work/consumer.mjs" || fail "the README's consumer found"
sed "s#nats://127.0.0.1:4222#$url#; s#\"OUTBOX\"#\"$stream\"#" "$work/consumer.mjs" \
  >"$js/consumer-$stream.mjs"
node "$js/consumer-$stream.mjs" >"$work/out" 2>"$work/err" &
p=$!
for i in $(seq 1 300); do
  [ "$(wc -l <"$work/out")" -ge 3 ] && break
  kill -0 $p 2>/dev/null || break
  sleep 0.1
done
kill $p 2>/dev/null || true; wait $p 2>/dev/null || true; p=
cat "$work/out" "$work/err"
assert_eq "$(cat "$work/out")" "$prefix.order.created ${tp1:3:32}
$prefix.order.created 00000000000000000000000000000000
$prefix.order.created ${tp2:3:32}" "the traces the README's consumer continues"
