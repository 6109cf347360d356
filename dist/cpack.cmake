# SPDX-License-Identifier: Apache-2.0
# The Debian package: `cpack -G DEB` in a build folder, after the build.
# One package holds everything an install does (dist/dist.cmake): the relay,
# liboutbox (shared and static) with its headers, pkg-config and CMake files,
# the man page, bash completion, the table definitions and the
# documentation; and, where Debian wants them (dist/deb_layout.cmake), the
# systemd unit in /lib/systemd/system and the example config as the conffile
# /etc/outbox-uvrelay/relay.conf. Its maintainer scripts (dist/debian/) make
# the system user, keep the unit disabled until the operator enables it,
# restart a running service on upgrade and stop it on remove. Its Depends
# come from dpkg-shlibdeps (package dpkg-dev), so they name the runtime
# libraries the binaries link, at the versions this machine has, and adduser
# for postinst.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME outbox-uvrelay)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "transactional outbox relay from MariaDB to NATS JetStream")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(OUTBOX_DEB_MAINTAINER "outbox-uvrelay maintainers <outbox-uvrelay@example.org>"
  CACHE STRING "The Maintainer field of the Debian package")
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${OUTBOX_DEB_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS adduser)
# liboutbox.so.0 is a public library: a shlibs file for the packages that
# link it, and dpkg's ldconfig trigger (the triggers file) to update the
# linker cache (our postinst and postrm replace CPack's, which would call
# ldconfig as well).
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")
# dpkg keeps an edited conffile on upgrade and offers the new one beside it.
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/deb/conffiles "/etc/outbox-uvrelay/relay.conf\n")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${CMAKE_CURRENT_SOURCE_DIR}/dist/debian/triggers
  ${CMAKE_CURRENT_BINARY_DIR}/deb/conffiles ${CMAKE_CURRENT_SOURCE_DIR}/dist/debian/postinst
  ${CMAKE_CURRENT_SOURCE_DIR}/dist/debian/prerm ${CMAKE_CURRENT_SOURCE_DIR}/dist/debian/postrm)
# Run on the staged files before they are packed.
set(CPACK_PRE_BUILD_SCRIPTS ${CMAKE_CURRENT_SOURCE_DIR}/dist/deb_layout.cmake)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION "Applications write their events into an outbox table inside their own
business transactions; the relay delivers those rows to a NATS JetStream
stream at least once, each message carrying the row's UUIDv7 as
Nats-Msg-Id so the stream drops duplicates. It runs on one libuv loop with
MariaDB Connector/C's non-blocking API, and can be embedded in any libuv
program through liboutbox.")
include(CPack)
