/*
 * Every state machine in src/ is drawn at the top of its file, and every one
 * of its states has a name.
 *
 * A machine is an enum whose type is named *_state or *_phase. Its file is
 * the .c that defines the enum, or, for an enum in a private header, the .c
 * that includes the header and defines the set_state() taking it. The test
 * reads the enum's values, strips their prefix (W_CONNECT_WAIT ->
 * CONNECT_WAIT) and looks for each as a whole word in the comment the file
 * starts with; it finds the name table (a designated table indexed by the
 * enum's values, or else the last table of strings before set_state()) and
 * checks that every state has a string there. It knows nothing else of the
 * machines, so renamed states or new ones are checked the same way.
 *
 * Usage: test_state_diagrams SRC_DIR
 */
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* Enums named like a machine that are not one: a slot's fate in a batch is
 * bookkeeping that batch.c changes, with no set_state() and no name table. */
static const char *const not_machines[] = {"ob_slot_state"};

/* The machines the suite must find (issue 21): the file that holds each. */
static const char *const expected_files[] = {"worker.c", "link.c", "lease.c", "db.c",
                                             "relay.c",  "conn.c", "http.c",  "maint_handle.c"};

#define MAX_FILES 256
#define MAX_STATES 64
#define NAME_LEN 64

typedef struct src_file {
    char name[256];
    char *text; /* as written */
    char *code; /* comments and literals' insides blanked, same offsets */
} src_file;

typedef struct machine {
    char type[NAME_LEN];
    const src_file *def; /* where the enum is defined */
    int nstates;
    char states[MAX_STATES][NAME_LEN];
    int explicit_values; /* some value has "= ..." */
} machine;

static char report[65536];
static size_t report_len;
static int failures;

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void fail(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    report_len += (size_t)vsnprintf(report + report_len, sizeof(report) - report_len, fmt, ap);
    va_end(ap);
    if (report_len >= sizeof(report))
        report_len = sizeof(report) - 1;
    failures++;
}

static int is_word(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* A copy of `s` with comments, and the insides of string and character
 * literals, turned to blanks (newlines kept), so that searches see code. */
static char *blank_comments(const char *s) {
    size_t n = strlen(s);
    char *o = malloc(n + 1);
    CHECK(o != NULL);
    memcpy(o, s, n + 1);
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '/' && s[i + 1] == '*') {
            size_t j = i + 2;
            while (j < n && !(s[j] == '*' && s[j + 1] == '/'))
                j++;
            j = j < n ? j + 2 : n;
            for (size_t k = i; k < j; k++)
                o[k] = s[k] == '\n' ? '\n' : ' ';
            i = j - 1;
        } else if (s[i] == '/' && s[i + 1] == '/') {
            while (i < n && s[i] != '\n')
                o[i++] = ' ';
        } else if (s[i] == '"' || s[i] == '\'') {
            char q = s[i];
            size_t j = i + 1;
            while (j < n && s[j] != q && s[j] != '\n')
                j += s[j] == '\\' ? 2 : 1;
            for (size_t k = i + 1; k < j && k < n; k++)
                o[k] = 'x'; /* keeps a literal non-empty and free of punctuation */
            i = j < n ? j : n;
        }
    }
    return o;
}

