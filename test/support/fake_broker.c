/* SPDX-License-Identifier: Apache-2.0 */
/* The fake broker (fake_broker.h), and the link's two names it stands for. */
#include "fake_broker.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "link.h"

#define MAX_PUBLISHES 256

typedef struct fake_pub_rec {
    uint32_t worker, gen, slot;
} fake_pub_rec;

struct fake_broker {
    uv_loop_t *loop;
    ob_broker_events ev;
    int started;
    int ready;
    uint32_t epoch;
    uint64_t last_answer;
    fake_pub_rec pubs[MAX_PUBLISHES];
    int npubs;
    ob_blame blame;
    char blame_text[200];
    /* A refusal that holds until a message is stored, and its episode. */
    char refusal[200];
    int refusing;
    uint32_t episode, episodes;
    int refusals;
    int missing;
    uint32_t losses;
    /* Readiness posted, delivered by the idle handle. */
    uv_idle_t post;
    uint8_t posted[16];
    int nposted;
    int told, reentered;
    int inside; /* depth of the table's operations under way */
    void (*close_cb)(void *data);
    void *close_data;
};

static fake_broker *last;
static int closed_count;

fake_broker *fake_broker_last(void) {
    return last;
}

int fake_broker_closed_count(void) {
    return closed_count;
}

fake_broker *fake_broker_new(uv_loop_t *loop, const ob_broker_events *ev) {
    fake_broker *b = calloc(1, sizeof(*b));
    if (b == NULL)
        return NULL;
    b->loop = loop;
    b->ev = *ev;
    b->blame = OB_BLAME_ROW;
    last = b;
    return b;
}

/* --- readiness, posted ---------------------------------------------------- */

static void deliver(uv_idle_t *h) {
    fake_broker *b = h->data;
    uint8_t now[sizeof(b->posted)];
    int n = b->nposted;
    memcpy(now, b->posted, (size_t)n);
    b->nposted = 0;
    uv_idle_stop(h);
    for (int i = 0; i < n; i++) {
        b->told++;
        if (b->inside)
            b->reentered++;
        if (b->ev.on_ready)
            b->ev.on_ready(b->ev.data, now[i]);
    }
}

static void post(fake_broker *b, int ready) {
    if (b->nposted == (int)sizeof(b->posted))
        b->nposted--;
    b->posted[b->nposted++] = (uint8_t)ready;
    if (b->started)
        uv_idle_start(&b->post, deliver);
}

void fake_broker_set_ready(fake_broker *b, int ready) {
    if (b->ready == ready)
        return;
    b->ready = ready;
    if (!ready)
        b->epoch++;
    post(b, ready);
}

int fake_broker_started(const fake_broker *b) {
    return b->started;
}

int fake_broker_told(const fake_broker *b) {
    return b->told;
}

int fake_broker_reentered(const fake_broker *b) {
    return b->reentered;
}

/* --- the test's side ------------------------------------------------------ */

int fake_broker_published(const fake_broker *b) {
    return b->npubs;
}

uint32_t fake_broker_worker(const fake_broker *b, int i) {
    return b->pubs[i].worker;
}

void fake_broker_answer_raw(fake_broker *b, const ob_ack *a) {
    b->last_answer = uv_now(b->loop);
    b->ev.on_ack(b->ev.data, a);
}

void fake_broker_answer(fake_broker *b, int i, ob_ack_result result) {
    if (i < 0 || i >= b->npubs)
        abort(); /* the test answers a publish never made */
    ob_ack a;
    memset(&a, 0, sizeof(a));
    a.worker = b->pubs[i].worker;
    a.gen = b->pubs[i].gen;
    a.slot = b->pubs[i].slot;
    a.result = result;
    a.seq = (uint64_t)i + 1;
    if (result == OB_ACKED_ERROR) {
        a.code = 503;
        a.text = "refused";
        a.text_len = strlen(a.text);
    }
    if (result == OB_ACKED_STORED || result == OB_ACKED_DUPLICATE)
        fake_broker_stored(b);
    fake_broker_answer_raw(b, &a);
}

void fake_broker_stored(fake_broker *b) {
    b->refusing = 0;
    b->episode = 0;
    b->refusal[0] = '\0';
}

void fake_broker_blame(fake_broker *b, ob_blame blame, const char *text) {
    b->blame = blame;
    snprintf(b->blame_text, sizeof(b->blame_text), "%s", text);
}

int fake_broker_refusals(const fake_broker *b) {
    return b->refusals;
}

const char *fake_broker_refusal_text(const fake_broker *b) {
    return b->refusal;
}

void fake_broker_fatal(fake_broker *b, const char *why) {
    b->ev.on_fatal(b->ev.data, why);
}

void fake_broker_store_missing(fake_broker *b, int missing) {
    if (missing && !b->missing)
        b->losses++;
    b->missing = missing;
}

void fake_broker_wake(fake_broker *b) {
    b->ev.on_wake(b->ev.data);
}

/* --- the table ------------------------------------------------------------ */

