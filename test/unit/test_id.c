/* SPDX-License-Identifier: Apache-2.0 */
/* UUIDv7: layout, text form, and strict monotonicity within a process. */
#include <string.h>
#include <time.h>

#include "check.h"
#include "outbox/id.h"
#include "outbox/common.h"

static uint64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void ids_are_v7_and_strictly_increasing(void) {
    enum { N = 200000 };
    static outbox_id ids[N];
    uint64_t before = now_ms();
    for (int i = 0; i < N; i++)
        outbox_id_new(&ids[i]);
    uint64_t after = now_ms();
    int same_ms = 0;
    for (int i = 0; i < N; i++) {
        CHECK(outbox_id_is_v7(&ids[i]));
        if (i > 0) {
            CHECK_INT(memcmp(ids[i - 1].b, ids[i].b, 16), <, 0);
            same_ms += outbox_id_unix_ms(&ids[i - 1]) == outbox_id_unix_ms(&ids[i]);
        }
    }
    CHECK_INT(outbox_id_unix_ms(&ids[0]), >=, before);
    CHECK_INT(outbox_id_unix_ms(&ids[N - 1]), <=, after + 1);
    /* Many ids share a millisecond, which is what the counter is for. */
    CHECK_INT(same_ms, >, N / 2);
}

static void text_round_trip(void) {
    outbox_id id, back;
    char text[OUTBOX_ID_TEXT_LEN + 1];
    outbox_id_new(&id);
    outbox_id_to_text(&id, text);
    CHECK_EQ(strlen(text), 36);
    CHECK_EQ(text[8], '-');
    CHECK_EQ(text[14], '7');
    for (const char *p = text; *p; p++)
        CHECK(*p == '-' || (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f'));
    CHECK_EQ(outbox_id_parse(text, &back), OUTBOX_OK);
    CHECK_EQ(memcmp(id.b, back.b, 16), 0);
    CHECK_EQ(outbox_id_parse("019A6F1E7C2B7D3E8F000123456789AB", &back), OUTBOX_OK);
    CHECK_EQ(back.b[0], 0x01);
    CHECK_EQ(back.b[15], 0xab);
    CHECK_EQ(outbox_id_parse("not-an-id", &back), OUTBOX_EINVAL);
    CHECK_EQ(outbox_id_parse("019A6F1E7C2B7D3E8F000123456789AG", &back), OUTBOX_EINVAL);
    CHECK_EQ(outbox_id_parse(NULL, &back), OUTBOX_EINVAL);
}

static void from_ms_puts_the_time_first(void) {
    outbox_id id;
    outbox_id_from_ms(&id, 0x0123456789abULL);
    CHECK_EQ(outbox_id_unix_ms(&id), 0x0123456789abULL);
    CHECK(outbox_id_is_v7(&id));
    CHECK_EQ(id.b[0], 0x01);
    CHECK_EQ(id.b[5], 0xab);
}

int main(void) {
    ids_are_v7_and_strictly_increasing();
    text_round_trip();
    from_ms_puts_the_time_first();
    puts("test_id: ok");
    return 0;
}
