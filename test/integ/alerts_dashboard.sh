# SPDX-License-Identifier: Apache-2.0
# The Prometheus rules and the Grafana dashboard of dist/ (README, "Alerts and
# dashboards"): the README's recipe as written (promtool's check and unit
# tests, the install, its prometheus.yml checked, the dashboard's import
# command); every metric that the rules, their unit tests and the dashboard
# name is one a running relay exports, with the labels it writes; and a real
# Prometheus scraping the relay evaluates every rule without error, fires
# OutboxRelayDeadRows (and no other alert) when a row dies, and answers every
# expression of the dashboard with data.
. "$(dirname "$0")/../harness/lib.sh"
. "$(dirname "$0")/../harness/private.sh"
src=$(cd "$(dirname "$0")/../.." && pwd)
rules=$src/dist/prometheus/outbox-uvrelay.rules.yml
unit=$src/dist/prometheus/outbox-uvrelay.rules.test.yml
dash=$src/dist/grafana/outbox-uvrelay.json
db=it_alerts stream=IT_ALERTS prefix=italerts user=it_alerts
work=$(mktemp -d); RELAY_PID= PROM_PID= GRAFANA_PID=
cleanup() {
  kill $RELAY_PID $PROM_PID $GRAFANA_PID 2>/dev/null || true
  wait 2>/dev/null || true
  MDB -e "DROP USER IF EXISTS '$user'@'127.0.0.1'" || true
  rm -rf "$work"
}
trap cleanup EXIT
for t in promtool prometheus jq python3; do
  command -v $t >/dev/null || fail "$t is missing (scripts/deps.sh installs it)"
done

# readme_block LANG N: the N-th ```LANG block of the README's section.
readme_block() {
  awk -v lang="$1" -v n="$2" '/^## / { s = ($0 == "## Alerts and dashboards") }
    c && /^```$/ { exit } c { print; next } s && $0 == "```" lang && ++k == n { c = 1 }' \
    "$src/docs/monitoring.md"
}

# The README's promtool commands, as written, from the checkout.
recipe=$(readme_block sh 1)
assert_eq "$(echo "$recipe" | grep -c '^promtool \(check\|test\) rules dist/prometheus/')" 2 \
  "promtool commands in the README"
(cd "$src" && bash -euo pipefail -c "$recipe") || fail "the README's promtool commands"

# Installed, and loaded as the README says. Its /usr/local is a scratch prefix
# here and /etc/prometheus a scratch folder; `systemctl reload` is left out.
cmake --install "$OUTBOX_TEST_BUILD" --prefix "$work/prefix" >/dev/null
share=$work/prefix/share/outbox-uvrelay
for f in prometheus/outbox-uvrelay.rules.yml prometheus/outbox-uvrelay.rules.test.yml \
  grafana/outbox-uvrelay.json; do
  cmp -s "$share/${f#*/}" "$src/dist/$f" || fail "installed: share/outbox-uvrelay/${f#*/}"
done
(cd "$share" && promtool test rules outbox-uvrelay.rules.test.yml >/dev/null) ||
  fail "the installed rules' unit tests"
mkdir -p "$work/etc/prometheus"
readme_block yaml 1 >"$work/etc/prometheus/prometheus.yml"
load=$(readme_block sh 2)
assert_eq "$(echo "$load" | tail -1)" "systemctl reload prometheus" "the README's last loading step"
load=$(echo "$load" | sed '$d' | sed "s|/usr/local/|$work/prefix/|g; s|/etc/prometheus|$work/etc/prometheus|g")
bash -euo pipefail -c "$load" || fail "the README's cp and promtool check config"
echo "ok: installed; the README's prometheus.yml loads the rules"

