/* SPDX-License-Identifier: Apache-2.0 */
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
 * checks that every state has a string there. Then the drawn edges: each
 * state a set_state() enters (or a duty of another file hands to it,
 * handed_states()) has an arrow into it, and each state an arrow points to
 * is entered (check_edges() says why heads, not whole edges). It
 * knows nothing else of the machines: new ones are checked the same way.
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

/* The comment the file starts with, past its licence line, as [*start, *end);
 * 0 when there is none. */
static int top_comment(const src_file *f, const char **start, const char **end) {
    const char *p = skip_space(f->text);
    if (strncmp(p, "/* SPDX-License-Identifier:", 27) == 0) {
        const char *after = strstr(p, "*/");
        if (after == NULL)
            return 0;
        p = skip_space(after + 2);
    }
    if (strncmp(p, "/*", 2) != 0)
        return 0;
    const char *e = strstr(p + 2, "*/");
    if (e == NULL)
        return 0;
    *start = p;
    *end = e;
    return 1;
}

/* The ')' that closes the '(' at `open`, or NULL. */
static const char *close_paren(const char *open) {
    int depth = 0;
    for (const char *p = open; *p; p++) {
        if (*p == '(')
            depth++;
        else if (*p == ')' && --depth == 0)
            return p;
    }
    return NULL;
}

/* Marks in `marks` the states of m whose full names (W_FETCHING) occur as
 * words in [s, e) of code; returns how many occurrences there were. */
static int mark_code_states(const machine *m, const char *s, const char *e, int *marks) {
    int n = 0;
    char w[NAME_LEN];
    for (const char *p = s; p < e;) {
        if (!is_word(*p) || (p > s && is_word(p[-1]))) {
            p++;
            continue;
        }
        p = take_word(p, w);
        for (int i = 0; i < m->nstates; i++)
            if (strcmp(w, m->states[i]) == 0) {
                marks[i] = 1;
                n++;
            }
    }
    return n;
}

static int forwarding_function(const src_file *f, const char *at, const char *param, char *name);

/* The calls of `fn` in f (not its definition): marks the states their
 * arguments name. A call that names none, inside a function that passes
 * one of its own parameters on (rollback(w, s) calls query(w, s, ...)),
 * stands for the calls of that function in turn. */
static void mark_calls(const machine *m, const src_file *f, const char *fn, int *marks, int depth) {
    size_t n = strlen(fn);
    for (const char *p = f->code; (p = strstr(p, fn)) != NULL; p += n) {
        if ((p > f->code && is_word(p[-1])) || is_word(p[n]))
            continue;
        const char *open = skip_space(p + n), *close;
        if (*open != '(' || (close = close_paren(open)) == NULL || *skip_space(close + 1) == '{' ||
            mark_code_states(m, open + 1, close, marks) > 0 || depth >= 3)
            continue;
        char w[NAME_LEN], outer[NAME_LEN];
        for (const char *q = open + 1; q < close;) {
            if (!is_word(*q) || is_word(q[-1])) {
                q++;
                continue;
            }
            q = take_word(q, w);
            if (forwarding_function(f, p, w, outer) && strcmp(outer, fn) != 0) {
                mark_calls(m, f, outer, marks, depth + 1);
                break;
            }
        }
    }
}

/* The function whose body holds `at`: its name into `name` when `param` is
 * one of its parameters; 0 otherwise. Its header is the last line before
 * `at` that starts in the first column with a letter (clang-format indents
 * everything inside a function). */
static int forwarding_function(const src_file *f, const char *at, const char *param, char *name) {
    const char *line = NULL;
    for (const char *p = at; p > f->code; p--)
        if (p[-1] == '\n' && ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z'))) {
            line = p;
            break;
        }
    const char *open = line ? strchr(line, '(') : NULL, *close;
    if (open == NULL || open > at || (close = close_paren(open)) == NULL || close > at)
        return 0;
    const char *e = open;
    while (e > line && !is_word(e[-1]))
        e--;
    const char *b = e;
    while (b > line && is_word(b[-1]))
        b--;
    if (e == b || (size_t)(e - b) >= NAME_LEN || !has_word(open, close, param))
        return 0;
    memcpy(name, b, (size_t)(e - b));
    name[e - b] = '\0';
    return 1;
}

/* The states the code of f enters: those named in the second argument of a
 * set_state() call (a ternary names two), and, where that argument is a
 * parameter of the enclosing function (query(w, W_FETCHING, ...) forwards
 * its state), those named in the calls of that function. */
