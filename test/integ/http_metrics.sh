# SPDX-License-Identifier: Apache-2.0
# The --http responder on the relay's loop: /metrics scraped during and after
# a 5,000-row run agrees with the stream, the histograms fill, the process
# metrics hold plausible values; /healthz and /readyz answer; garbage,
# oversized and slow requests are refused while the relay keeps relaying, and
# a flood of connections over the limit is logged once per interval.
. "$(dirname "$0")/../harness/lib.sh"
db=it_http stream=IT_HTTP prefix=ithttp
work=$(mktemp -d); RELAY_PID=; trap 'kill $RELAY_PID 2>/dev/null || true; rm -rf "$work"' EXIT
db_fresh $db
stream_delete $stream
seed $db 5000 512
t_start=$(date +%s)
relay_bg "$work/relay.log" $db $stream $prefix --batch 50 --connections 2 \
  --http 127.0.0.1:0 --pending-interval 200ms
port=$(http_port "$work/relay.log")

# During the run: every scrape parses, and the published count only grows.
prev=0 scrapes=0
while [ "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 0')" != 0 ]; do
  text=$(curl -sf -m 5 "http://127.0.0.1:$port/metrics") || fail "a scrape during the run failed"
  now=$(metric_sum "$text" outbox_relay_published_total)
  [ "$now" -ge "$prev" ] || fail "published_total went back from $prev to $now"
  prev=$now scrapes=$((scrapes + 1))
  sleep 0.05
done
echo "ok: $scrapes scrapes during the run, the last saw $prev published"
[ "$scrapes" -ge 1 ] || fail "no scrape during the run"

# After the run: the counters settle on what the stream holds (the last
# commit is counted once its answer is in).
published_all() { [ "$(metric_sum "$(metrics $port)" outbox_relay_published_total)" -ge 5000 ]; }
wait_until 30 "published_total reaches 5000" published_all
# The database sessions docs/tuning.md counts for a relay: --connections N
# + 3 (the lease, the database watch, maintenance, which --http's pending
# sample runs). The count's own session has no database.
sessions() { MDB -N -B -e "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE DB = '$db'"; }
two_plus_three() { [ "$(sessions)" = 5 ]; }
wait_until 30 "5 database sessions for --connections 2" two_plus_three
echo "ok: 5 database sessions for --connections 2, as docs/tuning.md says"
headers=$(curl -s -m 5 -D - -o "$work/metrics.txt" "http://127.0.0.1:$port/metrics")
grep -qi '^content-type: text/plain; version=0.0.4' <<<"$headers" ||
  fail "content type of /metrics: $headers"
text=$(cat "$work/metrics.txt")
summary=$(stream_summary $stream)
assert_eq "$(metric_sum "$text" outbox_relay_published_total)" "$(field "$summary" messages)" \
  "published_total summed, against the stream's message count"
assert_eq "$(field "$summary" messages)" 5000 "messages in the stream"
for m in 'outbox_relay_pending_rows{table="outbox"}' 'outbox_relay_oldest_pending_age_seconds{' \
  'outbox_relay_up{table="outbox",dependency="database"} 1' \
  'outbox_relay_up{table="outbox",dependency="nats"} 1' \
  'outbox_relay_published_total{table="outbox",result="stored"} 5000' \
  'outbox_relay_batch_duration_seconds_bucket{table="outbox",le="+Inf"}' \
  'outbox_relay_delivery_lag_seconds_count{' '# TYPE outbox_relay_delivery_lag_seconds histogram'; do
  grep -qF "$m" "$work/metrics.txt" || { cat "$work/metrics.txt"; fail "metric line '$m'"; }
done
echo "ok: pending, lag, up and histogram series present"
for h in outbox_relay_batch_duration_seconds_count outbox_relay_delivery_lag_seconds_count; do
  n=$(metric_sum "$text" $h)
  [ "$n" -gt 0 ] || fail "$h fills: $n"
  echo "ok: $h = $n"
