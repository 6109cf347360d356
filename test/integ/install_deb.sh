# SPDX-License-Identifier: Apache-2.0
# The README's Debian package recipe ("A Debian package"): its cpack line run
# as written against the suite's build (the configure line is run in a
# folder of its own, to check it, and not built again); the package's
# contents and control fields; the relay run from the package unpacked into a
# scratch root (--help, schema, a --drain of 200 rows against the test
# servers) and a program built against the unpacked library; and lintian: no
# error, and no warning but those the README explains.
. "$(dirname "$0")/../harness/lib.sh"
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$OUTBOX_TEST_BUILD
db=it_install_deb stream=IT_INSTALL_DEB prefix=itdeb
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT

recipe=$(awk -v t="# a Debian package" 'p && /^```$/ { exit } p { print } prev ~ /^```/ && $0 == t { p = 1 } { prev = $0 }' \
  "$src/docs/install.md")
assert_eq "$(wc -l <<<"$recipe")" 4 "lines of the package recipe"
configure=$(sed -n 's/^cmake -S \. -B build /cmake -S . -B configured /p' <<<"$recipe")
[ -n "$configure" ] || fail "the recipe's configure line"
grep -qx 'cmake --build build -j2' <<<"$recipe" || fail "the recipe's build line"
# The prefix /usr gives Debian's multiarch library directory.
(cd "$work" && eval "${configure/-S ./-S $src}" >/dev/null)
assert_eq "$(sed -n 's/^CMAKE_INSTALL_LIBDIR:PATH=//p' "$work/configured/CMakeCache.txt")" \
  "lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)" "the library directory of the recipe's configuration"
rm -rf "$work/configured"

