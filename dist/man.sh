#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Writes outbox-uvrelay(1) from the binary's own help texts, so the page
# cannot drift from what the binary accepts: the main --help gives the
# synopsis, the description and the options; each command's --help (the
# commands named in the synopsis) gives its subsection under COMMANDS.
# Not help2man: it reads these texts badly (the "usage:" lines, the OUTBOX_*
# column beside each flag), and its page warns under `man --warnings`; this
# one takes no build dependency beyond awk.
#   dist/man.sh BINARY VERSION OUTPUT
set -euo pipefail
bin=$1 version=$2 out=$3
exec >"$out.tmp"
trap 'rm -f "$out.tmp"' EXIT
here=$(cd "$(dirname "$0")" && pwd)
roff() { awk -f "$here/help2roff.awk" -v top="$1" -v skip_common="${2:-0}"; }
main=$("$bin" --help)
# The commands, in the synopsis' order: "outbox-uvrelay [run] ...", "... schema ...".
commands=$(sed -n 's/^\(usage:\)\{0,1\} *outbox-uvrelay \[\{0,1\}\([a-z][a-z-]*\).*/\2/p' <<<"$main" |
  awk '!seen[$0]++')
[ -n "$commands" ] || { echo "man.sh: no command in the synopsis of $bin --help" >&2; exit 1; }

cat <<ROFF
.\" Generated from \`outbox-uvrelay --help\` by dist/man.sh; do not edit.
.TH OUTBOX\-UVRELAY 1 "" "outbox\-uvrelay $version" "User Commands"
.SH NAME
outbox\-uvrelay \- transactional outbox relay from MariaDB to NATS JetStream
.ad l
.nh
.SH SYNOPSIS
ROFF
roff 1 <<<"$main"
echo ".SH COMMANDS"
common=
for c in $commands; do
  echo ".SS $c"
  if [ "$c" = run ]; then
    echo "The default command: relays the table's pending rows to JetStream until"
    echo "stopped (or, with \\fB\\-\\-drain\\fR, until none is due). It takes the options above."
    continue
  fi
  help=$("$bin" "$c" --help)
  roff 0 1 <<<"$help"
  [ -n "$common" ] || common=$(sed -n '/^Common options:/,$p' <<<"$help")
done
if [ -n "$common" ]; then
  echo ".SS Common options of the commands that connect"
  roff 0 <<<"$common"
fi
cat <<'ROFF'
.SH FILES
.TP
.I /etc/outbox\-uvrelay/relay.conf
The config file the systemd unit reads (\fB\-\-config\fR); the example config is
installed as \fIshare/outbox\-uvrelay/systemd/outbox\-uvrelay.conf\fR under the
installation prefix, beside the unit \fIoutbox\-uvrelay.service\fR.
.TP
.I share/outbox\-uvrelay/sql/
Example table definitions (\fBoutbox\-uvrelay schema\fR prints the current ones).
.SH SEE ALSO
\fBoutbox\-uvrelay.conf\fR(5), the config file's keys.
.PP
The manual, installed in \fIshare/doc/outbox\-uvrelay/\fR: \fIREADME.md\fR, then
a page per task in \fIdocs/\fR: installing, upgrading, configuration, the modes
and ordering, producing events, operations, monitoring and alerts, security
and grants, failures, tuning and sizing, Galera, embedding.
ROFF
mv "$out.tmp" "$out"
