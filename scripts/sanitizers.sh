#!/usr/bin/env bash
# The test suite under AddressSanitizer or ThreadSanitizer, and a leak check over many handshakes.
#
#   scripts/sanitizers.sh asan [SWIFT-TEST-ARGS...]   swift test --sanitize=address (LeakSanitizer on)
#   scripts/sanitizers.sh tsan [SWIFT-TEST-ARGS...]   swift test --sanitize=thread
#   scripts/sanitizers.sh leaks [REQUESTS]            LeakSanitizer over REQUESTS (default 1000)
#                                                     Session requests, each a full TLS handshake,
#                                                     plus 100 rejected and 100 streamed ones (Leaks/)
#
# Each sanitizer builds into its own scratch path (.build-asan, .build-tsan, Leaks/.build-*;
# gitignored), so switching never rebuilds the normal .build. SWIFT-TEST-ARGS default to the
# whole suite but for the tests in default_skips below; pass e.g. `--filter ServerTrustTests`
# for a subset. The nginx interop tests use SERVERTRUST_INTEROP_DIR when .ci/run sets it.
#
# Suppressions, each with its reason, are in scripts/sanitizers/ (see docs/SECURITY-TESTING.md).
# No valgrind mode: Debian 12's valgrind 3.19 cannot run Swift 6.3 binaries (it cannot read their
# DWARF 5, and crashes with an internal SIGSEGV when they carry none).
#
# Exit status: 0 clean; 1 a test failed or a sanitizer reported; 2 usage error.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
suppressions=$repo/scripts/sanitizers
# Swift's crash backtracer races the sanitizers' own reports; let them print theirs.
export SWIFT_BACKTRACE=enable=no

usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | grep '^#' | sed 's/^# \{0,1\}//' >&2; exit 2; }

# Tests skipped under the sanitizers unless SWIFT-TEST-ARGS are given: those that re-test what
# the instrumented run covers elsewhere without reaching a memory or thread path of their own.
# Everything that exercises the TLS bridge, the connection guard, the curl callbacks, ex_data,
# the multi loop, the revocation loops, uploads and streams, or the adapters of the default
# build still runs (docs/SECURITY-TESTING.md, "Sanitizers", lists what is skipped and why).
#   ServerTrustCLITests       every suite spawns the `servertrust` binary, or checks generated
#                             text: the instrumented test process only waits on pipes, and the
#                             library paths the commands call are tested in-process by the
#                             ServerTrustTests and ServerTrustHTTPTests suites that do run.
#   PublicSuffixListTests, HostPatternTests, TrustPolicyFileTests, SignedResponseHeaderFuzzTests
#                             pure parsing that a fuzz target (built with ASan) runs on far more
#                             inputs: fuzz-host-pattern, fuzz-policy-file, fuzz-signed-response.
#   RequestValueTests, RedirectRulesTests
#                             value types alone (no handle, no callback, no lock, no C memory).
#   MessageSignatureVectorTests, RFC9421InteropTests
#                             RFC 9421's vectors are pure parsing and crypto (fuzz-message-signature
#                             runs the parser with ASan); the interop suite spawns the Python peer
#                             (processes of their own): its Session paths run in-process in
#                             SignatureSchemeSessionTests and MessageSignatureVerifierTests, which do run.
#   ServerTrustTUFTests' AttackTests and CrashTests
#                             each runs `servertrust updates` against python-tuf repositories
#                             (processes of their own, as the CLI suites): the TUF library's
#                             parsing, verification and store run in-process in
#                             UpdaterLibraryTests, CanonicalJSONTests and SignatureKnownAnswerTests,
#                             which do run, and in the ASan-built fuzz-tuf-metadata target.
# PolicyLifetimeTests' 50,000 requests (each with a policy of its own) only count handles; the
# peak-share assertion and LeakSanitizer catch a share that outlives its policy within a few
# hundred. Under the sanitizers it sends 12,000: enough for the evicted-policies test to fill and
# evict the 10,000-entry policy cache, the path where a freed policy could still be in use.
# Tests carry no time limit a sanitizer's slowdown could break: the Session fixture's request
# timeout is 300 s and nginx keeps idle connections 10 minutes (its 75 s default once closed an
# HTTP/2 connection a reuse test was counting on).
default_skips=(
    --skip 'ServerTrustCLITests\.'
    --skip '\.(PublicSuffixListTests|HostPatternTests|TrustPolicyFileTests|SignedResponseHeaderFuzzTests)(/|\.|$)'
    --skip '\.(RequestValueTests|RedirectRulesTests)(/|\.|$)'
    --skip '\.(MessageSignatureVectorTests|RFC9421InteropTests)(/|\.|$)'
    --skip 'ServerTrustTUFTests\.(AttackTests|CrashTests)(/|\.|$)'
)
export SERVERTRUST_POLICY_LIFETIME_REQUESTS=${SERVERTRUST_POLICY_LIFETIME_REQUESTS:-12000}

