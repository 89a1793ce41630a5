#!/usr/bin/env python3
"""Run a conformance set through `servertrust verify --batch`: one process per job, not one per case.

usage: conformance-batch.py SET --binary PATH [--skip-features a,b] [--expected-failures FILE]
           [--include SUBSTR] [--jobs N] [--timeout S] [--results OUT.json]

The same cases, arguments, judging and output as ../shared/conformance/run.py (which parses its
arguments when imported, so it cannot be imported as a module; the parts below are copied from
it, and each says what differs). Each case's arguments — exactly the list run.py would put after
`TOOL` — go to a `servertrust verify --batch` process as one JSON array a line on standard input;
the process answers one JSON object a line, {"status": S, "stdout": "…", "stderr": "…"}, S being
the exit status `servertrust verify` with those arguments has (0 trusted, 1 rejected, 2 usage
error or unreadable input). A case with no answer within --timeout seconds is a HANG, as in
run.py; its process is killed and a new one takes the next case. A process that dies mid-case
makes that case an ERROR (exit status of the process), as a crashing per-case process would.

The results JSON has run.py's format (its "tool" is `BINARY verify --batch`), so
scripts/conformance-report.py reads it unchanged. The last line is "N passed, N failed, N skipped".
"""
import argparse, glob, json, os, selectors, subprocess, sys, tarfile, tempfile, threading, time

ap = argparse.ArgumentParser()
ap.add_argument("set")
ap.add_argument("--binary", required=True)
ap.add_argument("--skip-features", default="")
ap.add_argument("--expected-failures")
ap.add_argument("--include", default="")
ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
ap.add_argument("--timeout", type=float, default=30)
ap.add_argument("--results")
a = ap.parse_args()

# From run.py: the set, the skipped features, the expected failures.
root = a.set
tmp = None
if root.endswith(".tgz"):
    tmp = tempfile.TemporaryDirectory()
    with tarfile.open(root) as t:
        t.extractall(tmp.name)
    subdirs = [os.path.join(tmp.name, d) for d in os.listdir(tmp.name)]
    root = subdirs[0] if len(subdirs) == 1 else tmp.name

skip = {f for f in a.skip_features.split(",") if f}
xfail = {}
if a.expected_failures:
    for line in open(a.expected_failures):
        line = line.rstrip("\n")
        if line and not line.startswith("#"):
            cid, _, why = line.partition("\t")
            xfail[cid] = why


def arguments(d, m):
    """run.py's command() without the tool's words in front."""
    cmd = ["--chain", os.path.join(d, "chain.pem"), "--roots", os.path.join(d, "roots.pem")]
    if m.get("host"): cmd += ["--host", m["host"]]
    if m.get("time"): cmd += ["--time", m["time"]]
    for c in m.get("crls") or []: cmd += ["--crl", os.path.join(d, c)]
    for p in m.get("pins") or []: cmd += ["--pin", p]
    for x in m.get("extra_args") or []:
        cmd.append(os.path.join(d, x) if os.path.isfile(os.path.join(d, x)) else x)
    return cmd


class Verifier:
    """One `servertrust verify --batch` process; started again after a hang or a crash."""

    def __init__(self):
        self.process = None
        self.buffer = b""

    def start(self):
        self.process = subprocess.Popen([a.binary, "verify", "--batch"], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.buffer = b""

    def stop(self):
        if self.process:
            self.process.kill()
            self.process.wait()
            self.process = None

    def verify(self, args):
        """(status, stdout, stderr) as the per-case process would give them, or None for a hang."""
        if self.process is None:
            self.start()
        try:
            self.process.stdin.write((json.dumps(args) + "\n").encode())
            self.process.stdin.flush()
        except BrokenPipeError:
            pass
        deadline = time.monotonic() + a.timeout
        fd = self.process.stdout.fileno()
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            while b"\n" not in self.buffer:
                left = deadline - time.monotonic()
                if left <= 0 or not sel.select(left):
                    self.stop()
                    return None
                chunk = os.read(fd, 65536)
                if not chunk:  # the process died: report its status and what it wrote, as run.py would
                    self.process.stdin.close()
                    err = self.process.stderr.read().decode(errors="replace")
                    status = self.process.wait()
                    self.process = None
                    return status, self.buffer.decode(errors="replace"), err
                self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        answer = json.loads(line)
        return answer["status"], answer["stdout"], answer["stderr"]


def judge(verifier, cj):
    """run.py's run(), with the process call replaced by one batch line."""
    d = os.path.dirname(cj)
    m = json.load(open(cj))
    if m.get("validation_kind", "SERVER") != "SERVER":
        return m, "SKIPPED", "client validation"
    hit = skip & set(m.get("features") or [])
    if hit:
        return m, "SKIPPED", "feature " + ",".join(sorted(hit))
    answer = verifier.verify(arguments(d, m))
    if answer is None:
        return m, "HANG", "timeout"
    status, stdout, stderr = answer
    out = (stdout + stderr).strip()
    if status not in (0, 1):
        return m, "ERROR", f"exit {status}: {out[-300:]}"
    return m, ("SUCCESS" if status == 0 else "FAILURE"), out[-300:]


cases = sorted(c for c in glob.glob(os.path.join(root, "*", "case.json"))
               if a.include in json.load(open(c))["id"])
# Each job takes every jobs-th case, in its own process; the results are put back in case order,
# which is the order run.py's pool.map reports them in.
outcomes = [None] * len(cases)


def worker(first):
    verifier = Verifier()
    try:
        for i in range(first, len(cases), a.jobs):
            outcomes[i] = judge(verifier, cases[i])
    finally:
        verifier.stop()


threads = [threading.Thread(target=worker, args=(j,)) for j in range(max(1, a.jobs))]
for t in threads: t.start()
for t in threads: t.join()
if any(o is None for o in outcomes):
    sys.exit("error: a batch worker stopped before its last case")

# From run.py: scoring and output.
passed = failed = skipped = xfailed = 0
results = []
for m, actual, ctx in outcomes:
    cid = m["id"]
    results.append(dict(id=cid, expected=m["expected"], actual_result=actual, context=ctx))
    if actual == "SKIPPED":
        skipped += 1
    elif actual == m["expected"]:
        passed += 1
        if cid in xfail:
            print(f"XPASS {cid}: listed as expected failure ({xfail[cid]}) but passes")
    elif cid in xfail:
        xfailed += 1
    else:
        failed += 1
        last = ctx.splitlines()[-1] if ctx else ""
        print(f"MISMATCH {cid}: expected {m['expected']} got {actual} :: {last}")
if a.results:
    json.dump(dict(version=1, tool=f"{a.binary} verify --batch", results=results), open(a.results, "w"), indent=1)
print(f"{xfailed} expected failures (listed with reasons in {a.expected_failures})" if xfailed else "0 expected failures")
print(f"{passed} passed, {failed} failed, {skipped} skipped")
sys.exit(1 if failed else 0)
