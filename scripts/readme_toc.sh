#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The tables of contents of README.md, and of ARCHITECTURE.md and the pages of
# docs/ that have one, made from their "## " headings (outside code blocks;
# not "## Contents" itself), between the lines <!-- toc:start --> and
# <!-- toc:end -->.
#   scripts/readme_toc.sh           exit 1 when a table is stale
#   scripts/readme_toc.sh --write   rewrite them
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
write=0
[ "${1:-}" = --write ] && write=1

# GitHub's anchors: lower case, punctuation dropped, spaces to hyphens.
toc() {
  awk '/^```/ { fence = !fence; next } !fence && /^## / && $0 != "## Contents" { sub(/^## /, ""); print }' "$1" |
    while IFS= read -r h; do
      a=$(printf '%s' "$h" | tr '[:upper:]' '[:lower:]' | sed 's/[^a-z0-9 _-]//g; s/ /-/g')
      printf -- '- [%s](#%s)\n' "$(printf '%s' "$h" | tr -d '`')" "$a"
    done
}

grep -q '^<!-- toc:start -->$' "$root/README.md" && grep -q '^<!-- toc:end -->$' "$root/README.md" ||
  { echo "readme_toc: no <!-- toc:start --> ... <!-- toc:end --> in README.md" >&2; exit 1; }
stale=0 n=0
for page in "$root/README.md" "$root/ARCHITECTURE.md" "$root"/docs/*.md; do
  grep -q '^<!-- toc:start -->$' "$page" || continue
  rel=${page#"$root"/}
  want=$(toc "$page")
  have=$(sed -n '/^<!-- toc:start -->$/,/^<!-- toc:end -->$/p' "$page" | sed '1d;$d')
  n=$((n + 1))
  if [ $write = 1 ]; then
    tmp=$(mktemp)
    awk -v toc="$want" '/^<!-- toc:start -->$/ { print; print toc; skip = 1; next }
      /^<!-- toc:end -->$/ { skip = 0 } !skip { print }' "$page" >"$tmp"
    cat "$tmp" >"$page" && rm -f "$tmp"
  elif [ "$want" != "$have" ]; then
    echo "readme_toc: the table of contents of $rel is stale (scripts/readme_toc.sh --write):" >&2
    diff <(echo "$have") <(echo "$want") >&2 || true
    stale=1
  fi
done
[ $write = 1 ] && exit 0
[ $stale = 0 ] || exit 1
echo "ok: the tables of contents of $n page(s) list their sections"
