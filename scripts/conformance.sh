#!/usr/bin/env bash
# Scores `servertrust verify` on the public conformance suites in ../shared/conformance and
# publishes the result in docs/CONFORMANCE.md.
#
#   swift build -c release && scripts/conformance.sh [BINARY] [SET...]
#
# BINARY defaults to .build/release/servertrust (a release build; a debug build verifies
# several times slower). Nothing is built here. Each set is scored by scripts/conformance-batch.py:
# run.py's cases, arguments and judging, with every case sent to one `servertrust verify --batch`
# process per job instead of a process of its own (CONFORMANCE_PER_PROCESS=1 runs
# ../shared/conformance/run.py itself, one process per case, for comparison). The sets, the features
# each one skips and why, and each set's target (minimum passed) are in
# Tests/Conformance/sets.tsv; the expected failures, with their reasons, in
# Tests/Conformance/<set>.xfail. Per-set output and the runner's JSON results (run.py's format) go to
# conformance-results/ (gitignored). Naming SETs runs only those and leaves the docs alone.
#
# Exit status: 0 when every set meets its target with no unexpected failure and no stale
# expected failure (XPASS); 1 otherwise; 2 for a usage error.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"

binary=${1:-.build/release/servertrust}
[[ $# -gt 0 ]] && shift
if [[ ! -x $binary ]]; then
    echo "error: $binary is not an executable; build it first: swift build -c release" >&2
    exit 2
fi
binary=$(cd "$(dirname "$binary")" && pwd)/$(basename "$binary")
suites=$repo/../shared/conformance
if [[ ! -f $suites/run.py ]]; then
    echo "error: $suites/run.py not found: the shared conformance folder must sit beside the repository" >&2
    exit 2
fi
results=$repo/conformance-results
jobs=${CONFORMANCE_JOBS:-2}
mkdir -p "$results"

selected=("$@")
wanted() {
    [[ ${#selected[@]} -eq 0 ]] && return 0
    local name
    for name in "${selected[@]}"; do [[ $name == "$1" ]] && return 0; done
    return 1
}

: >"$results/timings.tsv"
started=$SECONDS
while IFS=$'\t' read -r set skip _; do
    [[ -z $set || $set == \#* ]] && continue
    wanted "$set" || continue
    [[ $skip == - ]] && skip=""
    rm -f "$results/$set.json"
    begin=$SECONDS
    status=0
    if [[ ${CONFORMANCE_PER_PROCESS:-0} == 1 ]]; then
        runner=("$suites/run.py" --tool "$(printf '%q' "$binary") verify")
    else
        runner=("$repo/scripts/conformance-batch.py" --binary "$binary")
    fi
    python3 "${runner[0]}" "$suites/$set.tgz" "${runner[@]:1}" \
        --jobs "$jobs" \
        --skip-features "$skip" \
        --expected-failures "Tests/Conformance/$set.xfail" \
        --results "$results/$set.json" \
        </dev/null >"$results/$set.txt" 2>&1 || status=$?
    elapsed=$((SECONDS - begin))
    printf '%s\t%s\n' "$set" "$elapsed" >>"$results/timings.tsv"
    # The runner exits 1 when a case mismatches; anything else means the runner itself broke.
    if [[ $status -gt 1 ]]; then
        echo "$set: ${runner[0]##*/} failed (exit $status); see $results/$set.txt" >&2
        tail -n 5 "$results/$set.txt" >&2
        continue
    fi
    printf '%-15s %s (%d s)\n' "$set:" "$(tail -n 1 "$results/$set.txt")" "$elapsed"
done <Tests/Conformance/sets.tsv
echo "conformance run: $((SECONDS - started)) s"
echo

report=(python3 scripts/conformance-report.py "$results")
if [[ ${#selected[@]} -gt 0 ]]; then
    report+=("${selected[@]}")
else
    report+=(--doc docs/CONFORMANCE.md)
fi
"${report[@]}"
