# SPDX-License-Identifier: Apache-2.0
# Writes OUT, a header that defines OB_BUILD_COMMIT: the commit the source
# tree is at (git describe: the last v* tag and the commits since, or the
# short hash; "-dirty" when tracked files are changed), COMMIT when given
# (-DOUTBOX_BUILD_COMMIT=... for a build from an exported tree), "unknown"
# when SRC is not the top of a git work tree (a tarball, even one unpacked
# inside another repository). Run at configure time and at every build (the
# outbox_build_commit target); the file is rewritten only when its text
# changes, so an unchanged commit recompiles nothing.
#   cmake -DSRC=dir -DOUT=file [-DCOMMIT=text] -P build_commit.cmake
set(commit "${COMMIT}")
if(commit STREQUAL "")
  set(commit unknown)
  find_program(OB_GIT git)
  if(OB_GIT)
    execute_process(COMMAND "${OB_GIT}" -C "${SRC}" rev-parse --show-toplevel
      OUTPUT_VARIABLE top RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(rc EQUAL 0)
      get_filename_component(top "${top}" REALPATH)
      get_filename_component(src "${SRC}" REALPATH)
      if(top STREQUAL src)
        execute_process(COMMAND "${OB_GIT}" -C "${SRC}" describe --tags --match "v[0-9]*"
          --always --dirty
          OUTPUT_VARIABLE described RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE
          ERROR_QUIET)
        if(rc EQUAL 0 AND NOT described STREQUAL "")
          set(commit "${described}")
        endif()
      endif()
    endif()
  endif()
endif()
# A C string literal: only what describe can print (no quote or backslash).
string(REGEX REPLACE "[^A-Za-z0-9._+-]" "_" commit "${commit}")
set(text "/* Written by cmake/build_commit.cmake at build time; not in the source tree. */\n")
string(APPEND text "#define OB_BUILD_COMMIT \"${commit}\"\n")
set(old "")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
