/*
 * outbox-uvrelay status | partitions --once | cleanup --once |
 * dead list|replay|purge: one maintenance job on the CLI's own loop, through
 * the same outbox_maint API whose jobs the relay's timers run. Results go to
 * stdout, log lines and errors to stderr.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <uv.h>

#include "commands.h"

typedef struct ops_ctx {
    const ob_cli *c;
    int exit_code;
    int done;
} ops_ctx;

static int usage(const char *fmt, const char *arg) {
    fputs("outbox-uvrelay: ", stderr);
    fprintf(stderr, fmt, arg);
    fputs("\nTry 'outbox-uvrelay --help'.\n", stderr);
    return 2;
}

static const char *dead_action(const ob_cli *c) {
    return c->subcommand ? c->subcommand : "";
}

/* Checks the flags that only some commands take, and builds the job. */
static int make_job(const ob_cli *c, outbox_maint_job *job, outbox_id *id) {
    memset(job, 0, sizeof(*job));
    int is_dead = c->command == OB_CMD_DEAD;
    if (c->id && !is_dead)
        return usage("--id is only for dead list|replay|purge%s", "");
    if (c->all && !(is_dead && strcmp(dead_action(c), "replay") == 0))
        return usage("--all is only for dead replay%s", "");
    if (c->id && outbox_id_parse(c->id, id) != OUTBOX_OK)
        return usage("--id: '%s' is not a row id (a UUID such as "
                     "019a6f1e-7c2b-7d3e-8f00-0123456789ab)",
                     c->id);
    switch (c->command) {
    case OB_CMD_STATUS:
        job->kind = OUTBOX_MAINT_STATUS;
        return 0;
    case OB_CMD_PARTITIONS:
    case OB_CMD_CLEANUP:
        if (!c->once)
            return usage("%s runs one round and needs --once (the relay runs it on a timer: "
                         "see --partition-interval and --cleanup-interval)",
                         c->command == OB_CMD_PARTITIONS ? "partitions" : "cleanup");
        job->kind =
            c->command == OB_CMD_PARTITIONS ? OUTBOX_MAINT_PARTITIONS : OUTBOX_MAINT_CLEANUP;
        return 0;
    case OB_CMD_DEAD:
        if (strcmp(dead_action(c), "list") == 0) {
            job->kind = OUTBOX_MAINT_DEAD_LIST;
            if (c->limit == 0)
                return usage("dead list --limit must be at least 1 (rows to show)%s", "");
            job->limit = c->limit == OB_CLI_LIMIT_UNSET ? 100 : c->limit;
        } else if (strcmp(dead_action(c), "replay") == 0) {
            if ((c->id != NULL) == (c->all != 0))
                return usage("dead replay needs exactly one of --id ID or --all%s", "");
            job->kind = OUTBOX_MAINT_DEAD_REPLAY;
        } else {
            job->kind = OUTBOX_MAINT_DEAD_PURGE;
            job->older_than_ms = c->older_than_ms;
        }
        job->id = c->id ? id : NULL;
        return 0;
    default:
        return usage("not a maintenance command%s", "");
    }
}

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