# The dashboard's structure, then the README's import command against a
# stand-in for Grafana's API (POST /api/dashboards/db) that keeps the request.
jq -e '.schemaVersion >= 36 and .uid == "outbox-uvrelay" and .id == null
  and ([.templating.list[] | select(.type == "datasource" and .query == "prometheus")] | length) == 1
  and ([.panels[] | select(.type != "row") | select((.targets | length) == 0
        or .datasource.uid != "${datasource}" or any(.targets[]; .datasource.uid != "${datasource}"))]
       | length) == 0
  and ([.panels[].id] | length) == ([.panels[].id] | unique | length)
  and all(.panels[]; .gridPos.x + .gridPos.w <= 24)' "$dash" >/dev/null ||
  fail "the dashboard's structure (schemaVersion, datasource variable, targets, ids, grid)"
gport=$(free_port)
python3 - "$gport" "$work/import" <<'PY' &
import http.server, sys
port, out = int(sys.argv[1]), sys.argv[2]
class Grafana(http.server.BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'
    def do_POST(self):
        body = self.rfile.read(int(self.headers['Content-Length']))
        open(out + '.body', 'wb').write(body)
        open(out + '.head', 'w').write('%s %s\n%s' % (self.command, self.path, self.headers))
        reply = b'{"status":"success","uid":"outbox-uvrelay"}'
        self.send_response(200)
        self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)
    def log_message(self, *args):
        pass
server = http.server.HTTPServer(('127.0.0.1', port), Grafana)
open(out + '.ready', 'w').close()
server.handle_request()
PY
GRAFANA_PID=$!
for i in $(seq 1 100); do [ -f "$work/import.ready" ] && break; sleep 0.1; done
echo 'Authorization: Bearer test-token' >"$work/grafana-auth.txt"
import=$(readme_block sh 3 | sed "s|/usr/local/|$work/prefix/|; s|127.0.0.1:3000|127.0.0.1:$gport|")
(cd "$work" && bash -euo pipefail -c "$import") >/dev/null || fail "the README's import command"
wait $GRAFANA_PID; GRAFANA_PID=
assert_eq "$(head -1 "$work/import.head")" "POST /api/dashboards/db" "the import's request"
grep -q '^Authorization: Bearer test-token' "$work/import.head" ||
  fail "the import sends the header file's token: $(cat "$work/import.head")"
jq -e '.overwrite == true and .dashboard.uid == "outbox-uvrelay" and (.dashboard.panels | length) > 10' \
  "$work/import.body" >/dev/null || fail "the import's body"
echo "ok: the dashboard's import command posts it with the token"

# A relay with most of its series: rows delivered, a pending sample taken. Its
# user may lose UPDATE below, and its stream holds 420 messages, what this
# test delivers before it fills the stream on purpose.
db_fresh $db
stream_delete $stream
streamcheck --stream $stream --create "$prefix.>" --max-msgs 420 --discard-new
MDB -e "DROP USER IF EXISTS '$user'@'127.0.0.1'; CREATE USER '$user'@'127.0.0.1' IDENTIFIED BY 'alerts';
  GRANT SELECT ON $db.* TO '$user'@'127.0.0.1'; GRANT UPDATE ON $db.outbox TO '$user'@'127.0.0.1'"
seed $db 300 256
"$OUTBOX_TEST_RELAY" --db "$(echo "$OUTBOX_TEST_DB_URL" | sed "s|//[^@]*@|//$user:alerts@|")$db" \
  --nats "$OUTBOX_TEST_NATS_URL" --stream $stream --subject-prefix $prefix --no-progress \
  --batch 50 --http 127.0.0.1:0 --pending-interval 200ms 2>"$work/relay.log" &
RELAY_PID=$!
port=$(http_port "$work/relay.log")
for i in $(seq 1 150); do
  metrics $port >"$work/metrics.txt"
  [ "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 0')" = 0 ] &&
    grep -q '^outbox_relay_oldest_pending_age_seconds{' "$work/metrics.txt" && break
  sleep 0.2
done
grep -q '^outbox_relay_oldest_pending_age_seconds{' "$work/metrics.txt" ||
  { show_log "$work/relay.log"; fail "no pending sample in /metrics"; }

