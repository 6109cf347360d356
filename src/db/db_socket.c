/* SPDX-License-Identifier: Apache-2.0 */
#include "db_socket.h"

#include <errmsg.h>
#include <mysqld_error.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/x509.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int ob_db_socket_keepalive(int fd) {
    int on = 1, idle = OB_DB_KEEPIDLE_S, intvl = OB_DB_KEEPINTVL_S, cnt = OB_DB_KEEPCNT;
    unsigned user = OB_DB_USER_TIMEOUT_MS;
    if (setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle)) != 0 ||
        setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl)) != 0 ||
        setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt)) != 0 ||
        setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user, sizeof(user)) != 0)
        return -1;
    return setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on));
}

int ob_db_socket_closed(int fd, char *why, size_t len) {
    char c;
    ssize_t n;
    do
        n = recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
    while (n < 0 && errno == EINTR);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        return 0;
    if (n == 0)
        snprintf(why, len, "the server closed the connection while it was idle");
    else if (n > 0)
        snprintf(why, len, "the server spoke while the connection was idle (closing it)");
    else
        snprintf(why, len, "the connection failed while it was idle: %s", strerror(errno));
    return 1;
}

int ob_db_is_address(const char *h) {
    unsigned char buf[sizeof(struct in6_addr)];
    return inet_pton(AF_INET, h, buf) == 1 || inet_pton(AF_INET6, h, buf) == 1;
}

/* The CA file of the system store, for verifying without --db-tls-ca when
 * the host-name check is off: the library verifies the chain only when it
 * is given a CA (or the host-name check is on). */
const char *ob_db_system_ca_file(void) {
    const char *f = getenv(X509_get_default_cert_file_env());
    if (f == NULL || *f == '\0')
        f = X509_get_default_cert_file();
    return access(f, R_OK) == 0 ? f : NULL;
}

/* Each wait inside the TLS handshake blocks the loop at most this long. */
#define OB_DB_TLS_WAIT_MAX_MS 5000

/* The waits of the TLS handshake. Connector/C 3.3 hands its wait the connect
 * timeout in seconds where the wait takes milliseconds, so with 10 s it waits
 * 10 ms and then fails the handshake: any server more than a few
 * milliseconds away is refused. This wait takes `timeout` as the seconds it
 * is, bounded by OB_DB_TLS_WAIT_MAX_MS. */
int ob_db_tls_io_wait(my_socket fd, my_bool is_read, int timeout) {
    int ms = timeout > 0 && timeout < OB_DB_TLS_WAIT_MAX_MS / 1000 ? timeout * 1000
                                                                   : OB_DB_TLS_WAIT_MAX_MS;
    struct pollfd p = {.fd = fd, .events = is_read ? POLLIN : POLLOUT, .revents = 0};
    int rc;
    do
        rc = poll(&p, 1, ms);
    while (rc < 0 && errno == EINTR);
    if (rc == 0)
        errno = ETIMEDOUT;
    return rc;
}

/* Connect errors, with the cause named for the TLS cases an operator meets. */

void ob_db_tls_options(MYSQL *m, const char *ca, const char *cert, const char *key,
                       int no_verify_host) {
    my_bool on = 1;
    my_bool verify = no_verify_host ? 0 : 1;
    if (ca == NULL && no_verify_host)
        ca = ob_db_system_ca_file();
    mysql_options(m, MYSQL_OPT_SSL_ENFORCE, &on);
    mysql_optionsv(m, MARIADB_OPT_IO_WAIT, ob_db_tls_io_wait);
    mysql_options(m, MYSQL_OPT_SSL_VERIFY_SERVER_CERT, &verify);
    mysql_ssl_set(m, key, cert, ca, NULL, NULL);
}

MYSQL *ob_db_mysql_new(const ob_db_config *cfg) {
    MYSQL *m = mysql_init(NULL);
    if (m == NULL)
        return NULL;
    unsigned ct = cfg->connect_timeout_s ? cfg->connect_timeout_s : 10;
    unsigned rt = cfg->read_timeout_s ? cfg->read_timeout_s : 120;
    mysql_options(m, MYSQL_OPT_NONBLOCK, 0);
    mysql_options(m, MYSQL_OPT_CONNECT_TIMEOUT, &ct);
    mysql_options(m, MYSQL_OPT_READ_TIMEOUT, &rt);
    mysql_options(m, MYSQL_OPT_WRITE_TIMEOUT, &rt);
    mysql_options(m, MYSQL_SET_CHARSET_NAME, "utf8mb4");
    if (cfg->init_command)
        mysql_options(m, MYSQL_INIT_COMMAND, cfg->init_command);
    if (!cfg->socket) {
        /* Given "localhost" (a TLS host-name check), the library would
         * otherwise take its default unix socket. */
        unsigned tcp = MYSQL_PROTOCOL_TCP;
        mysql_options(m, MYSQL_OPT_PROTOCOL, &tcp);
    }
    if (cfg->tls)
        ob_db_tls_options(m, cfg->tls_ca, cfg->tls_cert, cfg->tls_key, cfg->tls_no_verify_host);
    return m;
}

int ob_db_socket_nonblocking(int fd) {
    int fl = fd >= 0 ? fcntl(fd, F_GETFL) : -1;
    if (fl < 0)
        return -1;
    return (fl & O_NONBLOCK) || fcntl(fd, F_SETFL, fl | O_NONBLOCK) == 0 ? 0 : -1;
}
