# SPDX-License-Identifier: Apache-2.0
# The README's install recipes ("Installing: a prefix, ..."), run as
# written with /opt/outbox-uvrelay and /tmp/stage moved into a scratch folder
# and the suite's build as `build` (the settings of its configure line
# checked against the suite's configuration, not built again): the files
# land where the README's table says, the installed binary runs, the man
# page renders without a warning and names every command, a program builds
# against the install
# with pkg-config and with find_package(outbox), the unit verifies for this
# prefix, bash-completion's own loader finds the completion, which offers
# every flag of every help text, and the uninstall leaves no file behind.
. "$(dirname "$0")/../harness/lib.sh"
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$OUTBOX_TEST_BUILD
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
prefix=$work/opt/outbox-uvrelay

# block TITLE: the README's code block whose first line is "# TITLE".
block() {
  awk -v t="# $1" 'p && /^```$/ { exit } p { print } prev ~ /^```/ && $0 == t { p = 1 } { prev = $0 }' \
    "$src/docs/install.md"
}
# A README line with its paths moved into the scratch folder.
rewrite() {
  sed -e "s#/opt/outbox-uvrelay#$prefix#g; s#/tmp/stage#$work/stage#g" \
    -e "s#-S \. -B build #-S $src -B $work/configured #" \
    -e "s#--install build #--install $build #; s#--build build --target#--build $build --target#"
}
# run LINE: one recipe line, rewritten, from the scratch folder; its output in $out.
run() {
  local line
  line=$(rewrite <<<"$1")
  echo "    \$ $line"
  rc=0; out=$(cd "$work" && eval "$line" 2>"$work/stderr") || rc=$?
  assert_eq "$rc" 0 "exit status of: $1"
}

# 1. Build and install.
recipe=$(block "build and install under a prefix")
assert_eq "$(wc -l <<<"$recipe")" 3 "lines of the install recipe"
while IFS= read -r line; do
  case $line in
  "cmake --build build -j2") echo "    (the suite's build is built)" ;;
  cmake\ -S*)
    # Not configured again (install_deb.sh configures its twin): each of its
    # settings is one the suite's configuration knows.
    for d in $(grep -oE -- '-D[A-Z_]+=' <<<"$line" | sed 's/^-D//; s/=$//'); do
      grep -q "^$d:" "$build/CMakeCache.txt" || fail "the configure line's $d is not a setting"
    done
    echo "ok: the configure line's settings exist: $(grep -oE -- '-D[A-Z_]+' <<<"$line" | tr '\n' ' ')"
    ;;
  *) run "$line" >/dev/null ;;
  esac
done <<<"$recipe"
for f in bin/outbox-uvrelay lib/liboutbox.so.0 lib/liboutbox.a include/outbox/outbox.h \
  lib/pkgconfig/outbox.pc lib/cmake/outbox/outbox-config.cmake share/man/man1/outbox-uvrelay.1.gz \
  share/bash-completion/completions/outbox-uvrelay share/outbox-uvrelay/systemd/outbox-uvrelay.service \
  share/outbox-uvrelay/systemd/outbox-uvrelay.conf share/outbox-uvrelay/sql/outbox.sql \
  share/man/man5/outbox-uvrelay.conf.5.gz share/doc/outbox-uvrelay/docs/configuration.md \
  share/doc/outbox-uvrelay/README.md share/doc/outbox-uvrelay/copyright share/doc/outbox-uvrelay/changelog.gz; do
  [ -e "$prefix/$f" ] || fail "installed: $f"
done
echo "ok: every file of the table of docs/install.md is installed"

# 2. Use it, line by line.
mkdir "$work/app"
block "CMakeLists.txt of a program that links the installed library" >"$work/app/CMakeLists.txt"
grep -q 'find_package(outbox REQUIRED)' "$work/app/CMakeLists.txt" || fail "the README's CMakeLists.txt"
cp "$src/examples/producer.c" "$work/app/app.c"
flags=${OUTBOX_TEST_CFLAGS:-}
# A sanitized build installs an instrumented library: CMake takes the same
# flags from the environment for the README's program.
export CFLAGS=$flags LDFLAGS=$flags
commands=$("$prefix/bin/outbox-uvrelay" --help |
  sed -n 's/^\(usage:\)\{0,1\} *outbox-uvrelay \[\{0,1\}\([a-z][a-z-]*\).*/\2/p' | sort -u)