# Every metric named is exported, with its labels.
jq -r '(.panels[].targets[]?.expr), (.templating.list[] | select(.type == "query") | .definition)' \
  "$dash" >"$work/dashboard.exprs"
python3 - "$work/metrics.txt" "$rules" "$unit" "$work/dashboard.exprs" "$dash" <<'PY' ||
import re, sys, yaml
metrics, rules, unit, dash, dash_json = sys.argv[1:]
sample = re.compile(r'^([A-Za-z_:][A-Za-z0-9_:]*)(?:\{(.*)\})? ')
pair = re.compile(r'([A-Za-z_][A-Za-z0-9_]*)="((?:[^"\\]|\\.)*)"')
exported = {}  # name -> list of label dicts, as /metrics writes them
for line in open(metrics):
    m = sample.match(line)
    if m and not line.startswith('#'):
        exported.setdefault(m.group(1), []).append(dict(pair.findall(m.group(2) or '')))
groups = yaml.safe_load(open(rules))['groups']
records = {r['record'] for g in groups for r in g['rules'] if 'record' in r}
exprs = [('rule ' + r.get('record', r.get('alert', '')), r['expr'])
         for g in groups for r in g['rules']]
exprs += [('dashboard', e) for e in open(dash).read().splitlines() if e]
bad, names = [], set()
for where, e in exprs:
    for k, v in re.findall(r'\b(dependency|reason|result)\s*=\s*"([^"]*)"', e):
        if not any(l.get(k) == v for ls in exported.values() for l in ls):
            bad.append('%s: %s="%s" is no label the relay writes' % (where, k, v))
    for t in re.findall(r'[A-Za-z_:][A-Za-z0-9_:]*', re.sub(r'"[^"]*"', '""', e)):
        if re.fullmatch(r'[a-z_]+:[a-z0-9_]+:[a-z0-9_]+', t):
            names.add(t)
            if t not in records:
                bad.append('%s: %s is no recording rule' % (where, t))
        elif t.startswith(('outbox_relay_', 'process_')) or t == 'up':
            names.add(t)
            if t != 'up' and t not in exported:
                bad.append('%s: %s is not exported' % (where, t))
series = 0
for test in yaml.safe_load(open(unit))['tests']:
    for s in test['input_series']:
        m = re.fullmatch(r'([A-Za-z_:][A-Za-z0-9_:]*)\{(.*)\}', s['series'])
        name, labels = m.group(1), dict(pair.findall(m.group(2)))
        series += 1
        if labels.pop('job', None) is None or 'instance' not in labels:
            bad.append('test series %s: no job or instance label' % s['series'])
        labels.pop('instance', None)
        if name == 'up':
            continue
        keys = [set(l) for l in exported.get(name, [])]
        if set(labels) not in keys:
            bad.append('test series %s: the relay writes %s with labels %s' % (
                s['series'], name, sorted({tuple(sorted(k)) for k in keys}) or 'never'))
        for k, v in labels.items():
            if k != 'table' and not any(l.get(k) == v for l in exported.get(name, [])):
                bad.append('test series %s: %s="%s" is not written' % (s['series'], k, v))
# The metrics that say delivery or the cursors stopped (docs/monitoring.md's
# runbook lists them): each is read by an alert, directly or through a
# recording rule; every alert has a runbook and is named on the dashboard.
stops = ['up', 'outbox_relay_up', 'outbox_relay_published_total', 'outbox_relay_failures_total',
         'outbox_relay_dead_total', 'outbox_relay_oldest_pending_age_seconds',
         'outbox_relay_buckets_owned', 'outbox_relay_leader', 'outbox_relay_cursor_gap_age_seconds',
         'outbox_relay_cursor_mismatch', 'outbox_relay_cursor_members_down',
         'outbox_relay_nats_stream_missing', 'outbox_relay_nats_stream_losses_total', 'outbox_relay_subjects_paused']
def metrics_of(e):
    found = set()
    for t in re.findall(r'[A-Za-z_:][A-Za-z0-9_:]*', re.sub(r'"[^"]*"', '""', e)):
        if t in records:
            found |= metrics_of(next(r['expr'] for g in groups for r in g['rules']
                                     if r.get('record') == t))
        elif t.startswith('outbox_relay_') or t == 'up':
            found.add(t)
    return found