done

# The process metrics: values, not only names.
value() { awk -v n="$1" '$1 == n { print $2 }' "$work/metrics.txt"; }
t_now=$(date +%s)
start=$(value process_start_time_seconds)
awk -v s="$start" -v a="$t_start" -v b="$t_now" 'BEGIN { exit !(s >= a - 2 && s <= b + 1) }' ||
  fail "process_start_time_seconds $start within [$t_start, $t_now]"
rss=$(value process_resident_memory_bytes)
awk -v r="$rss" 'BEGIN { exit !(r > 1048576 && r < 4 * 1073741824) }' ||
  fail "process_resident_memory_bytes $rss between 1 MiB and 4 GiB"
fds=$(value process_open_fds)
own=$(ls /proc/$RELAY_PID/fd | wc -l)
[ "$fds" -gt 3 ] && [ $((fds - own)) -le 3 ] && [ $((own - fds)) -le 3 ] ||
  fail "process_open_fds $fds, the relay has $own"
[ "$fds" -lt "$(value process_max_fds)" ] || fail "process_open_fds below process_max_fds"
cpu=$(value process_cpu_seconds_total)
awk -v c="$cpu" 'BEGIN { exit !(c > 0 && c < 600) }' || fail "process_cpu_seconds_total $cpu"
# The build info carries what --version prints: the version and the commit.
line=$("$OUTBOX_TEST_RELAY" --version)
version=$(awk '{ print $2; exit }' <<<"$line")
commit=$(sed -n 's/^[^(]*(commit \([^;]*\);.*/\1/p' <<<"$line")
[ -n "$commit" ] || fail "--version names the commit: $line"
grep -qx "outbox_relay_build_info{version=\"$version\",revision=\"$commit\"} 1" "$work/metrics.txt" ||
  fail "build info with version $version, revision $commit: $(grep build_info "$work/metrics.txt")"
echo "ok: start $start, rss $rss, fds $fds (relay $own), cpu $cpu s, version $version ($commit)"
# The byte budget's gauges: something was held, never more than the default
# budget (32 MiB), and the peak is at least what is held now.
held=$(value 'outbox_relay_claimed_bytes{table="outbox"}')
peak=$(value 'outbox_relay_claimed_bytes_peak{table="outbox"}')
[ -n "$held" ] && [ -n "$peak" ] && [ "$peak" -gt 0 ] && [ "$peak" -le 33554432 ] &&
  [ "$held" -le "$peak" ] || fail "claimed bytes $held, peak $peak"
echo "ok: claimed bytes $held, peak $peak"
if command -v promtool >/dev/null; then
  promtool check metrics <"$work/metrics.txt" || fail "promtool check metrics"
fi
assert_eq "$(http_code $port /healthz)" 200 "/healthz"
assert_eq "$(http_code $port /readyz)" 200 "/readyz with both servers up"
assert_eq "$(http_code $port '/metrics?x=1')" 200 "/metrics with a query string"
assert_eq "$(http_code $port /nope)" 404 "an unknown path"
assert_eq "$(curl -s -o /dev/null -w '%{http_code}' -X POST "http://127.0.0.1:$port/metrics")" 405 \
  "POST"
assert_eq "$(curl -s -o /dev/null -w '%{http_code}' -I "http://127.0.0.1:$port/healthz")" 200 "HEAD"

