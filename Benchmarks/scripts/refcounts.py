#!/usr/bin/env python3
"""Reference-counting calls per request, by the function that makes them.

    refcounts.py OBJECT N1 FILE1 N2 FILE2

FILE1 and FILE2 are callgrind outputs of the same client running N1 and N2 requests, written
with `--dump-instr=yes --compress-strings=no --compress-pos=no` (refcounts.sh does this).
Counts the calls to swift_retain, swift_release and their bridge-object, unknown-object and
`_n` variants made from code in OBJECT (a path suffix: the client binary), takes
(count(N2) - count(N1)) / (N2 - N1), and prints them per calling function, most first. A
`_n` call counts as one call, as it is one atomic operation.

Function names are demangled (`swift demangle --simplified`) and merged: the partial
functions an async function is split into, and its specialisations, count as the function.
"""

import collections
import subprocess
import sys

RETAINS = {"swift_retain", "swift_retain_n", "swift_bridgeObjectRetain", "swift_bridgeObjectRetain_n",
           "swift_unknownObjectRetain", "swift_unknownObjectRetain_n", "swift_nonatomic_retain"}
RELEASES = {"swift_release", "swift_release_n", "swift_bridgeObjectRelease", "swift_bridgeObjectRelease_n",
            "swift_unknownObjectRelease", "swift_unknownObjectRelease_n", "swift_nonatomic_release"}


def calls(path, obj):
    """{(function, 'retain'|'release'): calls} for the calls made from code in `obj`."""
    counts = collections.Counter()
    caller_object = function = callee = None
    pending = None
    with open(path, errors="replace") as lines:
        for line in lines:
            if line.startswith("ob="):
                caller_object = line[3:].rstrip("\n")
            elif line.startswith("fn="):
                function = line[3:].rstrip("\n")
            elif line.startswith("cfn="):
                callee = line[4:].rstrip("\n")
            elif line.startswith("calls="):
                pending = int(line.split()[0][len("calls="):])
            elif pending is not None:
                # The line after `calls=` is the call site's cost line: the call is counted once.
                if caller_object and caller_object.endswith(obj):
                    if callee in RETAINS:
                        counts[(function, "retain")] += pending
                    elif callee in RELEASES:
                        counts[(function, "release")] += pending
                pending = None
    return counts


def main():
    if len(sys.argv) != 6:
        sys.exit(__doc__)
    obj, n1, file1, n2, file2 = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), sys.argv[5]
    if n2 <= n1:
        sys.exit("refcounts.py: N2 must be larger than N1")
    first, second = calls(file1, obj), calls(file2, obj)
    per_request = {key: (second[key] - first[key]) / (n2 - n1) for key in set(first) | set(second)}
    mangled = sorted({function for function, _ in per_request})
    demangled = subprocess.run(["swift", "demangle", "--simplified"], input="\n".join(mangled) + "\n",
                               capture_output=True, text=True, check=True).stdout.splitlines()
    readable = dict(zip(mangled, demangled)) if len(demangled) == len(mangled) else {}
    functions = collections.defaultdict(lambda: [0.0, 0.0])
    for (function, kind), value in per_request.items():
        name = readable.get(function, function).removeprefix("specialized ")
        functions[name][0 if kind == "retain" else 1] += value
    total = [sum(v[0] for v in functions.values()), sum(v[1] for v in functions.values())]
    print(f"{'retains':>8} {'releases':>8}  function (per request)")
    for function, (retains, releases) in sorted(functions.items(), key=lambda kv: -(kv[1][0] + kv[1][1])):
        if abs(retains) >= 0.25 or abs(releases) >= 0.25:
            print(f"{retains:8.1f} {releases:8.1f}  {function}")
    print(f"{total[0]:8.1f} {total[1]:8.1f}  total")


if __name__ == "__main__":
    main()