alerts = [r for g in groups for r in g['rules'] if 'alert' in r]
alerted = set().union(*(metrics_of(r['expr']) for r in alerts))
bad += ['%s means a stop and no alert reads it' % m for m in stops if m not in alerted]
panels = open(dash_json).read()
for r in alerts:
    if not r.get('annotations', {}).get('runbook'):
        bad.append('alert %s: no runbook annotation' % r['alert'])
    if r['alert'] not in panels:
        bad.append('alert %s: no panel of the dashboard names it' % r['alert'])
for b in bad:
    print('FAIL: ' + b)
print('ok: %d expressions name %d metrics, all exported or recorded; %d unit-test series shaped '
      'as /metrics writes them; %d alerts, each with a runbook and a panel, cover the %d metrics '
      'that mean a stop' % (len(exprs), len(names), series, len(alerts), len(stops)))
unused = sorted(n for n in exported if n.startswith('outbox_relay_') and not n.endswith(
    ('_bucket', '_sum', '_count')) and n not in names)
print('not shown or alerted on: %s' % (', '.join(unused) or 'none'))
sys.exit(1 if bad else 0)
PY
  fail "metrics named in the rules, their tests or the dashboard"

# A real Prometheus with the README's prometheus.yml, scraping the relay and
# evaluating the rules every second.
pport=$(free_port)
{ printf 'global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n'
  sed "s|127.0.0.1:9464|127.0.0.1:$port|" "$work/etc/prometheus/prometheus.yml"; } \
  >"$work/etc/prometheus/fast.yml"
prometheus --config.file="$work/etc/prometheus/fast.yml" --storage.tsdb.path="$work/tsdb" \
  --web.listen-address="127.0.0.1:$pport" 2>"$work/prometheus.log" &
PROM_PID=$!
api() { curl -sf -m 5 "http://127.0.0.1:$pport/api/v1/$1" || true; }
query() { curl -sf -m 5 "http://127.0.0.1:$pport/api/v1/query" --data-urlencode "query=$1" || true; }
# count QUERY: the number of series QUERY answers (-1 on an error).
count() { query "$1" | jq -r 'if .status == "success" then .data.result | length else -1 end' 2>/dev/null || echo -1; }
# firing: the alerts Prometheus holds, "NAME STATE TABLE" a line.
alerts() { api alerts | jq -r '.data.alerts[]? | "\(.labels.alertname) \(.state) \(.labels.table)"'; }
for i in $(seq 1 300); do
  [ "$(count 'outbox_relay_dead_total{job="outbox-uvrelay"} == 0')" = 1 ] && break
  kill -0 $PROM_PID 2>/dev/null || { show_log "$work/prometheus.log"; fail "prometheus exited"; }
  sleep 0.2
done
[ "$(count 'outbox_relay_dead_total{job="outbox-uvrelay"} == 0')" = 1 ] ||
  { show_log "$work/prometheus.log" 20; fail "prometheus did not scrape the relay"; }
echo "ok: prometheus scrapes the relay"

# A row dies (its aggregate_type cannot be a subject token), among new rows.
sql $db "INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload)
  VALUES (outbox_uuid_v7(), 'bad type', 'a1', 'created', '{}')"
seed $db 100 256
for i in $(seq 1 300); do
  alerts | grep -qx 'OutboxRelayDeadRows firing outbox' && break
  sleep 0.2
done
firing=$(alerts | sort)
assert_eq "$firing" "OutboxRelayDeadRows firing outbox" "the alerts Prometheus holds after a row died"
assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = -1')" 1 "dead rows"