# raw PORT BYTES: sends BYTES on a new connection and prints the status line
# of the answer, or "closed".
raw() {
  local reply
  reply=$( { exec 3<>"/dev/tcp/127.0.0.1/$1"; printf '%b' "$2" >&3; timeout 10 head -c 200 <&3; } \
    2>/dev/null | head -1 | tr -d '\r') || true
  echo "${reply:-closed}"
}
assert_eq "$(raw $port 'garbage\r\n\r\n')" "HTTP/1.1 400 Bad Request" "garbage"
assert_eq "$(raw $port '\x01\x02\x03 \xff\xfe /x\r\n\r\n')" "HTTP/1.1 400 Bad Request" "binary junk"
assert_eq "$(raw $port 'GET /metrics HTTP/9.9\r\n\r\n')" "HTTP/1.1 400 Bad Request" "a bad version"
assert_eq "$(raw $port 'GET /metrics HTTP/1.1\r\nHost: x\0\r\n\r\n')" "HTTP/1.1 400 Bad Request" \
  "a NUL byte"
big=$(head -c 20000 /dev/zero | tr '\0' 'a')
assert_eq "$(curl -s -o /dev/null -m 5 -w '%{http_code}' -H "X-Big: $big" \
  "http://127.0.0.1:$port/metrics")" 431 "20 kB of headers"

# Slow clients: a request that never completes gets 408 after the request
# timeout, while other clients are served meanwhile.
exec 4<>"/dev/tcp/127.0.0.1/$port"; printf 'GET /metrics HTTP/1.1\r\n' >&4
exec 5<>"/dev/tcp/127.0.0.1/$port" # says nothing at all
for i in $(seq 1 20); do exec {fd}<>"/dev/tcp/127.0.0.1/$port"; done
assert_eq "$(http_code $port /healthz)" 200 "/healthz while slow clients hang"
t0=$(date +%s)
slow=$(timeout 15 head -1 <&4 | tr -d '\r') || true
assert_eq "$slow" "HTTP/1.1 408 Request Timeout" "a request that stalls half-way"
silent=$(timeout 15 head -1 <&5 | tr -d '\r') || true
assert_eq "$silent" "HTTP/1.1 408 Request Timeout" "a client that says nothing"
echo "ok: the slow clients were answered after $(( $(date +%s) - t0 )) s"
exec 4>&- 5>&-

# More connections than the responder takes (64) are closed, and it serves
# again once they are gone.
pids=()
for i in $(seq 1 100); do (exec 3<>"/dev/tcp/127.0.0.1/$port"; sleep 5) 2>/dev/null & pids+=($!); done
wait_until 30 "the refusals over 64 connections logged" log_has "$work/relay.log" 'more than 64 connections'
kill "${pids[@]}" 2>/dev/null || true; wait "${pids[@]}" 2>/dev/null || true
# Served again once they are gone (their closes reach the loop first).
healthy() { [ "$(http_code $port /healthz)" = 200 ]; }
wait_until 10 "/healthz answering after the burst" healthy
assert_eq "$(http_code $port /healthz)" 200 "/healthz after a burst of 100 connections"
# The refusals are said once, not once per connection.
warned=$(grep -c 'more than 64 connections' "$work/relay.log" || true)
assert_eq "$warned" 1 "warnings about refused connections during the burst"

# The relay kept relaying through all of it.
seed $db 1000 256
for i in $(seq 1 200); do
  [ "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 0')" = 0 ] && break
  sleep 0.1
done
assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1')" 6000 "processed rows"
kill -TERM $RELAY_PID
rc=0; wait $RELAY_PID || rc=$?
assert_eq "$rc" 0 "relay exit status"
assert_eq "$(field "$(stream_summary $stream)" messages)" 6000 "messages in the stream"
# At the stop, the refusals not yet said are, with their count: several
# refusals (up to the burst's 36 over the limit) in at most two lines.
refused=$(sed -n 's/.*more than 64 connections: refused \([0-9]*\) .*/\1/p' "$work/relay.log" |
  awk '{ s += $1 } END { print s + 0 }')
lines=$(grep -c 'more than 64 connections' "$work/relay.log" || true)
[ "$lines" -le 2 ] || fail "$lines warnings about refused connections"
[ "$refused" -ge 3 ] && [ "$refused" -le 100 ] || fail "refused connections counted: $refused"
echo "ok: $refused refused connections said in $lines line(s)"
