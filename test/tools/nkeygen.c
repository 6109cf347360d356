/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nkeygen: writes a new NKey user seed to a file (mode 0600) and prints its
 * public key, for the test servers' authorization blocks.
 *   nkeygen SEEDFILE
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "nats_security.h"

int main(int argc, char **argv) {
    char seed[64], pub[64];
    if (argc != 2) {
        fprintf(stderr, "usage: nkeygen SEEDFILE\n");
        return 2;
    }
    if (ob_nkey_generate(seed, sizeof(seed), pub, sizeof(pub)) != 0) {
        fprintf(stderr, "nkeygen: cannot make a key\n");
        return 1;
    }
    int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0600);
    size_t n = strlen(seed);
    seed[n++] = '\n';
    if (fd < 0 || write(fd, seed, n) != (ssize_t)n || close(fd) != 0) {
        fprintf(stderr, "nkeygen: cannot write %s\n", argv[1]);
        return 1;
    }
    printf("%s\n", pub);
    return 0;
}
