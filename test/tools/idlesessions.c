/* SPDX-License-Identifier: Apache-2.0 */
/*
 * idlesessions: opens N sessions to MariaDB and leaves them idle (Command
 * Sleep in PROCESSLIST) until it is killed: a server crowded with idle
 * sessions, for tests.
 *   idlesessions HOST PORT USER PASSWORD N
 * Prints "ready N" once every session is open. A test tool: it blocks.
 */
#include <mysql.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc != 6) {
        fprintf(stderr, "usage: idlesessions HOST PORT USER PASSWORD N\n");
        return 2;
    }
    unsigned port = (unsigned)atoi(argv[2]);
    int n = atoi(argv[5]);
    MYSQL **s = calloc((size_t)(n > 0 ? n : 1), sizeof(*s));
    if (s == NULL)
        return 1;
    for (int i = 0; i < n; i++) {
        s[i] = mysql_init(NULL);
        if (s[i] == NULL ||
            !mysql_real_connect(s[i], argv[1], argv[3], argv[4], NULL, port, NULL, 0)) {
            fprintf(stderr, "idlesessions: session %d: %s\n", i,
                    s[i] ? mysql_error(s[i]) : "out of memory");
            return 1;
        }
    }
    printf("ready %d\n", n);
    fflush(stdout);
    for (;;)
        pause();
}
