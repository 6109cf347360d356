# SPDX-License-Identifier: Apache-2.0
# The docs' Debian package recipe ("A Debian package"): its cpack line run
# as written against the suite's build (the configure line is run in a
# folder of its own, to check it, and not built again); the package's
# contents and control fields; the relay run from the package unpacked into a
# scratch root (--help, schema, a --drain of 200 rows against the test
# servers) and a program built against the unpacked library; lintian: no
# error, no warning but those the docs explain, no hardening tag; and the
# package's lifecycle as the docs give it (install, configure, start,
# upgrade from a previous version, remove, purge) in a throwaway root: an
# overlay of this machine's own system in a private mount namespace, so
# nothing it installs, makes or removes reaches the machine. That takes
# root and the right to mount: without them the test ends skipped (77) once
# the rest has passed.
. "$(dirname "$0")/../harness/lib.sh"
if [ "$(id -u)" = 0 ] && [ -z "${OUTBOX_DEB_NS:-}" ] && unshare -m --propagation private true 2>/dev/null; then
  OUTBOX_DEB_NS=1 exec unshare -m --propagation private bash "$0" "$@"
fi
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$OUTBOX_TEST_BUILD
db=it_install_deb stream=IT_INSTALL_DEB prefix=itdeb
work=$(mktemp -d); SERVICE_PID=
# The throwaway root's mounts go first (a private namespace's, gone with it
# anyway); rm stays on this file system.
trap 'kill $SERVICE_PID 2>/dev/null || true; umount -R -l "$work/ns" 2>/dev/null || true
  rm -rf --one-file-system "$work"' EXIT
doc=$src/docs/install.md
# block TITLE: the docs' code block whose first line is "# TITLE".
block() {
  awk -v t="# $1" 'p && /^```$/ { exit } p { print } prev ~ /^```/ && $0 == t { p = 1 } { prev = $0 }' "$doc"
}

recipe=$(block "a Debian package")
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
  ./lib/systemd/system/outbox-uvrelay.service ./etc/outbox-uvrelay/relay.conf \
  ./usr/share/outbox-uvrelay/sql/outbox.sql ./usr/share/doc/outbox-uvrelay/copyright \
  ./usr/share/doc/outbox-uvrelay/changelog.gz ./usr/share/doc/outbox-uvrelay/README.md \
  ./usr/share/man/man5/outbox-uvrelay.conf.5.gz ./usr/share/doc/outbox-uvrelay/docs/configuration.md; do
  grep -qxF "$f" <<<"$contents" || fail "in the package: $f"
done
echo "ok: the package holds $(grep -c '[^/]$' <<<"$contents") files, every one the docs name"
! grep -q '^./usr/share/outbox-uvrelay/systemd/' <<<"$contents" || fail "the prefix install's unit folder in the package"
assert_eq "$(dpkg-deb -I "$deb" conffiles)" /etc/outbox-uvrelay/relay.conf "the conffiles"
for s in postinst prerm postrm; do
  dpkg-deb -I "$deb" $s | grep -q '^# SPDX-License-Identifier: Apache-2.0' || fail "the package's $s is ours"
done
grep -qE '(^|, )adduser(,|$)' <<<"$(dpkg-deb -f "$deb" Depends)" || fail "Depends names adduser"
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
grep -q '^ExecStart=/usr/bin/outbox-uvrelay run --config /etc/outbox-uvrelay/relay.conf ' \
  "$root/lib/systemd/system/outbox-uvrelay.service" || fail "the package's unit names /usr/bin and its conffile"
cmp "$root/etc/outbox-uvrelay/relay.conf" "$src/examples/outbox-uvrelay.conf" || fail "the conffile is the example"
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

# 3. lintian --pedantic: no error; the warnings are those the docs explain;
# no hardening tag (of any level); and the tags the packaging fixed stay away.
rc=0; lintian --no-cfg --pedantic --display-info "$deb" >"$work/lintian.log" 2>"$work/lintian.err" || rc=$?
sed 's/^/    lintian: /' "$work/lintian.log"
grep -v 'running with root privileges' "$work/lintian.err" | sed 's/^/    lintian stderr: /' || true
grep -q '^E: ' "$work/lintian.log" && fail "lintian errors"
[ "$rc" = 0 ] || fail "lintian exit status $rc"
explained="package-name-doesnt-match-sonames link-to-shared-library-in-wrong-package
  pkg-config-unavailable-for-cross-compilation"
