#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What `schema` prints for each mode, without a server: every ordered mode's
# DDL (--ordered, --leader, --cursor, partitioned too) and the migration end
# with the trigger that makes seq the server's, which cursor mode relies on;
# the plain DDL has none. Usage: schema_cli.sh BINARY
set -euo pipefail
bin=$1
# shellcheck disable=SC2016 # backquotes of SQL names, not a command
trigger='CREATE TRIGGER IF NOT EXISTS `outbox_seq` BEFORE INSERT ON `outbox` FOR EACH ROW SET NEW.seq = NULL;'
fail() {
    echo "schema_cli: $*" >&2
    exit 1
}
for flags in --ordered --leader --cursor "--cursor --partitioned" "--cursor --migrate"; do
    # shellcheck disable=SC2086 # the flags are words
    out=$("$bin" schema $flags) || fail "schema $flags exited $?"
    grep -qF -- "$trigger" <<<"$out" || fail "schema $flags prints no seq trigger"
    [ "$(grep -c 'CREATE TRIGGER' <<<"$out")" = 1 ] || fail "schema $flags: not one trigger"
done
out=$("$bin" schema) || fail "schema exited $?"
if grep -q 'TRIGGER' <<<"$out"; then
    fail "the plain schema has a trigger"
fi
echo "schema_cli: ok"
