# SPDX-License-Identifier: Apache-2.0
# The stream checker that other tests trust: it must count what a stream
# holds exactly.
#   - an id stored 3 times is one distinct id and two duplicates (1,001 ids
#     stored 3 times each read back as 1,001 distinct, 2,002 duplicates), and
#     --expect-ids then reports nothing missing or extra but fails on the
#     duplicates;
#   - every message of a stream of large messages (256 KiB each, 4 times
#     nats.c's default pending limit of 64 MB in all) is read.
. "$(dirname "$0")/../harness/lib.sh"
work=$(mktemp -d)
trap 'streamcheck --stream IT_SC_COPIES --delete; streamcheck --stream IT_SC_BIG --delete; rm -rf "$work"' EXIT

stream_delete IT_SC_COPIES
streamcheck --stream IT_SC_COPIES --create 'itsc.copies' --dup-window-ms 1000
streamcheck --stream IT_SC_COPIES --subject itsc.copies --publish 1001 --copies 3 --gap-ms 1300 \
  >"$work/ids"
assert_eq "$(wc -l <"$work/ids")" 1001 "ids published"
out=$(streamcheck --stream IT_SC_COPIES --subject '>')
echo "$out"
assert_eq "$out" "messages=3003 read=3003 distinct=1001 duplicates=2002 without_id=0" \
  "counts of 1,001 ids stored 3 times"
rc=0
out=$(streamcheck --stream IT_SC_COPIES --subject '>' --expect-ids "$work/ids") || rc=$?
echo "$out"
assert_eq "$rc" 1 "exit status of --expect-ids when ids are stored more than once"
case "$out" in *"expected=1001 missing=0 extra=0"*) ;; *) fail "--expect-ids comparison" ;; esac

stream_delete IT_SC_BIG
streamcheck --stream IT_SC_BIG --create 'itsc.big'
streamcheck --stream IT_SC_BIG --subject itsc.big --publish 1000 --size 262144 >"$work/big"
out=$(streamcheck --stream IT_SC_BIG --subject '>' --expect-ids "$work/big")
echo "$out"
case "$out" in
  "messages=1000 read=1000 distinct=1000 duplicates=0 without_id=0"*"expected=1000 missing=0 extra=0") ;;
  *) fail "every one of 1,000 messages of 256 KiB read" ;;
esac
