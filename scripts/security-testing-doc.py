#!/usr/bin/env python3
"""Regenerates the marked tables of docs/SECURITY-TESTING.md.

    security-testing-doc.py fuzz TARGET...                  from Fuzz/runs.tsv and the corpora
    security-testing-doc.py sanitizer MODE RESULT SECONDS TESTS [XUNIT.xml]
                                                            one row of the sanitizer table; with
                                                            an xUnit file, the attack-suite table
    security-testing-doc.py conformance                     copy docs/CONFORMANCE.md's results

Called by scripts/fuzz.sh and scripts/sanitizers.sh; the tables are never edited by hand.
"""
import datetime
import os
import re
import sys
import xml.etree.ElementTree as ET

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(REPO, "docs", "SECURITY-TESTING.md")
FUZZ = os.path.join(REPO, "Fuzz")

# The attack suites SECURITY.md's threat model points at: suite name -> test file.
ATTACK_SUITES = {
    "ConnectionGuardTests": "Tests/ServerTrustHTTPTests/ConnectionGuardTests.swift",
    "ProxyTests": "Tests/ServerTrustHTTPTests/ProxyTests.swift",
    "HostileServerTests": "Tests/ServerTrustHTTPTests/HostileServerTests.swift",
    "RedirectTests": "Tests/ServerTrustHTTPTests/RedirectTests.swift",
    "NginxInteropTests": "Tests/ServerTrustHTTPTests/NginxInteropTests.swift",
    "HostNameAttackTests": "Tests/ServerTrustHTTPTests/HostNameAttackTests.swift",
    "HostileRevocationResponderTests": "Tests/ServerTrustHTTPTests/HostileRevocationResponderTests.swift",
    "SignedResponseInterceptionTests": "Tests/ServerTrustHTTPTests/SignedResponseInterceptionTests.swift",
    "NginxRevocationInteropTests": "Tests/ServerTrustHTTPTests/NginxRevocationInteropTests.swift",
    "ChainCleaningAttackTests": "Tests/ServerTrustTests/ChainCleaningAttackTests.swift",
    "FuzzRegressionTests": "Tests/ServerTrustTests/FuzzRegressionTests.swift",
}


def replace_block(text, name, body):
    pattern = re.compile(r"(<!-- BEGIN %s\b[^>]*-->\n)(.*?)(<!-- END %s -->)" % (name, name), re.S)
    if not pattern.search(text):
        sys.exit(f"error: {DOC} has no {name} markers")
    return pattern.sub(lambda m: m.group(1) + body.rstrip("\n") + "\n" + m.group(3), text)


def block(text, name):
    match = re.search(r"<!-- BEGIN %s\b[^>]*-->\n(.*?)<!-- END %s -->" % (name, name), text, re.S)
    return match.group(1) if match else ""


def today():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")


def count_files(path, skip_markdown=False):
    if not os.path.isdir(path):
        return 0
    return sum(
        1 for root, _, files in os.walk(path) for f in files if not (skip_markdown and f.endswith(".md"))
    )


def duration(seconds):
    if seconds >= 3600:
        return f"{seconds / 3600:.1f} h"
    if seconds >= 60:
        return f"{seconds / 60:.0f} min"
    return f"{seconds:.0f} s"


def fuzz(targets):
    runs = {t: [] for t in targets}
    ledger = os.path.join(FUZZ, "runs.tsv")
    if os.path.exists(ledger):
        with open(ledger, encoding="utf-8") as handle:
            header = handle.readline().rstrip("\n").split("\t")
            for line in handle:
                row = dict(zip(header, line.rstrip("\n").split("\t")))
                if row.get("target") in runs:
                    runs[row["target"]].append(row)
    lines = [
        "| target | fuzzed in total | runs | last run | last exec/s | edges covered (last) | seeds | working corpus | regressions | last result |",
        "|---|---:|---:|---|---:|---:|---:|---:|---:|---|",
    ]
    total = 0
    for target in targets:
        rows = runs[target]
        seconds = sum(int(r["seconds"]) for r in rows)
        total += seconds
        seeds = count_files(os.path.join(FUZZ, "Corpus", target))
        working = count_files(os.path.join(FUZZ, ".corpus", target))
        regressions = count_files(os.path.join(FUZZ, "Regressions", target), skip_markdown=True)
        if rows:
            last = rows[-1]
            cells = [duration(seconds), str(len(rows)), f"{last['date'][:10]} ({last['mode']}, {last['seconds']} s)",
                     last["exec_per_s"], last["coverage"], last["result"]]
        else:
            cells = ["—", "0", "—", "—", "—", "—"]
        lines.append(
            f"| `{target}` | {cells[0]} | {cells[1]} | {cells[2]} | {cells[3]} | {cells[4]} | {seeds} | "
            f"{working or '—'} | {regressions} | {cells[5]} |"
        )
    lines.append("")
    lines.append(f"Total recorded: **{duration(total)}** over {sum(len(r) for r in runs.values())} runs "
                 f"(`Fuzz/runs.tsv`). The working corpus is local to the machine that ran the fuzzers.")
    return "\n".join(lines)


