/* SPDX-License-Identifier: Apache-2.0 */
#include "ops_print.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void format_age(int64_t ms, char *out, size_t len) {
    if (ms < 0)
        snprintf(out, len, "unknown");
    else if (ms < 1000)
        snprintf(out, len, "%lld ms", (long long)ms);
    else if (ms < 3600 * 1000)
        snprintf(out, len, "%.1f s", (double)ms / 1000.0);
    else
        snprintf(out, len, "%.1f h", (double)ms / 3600000.0);
}

static void format_bound(uint64_t ms, char *out, size_t len) {
    if (ms == 0) {
        snprintf(out, len, "MAXVALUE");
        return;
    }
    time_t t = (time_t)(ms / 1000);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, len, "%Y-%m-%dT%H:%MZ", &tm);
}

/* The ordered modes' shares: one line per relay session holding buckets. */
static void print_owners(const outbox_maint_result *r) {
    const char *who = r->holders_are_relays ? "relay" : "session";
    if (r->leader_holder)
        printf("leader            %s %lu\n", who, r->leader_holder);
    unsigned long seen[64];
    int nseen = 0;
    for (int k = 0; k < 64; k++) {
        unsigned long h = r->bucket_holder[k];
        int known = 0;
        for (int i = 0; i < nseen; i++)
            known |= seen[i] == h;
        if (h == 0 || known)
            continue;
        seen[nseen++] = h;
        int n = 0;
        for (int b = k; b < 64; b++)
            n += r->bucket_holder[b] == h;
        printf("buckets           %s %lu owns %d of 64:", who, h, n);
        for (int b = k; b < 64; b++)
            if (r->bucket_holder[b] == h)
                printf(" %d", b);
        printf("\n");
    }
    if (nseen == 0 && r->leader_holder == 0)
        printf("buckets           none owned (no ordered relay running)\n");
}

/* Cursor mode: each bucket with a cursor row or pending rows, one a line. */
static void print_cursors(const outbox_maint_result *r) {
    if (!r->cursor_mode)
        return;
    int n = 0;
    for (int k = 0; k < 64; k++)
        n += r->bucket_cursor[k] >= 0;
    printf("cursor mode       %d of 64 buckets have a cursor\n", n);
    printf("  bucket  cursor                pending\n");
    for (int k = 0; k < 64; k++) {
        if (r->bucket_cursor[k] < 0 && r->bucket_pending[k] == 0)
            continue;
        char c[24] = "-";
        if (r->bucket_cursor[k] >= 0)
            snprintf(c, sizeof(c), "%lld", (long long)r->bucket_cursor[k]);
        printf("  %-7d %-21s %lld\n", k, c, (long long)r->bucket_pending[k]);
    }
}

/* One TSV field: tab, newline, carriage return and backslash are written as
 * \t, \n, \r and \\, so every row stays one line of 7 fields. */
static void put_field(const char *s, char after) {
    for (; s && *s; s++) {
        switch (*s) {
        case '\t':
            fputs("\\t", stdout);
            break;
        case '\n':
            fputs("\\n", stdout);
            break;
        case '\r':
            fputs("\\r", stdout);
            break;
        case '\\':
            fputs("\\\\", stdout);
            break;
        default:
            putchar(*s);
        }
    }
    putchar(after);
}

/* "dead purge" or, with sections, "dead purge [orders]". */
static void put_kind(const ob_ops_out *out, const char *kind) {
    if (out->label)
        printf("%s [%s]: ", kind, out->label);
    else
        printf("%s: ", kind);
}