static void entered_states(const machine *m, const src_file *f, int *entered) {
    for (const char *p = f->code; (p = strstr(p, "set_")) != NULL; p++) {
        if ((strncmp(p, "set_state", 9) != 0 && strncmp(p, "set_phase", 9) != 0) ||
            (p > f->code && is_word(p[-1])) || is_word(p[9]))
            continue;
        const char *open = skip_space(p + 9), *close;
        if (*open != '(' || (close = close_paren(open)) == NULL)
            continue;
        if (*skip_space(close + 1) == '{')
            continue; /* the definition */
        const char *comma = memchr(open, ',', (size_t)(close - open));
        if (comma == NULL || mark_code_states(m, comma + 1, close, entered) > 0)
            continue;
        char param[NAME_LEN], fn[NAME_LEN];
        take_word(skip_space(comma + 1), param);
        if (forwarding_function(f, p, param, fn))
            mark_calls(m, f, fn, entered, 0);
    }
}

/* The states that the files of a machine's concerns hand to it: a duty in
 * another file that includes the machine's private header names the state
 * its statement is sent in ("p->send = CR_READING", cursor_int.h's
 * cursor_pass), and the machine's file enters it (send_sql(c, p.send)). */
static void handed_states(const machine *m, const src_file *files, int nfiles, int *entered) {
    for (int i = 0; i < nfiles; i++) {
        if (!ends_with(files[i].name, ".c") || !includes(&files[i], m->def->name))
            continue;
        for (const char *p = files[i].code; (p = strstr(p, "->send")) != NULL; p++) {
            const char *eq = skip_space(p + 6), *end;
            if (*eq != '=' || eq[1] == '=' || (end = strchr(eq, ';')) == NULL)
                continue;
            mark_code_states(m, eq + 1, end, entered);
        }
    }
}

/* Index of the state of m drawn as the word at [b, e), or -1. */
static int drawn_state(const machine *m, const char *b, const char *e) {
    for (int i = 0; i < m->nstates; i++) {
        const char *d = drawn_name(m->states[i]);
        if (strlen(d) == (size_t)(e - b) && memcmp(d, b, (size_t)(e - b)) == 0)
            return i;
    }
    return -1;
}

/* The word of `line` (length `len`) that covers column c: a state's index,
 * or -1. */
static int state_at_column(const machine *m, const char *line, size_t len, size_t c) {
    if (c >= len || !is_word(line[c]))
        return -1;
    size_t b = c, e = c;
    while (b > 0 && is_word(line[b - 1]))
        b--;
    while (e < len && is_word(line[e]))
        e++;
    return drawn_state(m, line + b, line + e);
}

#define MAX_LINES 200
#define MAX_ALIASES 8

/* A name the diagram gives to a choice of states: "(next) = CLOSING |
 * HALTED | FETCHING", the list after the name or at the start of the next
 * line. An arrow into "(next)" is an arrow into each. */
typedef struct alias {
    char name[NAME_LEN];
    int states[MAX_STATES];
} alias;

/* Marks the states of the list "A | B | C" at l (after the '='). */
static void mark_list(const machine *m, const char *l, size_t n, int *marks) {
    for (size_t c = 0; c < n;) {
        while (c < n && (l[c] == ' ' || l[c] == '|'))
            c++;
        size_t e = c;
        while (e < n && is_word(l[e]))
            e++;
        int i = drawn_state(m, l + c, l + e);
        if (i < 0)
            return;
        marks[i] = 1;
        c = e;
        while (c < n && l[c] == ' ')
            c++;
        if (c >= n || l[c] != '|')
            return;
    }
}

/* The aliases defined in the diagram's lines; returns how many. */
static int find_aliases(const machine *m, const char **lines, const size_t *lens, int nl,
                        alias *out) {
    int na = 0;
    for (int li = 0; li < nl && na < MAX_ALIASES; li++) {
        const char *l = lines[li];
        size_t n = lens[li];
        for (size_t c = 0; c < n && na < MAX_ALIASES; c++) {
            if (l[c] != '(' || c + 1 >= n || !is_word(l[c + 1]))
                continue;
            size_t e = c + 1;
            while (e < n && is_word(l[e]))
                e++;
            if (e >= n || l[e] != ')' || e - c - 1 >= NAME_LEN)
                continue;
            const char *list = NULL;
            size_t ln = 0, k = e + 1;
            while (k < n && l[k] == ' ')
                k++;
            if (k < n && l[k] == '=') {
                list = l + k + 1;
                ln = n - k - 1;
            } else if (li + 1 < nl) {
                const char *x = lines[li + 1];
                size_t xn = lens[li + 1], j = 0;
                while (j < xn && (x[j] == ' ' || x[j] == '*' || x[j] == '|'))
                    j++;
                if (j < xn && x[j] == '=') {
                    list = x + j + 1;
                    ln = xn - j - 1;
                }
            }
            if (list == NULL)
                continue;
            alias *a = NULL;
            for (int i = 0; i < na && a == NULL; i++)
                if (strlen(out[i].name) == e - c - 1 &&
                    memcmp(out[i].name, l + c + 1, e - c - 1) == 0)
                    a = &out[i];
            if (a == NULL) {
                a = &out[na++];
                memset(a, 0, sizeof(*a));
                memcpy(a->name, l + c + 1, e - c - 1);
            }
            mark_list(m, list, ln, a->states);
        }
    }
    return na;
}

