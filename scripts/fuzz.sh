#!/usr/bin/env bash
# Builds and runs the libFuzzer targets of Fuzz/ (a separate package; see Fuzz/README.md).
#
#   scripts/fuzz.sh build                  build every target (libFuzzer + AddressSanitizer)
#   scripts/fuzz.sh smoke [SECONDS]        replay Fuzz/Regressions, then fuzz each target SECONDS
#                                          (default 20; FUZZ_SMOKE_SECONDS overrides), FUZZ_JOBS
#                                          targets at a time (default: the cores): the CI step
#   scripts/fuzz.sh run TARGET [SECONDS]   one long run (default 3600 s); TARGET as in `list`
#   scripts/fuzz.sh repro TARGET FILE...   run TARGET on inputs, e.g. a crash-… artifact
#   scripts/fuzz.sh merge TARGET           fold the working corpus's new coverage into the
#                                          committed seeds (Fuzz/Corpus/TARGET), minimised
#   scripts/fuzz.sh table                  regenerate the table in docs/SECURITY-TESTING.md
#   scripts/fuzz.sh list                   the targets
#
# Each run fuzzes from Fuzz/.corpus/TARGET (the working corpus, gitignored, grows across runs)
# and the committed seeds in Fuzz/Corpus/TARGET (read only). Crashes, timeouts and leaks land in
# Fuzz/.artifacts/TARGET/ with libFuzzer's reproducer command; copy one into
# Fuzz/Regressions/TARGET/ once the bug is understood, so every smoke run replays it. Every run is
# appended to Fuzz/runs.tsv and summarised between the markers in docs/SECURITY-TESTING.md.
#
# Exit status: 0 no finding; 1 a target crashed, leaked, timed out or a regression input failed;
# 2 usage error or build failure.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
fuzz=$repo/Fuzz
scratch=$fuzz/.build-fuzz
bin=$scratch/debug
ledger=$fuzz/runs.tsv
# The targets: Fuzz/Package.swift's fuzz-NAME executables, as NAME, in its order.
names=$(swift package --package-path "$fuzz" dump-package | "$repo/scripts/targets.py" fuzz-targets)
mapfile -t targets <<<"$names"
# Per-input time limit (s): the slowest seed runs in well under a second even under ASan.
timeout_per_input=${FUZZ_TIMEOUT:-10}
# Swift's own crash backtracer races ASan's and libFuzzer's handlers and buries the report.
export SWIFT_BACKTRACE=enable=no

usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | grep '^#' | sed 's/^# \{0,1\}//' >&2; exit 2; }

known() {
    local target
    for target in "${targets[@]}"; do [[ $target == "$1" ]] && return 0; done
    echo "error: unknown target \"$1\"; one of: ${targets[*]}" >&2
    exit 2
}

# Coverage instrumentation and ASan on every module of the build, Swift and C. swiftc keeps only
# the last -sanitize= it is given, so SwiftPM's `--sanitize=fuzzer --sanitize=address` alone
# leaves the Swift code with ASan and no coverage (libFuzzer then sees only the C shims and the
# targets): the combined -Xswiftc flag, which comes last, restores both. --sanitize still puts
# both on the C code and on the link. -Xswiftc also reaches the main package's plugin tool
# (servertrust-generate), which then fails to link against libFuzzer's main; the tool is not
# needed here, SwiftPM carries on, and its lines are filtered out. Only the targets' own modules
# get -parse-as-library (Fuzz/Package.swift).
build() {
    echo "== fuzz: build (scratch ${scratch#"$repo"/})"
    local log status=0
    log=$(mktemp)
    swift build -c debug --package-path "$fuzz" --scratch-path "$scratch" \
        --sanitize=fuzzer --sanitize=address -Xswiftc -sanitize=fuzzer,address >"$log" 2>&1 || status=$?
    grep -v -e "Cannot export local symbol" -e "^\[[0-9]*/[0-9]*\] Compiling" -e "servertrust-generate-tool" \
        -e "gold/dwarf_reader.cc" -e "linker command failed" -e "^error: link command failed" "$log" | tail -n 20
    rm -f "$log"
    if [[ $status -ne 0 ]]; then
        echo "error: the fuzz build failed" >&2
        exit 2
    fi
    local target
    for target in "${targets[@]}"; do
        [[ -x $bin/fuzz-$target ]] || { echo "error: $bin/fuzz-$target was not built" >&2; exit 2; }
    done
    # A build whose Swift code lost its coverage still links and runs, blind: refuse it.
    local counters
    counters=$("$bin/fuzz-pin" -runs=0 2>&1 | sed -n 's/.*(\([0-9]*\) inline 8-bit counters).*/\1/p' | head -n 1)
    if [[ ${counters:-0} -lt 5000 ]]; then
        echo "error: fuzz-pin has ${counters:-no} coverage counters: ServerTrust was built without coverage" >&2
        exit 2
    fi
    local name seed
    for name in signed-response message-signature; do
        seed=$fuzz/Corpus/$name/genuine
        if [[ ! -s $seed ]]; then
            SERVERTRUST_FUZZ_WRITE_SEED=$seed "$bin/fuzz-$name" -runs=0 >/dev/null 2>&1 || true
        fi
    done
}

