#!/usr/bin/env bash
# Retains and releases per kept-alive request, by the function that makes them: ServerTrust
# from Session.taskExecutor beside the async floor (async-floor, the least an async Swift client
# over this libcurl does), both under callgrind. The instruction counts say how much a request
# costs; this says which layer hands which value on (docs/PERFORMANCE-HISTORY.md, ninth round).
#
#   Benchmarks/scripts/refcounts.sh [OUT-DIR]     (after `swift build -c release` in Benchmarks/)
#
# Each client runs 1000 and then 3000 requests under callgrind with per-instruction call sites;
# refcounts.py counts the calls to swift_retain / swift_release (and their variants) made from
# the client's own binary, per request. About half a minute.
set -euo pipefail
shopt -s inherit_errexit
# shellcheck source=callgrind-setup.sh
. "$(dirname "${BASH_SOURCE[0]}")/callgrind-setup.sh"
callgrind_setup refcounts.sh "${1:-$(dirname "${BASH_SOURCE[0]}")/../.build/refcounts}" servertrust-bench async-floor
h1=https://localhost:$BENCH_H1_PORT/

# profile NAME N CMD…: runs CMD --requests N under callgrind into OUT-DIR/NAME-N.out.
profile() {
    local name=$1 count=$2 output
    shift 2
    output=$(valgrind --tool=callgrind --dump-instr=yes --compress-strings=no --compress-pos=no \
        --callgrind-out-file="$out/$name-$count.out" "$@" --requests "$count" 2>&1) || {
        echo "refcounts.sh: $name with --requests $count failed:" >&2
        grep -v '^==' <<<"$output" | tail -n 5 >&2
        return 1
    }
}
# counts NAME BINARY ARGS…
counts() {
    local name=$1 binary=$2
    shift 2
    profile "$name" 1000 "$out/$binary" "$@"
    profile "$name" 3000 "$out/$binary" "$@"
    python3 "$here/scripts/refcounts.py" "/$binary" 1000 "$out/$name-1000.out" 3000 "$out/$name-3000.out"
}

echo "== ServerTrust, pins + staple, from Session.taskExecutor"
counts servertrust servertrust-bench keepalive "$h1" --cacert "$BENCH_ROOT" --policy pins-staple \
    --pin "$BENCH_LEAF_PIN" --pin "$BENCH_INTERMEDIATE_PIN" --executor loop
echo
echo "== async floor, from its loop's executor"
counts floor async-floor keepalive "$h1" --cacert "$BENCH_ROOT"
echo "callgrind files: $out"