static void print_status(const ob_cli *c, const outbox_maint_result *r) {
    char age[32];
    format_age(r->pending > 0 ? r->oldest_pending_ms : 0, age, sizeof(age));
    printf("table             %s\n", c->relay.table);
    printf("pending           %lld\n", (long long)r->pending);
    printf("oldest pending    %s\n", r->pending > 0 ? age : "-");
    printf("processed         %lld\n", (long long)r->processed);
    printf("dead              %lld\n", (long long)r->dead);
    if (r->lock_holder)
        printf("maintenance lock  held by session %lu\n", r->lock_holder);
    else
        printf("maintenance lock  free\n");
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

static void print_dead(const outbox_maint_result *r) {
    printf("id\tattempts\tcreated_at\taggregate_type\taggregate_id\tevent_type\tlast_error\n");
    for (size_t i = 0; i < r->nrows; i++) {
        const outbox_dead_row *d = &r->rows[i];
        char id[OUTBOX_ID_TEXT_LEN + 1];
        outbox_id_to_text(&d->id, id);
        printf("%s\t%d\t", id, d->attempts);
        put_field(d->created_at, '\t');
        put_field(d->aggregate_type, '\t');
        put_field(d->aggregate_id, '\t');
        put_field(d->event_type, '\t');
        put_field(d->last_error, '\n');
    }
}

static void on_result(outbox_maint *m, const outbox_maint_result *r, void *data) {
    (void)m;
    ops_ctx *x = data;
    x->done = 1;
    if (r->status == OUTBOX_EBUSY) {
        fprintf(stderr, "outbox-uvrelay: %s\n", r->message);
        printf("%s: skipped, another instance is running it\n", outbox_maint_kind_name(r->kind));
        return;
    }
    if (r->status != OUTBOX_OK) {
        fprintf(stderr, "outbox-uvrelay: %s: %s\n", outbox_maint_kind_name(r->kind), r->message);
        x->exit_code = 1;
        return;
    }
    switch (r->kind) {
    case OUTBOX_MAINT_STATUS:
        print_status(x->c, r);
        break;
    case OUTBOX_MAINT_PARTITIONS:
        printf("partitions: %u created, %u dropped, %u kept (expired, but holding pending "
               "rows)\n",
               r->created, r->dropped, r->kept);
        break;
    case OUTBOX_MAINT_CLEANUP:
        printf("cleanup: %llu row(s) deleted (%llu processed, %llu dead)\n",
               (unsigned long long)r->changed, (unsigned long long)(r->changed - r->changed_dead),
               (unsigned long long)r->changed_dead);
        break;
    case OUTBOX_MAINT_DEAD_LIST:
        print_dead(r);
        /* stdout is the TSV alone, for tools; the summary goes to stderr. */
        fflush(stdout);
        fprintf(stderr, "dead list: %zu of %lld dead row(s) listed, 0 changed\n", r->nrows,
                (long long)r->dead);
        break;
    case OUTBOX_MAINT_DEAD_REPLAY:
        printf("dead replay: %llu row(s) changed (pending again, attempts reset)\n",
               (unsigned long long)r->changed);
        break;
    case OUTBOX_MAINT_DEAD_PURGE:
        printf("dead purge: %llu row(s) changed (deleted)\n", (unsigned long long)r->changed);
        break;
    case OUTBOX_MAINT_SAMPLE:
        break;
    }
}

static void on_stopped(outbox_maint *m, void *data) {
    (void)m;
    (void)data;
}

int ob_cmd_ops(ob_cli *c) {
    outbox_maint_job job;
    outbox_id id;
    int rc = make_job(c, &job, &id);
    if (rc != 0)
        return rc;
    outbox_relay_options ro = c->relay;
    ob_cli_maint_options(c, &ro);
    ro.log = outbox_log_stderr;
    ro.log_data = NULL;
    outbox_maint_options o;
    outbox_maint_options_from_relay(&o, &ro);

    uv_loop_t loop;
    uv_loop_init(&loop);
    ops_ctx x = {c, 0, 0};
    outbox_maint *m = NULL;
    char err[512];
    rc = outbox_maint_create(&m, &loop, &o, err, sizeof(err));
    if (rc != OUTBOX_OK) {
        uv_loop_close(&loop);
        return usage("%s", err);
    }
    rc = outbox_maint_run(m, &job, on_result, &x);
    if (rc != OUTBOX_OK) {
        fprintf(stderr, "outbox-uvrelay: %s\n", outbox_strerror(rc));
        x.exit_code = 1;
    }
    uv_run(&loop, UV_RUN_DEFAULT);
    if (!x.done && rc == OUTBOX_OK) {
        fprintf(stderr, "outbox-uvrelay: internal error: the job ended without a result\n");
        x.exit_code = 1;
    }
    outbox_maint_stop(m, on_stopped, NULL);
    uv_run(&loop, UV_RUN_DEFAULT);
    outbox_maint_destroy(m);
    if (uv_loop_close(&loop) != 0) {
        fprintf(stderr, "outbox-uvrelay: internal error: handles left open on the loop\n");
        x.exit_code = 1;
    }
    return x.exit_code;
}