# 1. The package, with the recipe's lines.
line=$(grep '^cpack ' <<<"$recipe")
assert_eq "$line" "cpack --config build/CPackConfig.cmake -G DEB" "the recipe's cpack line"
rc=0; (cd "$work" && eval "${line/build\//$build/}") >"$work/cpack.log" 2>&1 || rc=$?
[ "$rc" = 0 ] || { cat "$work/cpack.log"; fail "cpack exit status $rc"; }
line=$(grep '^dpkg-deb -c ' <<<"$recipe")
deb=$work/${line#dpkg-deb -c }
[ -f "$deb" ] || fail "the package the README names: $(ls "$work")"
contents=$(cd "$work" && eval "$line" | awk '{print $6}')
for f in ./usr/bin/outbox-uvrelay ./usr/lib/liboutbox.so.0 ./usr/lib/liboutbox.a ./usr/include/outbox/outbox.h \
  ./usr/lib/pkgconfig/outbox.pc ./usr/lib/cmake/outbox/outbox-config.cmake \
  ./usr/share/man/man1/outbox-uvrelay.1.gz ./usr/share/bash-completion/completions/outbox-uvrelay \
  ./usr/share/outbox-uvrelay/systemd/outbox-uvrelay.service ./usr/share/outbox-uvrelay/systemd/outbox-uvrelay.conf \
  ./usr/share/outbox-uvrelay/sql/outbox.sql ./usr/share/doc/outbox-uvrelay/copyright \
  ./usr/share/doc/outbox-uvrelay/changelog.gz ./usr/share/doc/outbox-uvrelay/README.md; do
  grep -qxF "$f" <<<"$contents" || fail "in the package: $f"
done
echo "ok: the package holds $(grep -c '[^/]$' <<<"$contents") files, every one the README names"
[ ! -e "$build/outbox-installed.txt" ] || ! grep -q '^/usr/' "$build/outbox-installed.txt" ||
  fail "cpack's install recorded for uninstall"
assert_eq "$(dpkg-deb -f "$deb" Package)" outbox-uvrelay "Package"
assert_eq "$(dpkg-deb -f "$deb" Section)" net "Section"
depends=$(dpkg-deb -f "$deb" Depends)
echo "    Depends: $depends"
for lib in libuv1 libmariadb3 libnats3.4 libjansson4 libinih1 libssl3 libsystemd0 libuuid1 libc6; do
  grep -qE "(^|, )$lib( |,|$)" <<<"$depends" || fail "Depends names $lib"
done
assert_eq "$(dpkg-deb -I "$deb" triggers)" "activate-noawait ldconfig" "the ldconfig trigger"
grep -q '^liboutbox 0 outbox-uvrelay' <<<"$(dpkg-deb -I "$deb" shlibs)" || fail "the shlibs file"
# What `apt install ./FILE` would do here, without doing it.
apt-get -s -o Debug::NoLocking=1 install "$deb" >"$work/apt.log" 2>&1 || { cat "$work/apt.log"; fail "apt-get -s install"; }
grep -q '^Inst outbox-uvrelay' "$work/apt.log" || { cat "$work/apt.log"; fail "apt would install it"; }

# 2. Unpacked into a scratch root, and run from there.
root=$work/root
dpkg-deb -x "$deb" "$root"
bin=$root/usr/bin/outbox-uvrelay
grep -q '^ExecStart=/usr/bin/outbox-uvrelay run ' "$root/usr/share/outbox-uvrelay/systemd/outbox-uvrelay.service" ||
  fail "the package's unit names /usr/bin/outbox-uvrelay"
assert_eq "$(zcat "$root/usr/share/doc/outbox-uvrelay/changelog.gz" | sed -n '1s/.*(\(.*\)).*/\1/p')" \
  "$(dpkg-deb -f "$deb" Version)" "the changelog's version"
export LD_LIBRARY_PATH=$root/usr/lib
grep -q '^usage: outbox-uvrelay' <<<"$("$bin" --help)" || fail "--help of the unpacked binary"
grep -q 'CREATE TABLE' <<<"$("$bin" schema)" || fail "schema of the unpacked binary"
export OUTBOX_TEST_RELAY=$bin
db_fresh $db
stream_delete $stream
seed $db 200 256
relay $db $stream $prefix --drain 2>"$work/relay.log" || { cat "$work/relay.log"; fail "the unpacked relay's --drain"; }
assert_eq "$(sql $db 'SELECT COUNT(*) FROM outbox WHERE status = 1')" 200 "rows delivered by the unpacked relay"
assert_eq "$(field "$(stream_summary $stream)" distinct)" 200 "distinct ids in the stream"
# The unpacked library and its pkg-config file (relative to itself).
flags=${OUTBOX_TEST_CFLAGS:-}
cc -Wall -Wextra -Werror $flags "$src/examples/producer.c" \
  $(PKG_CONFIG_PATH=$root/usr/lib/pkgconfig pkg-config --cflags --libs outbox) -o "$work/producer"
deps=$(ldd "$work/producer")
grep -q "$root/usr/lib/liboutbox.so.0" <<<"$deps" || fail "the program links the unpacked liboutbox.so.0: $deps"
rc=0; "$work/producer" 2>/dev/null || rc=$?
assert_eq "$rc" 2 "a program built against the unpacked library, run without arguments"
unset LD_LIBRARY_PATH

# 3. lintian: no error; the warnings are those the README explains, and the
# tags the packaging fixed stay away.
rc=0; lintian --no-cfg "$deb" >"$work/lintian.log" 2>"$work/lintian.err" || rc=$?
sed 's/^/    lintian: /' "$work/lintian.log"
grep -v 'running with root privileges' "$work/lintian.err" | sed 's/^/    lintian stderr: /' || true
grep -q '^E: ' "$work/lintian.log" && fail "lintian errors"
[ "$rc" = 0 ] || fail "lintian exit status $rc"
explained="package-name-doesnt-match-sonames link-to-shared-library-in-wrong-package maintscript-calls-ldconfig
  pkg-config-unavailable-for-cross-compilation"
for tag in $(sed -n 's/^W: [^ ]*: \([a-z0-9-]*\).*/\1/p' "$work/lintian.log" | sort -u); do
  grep -qw -- "$tag" <<<"$explained" || fail "lintian warning the README does not explain: $tag"
  grep -q "\`$tag" "$src/docs/install.md" || fail "the README names the warning $tag"
done
for tag in no-copyright-file debian-changelog-file-missing changelog-file-missing-in-native-package \
  binary-without-manpage uncompressed-manual-page lacks-ldconfig-trigger description-synopsis-is-duplicated \
  unstripped-binary-or-object no-shlibs-control-file; do
  ! grep -q ": $tag" "$work/lintian.log" || fail "lintian: $tag is back"
done
echo "ok: lintian: no error, $(grep -c '^W: ' "$work/lintian.log" || true) warning(s), each explained in the README"
