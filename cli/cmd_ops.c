/* SPDX-License-Identifier: Apache-2.0 */
/*
 * outbox-uvrelay status | partitions --once | cleanup --once |
 * dead list|replay|purge: one maintenance job on the CLI's own loop, through
 * the same outbox_maint API whose jobs the relay's timers run, on each table
 * the config file declares (or the one --table chose), else on the table of
 * the options. Results go to stdout (ops_print.c), log lines and errors to
 * stderr.
 */
#include <stdio.h>
#include <string.h>
#include <uv.h>

#include "commands.h"
#include "ops_print.h"

typedef struct ops_ctx {
    const ob_cli *c;
    ob_ops_out out;
    int exit_code;
    int done;
} ops_ctx;

/* Where errors and the library's lines go: stderr, in the chosen format. */
static ob_logout *err_log;

static int usage(const char *fmt, const char *arg) {
    return ob_logout_usage(err_log, fmt, arg);
}

static void log_line(outbox_log_level level, const char *msg, void *data) {
    const ob_ops_out *out = data;
    ob_logout_write(err_log, level, out->label, msg);
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
    if (c->all && !(is_dead && strcmp(dead_action(c), "replay") == 0) &&
        c->command != OB_CMD_CURSOR_RESET)
        return usage("--all is only for dead replay and cursor-reset%s", "");
    if (c->json &&
        !(c->command == OB_CMD_STATUS || (is_dead && strcmp(dead_action(c), "list") == 0)))
        return usage("--json is only for status and dead list%s", "");
    if (c->id && outbox_id_parse(c->id, id) != OUTBOX_OK)
        return usage("--id: '%s' is not a row id (a UUID such as "
                     "019a6f1e-7c2b-7d3e-8f00-0123456789ab)",
                     c->id);
    switch (c->command) {
    case OB_CMD_STATUS:
        job->kind = OUTBOX_MAINT_STATUS;
        return 0;
    case OB_CMD_CURSOR_RESET:
        job->kind = OUTBOX_MAINT_CURSOR_RESET;
        job->all = c->all;
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

static void on_result(outbox_maint *m, const outbox_maint_result *r, void *data) {
    (void)m;
    ops_ctx *x = data;
    x->done = 1;
    if (r->status == OUTBOX_EBUSY) {
        ob_logout_fail(err_log, 0, "%s%s%s%s", x->out.label ? "table [" : "",
                       x->out.label ? x->out.label : "", x->out.label ? "]: " : "", r->message);
        ob_ops_print_skipped(&x->out, r);
        return;
    }
    if (r->status != OUTBOX_OK) {
        ob_logout_fail(err_log, 0, "%s%s%s%s: %s", outbox_maint_kind_name(r->kind),
                       x->out.label ? " [table " : "", x->out.label ? x->out.label : "",
                       x->out.label ? "]" : "", r->message);
        x->exit_code = 1;
        return;
    }
    ob_ops_print(&x->out, r);
    if (r->kind == OUTBOX_MAINT_STATUS && r->cursor_mismatch) {
        /* The counts above take rows at or below the cursors for delivered,
         * which they may not be. */
        ob_logout_fail(err_log, 0, "status%s%s%s: %s", x->out.label ? " [table " : "",
                       x->out.label ? x->out.label : "", x->out.label ? "]" : "", r->message);
        x->exit_code = 1;
    }
    if (r->kind != OUTBOX_MAINT_DEAD_LIST)
        return;
    /* stdout is the TSV (or JSON) alone, for tools; the summary goes to
     * stderr, in the log format. */
    fflush(stdout);
    char sum[256];
    snprintf(sum, sizeof(sum), "dead list%s%s%s: %zu of %lld dead row(s) listed, 0 changed",
             x->out.label ? " [" : "", x->out.label ? x->out.label : "", x->out.label ? "]" : "",
             r->nrows, (long long)r->dead);
    if (err_log->format == OB_LOG_TEXT)
        fprintf(stderr, "%s\n", sum);
    else
        ob_logout_write(err_log, OUTBOX_LOG_INFO, NULL, sum);
}

static void on_stopped(outbox_maint *m, void *data) {
    (void)m;
    (void)data;
}

/* One job on one table, on the CLI's loop. Returns the exit status. */
static int run_one(const ob_cli *c, uv_loop_t *loop, const outbox_maint_job *job,
                   const ob_ops_out *out, const outbox_relay_options *relay) {
    outbox_relay_options ro = *relay;
    ob_cli_maint_options(c, &ro);
    ro.log = log_line;
    ro.log_data = (void *)out;
    outbox_maint_options o;
    outbox_maint_options_from_relay(&o, &ro);
    ops_ctx x = {c, *out, 0, 0};
    outbox_maint *m = NULL;
    char err[512];
    int rc = outbox_maint_create(&m, loop, &o, err, sizeof(err));
    if (rc != OUTBOX_OK) {
        char msg[600];
        snprintf(msg, sizeof(msg), "%s%s%s%s", out->label ? "table [" : "",
                 out->label ? out->label : "", out->label ? "]: " : "", err);
        return usage("%s", msg);
    }
    rc = outbox_maint_run(m, job, on_result, &x);
    if (rc != OUTBOX_OK) {
        ob_logout_fail(err_log, 0, "%s", outbox_strerror(rc));
        x.exit_code = 1;
    }
    uv_run(loop, UV_RUN_DEFAULT);
    if (!x.done && rc == OUTBOX_OK) {
        ob_logout_fail(err_log, 0, "internal error: the job ended without a result");
        x.exit_code = 1;
    }
    outbox_maint_stop(m, on_stopped, NULL);
    uv_run(loop, UV_RUN_DEFAULT);
    outbox_maint_destroy(m);
    return x.exit_code;
}

int ob_cmd_ops(ob_cli *c, ob_logout *log) {
    err_log = log;
    outbox_maint_job job;
    outbox_id id;
    int rc = make_job(c, &job, &id);
    if (rc != 0)
        return rc;
    uv_loop_t loop;
    uv_loop_init(&loop);
    /* With [table] sections, the job runs on each declared table (or the one
     * --table chose), one after the other, and every result names its
     * table. Without sections, on the one table of the options. */
    int n = c->ntables ? c->ntables : 1, worst = 0;
    for (int i = 0; i < n; i++) {
        ob_ops_out out = {c->ntables ? c->tables[i].name : NULL,
                          c->ntables ? c->tables[i].relay.table : c->relay.table, c->json, i == 0,
                          i == n - 1};
        rc = run_one(c, &loop, &job, &out, c->ntables ? &c->tables[i].relay : &c->relay);
        if (rc > worst)
            worst = rc;
        if (rc == 2)
            break;
    }
    if (uv_loop_close(&loop) != 0) {
        ob_logout_fail(err_log, 0, "internal error: handles left open on the loop");
        worst = worst ? worst : 1;
    }
    return worst;
}
