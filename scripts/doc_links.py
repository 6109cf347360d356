#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The manual's links and the repository paths it names still hold.

  scripts/doc_links.py     exit 1 on a relative link of README.md, ARCHITECTURE.md,
                           CHANGELOG.md or docs/*.md that does not resolve (the file,
                           and for #anchor the heading), or on a repository path the
                           pages name in inline code (`src/db/db.h`, `scripts/x.sh`)
                           that no longer exists.

Anchors are made as GitHub makes them: the heading in lower case, punctuation
dropped, spaces to hyphens, -1, -2 ... for a repeated heading. Fenced code
blocks are skipped; a path may hold a glob (`include/outbox/*.h`)."""
import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The folders of the checkout whose paths the pages name.
TOP = ("src", "cli", "include", "test", "scripts", "dist", "sql", "bench", "examples", "cmake", "docs", ".ci")
PATH = re.compile(r"^(?:%s)/[\w./*+-]*$" % "|".join(re.escape(t) for t in TOP))
LINK = re.compile(r"\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
CODE = re.compile(r"(`+)(.+?)\1")


def pages():
    out = [p for p in ("README.md", "ARCHITECTURE.md", "CHANGELOG.md") if os.path.exists(os.path.join(ROOT, p))]
    out += sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "docs", "*.md")))
    return out


def prose(path):
    """(line number, text) of each line outside fenced code blocks."""
    fence = None
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            m = re.match(r"^\s*(```+|~~~+)", line)
            if m:
                if fence is None:
                    fence = m.group(1)[0] * 3
                elif m.group(1).startswith(fence):
                    fence = None
                continue
            if fence is None:
                yield n, line.rstrip("\n")


def slug(heading):
    h = heading.strip().lower().replace("`", "")
    h = re.sub(r"[^\w\- ]", "", h)
    return h.replace(" ", "-")


def anchors(path):
    out, seen = set(), {}
    for _, line in prose(path):
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        a = slug(m.group(1))
        k = seen.get(a, 0)
        seen[a] = k + 1
        out.add(a if k == 0 else f"{a}-{k}")
    return out


def main():
    bad = []
    cache = {}
    n_links = n_paths = 0
    for page in pages():
        here = os.path.dirname(page)
        for n, line in prose(page):
            spans = [m.group(2) for m in CODE.finditer(line)]
            text = CODE.sub("", line)
            for m in LINK.finditer(text):
                target = m.group(1)
                if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):
                    continue
                n_links += 1
                file, _, anchor = target.partition("#")
                full = os.path.normpath(os.path.join(ROOT, here, file)) if file else os.path.join(ROOT, page)
                if not os.path.exists(full):
                    bad.append(f"{page}:{n}: link to {target}: no file {os.path.relpath(full, ROOT)}")
                    continue
                if anchor and full.endswith(".md"):
                    rel = os.path.relpath(full, ROOT)
                    if rel not in cache:
                        cache[rel] = anchors(rel)
                    if anchor not in cache[rel]:
                        bad.append(f"{page}:{n}: link to {target}: no heading #{anchor} in {rel}")
            for span in spans:
                for word in span.split():
                    word = word.rstrip(".,;:)")
                    if not PATH.match(word):
                        continue
                    n_paths += 1
                    if not glob.glob(os.path.join(ROOT, word)):
                        bad.append(f"{page}:{n}: names {word}, which does not exist")
    for b in bad:
        print(b)
    if bad:
        return 1
    print(f"ok: {n_links} relative links resolve and {n_paths} repository paths exist in {len(pages())} pages")
    return 0


if __name__ == "__main__":
    sys.exit(main())
