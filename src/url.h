/*
 * Parsing of the two connection URLs:
 *   mysql://user:password@host:port/database?socket=/path/to.sock
 *   nats://[user:password@]host[:port][,nats://...]   (tls:// for TLS)
 * User, password and database are percent-decoded. Messages say which part
 * is wrong.
 */
#ifndef OB_URL_H
#define OB_URL_H

#include <stddef.h>

typedef struct ob_db_url {
    char *user;     /* "" when absent */
    char *password; /* NULL when absent */
    char *host;     /* without brackets for IPv6 */
    unsigned port;  /* 3306 when absent */
    char *database;
    char *socket; /* NULL unless ?socket= was given */
} ob_db_url;

#define OB_NATS_MAX_SERVERS 16

typedef struct ob_nats_server {
    char *userinfo; /* raw "user:pass" as written, or NULL */
    char *host;
    unsigned port; /* 4222 when absent */
    int tls;       /* written as tls:// */
} ob_nats_server;

typedef struct ob_nats_url {
    int n;
    ob_nats_server srv[OB_NATS_MAX_SERVERS];
} ob_nats_url;

/* Both return 0, or -1 with a message in err. On error nothing is left
 * allocated. */
int ob_db_url_parse(const char *s, ob_db_url *out, char *err, size_t errlen);
void ob_db_url_free(ob_db_url *u);
/* Replaces the URL's password with a copy of `password` (nothing happens
 * when it is NULL). Returns 0, or -1 when out of memory. */
int ob_db_url_set_password(ob_db_url *u, const char *password);

int ob_nats_url_parse(const char *s, ob_nats_url *out, char *err, size_t errlen);
void ob_nats_url_free(ob_nats_url *u);

/* 1 when any server of the list was written as tls://. */
int ob_nats_url_tls(const ob_nats_url *u);

/* Rebuilds server i as a URL with `host` in place of the written host
 * (used to hand nats.c an address resolved on the loop). Returns a malloc'd
 * string. */
char *ob_nats_server_url(const ob_nats_server *s, const char *host);

/* A copy of `url` with any password replaced by "***", for log lines.
 * Returns a malloc'd string. */
char *ob_url_redact(const char *url);

#endif
