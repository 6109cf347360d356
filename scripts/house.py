#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The shape of src/ and cli/: circles, ARCHITECTURE.md's map, the sizes of files and functions.

  scripts/house.py circles   the include graph between the folders of src/ and
                             between modules, and the calls between files;
                             prints every circle, exits 1 if there is one
  scripts/house.py map       checks that ARCHITECTURE.md's map ("The map of src/")
                             names every file of src/ under its folder; exit 1
                             names the missing or stale ones
  scripts/house.py sizes     files of src/ and cli/ over 850 lines, and
                             functions over 80 (from the line that starts a
                             definition to its closing brace in column 0);
                             exit 1 names them
  scripts/house.py graph     prints both graphs, one edge a line

A module is a .c with its .h and its private _int.h (maint_int.h belongs to
maint_handle.c, whose structure it is). Calls are read as text: a file calls
another when it names a function (or a table of them) that the other defines
without `static`.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(ROOT, "src")
OWNER = {"maint_int": "maint_handle"}


def files():
    out = []
    for folder in sorted(os.listdir(SRC)):
        d = os.path.join(SRC, folder)
        if not os.path.isdir(d):
            continue
        for name in sorted(os.listdir(d)):
            if name.endswith((".c", ".h")):
                out.append((folder, name, os.path.join(d, name)))
    return out


def module(name):
    stem = name[:-2]
    if stem in OWNER:
        return OWNER[stem]
    return stem[:-4] if stem.endswith("_int") else stem


def code_of(path):
    text = open(path, encoding="utf-8").read()
    token = re.compile(r"/\*.*?\*/|//[^\n]*|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'", re.S)
    return token.sub(lambda m: " " if m.group(0)[0] == "/" else '""', text)


def folder_graph(fs):
    """Which folder includes from which, by the folders of the files."""
    home = {name: folder for folder, name, _ in fs}
    edges = set()
    for folder, name, path in fs:
        for inc in re.findall(r'#include "([^"]+)"', open(path, encoding="utf-8").read()):
            other = home.get(os.path.basename(inc))
            if other and other != folder:
                edges.add((folder, other))
    return edges


def include_graph(fs):
    known = {name: module(name) for _, name, _ in fs}
    edges = set()
    for _, name, path in fs:
        for inc in re.findall(r'#include "([^"]+)"', open(path, encoding="utf-8").read()):
            inc = os.path.basename(inc)
            if inc in known and known[inc] != module(name):
                edges.add((module(name), known[inc]))
    return edges


DEF = re.compile(r"^(?!static\b)[A-Za-z_][\w \*]*?\b((?:ob|outbox)_\w+)\s*(\(|\[|=)", re.M)


def call_graph(fs):
    defs = {}
    codes = {}
    for _, name, path in fs:
        if not name.endswith(".c"):
            continue
        code = code_of(path)
        codes[name] = code
        for m in DEF.finditer(code):
            line = code[m.start():code.find("\n", m.start())]
            if line.rstrip().endswith(";") and m.group(2) == "(":
                continue  # a declaration
            if re.match(r"^(typedef|extern|struct|enum|union)\b", line):
                continue
            defs.setdefault(m.group(1), name)
    edges = set()
    for name, code in codes.items():
        for ident in set(re.findall(r"\b((?:ob|outbox)_\w+)\b", code)):
            owner = defs.get(ident)
            if owner and owner != name:
                edges.add((name[:-2], owner[:-2]))
    return edges


def circles(edges):
    """Strongly connected components of more than one node (Tarjan)."""
    graph = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)
        graph.setdefault(b, set())
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def readme_map():
    text = open(os.path.join(ROOT, "ARCHITECTURE.md"), encoding="utf-8").read()
    start = text.find("\n## The map of src/")
    end = text.find("\n## ", start + 1)
    return text[start:end] if start >= 0 else ""


MAX_FILE_LINES = 850
MAX_FUNCTION_LINES = 80
START = re.compile(r"^(?!typedef\b|struct\b|enum\b|union\b|extern\b)[A-Za-z_][^=;]*?\b(\w+)\s*\(")


