# SPDX-License-Identifier: Apache-2.0
# Turns one of outbox-uvrelay's help texts into man(7) source: usage lines
# become synopsis lines, "Heading:" lines subsections, "  --flag ARG  OUTBOX_VAR
# text" lines tagged paragraphs (ARG in italics, the variable named), deeper
# indented lines continue the line above, and other lines are paragraphs.
#   awk -f help2roff.awk -v top=1 < help.txt
# top=1 (the main help): the text after the synopsis is the DESCRIPTION and
# the headings are subsections of OPTIONS; top=0 (a command's help, inside
# its own subsection): headings are bold paragraphs.
# With skip_common=1 a command's help stops at its "Common options:"
# paragraph, which man.sh prints once for all commands.

function esc(s) {
    gsub(/\\/, "\\e", s)
    gsub(/-/, "\\-", s)
    return s
}
# A line of text, safe at the start of a roff line.
function text(s) {
    s = esc(s)
    if (s ~ /^[.']/)
        s = "\\&" s
    return s
}
# "--flag ARG, --other" : flags and words in bold, ARG (upper case) in italics.
function spec(s,    n, w, i, out, word, tail) {
    n = split(s, w, " ")
    out = ""
    for (i = 1; i <= n; i++) {
        word = w[i]; tail = ""
        if (word ~ /,$/) { tail = ","; sub(/,$/, "", word) }
        if (word ~ /^[A-Z][A-Z0-9_]*$/)
            word = "\\fI" esc(word) "\\fR"
        else
            word = "\\fB" esc(word) "\\fR"
        out = out (i > 1 ? " " : "") word tail
    }
    return out
}
# Lines of the current block, flushed as one filled paragraph.
function flush() {
    if (pending != "") print text(pending)
    if (envnote != "") print ".br\nEnvironment: \\fB" esc(envnote) "\\fR"
    pending = ""; envnote = ""
}
BEGIN { state = "start"; pending = "" }
skip_common && /^Common options:/ { flush(); exit }
/^usage: / || (state == "usage" && /^       [a-z]/) {
    line = $0
    sub(/^usage: +/, "", line); sub(/^ +/, "", line)
    split(line, w, " ")
    rest = substr(line, length(w[1]) + 2)
    print ".HP 4"
    print "\\fB" esc(w[1]) "\\fR " text(rest)
    state = "usage"
    next
}
state == "usage" && /^                    / {  # a wrapped synopsis line
    line = $0; sub(/^ +/, "", line)
    print text(line)
    next
}
/^$/ {
    flush()
    if (top && state == "usage") print ".SH DESCRIPTION"
    else if (state != "start") print ".PP"
    state = "text"
    next
}
/^[A-Z][^ ].*:$/ {
    flush()
    h = $0; sub(/:$/, "", h)
    if (top && !options++) print ".SH OPTIONS"
    if (top) print ".SS " text(h)
    else print ".PP\n\\fB" text(h) "\\fR"
    state = "items"
    next
}
/^  [^ ]/ {
    flush()
    line = substr($0, 3)
    if (match(line, /  +/)) {
        s = substr(line, 1, RSTART - 1)
        rest = substr(line, RSTART + RLENGTH)
    } else {
        s = line; rest = ""
    }
    env = ""
    if (match(rest, /^OUTBOX_[A-Z0-9_]+( +|$)/)) {
        env = substr(rest, 1, RLENGTH); sub(/ +$/, "", env)
        rest = substr(rest, RLENGTH + 1)
    }
    print ".TP"
    print spec(s)
    pending = rest; envnote = env
    state = "item"
    next
}
/^   / && (state == "item" || state == "text") {
    line = $0; sub(/^ +/, "", line)
    pending = pending (pending == "" ? "" : " ") line
    next
}
{
    # A "Word:" line (Durations:, Exit status:) starts a paragraph of its own.
    if (state == "item" || state == "items" || state == "usage" ||
        (state == "text" && pending != "" && /^[A-Z][a-z ]*: /)) {
        flush()
        print ".PP"
    }
    line = $0
    pending = pending (pending == "" ? "" : " ") line
    state = "text"
}
END { flush() }
