#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The demo, on a fresh Debian machine: installs what is missing, builds,
# starts a throwaway MariaDB and nats-server, writes events with the example
# producer, relays them into JetStream and shows what the stream holds.
# Everything it started is stopped at the end. The servers take free ports
# from OUTBOX_PORT_RANGE (LOW-HIGH, default 10000-29999; see scripts/servers.sh).
#   scripts/demo.sh [EVENTS]
#   OUTBOX_PORT_RANGE=20000-20999 scripts/demo.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
events=${1:-20000}
"$root/scripts/deps.sh"
build=$root/build/demo
"$root/scripts/build.sh" "$build"

dir=$(mktemp -d "${TMPDIR:-/tmp}/outbox-demo.XXXXXX")
trap '"$root/scripts/servers.sh" stop "$dir"' EXIT
echo "== starting MariaDB and nats-server in $dir"
"$root/scripts/servers.sh" start "$dir" >/dev/null
. "$dir/env"
MDB() { "$OUTBOX_TEST_MARIADB_CLIENT" --no-defaults -uroot -S "$OUTBOX_TEST_DB_SOCKET" "$@"; }
MDB -e "CREATE DATABASE shop"
"$build/outbox-uvrelay" schema | MDB shop
DB="${OUTBOX_TEST_DB_URL}shop"

echo "== writing $events orders, each with its event in the same transaction (10 orders a transaction)"
"$build/example-producer" "$DB" "$events" 10

echo "== relaying (outbox-uvrelay --drain)"
"$build/outbox-uvrelay" --db "$DB" --nats "$OUTBOX_TEST_NATS_URL" --drain --progress

echo "== the outbox table"
MDB shop -e "SELECT status, COUNT(*) AS rows_ FROM outbox GROUP BY status"
echo "== the stream (first message in full)"
"$build/test/streamcheck" --nats "$OUTBOX_TEST_NATS_URL" --stream OUTBOX --info --dump 1 |
  cut -c1-160