static char *read_text(const char *path) {
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    CHECK(buf != NULL);
    size_t got;
    while ((got = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += got;
        if (len + 1 == cap) {
            cap *= 2;
            buf = realloc(buf, cap);
            CHECK(buf != NULL);
        }
    }
    fclose(f);
    buf[len] = '\0';
    return buf;
}

/* Copies the word at p into out; returns the end of the word. */
static const char *take_word(const char *p, char *out) {
    size_t n = 0;
    while (is_word(*p) && n + 1 < NAME_LEN)
        out[n++] = *p++;
    out[n] = '\0';
    while (is_word(*p))
        p++;
    return p;
}

static const char *skip_space(const char *p) {
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
        p++;
    return p;
}

static int ends_with(const char *s, const char *suffix) {
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* Reads every "typedef enum [tag] { ... } type;" of a machine in f. */
static int find_machines(const src_file *f, machine *out, int max) {
    int n = 0;
    for (const char *p = f->code; (p = strstr(p, "typedef enum")) != NULL && n < max;) {
        p += strlen("typedef enum");
        const char *open = strchr(p, '{'), *close = open ? strchr(open, '}') : NULL;
        if (close == NULL)
            break;
        machine *m = &out[n];
        memset(m, 0, sizeof(*m));
        take_word(skip_space(close + 1), m->type);
        p = close;
        if (!ends_with(m->type, "_state") && !ends_with(m->type, "_phase"))
            continue;
        int skip = 0;
        for (size_t i = 0; i < sizeof(not_machines) / sizeof(not_machines[0]); i++)
            skip |= strcmp(m->type, not_machines[i]) == 0;
        if (skip)
            continue;
        m->def = f;
        for (const char *q = skip_space(open + 1); q < close && m->nstates < MAX_STATES;) {
            q = take_word(q, m->states[m->nstates]);
            if (m->states[m->nstates][0] != '\0')
                m->nstates++;
            const char *comma = q;
            while (comma < close && *comma != ',')
                comma++;
            if (memchr(q, '=', (size_t)(comma - q)) != NULL)
                m->explicit_values = 1;
            q = skip_space(comma < close ? comma + 1 : close);
        }
        n++;
    }
    return n;
}

/* The state's name as a diagram writes it: without the enum's prefix. */
static const char *drawn_name(const char *state) {
    const char *u = strchr(state, '_');
    return u && u[1] ? u + 1 : state;
}

/* 1 when `word` occurs in [s, end) with no word character either side. */
static int has_word(const char *s, const char *end, const char *word) {
    size_t n = strlen(word);
    for (const char *p = s; p + n <= end; p++)
        if (memcmp(p, word, n) == 0 && (p == s || !is_word(p[-1])) && !is_word(p[n]))
            return 1;
    return 0;
}

/* Offset of the definition of a set_state()/set_phase() taking `type`, or -1. */
static long find_set_state(const src_file *f, const char *type) {
    for (const char *p = f->code; (p = strstr(p, "set_")) != NULL; p++) {
        if (strncmp(p, "set_state", 9) != 0 && strncmp(p, "set_phase", 9) != 0)
            continue;
        const char *q = skip_space(p + 9);
        if (*q != '(')
            continue;
        const char *rp = strchr(q, ')');
        if (rp == NULL)
            break;
        const char *body = skip_space(rp + 1);
        if (*body == '{' && has_word(q, rp, type))
            return (long)(p - f->code);
    }
    return -1;
}

static int includes(const src_file *c, const char *header) {
    char line[300];
    snprintf(line, sizeof(line), "#include \"%s\"", header);
    return strstr(c->text, line) != NULL;
}

/* Checks the name table of m in f: a designated table with an entry for
 * every state, or a positional one with a string per state. */
static void check_names(const machine *m, const src_file *f, long set_state_at) {
    const char *last_plain = NULL, *last_plain_end = NULL;
    for (const char *p = f->code; (p = strstr(p, "char")) != NULL; p++) {
        const char *eq = strstr(p, "= {");
        const char *semi = strchr(p, ';');
        if (eq == NULL || semi == NULL || semi < eq)
            continue;
        const char *open = eq + 2, *close = strchr(open, '}');
        if (close == NULL)
            break;
        if (memchr(p, '*', (size_t)(eq - p)) == NULL || memchr(p, '[', (size_t)(eq - p)) == NULL) {
            p = close;
            continue;
        }
        int designated = 0;
        for (int i = 0; i < m->nstates && !designated; i++) {
            char d[NAME_LEN + 2];
            snprintf(d, sizeof(d), "[%s]", m->states[i]);
            designated = strstr(open, d) != NULL && strstr(open, d) < close;
        }
        if (designated) {
            for (int i = 0; i < m->nstates; i++) {
                char d[NAME_LEN + 2];
                snprintf(d, sizeof(d), "[%s]", m->states[i]);
                const char *at = strstr(open, d);
                const char *v = at && at < close ? skip_space(at + strlen(d)) : NULL;
                if (v && *v == '=')
                    v = skip_space(v + 1);
                if (v == NULL || *v != '"')
                    fail("src/%s: state %s has no name in its name table\n", f->name, m->states[i]);
            }
            return;
        }
        if (set_state_at < 0 || open - f->code < set_state_at) {
            last_plain = open;
            last_plain_end = close;
        }
        p = close;
    }
    if (last_plain == NULL) {
        fail("src/%s: no name table for %s (static const char *...[] = {...})\n", f->name, m->type);
        return;
    }
    int strings = 0;
    for (const char *q = last_plain; q < last_plain_end; q++)
        if (*q == '"') {
            strings++;
            q = strchr(q + 1, '"');
        }
    if (m->explicit_values)
        fail("src/%s: %s has explicit values; its name table must be designated\n", f->name,
             m->type);
    else if (strings != m->nstates)
        fail("src/%s: the name table of %s has %d names for %d states\n", f->name, m->type, strings,
             m->nstates);
}

/* The comment the file starts with, as [*start, *end); 0 when there is none. */
static int top_comment(const src_file *f, const char **start, const char **end) {
    const char *p = skip_space(f->text);
    if (strncmp(p, "/*", 2) != 0)
        return 0;
    const char *e = strstr(p + 2, "*/");
    if (e == NULL)
        return 0;
    *start = p;
    *end = e;
    return 1;
}

/* Checks one machine. Returns the file that holds it, or NULL. */
static const src_file *check_machine(const machine *m, const src_file *files, int nfiles) {
    const src_file *home = NULL;
    long set_at = -1;
    if (ends_with(m->def->name, ".c")) {
        home = m->def;
        set_at = find_set_state(home, m->type);
    } else {
        for (int i = 0; i < nfiles && home == NULL; i++) {
            long at;
            if (ends_with(files[i].name, ".c") && includes(&files[i], m->def->name) &&
                (at = find_set_state(&files[i], m->type)) >= 0) {
                home = &files[i];
                set_at = at;
            }
        }
        if (home == NULL) {
            fail("src/%s: no .c that includes it defines set_state() for %s\n", m->def->name,
                 m->type);
            return NULL;
        }
    }
    if (m->nstates == 0) {
        fail("src/%s: read no states in %s\n", m->def->name, m->type);
        return home;
    }
    if (set_at < 0)
        fail("src/%s: no set_state() takes %s; every change of state goes through one\n",
             home->name, m->type);
    check_names(m, home, set_at);
    const char *cs, *ce;
    if (!top_comment(home, &cs, &ce)) {
        fail("src/%s: no comment at the top of the file to draw %s in\n", home->name, m->type);
        return home;
    }
    for (int i = 0; i < m->nstates; i++)
        if (!has_word(cs, ce, drawn_name(m->states[i])))
            fail("src/%s: state %s (%s) is not in the diagram at the top of the file\n", home->name,
                 m->states[i], drawn_name(m->states[i]));
    return home;
}

static void load(src_file *f, const char *name, char *text) {
    snprintf(f->name, sizeof(f->name), "%s", name);
    f->text = text;
    f->code = blank_comments(text);
}

static void check_all(const src_file *files, int nfiles, int *found, int nexpected, int verbose) {
    static machine ms[MAX_FILES];
    for (int i = 0; i < nfiles; i++) {
        int n = find_machines(&files[i], ms, MAX_FILES);
        for (int k = 0; k < n; k++) {
            const src_file *home = check_machine(&ms[k], files, nfiles);
            if (verbose)
                printf("%-16s %2d states, in src/%s\n", ms[k].type, ms[k].nstates,
                       home ? home->name : "?");
            for (int e = 0; home && e < nexpected; e++)
                if (strcmp(home->name, expected_files[e]) == 0)
                    found[e] = 1;
        }
    }
}

/* The checker must see what it is for: a sample whose diagram misses a
 * state and whose name table misses another. */
static void test_checker_catches_a_missing_state(void) {
    src_file f[2];
    load(&f[0], "toy_int.h",
         strdup("typedef enum toy_state {\n"
                "    T_IDLE,       /* nothing to do */\n"
                "    T_BUSY,       /* working */\n"
                "    T_BUSY_WAIT,  /* waiting, \"quoted\" */\n"
                "} toy_state;\n"));
    load(&f[1], "toy.c",
         strdup("/*\n * IDLE --go--> BUSY_WAIT --> IDLE (T_BUSY is not drawn)\n */\n"
                "#include \"toy_int.h\"\n"
                "static const char *const names[] = {[T_IDLE] = \"idle\", [T_BUSY] = NULL};\n"
                "static void set_state(toy *t, toy_state s) { t->s = s; }\n"));
    int found[8] = {0};
    failures = 0;
    report_len = 0;
    check_all(f, 2, found, 0, 0);
    CHECK_EQ(failures, 3);
    CHECK_CONTAINS(report, "src/toy.c: state T_BUSY (BUSY) is not in the diagram");
    CHECK_CONTAINS(report, "src/toy.c: state T_BUSY has no name");
    CHECK_CONTAINS(report, "src/toy.c: state T_BUSY_WAIT has no name");
    for (int i = 0; i < 2; i++) {
        free(f[i].text);
        free(f[i].code);
    }
    failures = 0;
    report_len = 0;
    report[0] = '\0';
}

/* Loads the .c and .h files of `dir` into files[n...], and those of its
 * folders (one level: src/<subsystem>/) when `descend`; returns the new count.
 * A file keeps its base name: the names are unique across the folders. */
static int load_folder(const char *dir, src_file *files, int n, int descend) {
    DIR *d = opendir(dir);
    CHECK(d != NULL);
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < MAX_FILES) {
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        if (e->d_name[0] == '.')
            continue;
        if (descend && e->d_type == DT_DIR) {
            n = load_folder(path, files, n, 0);
            continue;
        }
        if (!ends_with(e->d_name, ".c") && !ends_with(e->d_name, ".h"))
            continue;
        char *text = read_text(path);
        CHECK(text != NULL);
        load(&files[n++], e->d_name, text);
    }
    closedir(d);
    return n;
}

int main(int argc, char **argv) {
    CHECK(argc == 2);
    test_checker_catches_a_missing_state();

    static src_file files[MAX_FILES];
    int nfiles = load_folder(argv[1], files, 0, 1);
    CHECK(nfiles > 0);

    enum { NEXPECTED = sizeof(expected_files) / sizeof(expected_files[0]) };
    int found[NEXPECTED] = {0};
    check_all(files, nfiles, found, NEXPECTED, 1);
    for (int i = 0; i < NEXPECTED; i++)
        if (!found[i])
            fail("src/%s: no state machine found in it (an enum *_state or *_phase)\n",
                 expected_files[i]);
    for (int i = 0; i < nfiles; i++) {
        free(files[i].text);
        free(files[i].code);
    }
    if (failures) {
        fprintf(stderr, "%s%d problem(s)\n", report, failures);
        return 1;
    }
    return 0;
}
