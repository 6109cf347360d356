#include "puback.h"

#include <string.h>

/* Finds `"key"` followed by optional spaces and ':' in data[0..len); returns
 * a pointer just after the ':' or NULL. */
static const char *find_key(const char *data, size_t len, const char *key) {
    size_t kl = strlen(key);
    const char *end = data + len;
    for (const char *p = data; p + kl + 2 <= end; p++) {
        if (p[0] != '"' || memcmp(p + 1, key, kl) != 0 || p[kl + 1] != '"')
            continue;
        const char *q = p + kl + 2;
        while (q < end && (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r'))
            q++;
        if (q < end && *q == ':') {
            q++;
            while (q < end && (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r'))
                q++;
            return q;
        }
    }
    return NULL;
}

static int read_int(const char *p, const char *end, int64_t *out) {
    int neg = 0;
    if (p < end && *p == '-') {
        neg = 1;
        p++;
    }
    if (p >= end || *p < '0' || *p > '9')
        return -1;
    int64_t v = 0;
    while (p < end && *p >= '0' && *p <= '9')
        v = v * 10 + (*p++ - '0');
    *out = neg ? -v : v;
    return 0;
}

int ob_puback_parse(const char *data, size_t len, ob_puback *out) {
    memset(out, 0, sizeof(*out));
    if (data == NULL || len == 0)
        return -1;
    const char *end = data + len;
    const char *e = find_key(data, len, "error");
    if (e != NULL) {
        int64_t v;
        const char *c = find_key(e, (size_t)(end - e), "code");
        if (c && read_int(c, end, &v) == 0)
            out->code = (int)v;
        c = find_key(e, (size_t)(end - e), "err_code");
        if (c && read_int(c, end, &v) == 0)
            out->err_code = (int)v;
        c = find_key(e, (size_t)(end - e), "description");
        if (c && c < end && *c == '"') {
            const char *s = ++c;
            while (c < end && *c != '"') {
                if (*c == '\\' && c + 1 < end)
                    c++;
                c++;
            }
            out->desc = s;
            out->desc_len = (size_t)(c - s);
        }
        if (out->code == 0)
            out->code = -1;
        return 0;
    }
    const char *s = find_key(data, len, "seq");
    int64_t seq;
    if (s == NULL || read_int(s, end, &seq) != 0 || seq < 0)
        return -1;
    out->ok = 1;
    out->seq = (uint64_t)seq;
    const char *d = find_key(data, len, "duplicate");
    if (d && (size_t)(end - d) >= 4 && memcmp(d, "true", 4) == 0)
        out->duplicate = 1;
    return 0;
}
