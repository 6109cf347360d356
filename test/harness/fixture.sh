#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# ctest fixture: starts or stops the throwaway servers for the whole run.
#   fixture.sh start STATEFILE          start servers in a new temporary folder
#   fixture.sh start-secure STATEFILE   the TLS servers (servers.sh start-secure)
#   fixture.sh start-cluster STATEFILE  three nats-servers as one cluster
#   fixture.sh start-galera STATEFILE   three mariadbd as one Galera cluster
#   fixture.sh stop STATEFILE           stop them and remove the folder
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
state=$2
case "$1" in
start|start-secure|start-cluster|start-galera)
  if [ -f "$state" ]; then "$here/scripts/servers.sh" stop "$(cat "$state")" || true; fi
  dir=$(mktemp -d "${TMPDIR:-/tmp}/outbox-test.XXXXXX")
  "$here/scripts/servers.sh" "$1" "$dir" >/dev/null
  echo "$dir" >"$state"
  echo "servers in $dir"
  ;;
stop)
  if [ -f "$state" ]; then "$here/scripts/servers.sh" stop "$(cat "$state")"; rm -f "$state"; fi
  ;;
esac