def sanitizer_row(text, mode, result, seconds, tests):
    rows = {}
    for row in block(text, "sanitizer-table").strip("\n").split("\n")[2:]:
        cells = [c.strip() for c in row.strip("|").split("|")]
        rows[cells[0].strip("`")] = row
    descriptions = {
        "asan": "`scripts/sanitizers.sh asan`: AddressSanitizer + LeakSanitizer over the test suite",
        "tsan": "`scripts/sanitizers.sh tsan`: ThreadSanitizer over the test suite",
        "leaks": "`scripts/sanitizers.sh leaks`: LeakSanitizer over 1,000 handshakes, 100 rejections, 100 streamed responses",
    }
    rows[mode] = f"| `{mode}` | {descriptions[mode]} | {today()} | {tests} | {duration(float(seconds))} | {result} |"
    header = ["| mode | what | last run | tests | time | result |", "|---|---|---|---:|---:|---|"]
    return "\n".join(header + [rows[m] for m in ["asan", "tsan", "leaks"] if m in rows])


def attack_table(text, mode, xunit):
    tree = ET.parse(xunit)
    counts = {}
    for case in tree.iter("testcase"):
        suite = case.get("classname", "").split(".")[-1]
        if suite not in ATTACK_SUITES:
            continue
        entry = counts.setdefault(suite, {"tests": 0, "failed": 0, "skipped": 0})
        entry["tests"] += 1
        if case.find("failure") is not None or case.find("error") is not None:
            entry["failed"] += 1
        elif case.find("skipped") is not None:
            entry["skipped"] += 1
    lines = [
        "| suite | file | test cases | passed | failed | skipped | last run |",
        "|---|---|---:|---:|---:|---:|---|",
    ]
    for suite, path in ATTACK_SUITES.items():
        entry = counts.get(suite)
        if entry is None:
            lines.append(f"| `{suite}` | `{path}` | — | — | — | — | not in the {mode} run |")
            continue
        passed = entry["tests"] - entry["failed"] - entry["skipped"]
        lines.append(
            f"| `{suite}` | `{path}` | {entry['tests']} | {passed} | {entry['failed']} | {entry['skipped']} | "
            f"{today()}, under {mode} |"
        )
    return "\n".join(lines)


def conformance(text):
    source = open(os.path.join(REPO, "docs", "CONFORMANCE.md"), encoding="utf-8").read()
    table = block(source, "generated:table")
    if not table.strip():
        return text
    return replace_block(text, "conformance-table", table)


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    text = open(DOC, encoding="utf-8").read()
    command = argv[1]
    if command == "fuzz":
        text = replace_block(text, "fuzz-table", fuzz(argv[2:]))
    elif command == "sanitizer" and len(argv) in (6, 7):
        mode, result, seconds, tests = argv[2:6]
        text = replace_block(text, "sanitizer-table", sanitizer_row(text, mode, result, seconds, tests))
        if len(argv) == 7 and os.path.exists(argv[6]) and os.path.getsize(argv[6]) > 0:
            text = replace_block(text, "attack-table", attack_table(text, mode, argv[6]))
    elif command == "conformance":
        text = conformance(text)
    else:
        sys.exit(__doc__)
    if command != "conformance":
        text = conformance(text)
    open(DOC, "w", encoding="utf-8").write(text)


if __name__ == "__main__":
    main(sys.argv)
