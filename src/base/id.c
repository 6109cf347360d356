/* SPDX-License-Identifier: Apache-2.0 */
/*
 * UUIDv7 generation. libuuid supplies the random bits; the time prefix and
 * the monotonic counter are ours.
 */
#include "outbox/id.h"
#include "outbox/common.h"

#include <pthread.h>
#include <string.h>
#include <time.h>
#include <uuid/uuid.h>

#include "buf.h"

static pthread_mutex_t id_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned char id_last[16];
static uint64_t id_last_ms;
static int id_have_last;

static uint64_t wall_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void put_ms(unsigned char *b, uint64_t ms) {
    for (int i = 5; i >= 0; i--) {
        b[i] = (unsigned char)(ms & 0xff);
        ms >>= 8;
    }
}

/* Fresh random bits below the time prefix, with the version and variant set.
 * The top bit of rand_a is cleared so that a millisecond has room for 2^73
 * increments before the counter could carry into the time. */
static void fill_random(unsigned char *b, uint64_t ms) {
    uuid_t r;
    uuid_generate_random(r);
    memcpy(b + 6, r + 6, 10);
    put_ms(b, ms);
    b[6] = (unsigned char)(0x70 | (b[6] & 0x07));
    b[8] = (unsigned char)(0x80 | (b[8] & 0x3f));
}

/* Adds one to the 74 bits of rand_a and rand_b. On overflow the time prefix
 * moves on by one millisecond. */
static void increment(unsigned char *b, uint64_t *ms) {
    for (int i = 15; i >= 9; i--) {
        if (++b[i] != 0)
            return;
    }
    if (((b[8] + 1) & 0x3f) != 0) {
        b[8] = (unsigned char)(0x80 | ((b[8] + 1) & 0x3f));
        return;
    }
    b[8] = 0x80;
    if (++b[7] != 0)
        return;
    if (((b[6] + 1) & 0x0f) != 0) {
        b[6] = (unsigned char)(0x70 | ((b[6] + 1) & 0x0f));
        return;
    }
    b[6] = 0x70;
    *ms += 1;
    put_ms(b, *ms);
}

void outbox_id_new(outbox_id *out) {
    uint64_t ms = wall_ms();
    pthread_mutex_lock(&id_lock);
    if (id_have_last && ms <= id_last_ms) {
        increment(id_last, &id_last_ms);
    } else {
        fill_random(id_last, ms);
        id_last_ms = ms;
        id_have_last = 1;
    }
    memcpy(out->b, id_last, 16);
    pthread_mutex_unlock(&id_lock);
}

void outbox_id_from_ms(outbox_id *out, uint64_t unix_ms) {
    fill_random(out->b, unix_ms & 0xffffffffffffULL);
}

void outbox_id_to_text(const outbox_id *id, char *out) {
    uuid_unparse_lower(id->b, out);
}

int outbox_id_parse(const char *text, outbox_id *out) {
    size_t n = text ? strlen(text) : 0;
    if (n == OUTBOX_ID_TEXT_LEN) {
        if (uuid_parse(text, out->b) != 0)
            return OUTBOX_EINVAL;
        return OUTBOX_OK;
    }
    if (n != 32)
        return OUTBOX_EINVAL;
    for (size_t i = 0; i < 16; i++) {
        int hi = ob_hexval((unsigned char)text[2 * i]);
        int lo = ob_hexval((unsigned char)text[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return OUTBOX_EINVAL;
        out->b[i] = (unsigned char)(hi << 4 | lo);
    }
    return OUTBOX_OK;
}

uint64_t outbox_id_unix_ms(const outbox_id *id) {
    uint64_t ms = 0;
    for (int i = 0; i < 6; i++)
        ms = ms << 8 | id->b[i];
    return ms;
}

int outbox_id_is_v7(const outbox_id *id) {
    return (id->b[6] >> 4) == 7 && (id->b[8] & 0xc0) == 0x80;
}
