/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The MariaDB connection over TLS, on the loop: every connect verifies the
 * server, leaves the socket non-blocking, runs a query, and its longest
 * blocking call (the TLS handshake's wait) is measured. Prints the
 * distribution over 50 connects; the wait must stay far below the connect
 * timeout on loopback.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "db.h"
#include "integ.h"

typedef struct run {
    int done, ok;
} run;

static void on_done(ob_db *db, int ok, void *data) {
    (void)db;
    run *r = data;
    r->ok = ok;
    r->done = 1;
}

static void on_closed(void *data) {
    *(int *)data = 1;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Connects with cfg, returns ok; on success checks the session and returns
 * the longest call in *us. */
static int connect_once(uv_loop_t *loop, const ob_db_config *cfg, uint64_t *us, char *err) {
    ob_db *db = ob_db_new(loop, cfg, NULL, "tls");
    run r = {0, 0};
    CHECK_EQ(ob_db_connect(db, on_done, &r), 0);
    CHECK_EQ(ti_run_until(loop, &r.done, 20000), 0);
    if (r.ok) {
        *us = ob_db_connect_block_us(db);
        CHECK(ob_db_tls_cipher(db) != NULL);
        static const char q[] = "SELECT 1";
        r.done = 0;
        CHECK_EQ(ob_db_query(db, q, sizeof(q) - 1, on_done, &r), 0);
        CHECK_EQ(ti_run_until(loop, &r.done, 20000), 0);
        CHECK_EQ(r.ok, 1);
        CHECK(ob_db_result(db, 0) != NULL);
        int fd = ob_db_fd(db); /* the library's socket: only its flags are read */
        CHECK(fd >= 0);
        CHECK((fcntl(fd, F_GETFL) & O_NONBLOCK) != 0);
    } else {
        snprintf(err, 512, "%s", ob_db_error(db));
    }
    int closed = 0;
    ob_db_close(db, on_closed, &closed);
    CHECK_EQ(ti_run_until(loop, &closed, 20000), 0);
    return r.ok;
}

int main(void) {
    const char *port = ti_env("OUTBOX_TEST_SECURE_DB_PORT");
    const char *ca = ti_env("OUTBOX_TEST_SECURE_CA");
    const char *wrong = ti_env("OUTBOX_TEST_SECURE_WRONG_CA");
    uv_loop_t loop;
    uv_loop_init(&loop);
    ob_db_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.host = "127.0.0.1";
    cfg.port = (unsigned)atoi(port);
    cfg.user = "outbox";
    cfg.password = "outbox";
    cfg.database = "mysql";
    cfg.connect_timeout_s = 10;
    cfg.tls = 1;
    cfg.tls_ca = ca;
    char err[512];

    enum { N = 50 };
    uint64_t us[N];
    for (int i = 0; i < N; i++)
        CHECK_EQ(connect_once(&loop, &cfg, &us[i], err), 1);
    qsort(us, N, sizeof(us[0]), cmp_u64);
    printf("TLS connects=%d longest call per connect: min %llu us, median %llu us, p90 %llu us, "
           "max %llu us\n",
           N, (unsigned long long)us[0], (unsigned long long)us[N / 2],
           (unsigned long long)us[N * 9 / 10], (unsigned long long)us[N - 1]);
    CHECK_INT(us[N / 2], <, 100000); /* loopback: far below the 10 s connect timeout */

    /* The host name form: "localhost" is in the certificate. */
    cfg.host = "localhost";
    CHECK_EQ(connect_once(&loop, &cfg, &us[0], err), 1);

    /* A CA that did not sign the server's certificate. */
    cfg.host = "127.0.0.1";
    cfg.tls_ca = wrong;
    CHECK_EQ(connect_once(&loop, &cfg, &us[0], err), 0);
    CHECK_CONTAINS(err, "certificate check failed");

    /* No TLS against a server and user that require it. */
    cfg.tls = 0;
    cfg.tls_ca = NULL;
    CHECK_EQ(connect_once(&loop, &cfg, &us[0], err), 0);
    CHECK_CONTAINS(err, "TLS");

    CHECK_EQ(uv_loop_close(&loop), 0);
    puts("db_tls: ok");
    return 0;
}
