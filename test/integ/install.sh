# SPDX-License-Identifier: Apache-2.0
# The install rules: a consumer builds against the installed headers and
# library both with pkg-config and with CMake's find_package(outbox), from a
# prefix the build was not configured for.
. "$(dirname "$0")/../harness/lib.sh"
src=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cmake --install "$OUTBOX_TEST_BUILD" --prefix "$work/prefix" >/dev/null
pc=$(find "$work/prefix" -name outbox.pc)
[ -n "$pc" ] || fail "outbox.pc installed"
export PKG_CONFIG_PATH=$(dirname "$pc")
flags=${OUTBOX_TEST_CFLAGS:-}
# The line the README gives, word for word: it links the shared library.
line=$(grep -o '`pkg-config --cflags --libs outbox`' "$src/docs/embedding.md" | head -1 | tr -d '`')
assert_eq "$line" "pkg-config --cflags --libs outbox" "the README's pkg-config line"
cc -Wall -Wextra -Werror $flags "$src/examples/producer.c" $($line) -o "$work/producer"
libdir=$(pkg-config --variable=libdir outbox)
deps=$(ldd "$work/producer") # read whole: grep -q would cut ldd short under pipefail
grep -q "liboutbox.so" <<<"$deps" || fail "the pkg-config build links liboutbox.so"
rc=0; LD_LIBRARY_PATH=$libdir "$work/producer" 2>/dev/null || rc=$?
assert_eq "$rc" 2 "producer built with pkg-config, run without arguments"
# A static link: the private dependencies come with --static.
cc -Wall -Wextra -Werror $flags "$src/examples/producer.c" \
  $(pkg-config --cflags outbox) "$libdir/liboutbox.a" $(pkg-config --libs --static outbox | sed "s/-loutbox//") \
  -o "$work/producer-static"
rc=0; "$work/producer-static" 2>/dev/null || rc=$?
assert_eq "$rc" 2 "producer linked statically, run without arguments"
mkdir "$work/consumer"
cat >"$work/consumer/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.18)
project(consumer C)
find_package(outbox REQUIRED)
add_executable(embed "$src/examples/embed.c")
target_link_libraries(embed PRIVATE outbox::outbox)
CMAKE
cmake -S "$work/consumer" -B "$work/consumer/build" -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DCMAKE_C_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags" >/dev/null
cmake --build "$work/consumer/build" >/dev/null
rc=0; "$work/consumer/build/embed" >/dev/null 2>&1 || rc=$?
assert_eq "$rc" 2 "embed built with find_package, run without arguments"
[ -x "$work/prefix/bin/outbox-uvrelay" ] || fail "the binary is installed"
"$work/prefix/bin/outbox-uvrelay" --version | grep -q "^outbox-uvrelay" || fail "installed binary runs"
[ -f "$work/prefix/share/outbox-uvrelay/sql/outbox.sql" ] || fail "the schema files are installed"

