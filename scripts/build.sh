#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Configures and builds into a folder (default: build).
#   scripts/build.sh [BUILD_DIR] [cmake -D options...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$root/build}; shift || true
cmake -S "$root" -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
cmake --build "$dir" -j"$(nproc)"
