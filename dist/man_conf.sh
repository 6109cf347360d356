#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Writes outbox-uvrelay.conf(5), the config file's page, from the binary
# itself, as dist/man.sh writes outbox-uvrelay(1): the keys are those the
# binary takes in a file (dist/conf_keys.sh), each with the description and
# the environment variable its flag has in `outbox-uvrelay --help` (read
# through dist/help2keys.awk), grouped as the help groups them. The prose
# around them (syntax, sections, precedence, errors) is written here.
#   dist/man_conf.sh BINARY VERSION OUTPUT
set -euo pipefail
bin=$1 version=$2 out=$3
here=$(cd "$(dirname "$0")" && pwd)
exec >"$out.tmp"
trap 'rm -f "$out.tmp"' EXIT
keys=$(bash "$here/conf_keys.sh" "$bin")
[ -n "$keys" ] || { echo "man_conf.sh: no config-file key found in $bin" >&2; exit 1; }
main=$(cd / && env -i PATH=/usr/bin:/bin HOME=/nonexistent LC_ALL=C "$bin" --help </dev/null)

cat <<ROFF
.\" Generated from \`outbox-uvrelay --help\` by dist/man_conf.sh; do not edit.
.TH OUTBOX\-UVRELAY.CONF 5 "" "outbox\-uvrelay $version" "File Formats"
.SH NAME
outbox\-uvrelay.conf \- configuration file of outbox\-uvrelay
.ad l
.nh
.SH SYNOPSIS
.B outbox\-uvrelay \-\-config
.I FILE
.br
.B OUTBOX_CONFIG=\fIFILE\fB outbox\-uvrelay
.SH DESCRIPTION
An INI file of \fIkey\fR = \fIvalue\fR lines that sets any option of
\fBoutbox\-uvrelay\fR(1), and relays several tables in one process. Each key is
a long flag's name without its dashes (\fB\-\-batch 100\fR is \fBbatch = 100\fR);
a flag without a value takes \fBtrue\fR or \fBfalse\fR. Lines starting with
\fB#\fR or \fB;\fR are comments.
.PP
Keys before the first section, or under \fB[relay]\fR, apply to every table.
Each \fB[table \fINAME\fB]\fR section is one outbox table with its own relay
(its own connections, batch cycle, stream, subject prefix and options), all
on one loop; the table is \fINAME\fR unless the section sets \fBtable\fR. A
section sets what differs from the keys above it. The one\-shot commands
(\fBstatus\fR, \fBdead\fR, \fBcleanup\fR, \fBpartitions\fR, \fBschema\fR) act on
each declared table, or on the one \fB\-\-table\fR names.
.PP
Precedence: flag > environment > config file > default; what none of them
sets may come from the conventions of the \fBnats\fR and \fBmariadb\fR clients
(\fBNATS_URL\fR, a nats context, \fBMYSQL_PWD\fR, an option file), as
\fBoutbox\-uvrelay\fR(1) lists them. A key set twice, an
unknown key or section, a bad value or a line that is not \fIkey\fR = \fIvalue\fR
stops the relay before anything starts, with exit status 2 and a message
naming the file, the line and the key. A file that cannot be read exits with
status 1. Only a regular text file of at most 1 MiB is read.
.PP
A relative file name in the file (a password file, the credentials, the TLS
files, the log file) is relative to the config file's folder. Secrets belong
in files named by the \fB*\-file\fR keys, not in the file itself;
\fBoutbox\-uvrelay \-\-print\-config\fR prints the effective configuration as a
file that reads back, secrets masked, each value with its origin.
.SH KEYS
ROFF

# The options of --help that are keys, grouped as the help groups them.
awk -f "$here/help2keys.awk" <<<"$main" | awk -F'\t' -v keylist="$keys" '
  function esc(s) { gsub(/\\/, "\\e", s); gsub(/-/, "\\-", s); if (s ~ /^[.\x27]/) s = "\\&" s; return s }
  BEGIN { n = split(keylist, k, "\n"); for (i = 1; i <= n; i++) key[k[i]] = 1 }
  $1 == "group" { group = $2; sub(/:$/, "", group); shown = 0; next }
  $1 != "option" { next }
  {
    f = $2; line = ""
    while (match(f, /--[a-z][a-z0-9-]*( [A-Z][A-Z:]*)?/)) {
      w = substr(f, RSTART + 2, RLENGTH - 2); f = substr(f, RSTART + RLENGTH)
      name = w; arg = ""
      if (index(w, " ")) { name = substr(w, 1, index(w, " ") - 1); arg = substr(w, index(w, " ") + 1) }
      if (!(name in key)) continue
      v = arg == "" ? "true\\fR|\\fBfalse" : "\\fI" arg
      line = line (line == "" ? "" : ", ") "\\fB" esc(name) " = " v "\\fR"
    }
    if (line == "") next
    if (!shown) { print ".SS " esc(group); shown = 1 }
    print ".TP"
    print line
    d = $4
    if ($3 != "") d = d (d == "" ? "" : " ") "(environment: " $3 ")"
    if (d != "") print esc(d)
  }'

cat <<'ROFF'
.SH EXAMPLE
.nf
# The password comes from OUTBOX_DB_PASSWORD, or a file:
db = mysql://relay@db.internal:3306/shop
nats = nats://nats\-1.internal:4222
http = 127.0.0.1:9464
log\-format = json

[table orders]
stream = ORDERS
subject\-prefix = orders
connections = 2

[table billing]
table = billing_outbox
stream = BILLING
subject\-prefix = billing
.fi
.SH FILES
.TP
.I share/outbox\-uvrelay/systemd/outbox\-uvrelay.conf
A complete example, installed beside the systemd unit under the installation
prefix; the unit reads \fI/etc/outbox\-uvrelay/relay.conf\fR.
.SH SEE ALSO
\fBoutbox\-uvrelay\fR(1); the manual, \fIshare/doc/outbox\-uvrelay/\fR
(\fIdocs/configuration.md\fR).
ROFF
mv "$out.tmp" "$out"