for tag in $(sed -n 's/^W: [^ ]*: \([a-z0-9-]*\).*/\1/p' "$work/lintian.log" | sort -u); do
  grep -qw -- "$tag" <<<"$explained" || fail "lintian warning the docs do not explain: $tag"
  grep -q "\`$tag" "$doc" || fail "the docs name the warning $tag"
done
! grep -q ': hardening-' "$work/lintian.log" || fail "lintian: $(grep ': hardening-' "$work/lintian.log")"
for tag in no-copyright-file debian-changelog-file-missing changelog-file-missing-in-native-package \
  binary-without-manpage uncompressed-manual-page lacks-ldconfig-trigger description-synopsis-is-duplicated \
  unstripped-binary-or-object no-shlibs-control-file maintscript-calls-ldconfig; do
  ! grep -q ": $tag" "$work/lintian.log" || fail "lintian: $tag is back"
done
echo "ok: lintian --pedantic: no error, no hardening tag, $(grep -c '^W: ' "$work/lintian.log" || true) warning(s), each explained in the docs"

# 4. The lifecycle, each step as the docs give it, in a throwaway root.
# skip REASON: the rest passed, this machine cannot run the lifecycle.
skip() { echo "skipped: the package's lifecycle: $1"; exit 77; }
[ -n "${OUTBOX_DEB_NS:-}" ] || skip "it needs root and a mount namespace (unshare -m)"
ns=$work/ns
mkdir "$ns" && mount -t tmpfs -o mode=0755 tmpfs "$ns" || skip "no tmpfs mount here"
mkdir "$ns/upper" "$ns/work" "$ns/root"
sys=$ns/root
mount -t overlay overlay -o "lowerdir=/,upperdir=$ns/upper,workdir=$ns/work" "$sys" || skip "no overlay mount here"
# Every change below goes to the scratch layer: checked before the first.
[ "$(stat -f -c %T "$sys")" = overlayfs ] || fail "$sys is not the overlay"
mount -t proc proc "$sys/proc"
# Devices of its own (no bind of /dev), a systemd to talk to as far as the
# maintainer scripts look (/run/systemd/system), no policy-rc.d forbidding
# services, and systemctl logged on its way: it acts on the root's files
# (enable, mask) and, told so by SYSTEMD_OFFLINE (it may not see that it
# runs in a chroot), ignores start, stop, restart; `enable --now` is logged
# and run as `enable`, and the test starts the service by hand.
for d in null:3 zero:5 random:8 urandom:9; do
  [ -e "$sys/dev/${d%:*}" ] || mknod -m 0666 "$sys/dev/${d%:*}" c 1 "${d#*:}"
