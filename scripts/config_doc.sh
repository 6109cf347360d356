#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The reference part of docs/configuration.md, made from the binary's own
# texts: every option of `outbox-uvrelay --help` (through dist/help2keys.awk)
# with its environment variable and its config-file key (dist/conf_keys.sh
# asks the binary), then each command's `COMMAND --help` as it prints it,
# between the lines <!-- config:start --> and <!-- config:end -->.
#   scripts/config_doc.sh BUILD_DIR|BINARY           exit 1 when the page differs
#   scripts/config_doc.sh --write BUILD_DIR|BINARY   rewrite the page
# After a change of the flags or their help:
#   scripts/config_doc.sh --write BUILD_DIR && scripts/readme_toc.sh --write
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
page=$root/docs/configuration.md
write=0
[ "${1:-}" = --write ] && { write=1; shift; }
[ $# = 1 ] || { echo "usage: scripts/config_doc.sh [--write] BUILD_DIR|BINARY" >&2; exit 2; }
bin=$1
[ -d "$bin" ] && bin=$bin/outbox-uvrelay
[ -x "$bin" ] || { echo "config_doc: no binary at $bin (build it first)" >&2; exit 1; }

# The binary's texts, read with nothing of this machine's settings: no
# OUTBOX_* or NATS_* variable, a home without option files, no terminal.
home=$(mktemp -d)
trap 'rm -rf "$home"' EXIT
run() { (cd "$home" && env -i PATH=/usr/bin:/bin HOME="$home" LC_ALL=C "$bin" "$@" </dev/null); }
main=$(run --help)
keys=$(bash "$root/dist/conf_keys.sh" "$bin")
commands=$(sed -n 's/^\(usage:\)\{0,1\} *outbox-uvrelay \[\{0,1\}\([a-z][a-z-]*\).*/\2/p' <<<"$main" |
  awk '!seen[$0]++' | grep -vx run || true)

block() {
  echo "Generated from \`outbox-uvrelay --help\`, each \`outbox-uvrelay COMMAND --help\` and the"
  echo "binary's answer to each flag name as a config-file key, by"
  echo "\`scripts/config_doc.sh --write BUILD_DIR\`; the test \`unit.config_doc\` fails when this part"
  echo "of the page differs from what the built binary prints."
  echo
  printf '%s\n' "$keys" >"$home/keys"
  awk -f "$root/dist/help2keys.awk" <<<"$main" | awk -F'\t' -v keyfile="$home/keys" '
    function md(s) {
      gsub(/\\/, "\\\\", s); gsub(/\|/, "\\|", s); gsub(/\*/, "\\*", s); gsub(/</, "\\&lt;", s)
      gsub(/>/, "\\&gt;", s); gsub(/\[/, "\\[", s); gsub(/_/, "\\_", s)
      return s
    }
    function head(kind) {
      if (open == kind) return
      if (open != "") print ""
      if (kind == "option") { print "| flag | environment | config-file key | |"; print "|---|---|---|---|" }
      else { print "| variable or file | |"; print "|---|---|" }
      open = kind
    }
    BEGIN { while ((getline k < keyfile) > 0) key[k] = 1; open = "" }
    $1 == "group" { if (NR > 1) print ""; h = $2; sub(/:$/, "", h); print "### " h; print ""; open = ""; next }
    $1 == "option" {
      head("option")
      ks = ""; f = $2
      while (match(f, /--[a-z][a-z0-9-]*/)) {
        n = substr(f, RSTART + 2, RLENGTH - 2); f = substr(f, RSTART + RLENGTH)
        if (n in key) ks = ks (ks == "" ? "" : ", ") "`" n "`"
      }
      fl = $2; gsub(/\|/, "\\|", fl)
      printf "| `%s` | %s | %s | %s |\n", fl, ($3 == "" ? "" : "`" $3 "`"), ks, md($4)
      next
    }
    $1 == "variable" {
      head("variable")
      nm = $2; gsub(/\|/, "\\|", nm)
      printf "| `%s` | %s |\n", nm, md($3)
      next
    }
    $1 == "text" { if (open != "") print ""; open = ""; print md($2) }'
  echo
  echo "### Commands"
  local cmd
  for cmd in $commands; do
    echo
    echo "#### \`$cmd\`"
    echo
    echo '```text'
    run "$cmd" --help
    echo '```'
  done
}

want=$(block)
grep -q '^<!-- config:start -->$' "$page" && grep -q '^<!-- config:end -->$' "$page" ||
  { echo "config_doc: no <!-- config:start --> ... <!-- config:end --> in docs/configuration.md" >&2; exit 1; }
have=$(sed -n '/^<!-- config:start -->$/,/^<!-- config:end -->$/p' "$page" | sed '1d;$d')
if [ $write = 1 ]; then
  tmp=$(mktemp)
  printf '%s\n' "$want" >"$home/want"
  awk -v f="$home/want" '/^<!-- config:start -->$/ { print; while ((getline l < f) > 0) print l; skip = 1; next }
    /^<!-- config:end -->$/ { skip = 0 } !skip { print }' "$page" >"$tmp"
  cat "$tmp" >"$page" && rm -f "$tmp"
  echo "config_doc: docs/configuration.md written from $bin"
  exit 0
fi
if [ "$want" != "$have" ]; then
  echo "config_doc: docs/configuration.md differs from the binary's help (scripts/config_doc.sh --write BUILD_DIR):" >&2
  diff <(echo "$have") <(echo "$want") >&2 || true
  exit 1
fi
echo "ok: docs/configuration.md lists the $(grep -c '^| `-' <<<"$want") options and $(wc -w <<<"$commands") commands of $bin"
