#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The shape of src/ and cli/: circles, ARCHITECTURE.md's map, the sizes of files and functions.

  scripts/house.py circles   the include graph between the folders of src/ and
                             between modules, and the calls between files;
                             prints every circle, exits 1 if there is one;
                             and each folder's include paths in
                             CMakeLists.txt (OUTBOX_USES_<folder>) name only
                             folders above it in ARCHITECTURE.md's map
  scripts/house.py map       checks that ARCHITECTURE.md's map ("The map of src/")
                             names every file of src/ under its folder; exit 1
                             names the missing or stale ones
  scripts/house.py sizes     files of src/ and cli/ over 850 lines, and
                             functions over 80 (from the line that starts a
                             definition to its closing brace in column 0);
                             exit 1 names them
  scripts/house.py graph     prints both graphs, one edge a line
  scripts/house.py seam BUILD  runs the build's own compile command (from
                             BUILD/compile_commands.json) with -M on every
                             file of src/readers and src/pipeline; exit 1
                             names each that depends on a NATS header (the
                             broker is reached through pipeline/broker.h)

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


def include_paths():
    """{folder: [folders on its include paths]} from CMakeLists.txt."""
    text = open(os.path.join(ROOT, "CMakeLists.txt"), encoding="utf-8").read()
    return {m.group(1): m.group(2).split() for m in re.finditer(r"^set\(OUTBOX_USES_(\w+) ([^)]*)\)", text, re.M)}


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


# Folders that reach the broker only through pipeline/broker.h.
BROKER_FREE = ("readers", "pipeline")
NATS_HEADER = re.compile(r"(^|/)nats/[^/]+\.h$")


def seam(build):
    """(file, NATS header) for each file of BROKER_FREE whose dependencies,
    as the compiler finds them with the build's own flags, hold one."""
    import json
    import shlex
    import subprocess

    entries = json.load(open(os.path.join(build, "compile_commands.json"), encoding="utf-8"))
    flags = {}
    for e in entries:
        path = os.path.realpath(os.path.join(e["directory"], e["file"]))
        argv = e["arguments"] if "arguments" in e else shlex.split(e["command"])
        out, skip = [], False
        for a in argv:
            if skip:
                skip = False
            elif a == "-o":
                skip = True
            elif a not in ("-c", path, e["file"]) and not a.startswith("-M"):
                out.append(a)
        flags.setdefault(path, (e["directory"], out))
    jobs = []
    bad = []
    for folder, name, path in files():
        if folder not in BROKER_FREE:
            continue
        path = os.path.realpath(path)
        # A header is compiled alone, with the flags of a .c of its folder.
        own = flags.get(path) or next((f for p, f in sorted(flags.items())
                                       if os.path.dirname(p) == os.path.dirname(path)), None)
        if own is None:
            bad.append((f"{folder}/{name}", "no compile command in the build"))
            continue
        cwd, argv = own
        lang = ["-x", "c"] if name.endswith(".h") else []
        jobs.append((f"{folder}/{name}", cwd, argv + ["-M"] + lang + [path]))

    def run(job):
        return job[0], subprocess.run(job[2], cwd=job[1], capture_output=True, text=True)

    from concurrent.futures import ThreadPoolExecutor
    seen = 0
    with ThreadPoolExecutor(max_workers=4) as pool:
        for rel, r in pool.map(run, jobs):
            if r.returncode != 0:
                bad.append((rel, "gcc -M failed: " + r.stderr.strip()[:200]))
                continue
            seen += 1
            for dep in r.stdout.replace("\\\n", " ").split()[1:]:
                if NATS_HEADER.search(dep):
                    bad.append((rel, dep))
    return bad, seen


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
        # Each folder's include paths (CMakeLists.txt, OUTBOX_USES_<folder>)
        # name only folders above it, and every folder it includes from.
        uses = include_paths()
        for folder in order:
            if folder not in uses:
                print(f"folder {folder} has no include paths (OUTBOX_USES_{folder}) in CMakeLists.txt")
                bad = 1
                continue
            for other in uses[folder]:
                if other != folder and (other not in order or order.index(other) > order.index(folder)):
                    print(f"folder {folder} has {other} on its include paths, not above it in ARCHITECTURE.md's map")
                    bad = 1
        for a, b in sorted(folder_graph(fs)):
            if a in uses and b not in uses[a]:
                print(f"folder {a} includes from {b}, not on its include paths (OUTBOX_USES_{a})")
                bad = 1
        if not bad:
            print("no circles: neither in the include graph between modules nor in the calls between "
                  "files; each folder includes only from those above it in ARCHITECTURE.md's map, and "
                  "only those are on its include paths")
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
    if what == "seam" and len(argv) > 2:
        bad, seen = seam(argv[2])
        for f, dep in bad:
            print(f"src/{f}: {dep}")
        if not bad:
            print(f"none of the {seen} files of src/{' and src/'.join(BROKER_FREE)} depends on a "
                  "NATS header")
        return 1 if bad or seen == 0 else 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
