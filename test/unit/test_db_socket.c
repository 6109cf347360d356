/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What db.c does to its socket apart from the connection's state
 * (db/db_socket.c): the keepalive that bounds how long a dead server goes
 * unnoticed, and the check of an idle connection that became readable.
 */
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check.h"
#include "db.h"
#include "db_socket.h"

static int opt(int fd, int level, int name) {
    int v = -1;
    socklen_t len = sizeof(v);
    CHECK_EQ(getsockopt(fd, level, name, &v, &len), 0);
    return v;
}

/* Probes after 2 s of silence, 2 s apart, three of them; unacknowledged
 * data given up after 8 s: within the bound db.h states. */
static void keepalive_gives_a_dead_server_up_within_the_bound(void) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    CHECK(fd >= 0);
    CHECK_EQ(ob_db_socket_keepalive(fd), 0);
    CHECK_EQ(opt(fd, SOL_SOCKET, SO_KEEPALIVE), 1);
    CHECK_EQ(opt(fd, IPPROTO_TCP, TCP_KEEPIDLE), 2);
    CHECK_EQ(opt(fd, IPPROTO_TCP, TCP_KEEPINTVL), 2);
    CHECK_EQ(opt(fd, IPPROTO_TCP, TCP_KEEPCNT), 3);
    CHECK_EQ(opt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT), 8000);
    int probes_ms = (OB_DB_KEEPIDLE_S + OB_DB_KEEPINTVL_S * OB_DB_KEEPCNT) * 1000;
    CHECK(probes_ms <= OB_DB_LOSS_BOUND_MS);
    CHECK(OB_DB_USER_TIMEOUT_MS <= OB_DB_LOSS_BOUND_MS);
    close(fd);
}

/* An idle connection: nothing to read is no loss; data the server sent
 * unasked, or the end of the stream, is. */
static void an_idle_socket_is_closed_when_readable(void) {
    char why[160];
    int sv[2];
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    CHECK_EQ(ob_db_socket_closed(sv[0], why, sizeof(why)), 0);
    CHECK_EQ(write(sv[1], "x", 1), 1);
    CHECK_EQ(ob_db_socket_closed(sv[0], why, sizeof(why)), 1);
    CHECK_CONTAINS(why, "spoke while the connection was idle");
    char c;
    CHECK_EQ(read(sv[0], &c, 1), 1); /* the check only peeked */
    close(sv[1]);
    CHECK_EQ(ob_db_socket_closed(sv[0], why, sizeof(why)), 1);
    CHECK_CONTAINS(why, "closed the connection while it was idle");
    close(sv[0]);
}

static void addresses_are_told_from_names(void) {
    CHECK(ob_db_is_address("127.0.0.1"));
    CHECK(ob_db_is_address("::1"));
    CHECK(!ob_db_is_address("localhost"));
    CHECK(!ob_db_is_address("db.example.com"));
}

int main(void) {
    keepalive_gives_a_dead_server_up_within_the_bound();
    an_idle_socket_is_closed_when_readable();
    addresses_are_told_from_names();
    printf("test_db_socket: ok\n");
    return 0;
}