# At most this many test cases run at once. Unbounded, Swift Testing starts all ~1,000 tests
# together: under ThreadSanitizer on two cores no test then finished in its first 129 s, and
# a test body could wait that long between two of its own requests — past libcurl's 118 s
# idle-connection limit (CURLOPT_MAXAGE_CONN), so reuse tests counted 2 connections, and past
# the 120 s limits of the revocation-loop tests. With 8 the whole suite runs in 145 s instead
# of 211 s, and each test shares the two cores with at most seven others.
width_args=(--experimental-maximum-parallelization-width "${SERVERTRUST_TEST_WIDTH:-8}")

# Runs `swift build ARGS...` with its output appended to LOG; runs it once more when the build
# tool itself was killed by a signal (exit status above 128). SwiftPM 6.3 once died of a
# segmentation fault here right after linking, in a build that passed unchanged when run again;
# a compile error or a failed link exits 1 and is never retried. Tests are never retried: they
# run after the build, with --skip-build.
build_retrying_a_tool_crash() {
    local log=$1 status=0
    shift
    swift build "$@" >>"$log" 2>&1 || status=$?
    if [[ $status -gt 128 ]]; then
        echo "   swift build was killed by signal $((status - 128)); building once more" >&2
        status=0
        swift build "$@" >>"$log" 2>&1 || status=$?
    fi
    return $status
}