/* Marks the states of the alias named by the word at [b, e). */
static void mark_alias(const alias *as, int na, const char *b, const char *e, int *marks) {
    for (int i = 0; i < na; i++)
        if (strlen(as[i].name) == (size_t)(e - b) && memcmp(as[i].name, b, (size_t)(e - b)) == 0)
            for (int k = 0; k < MAX_STATES; k++)
                marks[k] |= as[i].states[k];
}

/* Marks the states the diagram in [cs, ce) draws an arrow into: the word
 * after "->" or "-->", the word before "<-" (past a parenthesis), and the
 * word a lone "v" points down to or a lone "^" up to (same column, the
 * next or previous line but one at most). Other words are not states. */
static void drawn_targets(const machine *m, const char *cs, const char *ce, int *drawn) {
    const char *lines[MAX_LINES];
    size_t lens[MAX_LINES];
    int nl = 0;
    for (const char *p = cs; p < ce && nl < MAX_LINES;) {
        const char *nlp = memchr(p, '\n', (size_t)(ce - p));
        const char *e = nlp ? nlp : ce;
        lines[nl] = p;
        lens[nl++] = (size_t)(e - p);
        p = e + 1;
    }
    alias as[MAX_ALIASES];
    int na = find_aliases(m, lines, lens, nl, as);
    for (int li = 0; li < nl; li++) {
        const char *l = lines[li];
        size_t n = lens[li];
        for (size_t c = 0; c < n; c++) {
            int head = -1;
            if (l[c] == '>' && c > 0 && l[c - 1] == '-') {
                size_t b = c + 1;
                while (b < n && l[b] == ' ')
                    b++;
                int paren = b < n && l[b] == '(';
                b += (size_t)paren;
                size_t e = b;
                while (e < n && is_word(l[e]))
                    e++;
                if (paren)
                    mark_alias(as, na, l + b, l + e, drawn);
                else
                    head = drawn_state(m, l + b, l + e);
            } else if (l[c] == '<' && c + 1 < n && l[c + 1] == '-') {
                size_t e = c;
                while (e > 0 && l[e - 1] == ' ')
                    e--;
                if (e > 0 && l[e - 1] == ')') {
                    size_t pe = e - 1, pb = pe;
                    while (pb > 0 && is_word(l[pb - 1]))
                        pb--;
                    if (pb > 0 && l[pb - 1] == '(')
                        mark_alias(as, na, l + pb, l + pe, drawn);
                    while (e > 0 && l[e - 1] != '(')
                        e--;
                    while (e > 0 && (l[e - 1] == '(' || l[e - 1] == ' '))
                        e--;
                }
                size_t b = e;
                while (b > 0 && is_word(l[b - 1]))
                    b--;
                head = drawn_state(m, l + b, l + e);
            } else if ((l[c] == 'v' || l[c] == '^') && (c == 0 || !is_word(l[c - 1])) &&
                       (c + 1 >= n || !is_word(l[c + 1]))) {
                int step = l[c] == 'v' ? 1 : -1;
                for (int k = 1; k <= 2 && head < 0; k++) {
                    int o = li + step * k;
                    if (o >= 0 && o < nl)
                        head = state_at_column(m, lines[o], lens[o], c);
                }
            }
            if (head >= 0)
                drawn[head] = 1;
        }
    }
}

/* States the code enters that a diagram reaches without an arrow head
 * today, each with how it is drawn instead. An entry lets the check pass
 * and is printed; once the diagram draws the arrow, delete the entry. */
static const struct {
    const char *file, *state, *drawn_as;
} undrawn[] = {
    {"worker.c", "W_ISO_COMMITTING",
     "written \"then ISO_COMMITTING\" after ISOLATING <-> REFUSING"},
    {"worker.c", "W_PARKED", "\"| no: PARKED\", a branch of the line under (idle) with no head"},
};

