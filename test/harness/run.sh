#!/usr/bin/env bash
# Runs one integration test with the fixture's server addresses exported.
#   run.sh STATEFILE BUILD_DIR command args...
set -euo pipefail
state=$1; build=$2; shift 2
[ -f "$state" ] || { echo "no servers: the servers fixture did not run" >&2; exit 1; }
dir=$(cat "$state")
. "$dir/env"
export OUTBOX_TEST_BUILD="$build"
export OUTBOX_TEST_STREAMCHECK="$build/test/streamcheck"
export OUTBOX_TEST_SERVERS="$(cd "$(dirname "$0")/../.." && pwd)/scripts/servers.sh"
export OUTBOX_TEST_RELAY="$build/outbox-uvrelay"
exec "$@"