static void print_status(const ob_ops_out *out, const outbox_maint_result *r) {
    char age[32];
    format_age(r->pending > 0 ? r->oldest_pending_ms : 0, age, sizeof(age));
    if (!out->first)
        printf("\n");
    printf("table             %s\n", out->table);
    if (out->label)
        printf("section           [table %s]\n", out->label);
    printf("pending           %lld\n", (long long)r->pending);
    printf("oldest pending    %s\n", r->pending > 0 ? age : "-");
    printf("processed         %lld\n", (long long)r->processed);
    printf("dead              %lld\n", (long long)r->dead);
    if (r->database)
        printf("database          %s%s\n", r->database,
               strncmp(r->database, "Galera", 6) == 0
                   ? "; the maintenance lock below is this node's only, the leases are "
                     "the lease table's"
                   : "");
    if (r->lock_holder)
        printf("maintenance lock  held by session %lu\n", r->lock_holder);
    else
        printf("maintenance lock  free\n");
    print_owners(r);
    if (r->cursor_mismatch && r->cursor_top >= r->next_seq)
        printf("cursor mismatch   the highest cursor %lld is at or above the table's "
               "AUTO_INCREMENT counter %lld: every row with status 0 counts as pending until "
               "cursor-reset\n",
               (long long)r->cursor_top, (long long)r->next_seq);
    else if (r->cursor_mismatch)
        printf("cursor mismatch   the row the cursors name as their witness was replaced (the "
               "table was truncated, swapped or restored): every row with status 0 counts as "
               "pending until cursor-reset\n");
    print_cursors(r);
    if (r->npartitions == 0) {
        printf("partitions        none (not partitioned)\n");
        return;
    }
    printf("partitions        %zu\n", r->npartitions);
    for (size_t i = 0; i < r->npartitions; i++) {
        char bound[32];
        format_bound(r->partitions[i].bound_ms, bound, sizeof(bound));
        printf("  %-12s below %-18s ~%lld rows\n", r->partitions[i].name, bound,
               (long long)r->partitions[i].rows_estimate);
    }
}

/* The TSV of dead rows; with sections, a first column names the section. */
static void print_dead(const ob_ops_out *out, const outbox_maint_result *r) {
    if (out->first)
        printf("%sid\tattempts\tcreated_at\taggregate_type\taggregate_id\tevent_type\tlast_error\n",
               out->label ? "table\t" : "");
    for (size_t i = 0; i < r->nrows; i++) {
        const outbox_dead_row *d = &r->rows[i];
        char id[OUTBOX_ID_TEXT_LEN + 1];
        outbox_id_to_text(&d->id, id);
        if (out->label)
            put_field(out->label, '\t');
        printf("%s\t%d\t", id, d->attempts);
        put_field(d->created_at, '\t');
        put_field(d->aggregate_type, '\t');
        put_field(d->aggregate_id, '\t');
        put_field(d->event_type, '\t');
        put_field(d->last_error, '\n');
    }
}

/* --- --json: one object per line ------------------------------------------ */

static json_t *str_or_null(const char *s) {
    return s ? json_string(s) : json_null();
}

static void emit(json_t *o) {
    char *s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII);
    if (s)
        puts(s);
    free(s);
    json_decref(o);
}

static json_t *json_owners(const outbox_maint_result *r) {
    json_t *owners = json_object();
    for (int b = 0; b < 64; b++) {
        if (r->bucket_holder[b] == 0)
            continue;
        char key[32];
        snprintf(key, sizeof(key), "%lu", r->bucket_holder[b]);
        json_t *list = json_object_get(owners, key);
        if (list == NULL) {
            list = json_array();
            json_object_set_new(owners, key, list);
        }
        json_array_append_new(list, json_integer(b));
    }
    return owners;
}

/* Cursor mode: [{"bucket": k, "cursor": c or null, "pending": n}, ...] for
 * each bucket with a cursor row or pending rows. */
static json_t *json_cursors(const outbox_maint_result *r) {
    json_t *list = json_array();
    for (int k = 0; k < 64; k++) {
        if (r->bucket_cursor[k] < 0 && r->bucket_pending[k] == 0)
            continue;
        json_t *c = json_object();
        json_object_set_new(c, "bucket", json_integer(k));
        json_object_set_new(c, "cursor",
                            r->bucket_cursor[k] >= 0 ? json_integer(r->bucket_cursor[k])
                                                     : json_null());
        json_object_set_new(c, "pending", json_integer(r->bucket_pending[k]));
        json_array_append_new(list, c);
    }
    return list;
}

