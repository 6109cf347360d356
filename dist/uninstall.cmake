# SPDX-License-Identifier: Apache-2.0
# `cmake --build BUILD --target uninstall`: removes every file the last
# `cmake --install` of this build wrote (BUILD/outbox-installed.txt, their
# full paths, DESTDIR included), then the directories of ours
# it leaves empty: those named outbox* and the ones just under them
# (include/outbox, lib/cmake/outbox, share/outbox-uvrelay/sql). Shared
# directories (bin, lib/pkgconfig, share/man/man1) stay, empty or not.
#   cmake -DINSTALLED=BUILD/outbox-installed.txt -P uninstall.cmake
if(NOT EXISTS "${INSTALLED}")
  message(FATAL_ERROR "uninstall: ${INSTALLED} not found: nothing was installed from this build")
endif()
file(STRINGS "${INSTALLED}" files)
set(dirs "")
foreach(f IN LISTS files)
  if(EXISTS "${f}" OR IS_SYMLINK "${f}")
    message(STATUS "Removing: ${f}")
    file(REMOVE "${f}")
  endif()
  get_filename_component(d "${f}" DIRECTORY)
  list(APPEND dirs "${d}")
endforeach()
list(REMOVE_DUPLICATES dirs)
foreach(d IN LISTS dirs)
  while(IS_DIRECTORY "${d}")
    get_filename_component(name "${d}" NAME)
    get_filename_component(parent "${d}" DIRECTORY)
    get_filename_component(parent_name "${parent}" NAME)
    if(NOT name MATCHES "^outbox" AND NOT parent_name MATCHES "^outbox")
      break()
    endif()
    file(GLOB left "${d}/*" "${d}/.*")
    if(left)
      break()
    endif()
    message(STATUS "Removing: ${d}/")
    file(REMOVE_RECURSE "${d}") # empty: checked above
    set(d "${parent}")
  endwhile()
endforeach()
# Done: a second uninstall has nothing to remove.
file(REMOVE "${INSTALLED}")
