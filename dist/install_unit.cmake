# SPDX-License-Identifier: Apache-2.0
# Run by `cmake --install` (install(SCRIPT)): writes the systemd unit from
# examples/outbox-uvrelay.service.in with ExecStart= in the bin directory of
# this install. The prefix is the one of the install (--prefix, or CPack's
# /usr), not the one the build was configured with, so the unit is made here
# rather than by configure_file at configure time. DESTDIR stages the file
# but is not part of the path the unit names.
#   OUTBOX_UNIT_IN      the template
#   OUTBOX_UNIT_BINDIR  CMAKE_INSTALL_BINDIR (relative to the prefix, or absolute)
#   OUTBOX_UNIT_DIR     where the unit goes (relative to the prefix, or absolute)
foreach(var OUTBOX_UNIT_IN OUTBOX_UNIT_BINDIR OUTBOX_UNIT_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "install_unit.cmake: ${var} is not set")
  endif()
endforeach()
foreach(pair "CMAKE_INSTALL_FULL_BINDIR;${OUTBOX_UNIT_BINDIR}" "unit_dir;${OUTBOX_UNIT_DIR}")
  list(GET pair 0 name)
  list(GET pair 1 dir)
  if(IS_ABSOLUTE "${dir}")
    set(${name} "${dir}")
  else()
    set(${name} "${CMAKE_INSTALL_PREFIX}/${dir}")
  endif()
endforeach()
file(READ "${OUTBOX_UNIT_IN}" unit)
string(CONFIGURE "${unit}" unit @ONLY)
set(dest "$ENV{DESTDIR}${unit_dir}/outbox-uvrelay.service")
message(STATUS "Installing: ${dest}")
file(MAKE_DIRECTORY "$ENV{DESTDIR}${unit_dir}")
file(WRITE "${dest}" "${unit}")
# The manifest leaves DESTDIR out, as CMake's own entries do.
list(APPEND CMAKE_INSTALL_MANIFEST_FILES "${unit_dir}/outbox-uvrelay.service")
