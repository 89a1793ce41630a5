#!/usr/bin/env python3
"""Scores conformance results against their targets and publishes the table.

usage: conformance-report.py RESULTS_DIR [--config Tests/Conformance/sets.tsv]
           [--xfail-dir Tests/Conformance] [--doc docs/CONFORMANCE.md] [SET...]

Reads RESULTS_DIR/<set>.json (written by scripts/conformance-batch.py or ../shared/conformance/run.py
--results, in run.py's format) for every set
of sets.tsv, or only the SETs named, and RESULTS_DIR/timings.tsv ("set<TAB>seconds") if present.
Prints a summary table and exits 1 when a set has an unexpected failure, an expected failure
that now passes (XPASS: remove it from the list), an expected-failures entry that is malformed
or names no case of the set, no results, or fewer passes than its target. With --doc and all
sets scored, the table and the expected-failure reasons replace what lies between the
"<!-- BEGIN generated:… -->" and "<!-- END generated:… -->" markers of that file.
"""
import argparse, collections, json, os, re, sys

ap = argparse.ArgumentParser()
ap.add_argument("results")
ap.add_argument("sets", nargs="*")
ap.add_argument("--config", default="Tests/Conformance/sets.tsv")
ap.add_argument("--xfail-dir", default="Tests/Conformance")
ap.add_argument("--doc")
a = ap.parse_args()

Config = collections.namedtuple("Config", "name skip target baseline skip_reason")
configs = []
for line in open(a.config):
    if not line.strip() or line.startswith("#"):
        continue
    name, skip, target, baseline, reason = line.rstrip("\n").split("\t")
    configs.append(Config(name, "" if skip == "-" else skip, int(target), baseline, "" if reason == "-" else reason))
unknown = set(a.sets) - {c.name for c in configs}
if unknown:
    sys.exit(f"unknown set(s): {', '.join(sorted(unknown))}")
chosen = [c for c in configs if not a.sets or c.name in a.sets]

timings = {}
timing_file = os.path.join(a.results, "timings.tsv")
if os.path.exists(timing_file):
    for line in open(timing_file):
        name, _, seconds = line.strip().partition("\t")
        timings[name] = int(seconds)

# A reason must say why, not that: "fails", "broken", "TODO" and the like are refused.
VACUOUS = re.compile(r"^\W*(fails?|failing|broken|flaky|todo|tbd|known|expected|xfail|bug)\W*$", re.I)


def read_xfail(path, problems):
    entries = {}
    if not os.path.exists(path):
        return entries
    for number, line in enumerate(open(path), 1):
        line = line.rstrip("\n")
        if not line.strip() or line.startswith("#"):
            continue
        cid, tab, why = line.partition("\t")
        if not tab or len(why.strip()) < 20 or VACUOUS.match(why):
            problems.append(f"{path}:{number}: needs ID<TAB>REASON with a real reason: {line[:80]!r}")
        elif cid in entries:
            problems.append(f"{path}:{number}: {cid} is listed twice")
        entries[cid] = why.strip()
    return entries


