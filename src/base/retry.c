/* SPDX-License-Identifier: Apache-2.0 */
#include "retry.h"

#include <unistd.h>
#include <uv.h>

void ob_retry_init(ob_retry *r, uint32_t min_ms, uint32_t max_ms) {
    r->min_ms = min_ms ? min_ms : 1;
    r->max_ms = max_ms < r->min_ms ? r->min_ms : max_ms;
    uint64_t s = uv_hrtime() ^ ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)r;
    /* splitmix64 of the seed material, so nearby seeds give unrelated states */
    s += 0x9e3779b97f4a7c15ULL;
    s = (s ^ (s >> 30)) * 0xbf58476d1ce4e5b9ULL;
    s = (s ^ (s >> 27)) * 0x94d049bb133111ebULL;
    s ^= s >> 31;
    r->rng = s ? s : 0x2545f4914f6cdd1dULL;
}

uint64_t ob_retry_random(ob_retry *r, uint64_t n) {
    uint64_t x = r->rng;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    r->rng = x;
    return n ? x % n : 0;
}

uint64_t ob_retry_delay(ob_retry *r, int failures) {
    uint64_t d = r->min_ms;
    for (int i = 0; i < failures && d < r->max_ms; i++)
        d *= 2;
    if (d > r->max_ms)
        d = r->max_ms;
    return d / 2 + ob_retry_random(r, d / 2 + 1);
}
