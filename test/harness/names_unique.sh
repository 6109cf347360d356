#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The integration tests share one MariaDB and one nats-server in a run:
# each names its own database (db=), stream (stream=) and subject prefix
# (prefix=). Two tests with the same name meet in the middle of a full run
# (a stream whose subjects overlap another's is refused), so a name used by
# two test files fails here, before any server starts.
#   test/harness/names_unique.sh TEST_DIR
set -euo pipefail
dir=${1:?usage: names_unique.sh TEST_DIR}
bad=0
for key in db stream prefix; do
  dups=$(grep -oE "(^|[ ;])$key=[A-Za-z0-9_]+" "$dir"/integ/*.sh | sed -E "s/:(.*[ ;])?$key=/ /" |
    sort -u | awk '{ n[$2]++; f[$2] = f[$2] " " $1 } END { for (v in n) if (n[v] > 1) print v ":" f[v] }')
  if [ -n "$dups" ]; then
    echo "$key= used by more than one test: $dups"
    bad=1
  fi
done
[ "$bad" = 0 ] && echo "every test's db=, stream= and prefix= is its own"
exit "$bad"
