#!/usr/bin/env bash
# The whole test suite, on a fresh Debian machine: installs what is missing,
# builds with warnings as errors, and runs every test. The tests start their
# own throwaway MariaDB and nats-server on loopback and stop them afterwards.
#   scripts/test.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/deps.sh" valgrind
build=$root/build/test
"$root/scripts/build.sh" "$build" -DOUTBOX_WERROR=ON
cd "$build"
ctest --output-on-failure -j2 --timeout 600
