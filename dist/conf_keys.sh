#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Prints the config-file keys of outbox-uvrelay, one a line, from the binary
# itself: those --print-config writes (as a key or as a comment naming it),
# and each other long flag name of --help offered to the binary as a key
# (`NAME = x` in a file): it is one unless the binary answers that the key is
# unknown or cannot be set in a file (a bad value still makes it one).
# Used by dist/man_conf.sh (outbox-uvrelay.conf(5)) and scripts/config_doc.sh.
#   dist/conf_keys.sh BINARY
set -euo pipefail
bin=$1
here=$(cd "$(dirname "$0")" && pwd)
home=$(mktemp -d)
trap 'rm -rf "$home"' EXIT
# Nothing of this machine's settings: no OUTBOX_* or NATS_* variable, a home
# without option files.
run() { (cd "$home" && env -i PATH=/usr/bin:/bin HOME="$home" LC_ALL=C "$bin" "$@" </dev/null); }
printed=$(run --print-config 2>/dev/null |
  sed -n 's/^\([a-z][a-z0-9-]*\) = .*/\1/p; s/^# \([a-z][a-z0-9-]*\) is .*/\1/p; s/^# \([a-z][a-z0-9-]*\): .*/\1/p')
for name in $(run --help | awk -f "$here/help2keys.awk" | awk -F'\t' '$1 == "option" { print $2 }' |
  grep -o -- '--[a-z][a-z0-9-]*' | sed 's/^--//' | sort -u); do
  if ! grep -qx -- "$name" <<<"$printed"; then
    printf '%s = x\n' "$name" >"$home/probe.conf"
    answer=$(run --config "$home/probe.conf" --print-config 2>&1 >/dev/null || true)
    grep -q "unknown key\|cannot be set in a config file" <<<"$answer" && continue
  fi
  echo "$name"
done
