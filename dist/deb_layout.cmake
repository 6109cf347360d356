# SPDX-License-Identifier: Apache-2.0
# Run by cpack (CPACK_PRE_BUILD_SCRIPTS) on the files `cmake --install`
# staged for the Debian package (prefix /usr), before they are packed: the
# unit moves to /lib/systemd/system, where systemd looks for the units of
# packages, and the example config becomes /etc/outbox-uvrelay/relay.conf,
# the conffile the unit's ExecStart= names (dist/cpack.cmake lists it); a
# prefix install keeps both in share/outbox-uvrelay/systemd/ instead.
set(stage "${CPACK_TEMPORARY_INSTALL_DIRECTORY}")
set(from "${stage}/usr/share/outbox-uvrelay/systemd")
foreach(f outbox-uvrelay.service outbox-uvrelay.conf)
  if(NOT EXISTS "${from}/${f}")
    message(FATAL_ERROR "deb_layout.cmake: ${from}/${f} was not staged")
  endif()
endforeach()
file(MAKE_DIRECTORY "${stage}/lib/systemd/system" "${stage}/etc/outbox-uvrelay")
file(RENAME "${from}/outbox-uvrelay.service" "${stage}/lib/systemd/system/outbox-uvrelay.service")
file(RENAME "${from}/outbox-uvrelay.conf" "${stage}/etc/outbox-uvrelay/relay.conf")
file(GLOB left "${from}/*")
if(left)
  message(FATAL_ERROR "deb_layout.cmake: ${from} holds more: ${left}")
endif()
file(REMOVE_RECURSE "${from}")
