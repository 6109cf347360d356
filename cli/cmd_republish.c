/* SPDX-License-Identifier: Apache-2.0 */
/*
 * outbox-uvrelay republish: the delivered rows of one table published again
 * (outbox/republish.h), to rebuild a lost stream. Progress and errors go to
 * stderr, the summary to stdout. It changes no row. Exit 0 done, 1 a server
 * failed or the stream cannot take the messages (with where to resume), 2
 * bad usage (nothing published).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "args_int.h"
#include "commands.h"

static ob_logout *err_log;

static int usage(const char *fmt, const char *arg) {
    return ob_logout_usage(err_log, fmt, arg);
}

static void log_line(outbox_log_level level, const char *msg, void *data) {
    (void)data;
    ob_logout_write(err_log, level, NULL, msg);
}

/* A time as given, or a duration ("2h", "7d") ago in UTC. */
static const char *time_arg(const char *v, char *buf, size_t len) {
    uint64_t ms;
    if (v == NULL || ob_cli_duration_ms(v, &ms) != 0)
        return v;
    time_t t = time(NULL) - (time_t)(ms / 1000);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm);
    return buf;
}

static int parse_range(const ob_cli *c, outbox_republish_options *o, outbox_id *from,
                       outbox_id *to) {
    if (c->seq_range) {
        char *end = NULL;
        unsigned long long a = strtoull(c->seq_range, &end, 10), b = 0;
        if (end == c->seq_range || *end != '-' || (b = strtoull(end + 1, &end, 10), *end) ||
            c->seq_range[0] == '-')
            return usage("--seq: '%s' is not a range A-B of seq values (e.g. 1-5000)",
                         c->seq_range);
        o->has_seq_range = 1;
        o->seq_from = a;
        o->seq_to = b;
    }
    if (c->id_from && outbox_id_parse(c->id_from, from) != OUTBOX_OK)
        return usage("--id-from: '%s' is not a row id (a UUID)", c->id_from);
    if (c->id_to && outbox_id_parse(c->id_to, to) != OUTBOX_OK)
        return usage("--id-to: '%s' is not a row id (a UUID)", c->id_to);
    o->id_from = c->id_from ? from : NULL;
    o->id_to = c->id_to ? to : NULL;
    return 0;
}

static void position(const outbox_republish_progress *p, int resume, char *out, size_t len) {
    char id[OUTBOX_ID_TEXT_LEN + 1];
    outbox_id_to_text(resume ? &p->resume_id : &p->last_id, id);
    if (p->has_seq)
        snprintf(out, len, "seq %llu", (unsigned long long)(resume ? p->resume_seq : p->last_seq));
    else
        snprintf(out, len, "id %s", id);
}

static void on_progress(const outbox_republish_progress *p, void *data) {
    (void)data;
    char at[64] = "nothing acked yet";
    if (p->any_acked)
        position(p, 0, at, sizeof(at));
    ob_logout_printf(err_log, OUTBOX_LOG_INFO,
                     "republish: %llu of %llu row(s) sent, %llu acked (%llu already in the "
                     "stream), at %s",
                     (unsigned long long)p->sent, (unsigned long long)p->total,
                     (unsigned long long)p->acked, (unsigned long long)p->duplicates, at);
}

static void summary(const ob_cli *c, const outbox_relay_options *ro,
                    const outbox_republish_progress *p) {
    const char *table = ro->table;
    if (c->dry_run) {
        printf("republish %s: %llu row(s) in range would be published to stream %s under "
               "%s.>\n",
               table, (unsigned long long)p->matched, ro->stream, ro->subject_prefix);
    } else {
        printf("republish %s: %llu row(s) published to stream %s under %s.>: %llu acked, %llu "
               "already in the stream, %llu skipped\n",
               table, (unsigned long long)p->sent, ro->stream, ro->subject_prefix,
               (unsigned long long)p->acked, (unsigned long long)p->duplicates,
               (unsigned long long)p->skipped);
        printf("republish %s: the stream's duplicate window is %llu s\n", table,
               (unsigned long long)(p->stream_window_ms / 1000));
    }
    printf("republish %s: oldest row in range %s; oldest row in the table %s\n", table,
           p->oldest_in_range[0] ? p->oldest_in_range : "(none)",
           p->oldest_in_table[0] ? p->oldest_in_table : "(none: the table is empty)");
    fflush(stdout);
}

/* After a failure: where a new run picks up. */
static void say_resume(const ob_cli *c, const outbox_republish_progress *p) {
    if (!p->resume_valid) {
        ob_logout_fail(err_log, 0, "republish: no row was acked: run the same command again");
        return;
    }
    char id[OUTBOX_ID_TEXT_LEN + 1];
    outbox_id_to_text(&p->resume_id, id);
    if (p->has_seq) {
        char to[32] = "";
        if (c->seq_range)
            snprintf(to, sizeof(to), "%s", strchr(c->seq_range, '-') + 1);
        ob_logout_fail(err_log, 0,
                       "republish: %llu row(s) acked; resume with --seq %llu-%s (and the same "
                       "other options)",
                       (unsigned long long)p->acked, (unsigned long long)p->resume_seq,
                       to[0] ? to : "18446744073709551615");
    } else {
        ob_logout_fail(err_log, 0,
                       "republish: %llu row(s) acked; resume with --id-from %s (and the same "
                       "other options)",
                       (unsigned long long)p->acked, id);
    }
}

int ob_cmd_republish(ob_cli *c, ob_logout *log) {
    err_log = log;
    if (c->ntables > 1)
        return usage("republish takes one table: name it with --table (the config file "
                     "declares several)%s",
                     "");
    if (c->json || c->all || c->id || c->once)
        return usage("republish takes no --json, --all, --id or --once%s", "");
    outbox_relay_options ro = c->ntables ? c->tables[0].relay : c->relay;
    ro.log = log_line;
    ro.log_data = NULL;
    size_t k = ob_opt_index(ob_opt_find("include-dead", 12));
    outbox_republish_options o = {0};
    outbox_id from, to;
    char since[32], until[32];
    o.relay = &ro;
    o.since = time_arg(c->since, since, sizeof(since));
    o.until = time_arg(c->until, until, sizeof(until));
    /* Only the flag: a config file's include-dead is cleanup's. */
    o.include_dead = c->include_dead && c->src.origin[k] == OB_FROM_FLAG;
    o.dry_run = c->dry_run;
    o.create_stream = c->create_stream;
    o.rate = c->rate;
    if (parse_range(c, &o, &from, &to) != 0)
        return 2;
    o.progress = on_progress;
    outbox_republish_progress p;
    char err[600];
    int rc = outbox_republish_run(&o, &p, err, sizeof(err));
    if (rc == OUTBOX_EINVAL)
        return usage("republish: %s", err);
    if (rc != OUTBOX_OK) {
        ob_logout_fail(err_log, 0, "republish: %s", err);
        if (p.sent > 0)
            say_resume(c, &p);
        return 1;
    }
    summary(c, &ro, &p);
    return 0;
}
