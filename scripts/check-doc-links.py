#!/usr/bin/env python3
"""Checks every relative link of the repository's Markdown pages: the file it names exists, and
its #anchor, if any, is a heading of that file (GitHub's slugs, duplicates numbered -1, -2, …).

    scripts/check-doc-links.py [FILE.md …]     default: README.md, SECURITY.md, CHANGELOG.md, docs/*.md, Examples/*/README.md

Prints each broken link as FILE:LINE: target (why) and exits 1 if there is one. Links to
http(s), mailto and other schemes are not followed; code blocks and code spans are skipped.

Also checks the source comments that point into docs/PERFORMANCE.md (when run without FILE
arguments): each `// Fast path: docs/PERFORMANCE.md#fast-paths, "<row>".` must name a row of
its "Fast paths" table (FILE:LINE and the row when it does not), each row must be named by at
least one such pointer (the rows none names are listed), and each `docs/PERFORMANCE.md#anchor`
in Sources must be a heading of the page.
"""
import glob
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
LINK = re.compile(r"(?<!!)\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^\s*(```|~~~)")


def prose_lines(path):
    """(line number, text) of the lines outside fenced code blocks, code spans blanked."""
    inside = False
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if FENCE.match(line):
                inside = not inside
                continue
            if not inside:
                yield number, re.sub(r"`[^`]*`", "``", line)


def slug(heading):
    """GitHub's anchor for a heading: lower-cased, markup and punctuation dropped, spaces → '-'."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text
    text = text.replace("`", "").strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)  # keeps letters, digits, _, -, space (Unicode \w)
    return text.replace(" ", "-")


def anchors(path, cache={}):
    if path not in cache:
        seen, result, inside = {}, set(), False
        with open(path, encoding="utf-8") as f:
            for line in f:
                if FENCE.match(line):
                    inside = not inside
                    continue
                m = None if inside else re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
                if m:
                    base = slug(m.group(1))
                    n = seen.get(base, 0)
                    seen[base] = n + 1
                    result.add(base if n == 0 else f"{base}-{n}")
        cache[path] = result
    return cache[path]


def main(files):
    broken = 0
    for page in files:
        for number, line in prose_lines(page):
            for target in LINK.findall(line):
                if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # http:, mailto:, …
                    continue
                path, _, anchor = target.partition("#")
                resolved = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
                where = f"{os.path.relpath(page, ROOT)}:{number}: {target}"
                if not os.path.exists(resolved):
                    print(f"{where} (no such file)")
                    broken += 1
                elif anchor and resolved.endswith(".md") and anchor not in anchors(resolved):
                    print(f"{where} (no heading #{anchor} in {os.path.relpath(resolved, ROOT)})")
                    broken += 1
    return 1 if broken else 0


PERFORMANCE = "docs/PERFORMANCE.md"
POINTER = re.compile(r'Fast path: docs/PERFORMANCE\.md#fast-paths, "([^"]*)"')
SECTION_LINK = re.compile(r"docs/PERFORMANCE\.md#([A-Za-z0-9_-]+)")


def fast_path_rows():
    """The first cells of the table under the "Fast paths" heading of docs/PERFORMANCE.md."""
    rows, inside = [], False
    for _, line in prose_lines(os.path.join(ROOT, PERFORMANCE)):
        if re.match(r"^#{1,6}\s", line):
            inside = slug(line.lstrip("#")) == "fast-paths"
            continue
        m = re.match(r"^\|\s*([^|]*?)\s*\|", line) if inside else None
        if m and m.group(1) not in ("fast path", "") and not set(m.group(1)) <= set("-: "):
            rows.append(m.group(1))
    return rows


def check_fast_paths():
    """Pointers in Sources to a missing row or heading, and rows no pointer names."""
    rows, used, broken = fast_path_rows(), set(), 0
    sections = anchors(os.path.join(ROOT, PERFORMANCE))
    for path in sorted(glob.glob("Sources/**/*.swift", recursive=True) + glob.glob("Sources/**/*.md", recursive=True)):
        with open(path, encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                for row in POINTER.findall(line):
                    used.add(row)
                    if row not in rows:
                        print(f'{path}:{number}: "{row}" (no such row in the Fast paths table of {PERFORMANCE})')
                        broken += 1
                for anchor in SECTION_LINK.findall(line):
                    if anchor not in sections:
                        print(f"{path}:{number}: {PERFORMANCE}#{anchor} (no such heading)")
                        broken += 1
    for row in rows:
        if row not in used:
            print(f'{PERFORMANCE}: Fast paths row "{row}" is named by no `// Fast path:` pointer in Sources')
            broken += 1
    return 1 if broken else 0


if __name__ == "__main__":
    os.chdir(ROOT)
    pages = sys.argv[1:] or ["README.md", "SECURITY.md", "CHANGELOG.md"] + sorted(glob.glob("docs/*.md")) + sorted(glob.glob("Examples/*/README.md"))
    status = main([os.path.abspath(p) for p in pages])
    if not sys.argv[1:]:
        status |= check_fast_paths()
    sys.exit(status)