# Runs `swift test` under a sanitizer; prints the test summary and any sanitizer report, and
# records the outcome (and the attack suites' results) in docs/SECURITY-TESTING.md.
run_tests() {
    local mode=$1 sanitizer=$2 scratch=$3
    shift 3
    local whole_suite=false
    if [[ $# -eq 0 ]]; then
        whole_suite=true
        set -- "${default_skips[@]}"
    fi
    local log xunit status=0
    log=$(mktemp)
    xunit=$(mktemp -d)/results.xml
    echo "== sanitizers: swift test --sanitize=$sanitizer ${width_args[*]} $* (scratch ${scratch#"$repo"/})"
    local started=$SECONDS
    if ! build_retrying_a_tool_crash "$log" --build-tests --sanitize="$sanitizer" --scratch-path "$scratch"; then
        grep -E -B 2 -A 6 'error:' "$log" | head -n 60 >&2 || tail -n 30 "$log" >&2
        echo "error: the $mode build failed (log: $log)" >&2
        return 1
    fi
    swift test --skip-build --sanitize="$sanitizer" --scratch-path "$scratch" --xunit-output "$xunit" "${width_args[@]}" "$@" >>"$log" 2>&1 || status=$?
    local elapsed=$((SECONDS - started)) reports tests
    reports=$(grep -c -e '^==[0-9]*==ERROR: ' -e '^WARNING: ThreadSanitizer' "$log" || true)
    tests=$(grep -o -E 'Test run with [0-9]+ tests' "$log" | tail -n 1 | grep -o -E '[0-9]+' || echo "?")
    grep -E -e 'Test run with [0-9]+ tests' "$log" | tail -n 1 || true
    local result=clean
    [[ $reports -eq 0 ]] || result="$reports sanitizer reports"
    [[ $status -eq 0 ]] || result="FAILED (exit $status, $reports sanitizer reports)"
    local results_file=$xunit
    [[ -s ${xunit%.xml}-swift-testing.xml ]] && results_file=${xunit%.xml}-swift-testing.xml
    # A filtered run says nothing about the suite as a whole: only whole-suite runs are recorded.
    if $whole_suite; then
        python3 "$repo/scripts/security-testing-doc.py" sanitizer "$mode" "$result" "$elapsed" "$tests" "$results_file" \
            || echo "warning: docs/SECURITY-TESTING.md not updated (the results file could not be read)" >&2
    fi
    if [[ $status -ne 0 || $reports -ne 0 ]]; then
        echo "---- $mode: $result; the reports and failures:" >&2
        grep -E -A 40 -e '^==[0-9]*==ERROR: ' -e '^WARNING: ThreadSanitizer' "$log" | head -n 400 >&2 || true
        grep -E -e '✘' -e 'error:' "$log" | head -n 60 >&2 || true
        echo "---- full log kept in $log" >&2
        return 1
    fi
    rm -f "$log"
    echo "   clean in $elapsed s"
}

# Starts `openssl s_server` for the leak check; sets server_pid, server_port, pki.
start_server() {
    pki=$(mktemp -d)
    openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$pki/root.key" 2>/dev/null
    openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$pki/leaf.key" 2>/dev/null
    openssl req -new -x509 -key "$pki/root.key" -subj "/CN=ServerTrust Leaks Root" -days 2 \
        -addext "basicConstraints=critical,CA:true" -addext "keyUsage=critical,keyCertSign" -out "$pki/root.pem"
    openssl req -new -key "$pki/leaf.key" -subj "/CN=leaks.servertrust.test" -out "$pki/leaf.csr"
    printf 'basicConstraints=critical,CA:false\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\nsubjectAltName=DNS:leaks.servertrust.test\n' >"$pki/leaf.ext"
    openssl x509 -req -in "$pki/leaf.csr" -CA "$pki/root.pem" -CAkey "$pki/root.key" -CAcreateserial -days 2 \
        -extfile "$pki/leaf.ext" -out "$pki/leaf.pem" 2>/dev/null
    # -www answers each request and closes; no tickets, no cache: every request is a full handshake.
    openssl s_server -accept 127.0.0.1:0 -cert "$pki/leaf.pem" -key "$pki/leaf.key" -www -no_ticket -no_cache \
        >"$pki/server.log" 2>&1 </dev/null &
    server_pid=$!
    local tries
    for tries in $(seq 50); do
        server_port=$(sed -n 's/^ACCEPT .*:\([0-9]*\)$/\1/p' "$pki/server.log")
        [[ -n $server_port ]] && return 0
        sleep 0.1
    done
    echo "error: openssl s_server did not start: $(cat "$pki/server.log")" >&2
    exit 1
}

stop_server() {
    [[ -n ${server_pid:-} ]] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null || true
    [[ -n ${pki:-} ]] && rm -rf "$pki"
}

[[ $# -ge 1 ]] || usage
mode=$1
shift
case $mode in
asan)
    # LeakSanitizer runs at exit of the test process; the Swift runtime's and libcurl's
    # once-per-process allocations are suppressed (see the file for each reason).
    export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1:strict_string_checks=1:detect_stack_use_after_return=0:suppressions=$suppressions/asan.supp}
    export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$suppressions/lsan.supp:print_suppressions=0}
    run_tests asan address "$repo/.build-asan" "$@"
    ;;
tsan)
    export TSAN_OPTIONS=${TSAN_OPTIONS:-suppressions=$suppressions/tsan.supp:halt_on_error=0:second_deadlock_stack=1}
    run_tests tsan thread "$repo/.build-tsan" "$@"
    ;;
leaks)
    requests=${1:-1000}
    scratch=$repo/Leaks/.build-asan
    echo "== sanitizers: leak check, $requests handshakes under LeakSanitizer (scratch ${scratch#"$repo"/})"
    build_log=$(mktemp)
    if ! build_retrying_a_tool_crash "$build_log" -c debug --package-path Leaks --scratch-path "$scratch" --sanitize=address; then
        grep -E -B 2 -A 6 'error:' "$build_log" | head -n 60 >&2 || tail -n 30 "$build_log" >&2
        echo "error: the leak-check build failed (log: $build_log)" >&2
        exit 2
    fi
    tail -n 1 "$build_log"
    rm -f "$build_log"
    export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1:suppressions=$suppressions/asan.supp}
    export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$suppressions/lsan.supp:print_suppressions=0}
    trap stop_server EXIT
    start_server
    started=$SECONDS
    status=0
    "$scratch/debug/handshake-leaks" "$server_port" "$pki/root.pem" "$pki/leaf.pem" "$requests" 100 || status=$?
    if [[ $status -eq 0 ]]; then
        result="no leak"
        echo "   no leak reported ($((SECONDS - started)) s)"
    else
        result="FAILED (exit $status)"
        echo "   FAILED: exit $status (leak report or wrong outcome above)" >&2
    fi
    python3 "$repo/scripts/security-testing-doc.py" sanitizer "$mode" "$result" "$((SECONDS - started))" "$requests + 100 + 100 requests"
    exit $status
    ;;
*)
    usage
    ;;
esac
