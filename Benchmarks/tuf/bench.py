#!/usr/bin/env python3
"""TUF client benchmark: `servertrust updates` beside python-tuf's ngclient, same repository,
same loopback server, same run.

    Benchmarks/tuf/run.sh [SERVERTRUST-BINARY]    (uses ../../.venv-tuf from scripts/setup.sh)

The repository: 1,000 targets spread over 50 delegated roles (20 each, path patterns
"role-NN/*"), consistent snapshots, ed25519 keys. Three workloads, each timed as one client
process from start to exit (what an application's update check costs), median of REPEATS runs,
wall time and the process's CPU time (user + system), the two clients alternating:

  refresh-unchanged   refresh when nothing is new (timestamp fetched, local snapshot/targets
                      verified from the store)
  refresh-new-targets refresh after a new targets version (timestamp, snapshot, targets fetched)
  download            look a target up through its delegation and download it (after a refresh)

Ratios are servertrust / python-tuf (below 1: servertrust is faster).
"""
import os, shutil, statistics, subprocess, sys, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "../../Tests/ServerTrustTUFTests/Fixtures"))
import tuf_repo  # noqa: E402

REPEATS = int(os.environ.get("REPEATS", "15"))
PYCLIENT = """
import sys
from tuf.ngclient import Updater
mode, mdir, murl, tdir, turl = sys.argv[1:6]
u = Updater(mdir, murl, tdir, turl, bootstrap=None)
u.refresh()
if mode == "download":
    info = u.get_targetinfo(sys.argv[6])
    u.download_target(info)
"""


def build(out):
    r = tuf_repo.Repo()
    r.write_initial_root(out)
    for i in range(50):
        r.delegate(f"role-{i:02d}", [f"role-{i:02d}/*"])
        for j in range(20):
            r.add_target(f"role-{i:02d}/file-{j:02d}.txt", f"target {i} {j}\n".encode(), role=f"role-{i:02d}")
    r.publish(f"{out}/0")
    r.targets.signed.version += 1
    r.bump("snapshot", "timestamp")
    r.publish(f"{out}/1")


def main():
    binary = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "../../.build/release/servertrust"))
    work = tempfile.mkdtemp(prefix="servertrust-tuf-bench-")
    build(f"{work}/repo")
    server = subprocess.Popen([sys.executable, "-u", tuf_repo.__file__, "serve", work], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    port = int(server.stdout.readline().split()[1])
    base = f"http://127.0.0.1:{port}/repo"
    pyfile = f"{work}/client.py"
    open(pyfile, "w").write(PYCLIENT)

    def fresh_dir(name):
        d = f"{work}/{name}"
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(f"{d}/meta")
        os.makedirs(f"{d}/targets")
        shutil.copy(f"{work}/repo/root.json", f"{d}/meta/root.json")
        return d

    def run(client, mode, d, state, target="role-37/file-11.txt"):
        murl, turl = f"{base}/{state}/metadata/", f"{base}/{state}/targets/"
        if client == "servertrust":
            args = [binary, "updates", "--metadata-dir", f"{d}/meta", "--metadata-url", murl]
            args += (["--target-name", target, "--target-base-url", turl, "--target-dir", f"{d}/targets", "download"] if mode == "download" else ["refresh"])
        else:
            args = [sys.executable, pyfile, mode, f"{d}/meta", murl, f"{d}/targets", turl, target]
        # Wall time, and the child's CPU time (user + system, from wait4): on a shared machine
        # the CPU time is the steadier of the two; both are reported.
        start = time.perf_counter()
        child = subprocess.Popen(args, stdout=subprocess.DEVNULL)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)
        if child.returncode != 0:
            raise SystemExit(f"{' '.join(args)} exited with {child.returncode}")
        return wall, usage.ru_utime + usage.ru_stime

    workloads = ("refresh-unchanged", "refresh-new-targets", "download")
    samples = {c: {w: [] for w in workloads} for c in ("servertrust", "python-tuf")}
    # The two clients alternate within each repeat, so a load change on the machine touches both.
    for n in range(REPEATS):
        for client in ("servertrust", "python-tuf"):
            d = fresh_dir(client)
            run(client, "refresh", d, 0)
            samples[client]["refresh-unchanged"].append(run(client, "refresh", d, 0))
            samples[client]["refresh-new-targets"].append(run(client, "refresh", d, 1))
            samples[client]["download"].append(run(client, "download", d, 1, target=f"role-{n % 50:02d}/file-{n % 20:02d}.txt"))
    server.stdin.close()
    server.wait()
    print(f"TUF client, repository of 1,000 targets in 50 delegated roles, median of {REPEATS} process runs")
    print(f"{'':<22}{'wall time':^36}{'CPU time (user + system)':^36}")
    print(f"{'workload':<22}" + f"{'servertrust':>14}{'python-tuf':>14}{'ratio':>8}" * 2)
    for w in workloads:
        line = f"{w:<22}"
        for i in (0, 1):
            a = statistics.median(s[i] for s in samples["servertrust"][w]) * 1000
            b = statistics.median(s[i] for s in samples["python-tuf"][w]) * 1000
            line += f"{a:>11.1f} ms{b:>11.1f} ms{a / b:>8.2f}"
        print(line)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