done
mkdir -p "$sys/run/systemd/system" "$sys/pkgs"
rm -f "$sys/usr/sbin/policy-rc.d"
calls=/var/log/outbox-test-systemctl
# (In its place, as apt gives dpkg a PATH of its own.)
mv "$sys/usr/bin/systemctl" "$sys/usr/bin/systemctl.real"
cat >"$sys/usr/bin/systemctl" <<SH
#!/bin/sh
echo "\$*" >>$calls
for a; do shift; [ "\$a" = --now ] || set -- "\$@" "\$a"; done
exec /usr/bin/systemctl.real "\$@"
SH
chmod 0755 "$sys/usr/bin/systemctl"
# man-db's trigger would index the man page at each step: off, as apt
# allows (/var/lib/man-db/auto-update).
rm -f "$sys/var/lib/man-db/auto-update"
mkdir -p "$sys/dev/pts" && mount -t devpts -o newinstance,ptmxmode=0666 devpts "$sys/dev/pts"
in_root() {
  chroot "$sys" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive SYSTEMD_OFFLINE=1 "$@" </dev/null
}
# step TITLE: the docs' block, each line run in the root as written (a
# package file name is the one the test gives for the step, `editor FILE`
# writes the test's settings into FILE, the password is the test server's).
step() {
  local lines line shown title=$1
  lines=$(block "$title")
  [ -n "$lines" ] || fail "the docs' block \"# $title\""
  : >"$sys$calls"
  while IFS= read -r line; do
    shown=$(sed -E "s#\\./outbox-uvrelay_[^ ]*_$arch\\.deb#/pkgs/$step_deb#" <<<"$line")
    echo "    # $shown"
    line=${shown/"'the database password'"/"'$pw'"}
    case $line in
    "editor "*) config >"$sys${line#editor }" ;;
    *) rc=0; in_root sh -c "$line" >"$work/step.log" 2>&1 || rc=$?
      [ "$rc" = 0 ] || { cat "$work/step.log"; fail "exit status $rc of: $shown"; } ;;
    esac
  done <<<"$lines"
  sed 's/^/    systemctl /' "$sys$calls"
}
url=$(sed "s#://\([^:@]*\):[^@]*@#://\1@#" <<<"$OUTBOX_TEST_DB_URL")
pw=$OUTBOX_TEST_DB_PASSWORD
config() {
  printf '%s\n' "# the test's settings" "db = ${url}$db" "nats = $OUTBOX_TEST_NATS_URL" \
    "stream = $stream" "subject-prefix = $prefix" "log-format = json"
}
# service_run N: the service as systemd starts it (the unit's ExecStart= as
# its User=, the password in the credential directory LoadCredential= makes,
# the logs directory LogsDirectory= makes): it delivers N rows seeded for it
# and exits 0 on SIGTERM, having written its log as that user.
service_run() {
  local n=$1 unit=$sys/lib/systemd/system/outbox-uvrelay.service user want exec_start rc=0
  local creds=/run/credentials/outbox-uvrelay.service logs=/var/log/outbox-uvrelay
  user=$(sed -n 's/^User=//p' "$unit")
  mkdir -p -m 0500 "$sys$creds" && mkdir -p "$sys$logs"
  install -m 0400 "$sys/etc/outbox-uvrelay/db-password" "$sys$creds/db-password"
  in_root chown "$user:" "$creds" "$creds/db-password" "$logs"
  exec_start=$(sed -n 's/^ExecStart=//p' "$unit" | sed "s#%d#$creds#g")
  want=$(($(rows_processed $db) + n))
  seed $db "$n" 128
  chroot --userspec="$user:$user" "$sys" /usr/bin/env -i PATH=/usr/bin:/bin CREDENTIALS_DIRECTORY=$creds \
    $exec_start --log-file $logs/relay.log 2>"$work/service.err" &
  SERVICE_PID=$!
  wait_until 60 "$n rows delivered by the service" processed_at_least $db $want
  kill -TERM $SERVICE_PID
  wait $SERVICE_PID || rc=$?
  SERVICE_PID=
  [ "$rc" = 0 ] || { cat "$work/service.err" "$sys$logs/relay.log"; fail "the service's exit status $rc"; }
  assert_eq "$(in_root stat -c %U $logs/relay.log)" "$user" "the service's log file's owner"
}
# Nothing of the package on this machine: the root starts from it.
! in_root dpkg-query -W outbox-uvrelay >/dev/null 2>&1 || skip "outbox-uvrelay is installed on this machine"
! in_root getent passwd outbox-uvrelay >/dev/null || skip "this machine has a user outbox-uvrelay"

# The previous version: this package with a lower version and another
# default config (a line added), so that an upgrade has one to offer.
arch=$(dpkg --print-architecture)
version=$(dpkg-deb -f "$deb" Version)
prev=$work/prev
dpkg-deb -R "$deb" "$prev"
sed -i "s/^Version: .*/Version: $version~prev/" "$prev/DEBIAN/control"
sed -i "1a # (the previous version's default)" "$prev/etc/outbox-uvrelay/relay.conf"
sum=$(md5sum <"$prev/etc/outbox-uvrelay/relay.conf" | cut -d' ' -f1)
sed -i "s#^[0-9a-f]*  etc/outbox-uvrelay/relay.conf\$#$sum  etc/outbox-uvrelay/relay.conf#" "$prev/DEBIAN/md5sums"
grep -q "^$sum  etc/outbox-uvrelay/relay.conf" "$prev/DEBIAN/md5sums" || fail "the previous package's md5sums"
old_deb=outbox-uvrelay_${version}~prev_$arch.deb
dpkg-deb --root-owner-group -Zgzip -z1 -b "$prev" "$sys/pkgs/$old_deb" >/dev/null
cp "$deb" "$sys/pkgs/"
chmod -R a+rX "$sys/pkgs"
db_fresh $db
stream_delete $stream
conf=$sys/etc/outbox-uvrelay/relay.conf
unit=$sys/lib/systemd/system/outbox-uvrelay.service
wants=$sys/etc/systemd/system/multi-user.target.wants/outbox-uvrelay.service
status() { in_root dpkg-query -W -f '${db:Status-Abbrev}${Version}' outbox-uvrelay 2>/dev/null || true; }

