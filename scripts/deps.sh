#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs what is missing to build, test and demo outbox-uvrelay on Debian
# (bookworm or later). Uses apt-get as root, or through sudo.
#   scripts/deps.sh [extra-package ...]
set -euo pipefail

# The tests also need: python3 (scripts/house.py), prometheus (promtool), jq
# and python3-yaml (the alert and dashboard test); dpkg-dev (dpkg-shlibdeps,
# for the .deb's Depends), file (CPack's ELF check), lintian, man-db (man -l)
# and bash-completion (its loader finds the installed completion);
# galera-4, galera-arbitrator-4 (garbd) and rsync for the Galera fixture;
# faketime (libfaketime: a relay whose clock runs ahead, integ.clock_skew).
pkgs=(build-essential cmake pkg-config libuv1-dev libmariadb-dev uuid-dev libnats-dev
      libjansson-dev libinih-dev libsystemd-dev systemd curl libssl-dev openssl mariadb-server mariadb-client nats-server
      python3 prometheus jq python3-yaml dpkg-dev file lintian man-db bash-completion
      galera-4 galera-arbitrator-4 rsync faketime "$@")

missing=()
for p in "${pkgs[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "deps: installing ${missing[*]}" >&2
if [ "$(id -u)" = 0 ]; then
  SUDO=()
elif command -v sudo >/dev/null 2>&1; then
  SUDO=(sudo)
else
  echo "deps: need root (or sudo) to install: ${missing[*]}" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
# The packaged servers must not try to start as services: the scripts start
# throwaway ones themselves.
if [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\nexit 101\n' | "${SUDO[@]}" tee /usr/sbin/policy-rc.d >/dev/null
  "${SUDO[@]}" chmod +x /usr/sbin/policy-rc.d
  trap '"${SUDO[@]}" rm -f /usr/sbin/policy-rc.d' EXIT
fi
"${SUDO[@]}" apt-get update -qq
"${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