static int known_undrawn(const src_file *home, const char *state) {
    for (size_t i = 0; i < sizeof(undrawn) / sizeof(undrawn[0]); i++)
        if (strcmp(undrawn[i].file, home->name) == 0 && strcmp(undrawn[i].state, state) == 0) {
            printf("note: src/%s enters %s, drawn without an arrow: %s\n", home->name, state,
                   undrawn[i].drawn_as);
            return 1;
        }
    return 0;
}

/* The drawn edges against the code: every state a set_state() enters has an
 * arrow into it in the diagram, and every state an arrow points to is
 * entered somewhere. The first state is left out both ways: an object is
 * created in it (calloc's zero, or a set_state() where it is made), which
 * no arrow draws.
 *
 * Why heads and not whole edges: a set_state(x, NEW) call does not say the
 * state it leaves. A handler serves several states (dispatch() sends
 * "connection lost" from every query state to one function), helpers are
 * called from many (query(), rollback(), wait_then()), and the diagrams draw
 * sets of sources ("any query state", "waiting states", "(next)"). Pairing
 * drawn (from, to) edges with the code would take a control-flow analysis
 * of which states reach each call, not a reading of the text; an arrow into
 * a state the code never enters, or a state entered with no arrow into it,
 * is what a text check can prove. */
static void check_edges(const machine *m, const src_file *home, const char *cs, const char *ce,
                        const src_file *files, int nfiles) {
    int entered[MAX_STATES] = {0}, drawn[MAX_STATES] = {0};
    entered_states(m, home, entered);
    if (!ends_with(m->def->name, ".c"))
        handed_states(m, files, nfiles, entered);
    drawn_targets(m, cs, ce, drawn);
    for (int i = 1; i < m->nstates; i++) {
        if (entered[i] && !drawn[i] && !known_undrawn(home, m->states[i]))
            fail("src/%s: the code enters %s, but no arrow of the diagram points to %s\n",
                 home->name, m->states[i], drawn_name(m->states[i]));
        if (drawn[i] && !entered[i])
            fail("src/%s: the diagram draws an arrow to %s, but no set_state() enters %s\n",
                 home->name, drawn_name(m->states[i]), m->states[i]);
    }
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
    check_edges(m, home, cs, ce, files, nfiles);
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
                "static void set_state(toy *t, toy_state s) { t->s = s; }\n"
                "static void go(toy *t) { set_state(t, T_BUSY_WAIT); }\n"));
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

/* The edge check must see what it is for: a diagram with an arrow into a
 * state the code never enters, and code that enters a state no arrow points
 * to; states reached through a helper (two levels), a ternary, an alias
 * "(next) = A | B" and arrows of every direction count as drawn. */
static void test_checker_catches_a_wrong_edge(void) {
    src_file f[1];
    load(&f[0], "toy.c",
         strdup("/*\n"
                " *   NEW --go--> (next) <-- LOST\n"
                " *     = WAIT | RUN\n"
                " *   RUN --done--> GONE            RUN\n"
                " *    |                             ^ up\n"
                " *    v                             |\n"
                " *   FENCED (a fence) <-- WAIT     WAIT <-> BACK\n"
                " *   EXTRA is named, never pointed to; LOST only left\n"
                " */\n"
                "typedef enum toy_state { T_NEW, T_WAIT, T_RUN, T_GONE, T_FENCED, T_BACK, T_LOST,\n"
                "    T_EXTRA } toy_state;\n"
                "static const char *const names[] = {\"new\", \"wait\", \"run\", \"gone\",\n"
                "    \"fenced\", \"back\", \"lost\", \"extra\"};\n"
                "static void set_state(toy *t, toy_state s) { t->s = s; }\n"
                "static void query(toy *t, toy_state s) {\n    set_state(t, s);\n}\n"
                "static void rollback(toy *t, toy_state to) {\n    query(t, to);\n}\n"
                "static void a(toy *t) { query(t, T_WAIT); rollback(t, T_FENCED); }\n"
                "static void b(toy *t) { set_state(t, t->ok ? T_RUN : T_BACK); }\n"
                "static void c(toy *t) { set_state(t, T_EXTRA); }\n"
                "static void d(toy *t) { if (t->s == T_LOST) t->n++; }\n"));
    int found[8] = {0};
    failures = 0;
    report_len = 0;
    check_all(f, 1, found, 0, 0);
    CHECK_CONTAINS(report, "src/toy.c: the code enters T_EXTRA, but no arrow of the diagram points "
                           "to EXTRA");
    CHECK_CONTAINS(report, "src/toy.c: the diagram draws an arrow to GONE, but no set_state() "
                           "enters T_GONE");
    CHECK_EQ(failures, 2);
    free(f[0].text);
    free(f[0].code);
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
    test_checker_catches_a_wrong_edge();

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
