# SPDX-License-Identifier: Apache-2.0
# Run by `cmake --install` as its last rule (install(SCRIPT)): writes
# OUTBOX_INSTALLED, the files this install wrote with DESTDIR in front, one a
# line, for the uninstall target (dist/uninstall.cmake). CMake's own
# install_manifest.txt will not do: it leaves DESTDIR out, and cpack
# rewrites it with the package's /usr paths, which an uninstall must never
# remove; so nothing is recorded when cpack is the one installing.
if("$ENV{DESTDIR}" MATCHES "/_CPack_Packages/")
  return()
endif()
set(lines "")
foreach(f IN LISTS CMAKE_INSTALL_MANIFEST_FILES)
  string(APPEND lines "$ENV{DESTDIR}${f}\n")
endforeach()
file(WRITE "${OUTBOX_INSTALLED}" "${lines}")