static void json_status(const ob_ops_out *out, const outbox_maint_result *r) {
    json_t *o = json_object();
    json_object_set_new(o, "table", json_string(out->table));
    json_object_set_new(o, "section", str_or_null(out->label));
    json_object_set_new(o, "pending", json_integer(r->pending));
    json_object_set_new(o, "oldest_pending_ms",
                        r->pending > 0 ? json_integer(r->oldest_pending_ms) : json_null());
    json_object_set_new(o, "processed", json_integer(r->processed));
    json_object_set_new(o, "dead", json_integer(r->dead));
    json_object_set_new(o, "database", str_or_null(r->database));
    json_object_set_new(o, "lock_holder",
                        r->lock_holder ? json_integer((json_int_t)r->lock_holder) : json_null());
    json_object_set_new(o, "leader_holder",
                        r->leader_holder ? json_integer((json_int_t)r->leader_holder)
                                         : json_null());
    json_object_set_new(o, "bucket_owners", json_owners(r));
    json_object_set_new(o, "owners_are",
                        json_string(r->holders_are_relays ? "relays" : "sessions"));
    if (r->cursor_mode)
        json_object_set_new(o, "cursors", json_cursors(r));
    if (r->cursor_mode || r->cursor_mismatch)
        json_object_set_new(o, "cursor_mismatch", json_boolean(r->cursor_mismatch));
    json_t *parts = json_array();
    for (size_t i = 0; i < r->npartitions; i++) {
        char bound[32];
        format_bound(r->partitions[i].bound_ms, bound, sizeof(bound));
        json_t *p = json_object();
        json_object_set_new(p, "name", json_string(r->partitions[i].name));
        json_object_set_new(p, "below",
                            r->partitions[i].bound_ms ? json_string(bound) : json_null());
        json_object_set_new(p, "rows_estimate", json_integer(r->partitions[i].rows_estimate));
        json_array_append_new(parts, p);
    }
    json_object_set_new(o, "partitions", parts);
    emit(o);
}

static void json_dead(const ob_ops_out *out, const outbox_maint_result *r) {
    for (size_t i = 0; i < r->nrows; i++) {
        const outbox_dead_row *d = &r->rows[i];
        char id[OUTBOX_ID_TEXT_LEN + 1];
        outbox_id_to_text(&d->id, id);
        json_t *o = json_object();
        json_object_set_new(o, "table", json_string(out->table));
        json_object_set_new(o, "section", str_or_null(out->label));
        json_object_set_new(o, "id", json_string(id));
        json_object_set_new(o, "attempts", json_integer(d->attempts));
        json_object_set_new(o, "created_at", str_or_null(d->created_at));
        json_object_set_new(o, "aggregate_type", str_or_null(d->aggregate_type));
        json_object_set_new(o, "aggregate_id", str_or_null(d->aggregate_id));
        json_object_set_new(o, "event_type", str_or_null(d->event_type));
        json_object_set_new(o, "last_error", str_or_null(d->last_error));
        emit(o);
    }
}

void ob_ops_print(const ob_ops_out *out, const outbox_maint_result *r) {
    switch (r->kind) {
    case OUTBOX_MAINT_STATUS:
        if (out->json)
            json_status(out, r);
        else
            print_status(out, r);
        break;
    case OUTBOX_MAINT_PARTITIONS:
        put_kind(out, "partitions");
        printf("%u created, %u dropped, %u kept (expired, but holding pending rows)\n", r->created,
               r->dropped, r->kept);
        break;
    case OUTBOX_MAINT_CLEANUP:
        put_kind(out, "cleanup");
        printf("%llu row(s) deleted (%llu processed, %llu dead)\n", (unsigned long long)r->changed,
               (unsigned long long)(r->changed - r->changed_dead),
               (unsigned long long)r->changed_dead);
        break;
    case OUTBOX_MAINT_DEAD_LIST:
        if (out->json)
            json_dead(out, r);
        else
            print_dead(out, r);
        break;
    case OUTBOX_MAINT_DEAD_REPLAY:
        put_kind(out, "dead replay");
        printf("%llu row(s) changed (pending again, attempts reset)\n",
               (unsigned long long)r->changed);
        break;
    case OUTBOX_MAINT_DEAD_PURGE:
        put_kind(out, "dead purge");
        printf("%llu row(s) changed (deleted)\n", (unsigned long long)r->changed);
        break;
    case OUTBOX_MAINT_CURSOR_RESET:
        put_kind(out, "cursor-reset");
        if (r->changed)
            printf("%llu cursor(s) set to 0 (the highest was %lld, the table's counter %lld)\n",
                   (unsigned long long)r->changed, (long long)r->cursor_top,
                   (long long)r->next_seq);
        else
            printf("nothing reset (%s)\n",
                   r->cursor_top >= 0 ? "the cursors agree with the counter" : "no cursor");
        break;
    case OUTBOX_MAINT_SAMPLE:
        break;
    }
}

void ob_ops_print_skipped(const ob_ops_out *out, const outbox_maint_result *r) {
    if (out->json)
        return;
    put_kind(out, outbox_maint_kind_name(r->kind));
    printf("skipped, another instance is running it\n");
}