# The shared library exports the public API and nothing else: every function
# and variable the installed headers declare, and no internal symbol. The
# declarations are read from the preprocessed headers (any return type, any
# macro in front), so none hides from a pattern: an identifier outbox_* that
# is followed by "(" or "[" and is not a function pointer "(*outbox_...".
so=$(find "$work/prefix" -name 'liboutbox.so' | head -1)
[ -n "$so" ] || fail "liboutbox.so installed"
exported=$(nm -D --defined-only "$so" | awk '$2 ~ /^[TDRB]$/ {print $3}' | sort)
# (ASan adds an __odr_asan.NAME companion to each exported variable.)
internal=$(grep -v -e '^outbox_' -e '^__odr_asan\.outbox_' <<<"$exported" || true)
[ -z "$internal" ] || fail "internal symbols exported: $(echo $internal | head -c 300)"
all=$(cd "$work/prefix/include" && ls outbox/*.h | sed 's/.*/#include <&>/')
declared=$(echo "$all" | cc -E -P $(pkg-config --cflags outbox) -x c - |
  grep -v '^ *typedef' | tr '\n' ' ' | grep -oE '(^|[^*a-zA-Z0-9_])outbox_[a-z0-9_]+ *[[(]' |
  grep -oE 'outbox_[a-z0-9_]+' | sort -u)
[ "$(wc -l <<<"$declared")" -ge 40 ] || fail "declarations found in the headers: $declared"
grep -qx outbox_hist_bounds <<<"$declared" || fail "the declared variable outbox_hist_bounds found"
missing=$(comm -23 <(echo "$declared") <(echo "$exported"))
[ -z "$missing" ] || fail "declared but not exported: $missing"
# A program that uses the declared variable links against the shared library.
cat >"$work/bounds.c" <<'C'
#include <outbox/outbox.h>
#include <stdio.h>
int main(void) {
    printf("%g %s\n", outbox_hist_bounds[OUTBOX_HIST_BOUNDS - 1], outbox_version());
    return 0;
}
C
cc -Wall -Wextra -Werror $flags "$work/bounds.c" $($line) -o "$work/bounds"
assert_eq "$(LD_LIBRARY_PATH=$libdir "$work/bounds")" "300 $(pkg-config --modversion outbox)" "outbox_hist_bounds through liboutbox.so"
echo "ok: liboutbox.so exports $(wc -l <<<"$exported") outbox_* symbols, $(wc -l <<<"$declared") declared, and nothing else"

# Programs built against older (or newer) headers: the caller-allocated
# structs carry their size, and the library reads and writes no byte beyond
# it. An "older" program is one whose outbox_relay_options end before
# max_in_flight_bytes and whose outbox_stats end before held_back: the bytes
# after its structs (a canary here) stay untouched, create accepts its options
# and gives the missing field its default; a "newer" program's options are
# refused with a message.
cat >"$work/versions.c" <<'C'
#include <outbox/outbox.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#define FAIL(what) do { printf("FAIL: %s\n", what); return 1; } while (0)
static union { outbox_relay_options o; unsigned char bytes[sizeof(outbox_relay_options) + 64]; } ro;
static union { outbox_stats s; unsigned char bytes[sizeof(outbox_stats) + 64]; } st;
static int untouched(const unsigned char *p, size_t from, size_t to) {
    for (size_t i = from; i < to; i++)
        if (p[i] != 0xAA)
            return 0;
    return 1;
}
int main(void) {
    uv_loop_t loop;
    uv_loop_init(&loop);
    char err[512];
    size_t old = offsetof(outbox_relay_options, max_in_flight_bytes);
    memset(ro.bytes, 0xAA, sizeof(ro.bytes));
    outbox_relay_options_init_sized(&ro.o, old);
    if (!untouched(ro.bytes, old, sizeof(ro.bytes))) FAIL("init wrote past an older struct");
    if (ro.o.size != old || ro.o.batch_size != 500) FAIL("init filled an older struct");
    ro.o.db_url = "mysql://u@127.0.0.1:1/db";
    ro.o.nats_url = "nats://127.0.0.1:1";
    /* An older library's minimum is the struct up to max_in_flight_bytes:
     * one without it is refused, one with it accepted. */
    outbox_relay *r = NULL;
    if (outbox_relay_create(&r, &loop, &ro.o, err, sizeof err) != OUTBOX_EINVAL) FAIL("too old accepted");
    printf("older than the first versioned layout: %s\n", err);
    size_t v1 = old + sizeof(uint64_t);
    memset(ro.bytes, 0xAA, sizeof(ro.bytes));
    outbox_relay_options_init_sized(&ro.o, v1);
    ro.o.db_url = "mysql://u@127.0.0.1:1/db";
    ro.o.nats_url = "nats://127.0.0.1:1";
    if (outbox_relay_create(&r, &loop, &ro.o, err, sizeof err) != OUTBOX_OK) FAIL(err);
    size_t old_stats = offsetof(outbox_stats, held_back);
    memset(st.bytes, 0xAA, sizeof(st.bytes));
    outbox_relay_stats_sized(r, &st.s, old_stats);
    if (!untouched(st.bytes, old_stats, sizeof(st.bytes))) FAIL("stats wrote past an older struct");
    if (st.s.pending != -1 || st.s.acked != 0) FAIL("stats of an unstarted relay");
    /* A newer program's stats: the fields this library lacks are zero. */
    memset(st.bytes, 0xAA, sizeof(st.bytes));
    outbox_relay_stats_sized(r, &st.s, sizeof(st.bytes));
    for (size_t i = sizeof(outbox_stats); i < sizeof(st.bytes); i++)
        if (st.bytes[i] != 0) FAIL("a newer program's extra stats not zero");
    outbox_relay_stats(r, &st.s); /* the macro: this header's size */
    char text[65536];
    outbox_stats two[2] = {st.s, st.s};
    size_t a = outbox_metrics_format(text, sizeof text, two, NULL, 2);
    size_t b = outbox_metrics_format_sized(text, sizeof text, two, sizeof(outbox_stats), NULL, 2);
    if (a == 0 || a != b) FAIL("metrics of whole stats");
    outbox_relay_destroy(r);
    /* A newer program: options larger than this library knows. */
    memset(ro.bytes, 0, sizeof(ro.bytes));
    outbox_relay_options_init_sized(&ro.o, sizeof(ro.bytes));
    ro.o.db_url = "mysql://u@127.0.0.1:1/db";
    ro.o.nats_url = "nats://127.0.0.1:1";
    if (outbox_relay_create(&r, &loop, &ro.o, err, sizeof err) != OUTBOX_EINVAL) FAIL("newer accepted");
    printf("newer: %s\n", err);
    /* Options never initialized (size 0) are refused too. */
    memset(&ro.o, 0, sizeof(ro.o));
    ro.o.db_url = "mysql://u@127.0.0.1:1/db";
    if (outbox_relay_create(&r, &loop, &ro.o, err, sizeof err) != OUTBOX_EINVAL) FAIL("size 0 accepted");
    if (uv_loop_close(&loop) != 0) FAIL("loop left open");
    puts("versions: ok");
    return 0;
}
C
cc -Wall -Wextra -Werror $flags "$work/versions.c" $($line) -o "$work/versions"
out=$(LD_LIBRARY_PATH=$libdir "$work/versions") || { echo "$out"; fail "versions"; }
echo "$out" | sed 's/^/    /'
assert_eq "$(tail -1 <<<"$out")" "versions: ok" "structs of older and newer programs"
grep -q "^newer: outbox_relay_options: size [0-9]* is not one this library" <<<"$out" ||
  fail "the message for a newer program"