def functions(lines):
    """(name, first line, length) of each function defined in lines: a
    definition starts in column 0 with a name and its '(' before any '=',
    and ends at the first '}' in column 0."""
    out = []
    i = 0
    while i < len(lines):
        m = START.match(lines[i])
        if not m:
            i += 1
            continue
        j = i
        while j < len(lines) and "{" not in lines[j] and not lines[j].rstrip().endswith(";"):
            j += 1
        if j >= len(lines) or "{" not in lines[j]:
            i = j + 1
            continue
        k = j
        while k < len(lines) and not lines[k].startswith("}"):
            k += 1
        out.append((m.group(1), i + 1, k - i + 1))
        i = k + 1
    return out


def sizes():
    bad = []
    for top in ("src", "cli"):
        for folder, _, names in sorted(os.walk(os.path.join(ROOT, top))):
            for name in sorted(names):
                if not name.endswith((".c", ".h")):
                    continue
                path = os.path.join(folder, name)
                rel = os.path.relpath(path, ROOT)
                lines = open(path, encoding="utf-8").read().split("\n")
                n = len(lines) - 1 if lines and lines[-1] == "" else len(lines)
                if n > MAX_FILE_LINES:
                    bad.append(f"{rel}: {n} lines (at most {MAX_FILE_LINES})")
                for fn, at, length in functions(lines):
                    if length > MAX_FUNCTION_LINES:
                        bad.append(f"{rel}:{at}: {fn}() is {length} lines (at most {MAX_FUNCTION_LINES})")
    return bad


def main(argv):
    what = argv[1] if len(argv) > 1 else "circles"
    fs = files()
    if what == "graph":
        for a, b in sorted(folder_graph(fs)):
            print(f"folder {a} -> {b}")
        for a, b in sorted(include_graph(fs)):
            print(f"include {a} -> {b}")
        for a, b in sorted(call_graph(fs)):
            print(f"call {a} -> {b}")
        return 0
    if what == "circles":
        bad = 0
        graphs = (("folder", folder_graph(fs)), ("include", include_graph(fs)), ("call", call_graph(fs)))
        for kind, edges in graphs:
            for comp in circles(edges):
                print(f"{kind} circle: {' <-> '.join(comp)}")
                bad = 1
        # ARCHITECTURE.md's map lists the folders so that each includes only from
        # those above it: check that order too.
        order = re.findall(r"\*\*`src/([a-z]+)/`\*\*", readme_map())
        for a, b in sorted(folder_graph(fs)):
            if a in order and b in order and order.index(b) > order.index(a):
                print(f"folder {a} includes from {b}, listed below it in ARCHITECTURE.md's map")
                bad = 1
            elif a not in order or b not in order:
                print(f"folder {a if a not in order else b} has no heading in ARCHITECTURE.md's map")
                bad = 1
        if not bad:
            print("no circles: neither in the include graph between modules nor in the calls between "
                  "files; each folder includes only from those above it in ARCHITECTURE.md's map")
        return bad
    if what == "map":
        section = readme_map()
        named = set(re.findall(r"`src/([a-z_]+/[a-z_]+\.[ch])`", section))
        real = {f"{folder}/{name}" for folder, name, _ in fs}
        missing = sorted(real - named)
        stale = sorted(named - real)
        for f in missing:
            print(f"ARCHITECTURE.md's map (The map of src/) lacks src/{f}")
        for f in stale:
            print(f"ARCHITECTURE.md's map names src/{f}, which does not exist")
        if not missing and not stale:
            print(f"ARCHITECTURE.md's map names each of the {len(real)} files of src/")
        return 1 if missing or stale else 0
    if what == "sizes":
        bad = sizes()
        for b in bad:
            print(b)
        if not bad:
            print(f"every file of src/ and cli/ is at most {MAX_FILE_LINES} lines, "
                  f"every function at most {MAX_FUNCTION_LINES}")
        return 1 if bad else 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