# run_target TARGET SECONDS MODE: fuzz, append to the ledger, print one summary line.
run_target() {
    local target=$1 seconds=$2 mode=$3
    local corpus=$fuzz/.corpus/$target artifacts=$fuzz/.artifacts/$target log
    mkdir -p "$corpus" "$artifacts"
    log=$(mktemp)
    local status=0 started=$SECONDS
    (cd "$artifacts" && "$bin/fuzz-$target" "$corpus" "$fuzz/Corpus/$target" \
        -max_total_time="$seconds" -timeout="$timeout_per_input" -print_final_stats=1 \
        -artifact_prefix="$artifacts/" >"$log" 2>&1) || status=$?
    local execs rate cov corpus_files result elapsed=$((SECONDS - started))
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1 | cut -d' ' -f2)
    corpus_files=$(find "$corpus" -type f | wc -l)
    if [[ $status -eq 0 ]]; then
        result=ok
    else
        result="FINDING: $(grep -m1 -o -e 'ERROR: [A-Za-z]*Sanitizer: [a-z-]*' -e 'ERROR: libFuzzer: [a-z-]*' \
            -e 'Fatal error: fuzz invariant broken' -e 'Fatal error' "$log" || echo "exit $status")"
        echo "---- fuzz-$target output (last 60 lines) ----" >&2
        tail -n 60 "$log" >&2
        echo "---- artifacts in $artifacts: $(ls "$artifacts" | tr '\n' ' ')" >&2
    fi
    rm -f "$log"
    mkdir -p "$(dirname "$ledger")"
    [[ -f $ledger ]] || printf 'date\ttarget\tmode\tseconds\texecutions\texec_per_s\tcoverage\tworking_corpus\tresult\n' >"$ledger"
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$target" "$mode" "$elapsed" \
        "${execs:-0}" "${rate:-0}" "${cov:-?}" "$corpus_files" "$result" >>"$ledger"
    printf '  %-16s %6ss %10s runs %7s exec/s  cov %5s  corpus %5s  %s\n' "$target" "$elapsed" "${execs:-0}" \
        "${rate:-0}" "${cov:-?}" "$corpus_files" "$result"
    [[ $status -eq 0 ]]
}

# Every input under Fuzz/Regressions/TARGET must now run clean.
regressions() {
    local target failed=0 files
    for target in "${targets[@]}"; do
        [[ -d $fuzz/Regressions/$target ]] || continue
        files=$(find "$fuzz/Regressions/$target" -type f ! -name '*.md' | sort)
        [[ -n $files ]] || continue
        # shellcheck disable=SC2086
        if "$bin/fuzz-$target" -timeout="$timeout_per_input" $files >/dev/null 2>&1; then
            echo "  regressions/$target: $(echo "$files" | wc -l) inputs pass"
        else
            echo "  regressions/$target: FAILED — scripts/fuzz.sh repro $target Fuzz/Regressions/$target/…" >&2
            failed=1
        fi
    done
    return $failed
}

# The generated table in docs/SECURITY-TESTING.md: totals per target from Fuzz/runs.tsv.
table() {
    python3 "$repo/scripts/security-testing-doc.py" fuzz "${targets[@]}"
    echo "  updated the fuzzing table in docs/SECURITY-TESTING.md"
}

[[ $# -ge 1 ]] || usage
command=$1
shift
case $command in
build)
    build
    ;;
smoke)
    seconds=${1:-${FUZZ_SMOKE_SECONDS:-20}}
    build
    echo "== fuzz: regressions"
    failed=0
    regressions || failed=1
    # libFuzzer runs one process on one core: the targets run FUZZ_JOBS at a time (default:
    # the cores), each for the full SECONDS, and their lines are printed in the usual order.
    jobs=${FUZZ_JOBS:-$(nproc)}
    echo "== fuzz: smoke, ${seconds}s per target, $jobs at a time"
    outputs=$(mktemp -d)
    for target in "${targets[@]}"; do
        while [[ $(jobs -rp | wc -l) -ge $jobs ]]; do wait -n || true; done
        (
            status=0
            run_target "$target" "$seconds" smoke || status=1
            echo "$status" >"$outputs/$target.status"
        ) >"$outputs/$target.out" 2>&1 &
    done
    wait || true
    for target in "${targets[@]}"; do
        cat "$outputs/$target.out"
        [[ $(cat "$outputs/$target.status" 2>/dev/null) == 0 ]] || failed=1
    done
    rm -rf "$outputs"
    table
    exit $failed
    ;;
run)
    [[ $# -ge 1 ]] || usage
    known "$1"
    build
    echo "== fuzz: $1 for ${2:-3600}s"
    status=0
    run_target "$1" "${2:-3600}" run || status=1
    table
    exit $status
    ;;
repro)
    [[ $# -ge 2 ]] || usage
    known "$1"
    [[ -x $bin/fuzz-$1 ]] || build
    target=$1
    shift
    exec "$bin/fuzz-$target" -timeout="$timeout_per_input" "$@"
    ;;
merge)
    [[ $# -ge 1 ]] || usage
    known "$1"
    [[ -x $bin/fuzz-$1 ]] || build
    merged=$(mktemp -d)
    "$bin/fuzz-$1" -merge=1 "$merged" "$fuzz/Corpus/$1" "$fuzz/.corpus/$1" >/dev/null 2>&1
    rm -rf "$fuzz/Corpus/$1"
    mv "$merged" "$fuzz/Corpus/$1"
    chmod 755 "$fuzz/Corpus/$1"
    echo "  Fuzz/Corpus/$1: $(find "$fuzz/Corpus/$1" -type f | wc -l) files, $(du -sh "$fuzz/Corpus/$1" | cut -f1)"
    ;;
table)
    table
    ;;
list)
    printf '%s\n' "${targets[@]}"
    ;;
*)
    usage
    ;;
esac
