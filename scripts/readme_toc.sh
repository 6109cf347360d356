#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The README's table of contents, made from its "## " headings (outside code
# blocks; not "## Contents" itself), between the lines <!-- toc:start -->
# and <!-- toc:end -->.
#   scripts/readme_toc.sh           exit 1 when the README's table is stale
#   scripts/readme_toc.sh --write   rewrite it
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
readme=$root/README.md

# GitHub's anchors: lower case, punctuation dropped, spaces to hyphens.
toc() {
  awk '/^```/ { fence = !fence; next } !fence && /^## / && $0 != "## Contents" { sub(/^## /, ""); print }' "$readme" |
    while IFS= read -r h; do
      a=$(printf '%s' "$h" | tr '[:upper:]' '[:lower:]' | sed 's/[^a-z0-9 _-]//g; s/ /-/g')
      printf -- '- [%s](#%s)\n' "$(printf '%s' "$h" | tr -d '`')" "$a"
    done
}

grep -q '^<!-- toc:start -->$' "$readme" && grep -q '^<!-- toc:end -->$' "$readme" ||
  { echo "readme_toc: no <!-- toc:start --> ... <!-- toc:end --> in README.md" >&2; exit 1; }
want=$(toc)
have=$(sed -n '/^<!-- toc:start -->$/,/^<!-- toc:end -->$/p' "$readme" | sed '1d;$d')
if [ "${1:-}" = --write ]; then
  tmp=$(mktemp)
  awk -v toc="$want" '/^<!-- toc:start -->$/ { print; print toc; skip = 1; next }
    /^<!-- toc:end -->$/ { skip = 0 } !skip { print }' "$readme" >"$tmp"
  cat "$tmp" >"$readme" && rm -f "$tmp"
  exit 0
fi
if [ "$want" != "$have" ]; then
  echo "readme_toc: the README's table of contents is stale (scripts/readme_toc.sh --write):" >&2
  diff <(echo "$have") <(echo "$want") >&2 || true
  exit 1
fi
echo "ok: the README's table of contents lists its $(grep -c . <<<"$want") sections"