static int f_start(void *self) {
    fake_broker *b = self;
    uv_idle_init(b->loop, &b->post);
    b->post.data = b;
    b->started = 1;
    if (b->nposted)
        uv_idle_start(&b->post, deliver);
    return 0;
}

static int f_ready(const void *self) {
    return ((const fake_broker *)self)->ready;
}

static uint32_t f_epoch(const void *self) {
    return ((const fake_broker *)self)->epoch;
}

static uint64_t f_last_answer(const void *self) {
    return ((const fake_broker *)self)->last_answer;
}

static uint64_t f_window_ms(const void *self) {
    (void)self;
    return 120000;
}

static int f_publish(void *self, uint32_t worker, uint32_t gen, uint32_t slot, const ob_row *row,
                     ob_pub_fail *fail) {
    (void)row;
    fake_broker *b = self;
    if (b->npubs == MAX_PUBLISHES) {
        fail->kind = OUTBOX_FAIL_PUBLISH_ERROR;
        fail->code = 0;
        fail->len = (size_t)snprintf(fail->text, sizeof(fail->text), "fake broker: full");
        return -1;
    }
    b->pubs[b->npubs++] = (fake_pub_rec){worker, gen, slot};
    return 0;
}

static void f_verdict(const void *self, const ob_ack *a, const ob_row *row, ob_verdict *v) {
    (void)row;
    const fake_broker *b = self;
    memset(v, 0, sizeof(*v));
    v->blame = b->blame;
    v->kind = OUTBOX_FAIL_PUBLISH_ERROR;
    v->code = a->code;
    v->err_code = a->err_code;
    v->suspect = "fake suspect";
    v->len = (size_t)snprintf(v->text, sizeof(v->text), "%s", b->blame_text);
}

static void f_unavailable(void *self, const char *why) {
    (void)why;
    fake_broker *b = self;
    b->inside++;
    fake_broker_set_ready(b, 0);
    b->inside--;
}

static void f_suspect(void *self, const char *why) {
    (void)self;
    (void)why;
}

static int f_settled(const void *self) {
    (void)self;
    return 1;
}

/* As the link: a refusal pauses (readiness lost, posted) and holds until a
 * message is stored; a refusal that lasts is one episode. */
static void f_refused(void *self, const char *why) {
    fake_broker *b = self;
    b->inside++;
    b->refusals++;
    snprintf(b->refusal, sizeof(b->refusal), "%s", why);
    if (!b->refusing) {
        b->refusing = 1;
        b->episode = ++b->episodes;
    }
    fake_broker_set_ready(b, 0);
    b->inside--;
}

static const char *f_refusal(const void *self) {
    const fake_broker *b = self;
    return b->refusing ? b->refusal : NULL;
}

static uint32_t f_refusal_episode(const void *self) {
    const fake_broker *b = self;
    return b->refusing ? b->episode : 0;
}

static void f_store_lost(const void *self, int *missing, uint32_t *losses) {
    const fake_broker *b = self;
    *missing = b->missing;
    *losses = b->losses;
}

static void post_closed(uv_handle_t *h) {
    fake_broker *b = h->data;
    void (*cb)(void *) = b->close_cb;
    void *data = b->close_data;
    if (last == b)
        last = NULL;
    free(b);
    closed_count++;
    if (cb)
        cb(data);
}

static void f_close(void *self, void (*cb)(void *data), void *data) {
    fake_broker *b = self;
    b->close_cb = cb;
    b->close_data = data;
    if (b->started) {
        uv_close((uv_handle_t *)&b->post, post_closed);
        return;
    }
    b->post.data = b;
    post_closed((uv_handle_t *)&b->post);
}

const ob_broker_ops fake_broker_ops = {
    .start = f_start,
    .ready = f_ready,
    .epoch = f_epoch,
    .last_answer = f_last_answer,
    .window_ms = f_window_ms,
    .publish = f_publish,
    .verdict = f_verdict,
    .unavailable = f_unavailable,
    .suspect = f_suspect,
    .settled = f_settled,
    .refused = f_refused,
    .refusal = f_refusal,
    .refusal_episode = f_refusal_episode,
    .store_lost = f_store_lost,
    .close = f_close,
};

/* --- in place of the link ------------------------------------------------- */

const ob_broker_ops ob_link_broker_ops = {
    .start = f_start,
    .ready = f_ready,
    .epoch = f_epoch,
    .last_answer = f_last_answer,
    .window_ms = f_window_ms,
    .publish = f_publish,
    .verdict = f_verdict,
    .unavailable = f_unavailable,
    .suspect = f_suspect,
    .settled = f_settled,
    .refused = f_refused,
    .refusal = f_refusal,
    .refusal_episode = f_refusal_episode,
    .store_lost = f_store_lost,
    .close = f_close,
};

ob_link *ob_link_new(uv_loop_t *loop, const ob_link_config *cfg, const ob_link_callbacks *cbs,
                     char *err, size_t errlen) {
    (void)cfg;
    fake_broker *b = fake_broker_new(loop, cbs);
    if (b == NULL)
        snprintf(err, errlen, "out of memory");
    return (ob_link *)(void *)b;
}