# Install (the previous version): the user made, the unit where systemd
# looks, verified, neither enabled nor started.
step_deb=$old_deb step "install the Debian package"
assert_eq "$(status)" "ii $version~prev" "the package's state and version"
IFS=: read -r _ _ uid gid _ home shell <<<"$(in_root getent passwd outbox-uvrelay)"
[ "$uid" -lt 1000 ] || fail "a system user: uid $uid"
assert_eq "$(in_root getent group outbox-uvrelay | cut -d: -f3)" "$gid" "the user's own group"
assert_eq "$home $shell" "/nonexistent /usr/sbin/nologin" "the user's home and shell"
[ -f "$unit" ] || fail "the unit in /lib/systemd/system"
[ ! -e "$wants" ] || fail "the unit is enabled at install"
! grep -qE '^(start|restart|try-restart|enable)' "$sys$calls" || fail "systemctl at install: $(cat "$sys$calls")"
rc=0; out=$(in_root systemd-analyze verify /lib/systemd/system/outbox-uvrelay.service 2>&1) || rc=$?
ours=$(grep 'outbox-uvrelay\.service' <<<"$out" || true)
[ -z "$ours" ] || fail "systemd-analyze verify on the installed unit: $ours"
echo "ok: installed, user $uid, the unit verifies, not enabled"

# Configure and start.
step_deb= step "configure and start the service"
[ -L "$wants" ] || fail "systemctl enable made the unit's link"
assert_eq "$(stat -c '%a %U' "$sys/etc/outbox-uvrelay/db-password")" "600 root" "the password file"
service_run 40

# Upgrade: the edited config kept, the new default beside it, the user, the
# unit and its enablement kept, a running service restarted.
edited=$(md5sum <"$conf")
step_deb=${deb##*/} step "upgrade the package"
assert_eq "$(status)" "ii $version" "the package's state and version after the upgrade"
assert_eq "$(md5sum <"$conf")" "$edited" "the edited config after the upgrade"
cmp "$conf.dpkg-dist" "$src/examples/outbox-uvrelay.conf" || fail "the new default as relay.conf.dpkg-dist"
assert_eq "$(in_root id -u outbox-uvrelay)" "$uid" "the user after the upgrade"
[ -f "$unit" ] && [ -L "$wants" ] || fail "the unit and its link after the upgrade"
grep -qx 'try-restart outbox-uvrelay.service' "$sys$calls" || fail "try-restart on upgrade: $(cat "$sys$calls")"
service_run 40

# Remove: stopped, the binary and the unit gone (masked), the config kept.
step_deb= step "remove the package"
assert_eq "$(status)" "rc $version" "the package's state after remove"
grep -qx 'stop outbox-uvrelay.service' "$sys$calls" || fail "stop on remove: $(cat "$sys$calls")"
[ ! -e "$sys/usr/bin/outbox-uvrelay" ] && [ ! -e "$unit" ] || fail "the binary or the unit left after remove"
assert_eq "$(readlink "$sys/etc/systemd/system/outbox-uvrelay.service")" /dev/null "the unit masked after remove"
[ -f "$conf" ] || fail "the config kept by remove"

# Purge: nothing of the package left but its user and group.
step_deb= step "purge the package"
assert_eq "$(status)" "" "the package's state after purge"
left=$(cd "$sys" && find etc lib/systemd var/lib/systemd var/log -name '*outbox*' 2>/dev/null | grep -v '^var/log/outbox-test-' || true)
[ -z "$left" ] || fail "left after purge: $left"
assert_eq "$(in_root id -u outbox-uvrelay)" "$uid" "the system user kept by purge"
assert_eq "$(field "$(stream_summary $stream)" distinct)" 80 "distinct ids the service published"
echo "ok: the lifecycle: install, configure, start, upgrade, remove, purge"