rows, problems, reasons = [], [], {}
batch = False
for config in chosen:
    xfail_path = os.path.join(a.xfail_dir, f"{config.name}.xfail")
    xfail = read_xfail(xfail_path, problems)
    result_path = os.path.join(a.results, f"{config.name}.json")
    if not os.path.exists(result_path):
        problems.append(f"{config.name}: no results ({result_path}); did the runner fail?")
        continue
    loaded = json.load(open(result_path))
    results = loaded["results"]
    batch = batch or "--batch" in loaded.get("tool", "")
    ids = {r["id"] for r in results}
    count = collections.Counter()
    for r in results:
        cid, actual = r["id"], r["actual_result"]
        if actual == "SKIPPED":
            count["skipped"] += 1
        elif actual == r["expected"]:
            count["passed"] += 1
            if cid in xfail:
                count["xpass"] += 1
                problems.append(f"{config.name}: XPASS {cid}: passes now, remove it from {xfail_path}")
        elif cid in xfail:
            count["xfail"] += 1
        else:
            count["failed"] += 1
            last = (r["context"] or "").strip().splitlines()
            problems.append(f"{config.name}: FAIL {cid}: expected {r['expected']}, got {actual} :: {last[-1][:160] if last else ''}")
    for cid in sorted(set(xfail) - ids):
        problems.append(f"{xfail_path}: {cid} is not a case of {config.name}")
    if count["passed"] < config.target:
        problems.append(f"{config.name}: {count['passed']} passed, below the target of {config.target}")
    status = "ok" if count["failed"] == 0 and count["xpass"] == 0 and count["passed"] >= config.target else "FAIL"
    rows.append(dict(
        set=config.name, cases=len(results), passed=count["passed"], failed=count["failed"], skipped=count["skipped"],
        xfail=count["xfail"], target=config.target, baseline=config.baseline, seconds=timings.get(config.name),
        status=status))
    grouped = collections.defaultdict(list)
    for cid, why in xfail.items():
        grouped[why].append(cid)
    reasons[config.name] = (config, grouped)

columns = ["set", "cases", "passed", "failed", "skipped", "xfail", "target", "baseline", "seconds", "status"]
headers = ["set", "cases", "passed", "failed", "skipped", "expected failures", "target (min passed)",
           "OpenSSL 3.0 baseline", "time (s)", "status"]


def cell(row, column):
    value = row[column]
    return "-" if value is None else f"{value:,}" if isinstance(value, int) else str(value)


widths = [max(len(h), *(len(cell(r, c)) for r in rows)) if rows else len(h) for h, c in zip(headers, columns)]
print("  ".join(h.ljust(w) for h, w in zip(headers, widths)))
for row in rows:
    print("  ".join(cell(row, c).ljust(w) for c, w in zip(columns, widths)))
total = sum(r["seconds"] or 0 for r in rows)
print(f"total run time: {total} s")
for problem in problems:
    print(problem)


def replace_block(text, name, body):
    pattern = re.compile(rf"(<!-- BEGIN generated:{name} [^>]*-->\n).*?(<!-- END generated:{name} -->)", re.S)
    if not pattern.search(text):
        sys.exit(f"{a.doc}: no generated:{name} markers")
    return pattern.sub(lambda m: m.group(1) + body + m.group(2), text)


if a.doc and not a.sets and rows:
    table = ["| " + " | ".join(headers[:-1]) + " |", "|" + "---|" * (len(headers) - 1)]
    for row in rows:
        table.append("| " + " | ".join(f"`{row['set']}`" if c == "set" else cell(row, c) for c in columns[:-1]) + " |")
    how = "one `servertrust verify --batch` process per job" if batch else "one `servertrust verify` process per case"
    table.append(f"\nTotal run time of `scripts/conformance.sh`: {total} s with `--jobs 2` ({how}).\n")
    skips = [f"- `{c.name}`: skips `{c.skip.replace(',', '`, `')}` — {c.skip_reason}." for c, _ in reasons.values() if c.skip]
    lists = []
    for name, (config, grouped) in reasons.items():
        if not grouped:
            continue
        lists.append(f"\n**{name}** ({sum(len(v) for v in grouped.values())}):\n")
        for why, cids in sorted(grouped.items(), key=lambda kv: (-len(kv[1]), kv[1][0])):
            lists.append(f"- {why.rstrip('.')}. Cases: " + ", ".join(f"`{cid}`" for cid in sorted(cids)))
    text = open(a.doc).read()
    text = replace_block(text, "table", "\n".join(table) + "\n")
    text = replace_block(text, "skips", "\n".join(skips) + "\n")
    text = replace_block(text, "expected-failures", "\n".join(lists).lstrip("\n") + "\n")
    open(a.doc, "w").write(text)
    print(f"updated {a.doc}")

sys.exit(1 if problems else 0)