# Every rule evaluated without error; every recording rule, and every
# expression of the dashboard with Grafana's variables filled in as for the
# whole job, answers with series (a variable's label_values(SELECTOR, LABEL)
# by its selector).
python3 - "$pport" "$rules" "$work/dashboard.exprs" <<'PY' || fail "rules or dashboard queries"
import json, re, sys, urllib.parse, urllib.request, yaml
port, rules, dash = sys.argv[1:]
def api(path, **q):
    url = 'http://127.0.0.1:%s/api/v1/%s?%s' % (port, path, urllib.parse.urlencode(q))
    return json.load(urllib.request.urlopen(url, timeout=10))
bad = ['rule %s: %s %s' % (r['name'], r['health'], r.get('lastError', ''))
       for g in api('rules')['data']['groups'] for r in g['rules'] if r['health'] != 'ok']
records = [r['record'] for g in yaml.safe_load(open(rules))['groups'] for r in g['rules']
           if 'record' in r]
fill = {'$__rate_interval': '1m', '$job': 'outbox-uvrelay', '$instance': '.*', '$table': '.*'}
exprs = []
for e in open(dash).read().splitlines():
    for k, v in fill.items():
        e = e.replace(k, v)
    m = re.fullmatch(r'label_values\((.*), *([a-z_]+)\)', e)
    exprs.append(m.group(1) if m else e)
for e in records + exprs:
    r = api('query', query=e)
    if r['status'] != 'success' or not r['data']['result']:
        bad.append('no data for %s: %s' % (e, json.dumps(r)[:300]))
for b in bad:
    print('FAIL: ' + b)
print('ok: every rule evaluates; %d recording rules and %d expressions of the dashboard answer '
      'with data' % (len(records), len(exprs)))
sys.exit(1 if bad else 0)
PY

# The two pauses the alerts read from series: on the database's side (the
# relay's user loses UPDATE) database failures grow while nothing is
# published and both up gauges stay 1 (OutboxRelayDatabaseRefusing)...
# value SERIES: its value in the relay's /metrics now.
value() { metric_value "$(metrics $port)" "$1"; }
published() { metric_sum "$(metrics $port)" outbox_relay_published_total; }
before=$(published)
MDB -e "REVOKE UPDATE ON $db.outbox FROM '$user'@'127.0.0.1'"
seed $db 20 256
for i in $(seq 1 100); do
  [ "$(value 'outbox_relay_failures_total{table="outbox",reason="database"}')" -ge 2 ] && break
  sleep 0.2
done
assert_eq "$(value 'outbox_relay_failures_total{table="outbox",reason="database"}' | awk '{ print ($1 >= 2) }')" 1 \
  "database failures counted (at least 2) while UPDATE is revoked"
assert_eq "$(published)" "$before" "rows published while UPDATE is revoked"
assert_eq "$(value 'outbox_relay_up{table="outbox",dependency="database"}')$(value \
  'outbox_relay_up{table="outbox",dependency="nats"}')" 11 "both up gauges while UPDATE is revoked"
MDB -e "GRANT UPDATE ON $db.outbox TO '$user'@'127.0.0.1'"
wait_sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1' 420 30 ||
  { show_log "$work/relay.log" 20; fail "the rows after UPDATE was granted again"; }

# ... and on the broker's side (the stream full, discard new) the nats gauge
# is 0: OutboxRelayNatsNotReady becomes pending in Prometheus.
seed $db 10 256
for i in $(seq 1 300); do
  alerts | grep -qx 'OutboxRelayNatsNotReady pending outbox' && break
  sleep 0.2
done
assert_eq "$(value 'outbox_relay_up{table="outbox",dependency="nats"}')" 0 "up{dependency=nats} with the stream full"
alerts | grep -qx 'OutboxRelayNatsNotReady pending outbox' ||
  fail "OutboxRelayNatsNotReady pending with the stream full: $(alerts)"
echo "ok: OutboxRelayNatsNotReady pending while the stream is full; readyz: $(curl -s -m 5 \
  "http://127.0.0.1:$port/readyz")"

kill -TERM $RELAY_PID
rc=0; wait $RELAY_PID || rc=$?; RELAY_PID=
assert_eq "$rc" 0 "relay exit status"
