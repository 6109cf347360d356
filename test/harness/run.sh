#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs one integration test with the fixtures' server addresses exported.
#   run.sh STATEFILE[:STATEFILE...] BUILD_DIR command args...
set -euo pipefail
states=$1; build=$2; shift 2
IFS=: read -r -a files <<<"$states"
for state in "${files[@]}"; do
  [ -f "$state" ] || { echo "no servers: the fixture for $state did not run" >&2; exit 1; }
  . "$(cat "$state")/env"
done
export OUTBOX_TEST_BUILD="$build"
export OUTBOX_TEST_STREAMCHECK="$build/test/streamcheck"
export OUTBOX_TEST_SERVERS="$(cd "$(dirname "$0")/../.." && pwd)/scripts/servers.sh"
export OUTBOX_TEST_RELAY="$build/outbox-uvrelay"
exec "$@"
