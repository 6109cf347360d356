# SPDX-License-Identifier: Apache-2.0
# Reads `outbox-uvrelay --help` and writes one tab-separated record per line:
#   group  TAB heading of the options below it ("Relay:", "Failures:" ...)
#   option TAB flags TAB environment variable TAB description
#   variable TAB names TAB description: a line for variables or files that
#          have no flag ("  NATS_URL  servers, ..."), starting with two spaces
#   text   TAB a line of prose between the groups ("Durations: ...")
# An option line starts with two spaces and a dash; its columns are parted by
# two spaces or more; the variable column is a name in capitals with an
# underscore (OUTBOX_DB, NATS_URL). A line indented further without a dash continues the
# description above it. The "usage:" synopsis and the blank lines are left out.
# Used by scripts/config_doc.sh (docs/configuration.md) and dist/man_conf.sh
# (outbox-uvrelay.conf(5)).
function flush() {
    if (flags != "")
        printf "option\t%s\t%s\t%s\n", flags, var, desc
    else if (names != "")
        printf "variable\t%s\t%s\n", names, desc
    flags = ""; var = ""; desc = ""; names = ""
}
function trim(s) { sub(/^[ \t]+/, "", s); sub(/[ \t]+$/, "", s); return s }
BEGIN { synopsis = 1 }
/^usage:/ || (synopsis && /^ +outbox-uvrelay /) { next }
/^$/ { flush(); synopsis = 0; next }
{ synopsis = 0 }
/^  -/ {
    flush()
    n = split(trim($0), f, /  +/)
    flags = f[1]
    i = 2
    # The variable: capitals with an underscore; a long one may be followed
    # by its description after a single space.
    if (n >= 2 && match(f[2], /^[A-Z][A-Z0-9]*_[A-Z0-9_]*( |$)/)) {
        var = trim(substr(f[2], 1, RLENGTH))
        f[2] = trim(substr(f[2], RLENGTH + 1))
        if (f[2] == "") i = 3
    }
    for (; i <= n; i++) desc = desc (desc == "" ? "" : " ") f[i]
    next
}
/^   +[^ -]/ && (flags != "" || names != "") { desc = desc (desc == "" ? "" : " ") trim($0); next }
/^  [^ -]/ {
    flush()
    n = split(trim($0), f, /  +/)
    names = f[1]
    for (i = 2; i <= n; i++) desc = desc (desc == "" ? "" : " ") f[i]
    next
}
/^[^ ].*:$/ { flush(); printf "group\t%s\n", $0; next }
{ flush(); printf "text\t%s\n", trim($0) }
END { flush() }
