# SPDX-License-Identifier: Apache-2.0
# What an install adds besides the library, the binary and the development
# files (CMakeLists.txt's install section): the man page, bash completion,
# the systemd unit made for the install's prefix, the documentation, and an
# `uninstall` target. Included from the top-level CMakeLists.txt.

# Hardening, as dpkg-buildflags gives Debian's own packages: fortified libc
# calls (they need the optimiser: not in a Debug build), a stack protector,
# and relocations made read-only and bound at load time (lintian's
# hardening-no-fortify-functions and hardening-no-bindnow otherwise). For
# the library and the relay; a compiler that fortifies by itself (Ubuntu's)
# gets the same level rather than a redefinition warning.
option(OUTBOX_HARDEN "Build the library and the relay with hardening flags" ON)
if(OUTBOX_HARDEN)
  set(outbox_optimised "$<OR:$<CONFIG:Release>,$<CONFIG:RelWithDebInfo>,$<CONFIG:MinSizeRel>>")
  foreach(t outbox_objects outbox-uvrelay)
    target_compile_options(${t} PRIVATE -fstack-protector-strong
      "$<${outbox_optimised}:-U_FORTIFY_SOURCE;-D_FORTIFY_SOURCE=2>")
  endforeach()
  foreach(t outbox_shared outbox-uvrelay)
    target_link_options(${t} PRIVATE -Wl,-z,relro,-z,now)
  endforeach()
endif()

# The man pages, written at build time from the binary's own --help texts
# (dist/man.sh), so it lists exactly the commands and flags the binary takes;
# gzipped, as Debian installs man pages (man reads either).
# A cross build cannot run the binary: it has no man page.
option(OUTBOX_MAN "Build and install the man page (runs the binary's --help)" ON)
if(OUTBOX_MAN AND NOT CMAKE_CROSSCOMPILING)
  set(OUTBOX_MAN_PAGE ${CMAKE_CURRENT_BINARY_DIR}/outbox-uvrelay.1.gz)
  add_custom_command(OUTPUT ${OUTBOX_MAN_PAGE}
    COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/dist/man.sh $<TARGET_FILE:outbox-uvrelay>
      ${PROJECT_VERSION} ${CMAKE_CURRENT_BINARY_DIR}/outbox-uvrelay.1
    COMMAND gzip -9nf ${CMAKE_CURRENT_BINARY_DIR}/outbox-uvrelay.1
    DEPENDS outbox-uvrelay ${CMAKE_CURRENT_SOURCE_DIR}/dist/man.sh
      ${CMAKE_CURRENT_SOURCE_DIR}/dist/help2roff.awk
    COMMENT "Writing the man page outbox-uvrelay.1" VERBATIM)
  add_custom_target(outbox-man ALL DEPENDS ${OUTBOX_MAN_PAGE})
  install(FILES ${OUTBOX_MAN_PAGE} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
  # outbox-uvrelay.conf(5), the config file's keys as the binary takes them
  # (dist/man_conf.sh).
  set(OUTBOX_MAN_CONF ${CMAKE_CURRENT_BINARY_DIR}/outbox-uvrelay.conf.5.gz)
  add_custom_command(OUTPUT ${OUTBOX_MAN_CONF}
    COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/dist/man_conf.sh $<TARGET_FILE:outbox-uvrelay>
      ${PROJECT_VERSION} ${CMAKE_CURRENT_BINARY_DIR}/outbox-uvrelay.conf.5
    COMMAND gzip -9nf ${CMAKE_CURRENT_BINARY_DIR}/outbox-uvrelay.conf.5
    DEPENDS outbox-uvrelay ${CMAKE_CURRENT_SOURCE_DIR}/dist/man_conf.sh
      ${CMAKE_CURRENT_SOURCE_DIR}/dist/conf_keys.sh ${CMAKE_CURRENT_SOURCE_DIR}/dist/help2keys.awk
    COMMENT "Writing the man page outbox-uvrelay.conf.5" VERBATIM)
  add_custom_target(outbox-man-conf ALL DEPENDS ${OUTBOX_MAN_CONF})
  install(FILES ${OUTBOX_MAN_CONF} DESTINATION ${CMAKE_INSTALL_MANDIR}/man5)
endif()

# Completion for bash, where bash-completion looks for it by command name.
install(FILES dist/outbox-uvrelay.bash-completion
  DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
  RENAME outbox-uvrelay)

# The systemd unit, written at install time for the prefix of that install
# (dist/install_unit.cmake), beside the example config.
install(CODE "set(OUTBOX_UNIT_IN \"${CMAKE_CURRENT_SOURCE_DIR}/examples/outbox-uvrelay.service.in\")
set(OUTBOX_UNIT_BINDIR \"${CMAKE_INSTALL_BINDIR}\")
set(OUTBOX_UNIT_DIR \"${CMAKE_INSTALL_DATADIR}/outbox-uvrelay/systemd\")")
install(SCRIPT dist/install_unit.cmake)

# The manual (README.md and the pages of docs/), its copyright notice and the
# changelog (gzipped, as Debian policy wants them in a package).
set(OUTBOX_CHANGELOG_GZ ${CMAKE_CURRENT_BINARY_DIR}/changelog.gz)
add_custom_command(OUTPUT ${OUTBOX_CHANGELOG_GZ}
  COMMAND gzip -9nc ${CMAKE_CURRENT_SOURCE_DIR}/dist/changelog > ${OUTBOX_CHANGELOG_GZ}
  DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/dist/changelog
  COMMENT "Compressing the changelog")
add_custom_target(outbox-changelog ALL DEPENDS ${OUTBOX_CHANGELOG_GZ})
install(FILES README.md dist/copyright ${OUTBOX_CHANGELOG_GZ} DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs FILES_MATCHING PATTERN "*.md")

# The last install rule: BUILD/outbox-installed.txt lists the files this
# install wrote (dist/record_install.cmake), for `cmake --build BUILD --target
# uninstall`, which removes them.
install(CODE "set(OUTBOX_INSTALLED \"${CMAKE_CURRENT_BINARY_DIR}/outbox-installed.txt\")")
install(SCRIPT dist/record_install.cmake)
# (A project that builds this one as a subdirectory keeps its own.)
if(NOT TARGET uninstall)
  add_custom_target(uninstall
    COMMAND ${CMAKE_COMMAND} -DINSTALLED=${CMAKE_CURRENT_BINARY_DIR}/outbox-installed.txt
      -P ${CMAKE_CURRENT_SOURCE_DIR}/dist/uninstall.cmake
    COMMENT "Removing the files of the last install")
endif()