assert_eq "$(echo $commands)" "cleanup cursor-reset dead partitions republish run schema status" "the commands of --help"
while IFS= read -r line; do
  run "$line"
  case $line in
  *"--help") grep -q '^usage: outbox-uvrelay' <<<"$out" || fail "the installed binary's --help" ;;
  *"man -l"*/man5/*)
    # outbox-uvrelay.conf(5): renders without a warning and names every key
    # the binary takes in a config file.
    [ ! -s "$work/stderr" ] || { cat "$work/stderr"; fail "man -l wrote on stderr"; }
    warn=$(MANWIDTH=80 man --warnings -l "$prefix/share/man/man5/outbox-uvrelay.conf.5.gz" 2>&1 >/dev/null)
    [ -z "$warn" ] || fail "man --warnings (5): $warn"
    keys=$(bash "$src/dist/conf_keys.sh" "$prefix/bin/outbox-uvrelay")
    for k in $keys; do
      grep -qE "(^ +|, )$k = " <<<"$out" || fail "outbox-uvrelay.conf(5) names the key $k"
    done
    echo "ok: outbox-uvrelay.conf(5) renders without a warning, $(wc -l <<<"$out") lines, $(wc -w <<<"$keys") keys"
    ;;
  *"man -l"*)
    [ ! -s "$work/stderr" ] || { cat "$work/stderr"; fail "man -l wrote on stderr"; }
    warn=$(MANWIDTH=80 man --warnings -l "$prefix/share/man/man1/outbox-uvrelay.1.gz" 2>&1 >/dev/null)
    [ -z "$warn" ] || fail "man --warnings: $warn"
    for c in $commands; do
      grep -qE "^   $c\$" <<<"$out" || fail "the man page's COMMANDS section names $c"
    done
    grep -q -- '--cursor' <<<"$out" || fail "the man page names --cursor"
    echo "ok: the man page renders without a warning, $(wc -l <<<"$out") lines, every command"
    ;;
  *pkg-config*)
    cc -Wall -Wextra -Werror $flags "$src/examples/producer.c" $out -o "$work/producer"
    rc=0; LD_LIBRARY_PATH=$prefix/lib "$work/producer" 2>/dev/null || rc=$?
    assert_eq "$rc" 2 "producer built with the README's pkg-config line, run without arguments"
    ;;
  "cmake -S"*)
    rc=0; "$work/app/build/app" 2>/dev/null || rc=$?
    assert_eq "$rc" 2 "the README's find_package(outbox) program, run without arguments"
    ;;
  systemd-analyze*)
    [ -z "$(printf '%s\n' "$out" "$(cat "$work/stderr")" | verify_ours outbox-uvrelay.service)" ] || fail "systemd-analyze verify said: $out $(cat "$work/stderr")"
    grep -qx "ExecStart=$prefix/bin/outbox-uvrelay run .*" \
      "$prefix/share/outbox-uvrelay/systemd/outbox-uvrelay.service" || fail "ExecStart= names the prefix's binary"
    echo "ok: the unit for $prefix verifies"
    ;;
  esac
done < <(block "use the install")
# (the -S line above configured the README's program with its flags)
[ -x "$work/app/build/app" ] || fail "the README's program was built"

# 3. Completion, through bash-completion's loader as an interactive shell
# would load it: every flag of every help text is offered (the lists read
# here, "COMMAND --flag ..." lines), and every option of the parser's table
# (cli/opts.c) at the top level.
lists=$(for c in "" $commands; do
  echo "${c:-run}" $("$prefix/bin/outbox-uvrelay" $c --help | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u)
done; echo run $(sed -n 's/^    {"\([a-z-]*\)".*/--\1/p' "$src/cli/opts.c"))
out=$(XDG_DATA_DIRS="$prefix/share:/usr/share" PATH="$prefix/bin:$PATH" bash -c '
  . /usr/share/bash-completion/bash_completion
  __load_completion outbox-uvrelay || { echo "not loaded"; exit 1; }
  fn=$(complete -p outbox-uvrelay | sed -n "s/.*-F \([^ ]*\).*/\1/p")
  offer() { COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=(); "$fn"; }
  has() { local x; for x in "${COMPREPLY[@]}"; do [[ $x == "$1" ]] && return 0; done; return 1; }
  offer outbox-uvrelay --cu; echo "--cu: ${COMPREPLY[*]}"
  offer outbox-uvrelay sch; echo "sch: ${COMPREPLY[*]}"
  offer outbox-uvrelay cur; echo "cur: ${COMPREPLY[*]}"
  offer outbox-uvrelay --nats-client ""; echo "nats-client: ${COMPREPLY[*]}"
  offer outbox-uvrelay dead ""; echo "dead: ${COMPREPLY[*]}"
  offer outbox-uvrelay --log-format ""; echo "log-format: ${COMPREPLY[*]}"
  offer outbox-uvrelay --config "$1/share/outbox-uvrelay/systemd/outbox-uvrelay.c"
  echo "config: ${COMPREPLY[*]##*/}"
  n=0
  while read -r c flags; do
    for f in $flags; do
      offer outbox-uvrelay $c "$f"; has "$f" || echo "missing: $c $f"; n=$((n + 1))
    done
  done <<<"$0"
  echo "checked: $n"' "$lists" "$prefix")
echo "$out" | sed 's/^/    /'
assert_eq "$(sed -n 's/^--cu: //p' <<<"$out")" "--cursor --cursor-trust-seq" "completion of --cu"
assert_eq "$(sed -n 's/^sch: //p' <<<"$out")" "schema" "completion of sch"
assert_eq "$(sed -n 's/^cur: //p' <<<"$out")" "cursor-reset" "completion of cur"
assert_eq "$(sed -n 's/^nats-client: //p' <<<"$out")" "auto loop threads" "completion after --nats-client"
assert_eq "$(sed -n 's/^dead: //p' <<<"$out")" "list replay purge" "completion after dead"
assert_eq "$(sed -n 's/^log-format: //p' <<<"$out")" "text logfmt json" "completion after --log-format"
assert_eq "$(sed -n 's/^config: //p' <<<"$out")" "outbox-uvrelay.conf" "a file name after --config"
[ "$(sed -n 's/^checked: //p' <<<"$out")" -gt 100 ] || fail "flags checked"
! grep -q '^missing' <<<"$out" || fail "flags not offered by the completion"
echo "ok: the completion offers every flag of every help text"

# 4. Uninstall: no file is left, nor a directory of ours.
run "$(block uninstall)"
left=$(find "$work/opt" -type f -o -type l)
[ -z "$left" ] || fail "left after uninstall: $left"
for d in include/outbox lib/cmake/outbox share/outbox-uvrelay share/doc/outbox-uvrelay; do
  [ ! -e "$prefix/$d" ] || fail "left after uninstall: $d"
done
echo "ok: the uninstall removed every file and our directories"

# 5. The staged install the README gives, its unit naming the real prefix.
line=$(grep -o '`DESTDIR=/tmp/stage cmake --install build --prefix /usr`' "$src/docs/install.md" | tr -d '`')
[ -n "$line" ] || fail "the README's DESTDIR line"
run "$line"
[ -x "$work/stage/usr/bin/outbox-uvrelay" ] || fail "staged under DESTDIR"
grep -q '^ExecStart=/usr/bin/outbox-uvrelay run' "$work/stage/usr/share/outbox-uvrelay/systemd/outbox-uvrelay.service" ||
  fail "the staged unit names /usr/bin"
run "$(block uninstall)"
left=$(find "$work/stage" -type f -o -type l)
[ -z "$left" ] || fail "left after the staged uninstall: $left"
echo "ok: a staged install and its uninstall"
