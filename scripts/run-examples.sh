#!/usr/bin/env bash
# Runs the example services as their READMEs say: the one ```sh block of each
# Examples/<Service>/README.md, exactly, in this shell (so its background jobs are ours), then
# checks what it printed, stops the service with SIGTERM and the upstream.
#
#   scripts/run-examples.sh [vapor|hummingbird ...]      (default: both; from any directory)
#
# Passes when, for each service: the curl printed the upstream's quote; /metrics showed the trust
# update applied (the exact lines below); after SIGTERM the service exited 0 and logged that its
# trust updates stopped; the upstream stopped. On a failure it prints the service's and the
# upstream's log tails and stops whatever it started. Never hangs: the README's curl bounds the
# start (120 tries, 10 s each at most) and each stop is waited for at most 60 s. The services are
# built by .ci/run's traits step (`swift test --enable-all-traits --scratch-path .build-traits`);
# run unbuilt, the first `swift run` builds them and may outlast curl's two minutes. Run it
# with the environment that build had: SwiftPM orders the traits' -D flags by a Set's iteration
# order, so without SWIFT_DETERMINISTIC_HASHING=1 (which .ci/run exports) each SwiftPM run may
# order them anew and recompile the package.
set -euo pipefail
cd "$(dirname "$0")/.."

work=$(mktemp -d /tmp/servertrust-examples.XXXXXX)
pids=()
log=""
stopped=""

cleanup() {
    local pid
    for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
}
trap cleanup EXIT

fail() {
    echo "run-examples: FAILED: $*" >&2
    for file in "$log" /tmp/servertrust-example-upstream.log; do
        [[ -n $file && -f $file ]] && { echo "--- last lines of $file" >&2; tail -n 30 "$file" >&2; }
    done
    exit 1
}

listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# Sends SIGTERM to PID (a job of this shell) and waits up to 60 s for it; sets `stopped` to its
# exit status, or to "still running after 60 s".
stop() {
    local pid=$1 i
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 600; i++)); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
        stopped="still running after 60 s"
        return
    fi
    stopped=0
    wait "$pid" || stopped=$?
}

run() {  # NAME: vapor or hummingbird
    local name=$1 port readme block out
    case $name in
        vapor) port=18080 readme=Examples/VaporService/README.md ;;
        hummingbird) port=18081 readme=Examples/HummingbirdService/README.md ;;
        *) echo "run-examples: unknown example $name (vapor, hummingbird)" >&2; exit 2 ;;
    esac
    log=/tmp/servertrust-example-$name.log
    block=$work/$name.sh
    out=$work/$name.out
    [[ $(grep -c '^```sh$' "$readme") == 1 ]] || fail "$readme: expected exactly one \`\`\`sh block"
    awk '/^```sh$/ { inside = 1; next } /^```$/ { inside = 0 } inside' "$readme" >"$block"
    for p in 19443 "$port"; do
        listening "$p" && fail "port $p is already in use on 127.0.0.1: stop what listens there first"
    done
    echo "== $name: $readme"
    local started=$SECONDS
    # The README's commands, exactly: their two background jobs (the upstream, the service)
    # become jobs of this shell.
    if ! source "$block" >"$out" 2>"$work/$name.err"; then
        pids=($(jobs -p))
        cat "$out" "$work/$name.err" >&2
        fail "$name: the README's commands failed"
    fi
    pids=($(jobs -p))
    [[ ${#pids[@]} == 2 ]] || fail "$name: expected two background jobs (the upstream, the service), found ${#pids[@]}"
    local upstream=${pids[0]} service=${pids[1]}
    echo "   answered after $((SECONDS - started)) s:"
    sed 's/^/   | /' "$out"

    grep -qxF '{"symbol": "STX", "price": "42.17", "currency": "EUR"}' "$out" || fail "$name: the curl did not print the upstream's quote"
    local line
    for line in \
        'servertrust_trust_updates_total{outcome="applied"} 1' \
        'servertrust_trust_update_generation 2.0' \
        'servertrust_trust_update_in_force{state="delivered"} 1.0' \
        'servertrust_trust_update_consecutive_failures 0.0'; do
        grep -qxF "$line" "$out" || fail "$name: /metrics lacks the line: $line"
    done
    grep -qE '^servertrust_trust_evaluations_total\{evaluator="PinSetTrustEvaluator",result="accepted"\} [1-9]' "$out" \
        || fail "$name: /metrics shows no accepted pinned evaluation"
    grep -q '^servertrust_trust_failures_total' "$out" && fail "$name: /metrics shows trust failures"

    stop "$service"
    [[ $stopped == 0 ]] || fail "$name: after SIGTERM the service's exit status: $stopped (not 0)"
    grep -qF 'Trust updates stopped (graceful shutdown)' "$log" || fail "$name: the service did not log that its trust updates stopped on the graceful shutdown"
    stop "$upstream"
    [[ $stopped == 0 ]] || fail "$name: after SIGTERM the upstream's exit status: $stopped (not 0)"
    pids=()
    echo "   SIGTERM: the service exited 0 and logged that trust updates stopped; the upstream stopped"
}

examples=("$@")
((${#examples[@]})) || examples=(vapor hummingbird)
for name in "${examples[@]}"; do run "$name"; done
rm -rf "$work"
echo "run-examples: ${#examples[@]} examples passed"
