#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The whole test suite, on a fresh Debian machine: installs what is missing,
# checks the formatting, builds with warnings as errors and with AddressSanitizer +
# UndefinedBehaviorSanitizer, runs every test, then runs the relay's
# integration test once more under valgrind in a build without sanitizers.
# The tests start their own throwaway MariaDB and nats-server on loopback and
# stop them afterwards.
#   scripts/test.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/deps.sh" valgrind clang-format

echo "== formatting (.clang-format)"
cd "$root"
unformatted=$(for f in $(git ls-files '*.c' '*.h' 2>/dev/null || find src include cli test examples bench -name '*.[ch]'); do
  clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || echo "$f"
done)
if [ -n "$unformatted" ]; then
  echo "not formatted per .clang-format (run clang-format -i on them):" $unformatted >&2
  exit 1
fi

echo "== build with ASan + UBSan"
"$root/scripts/build.sh" "$root/build/test-asan" -DOUTBOX_WERROR=ON -DOUTBOX_ASAN=ON \
  -DOUTBOX_UBSAN=ON -DOUTBOX_BUILD_BENCH=OFF
echo "== every test, sanitized"
# A test that fails is run once more before the suite fails: on two shared
# cores a few timing-sensitive tests have failed about once in three full
# runs (docs/testing.md); a test that fails twice fails the suite, and ctest
# prints each failed try.
(cd "$root/build/test-asan" && ctest --output-on-failure -j2 --timeout 600 --repeat until-pass:2)

echo "== build without sanitizers, for valgrind"
# Only what the valgrind tests run: their programs, the library, the stream
# checker they read the stream with (the sanitized build built everything).
cmake -S "$root" -B "$root/build/test-valgrind" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOUTBOX_WERROR=ON \
  -DOUTBOX_VALGRIND=ON -DOUTBOX_BUILD_BENCH=OFF -DOUTBOX_BUILD_EXAMPLES=OFF >/dev/null
cmake --build "$root/build/test-valgrind" -j"$(nproc)" --target relay_10k http_embed streamcheck
echo "== the relay integration test under valgrind"
(cd "$root/build/test-valgrind" && ctest --output-on-failure -L valgrind --timeout 600)
