#!/usr/bin/env bash
# Instructions per request, ServerTrust against raw libcurl, counted by valgrind's callgrind:
# repeatable whatever else the machine is doing (perf counters are not available here).
#
#   Benchmarks/scripts/profile.sh [OUT-DIR]     (after `swift build -c release` in Benchmarks/)
#
# Each client runs N1 and then N2 sequential requests under callgrind; (I(N2) - I(N1)) / (N2 - N1)
# is the cost of one request without process start-up. Workloads: full handshakes (raw libcurl,
# AsyncHTTPClient, ServerTrust default, pins + stapled OCSP, and pins with and without live
# OCSP from a warm cache on the port that staples nothing), kept-alive requests (with
# async-floor: the least an async Swift client over this libcurl costs), and 64 requests
# in flight over HTTP/1.1 (64 connections) and HTTP/2 (one connection; N1/N2 = 1000/3000),
# with async-floor's 64-in-flight mode beside them. The .out
# files stay in OUT-DIR for `callgrind_annotate --inclusive=yes FILE | swift demangle`.
#
# valgrind 3.19 cannot read the DWARF 5 that Swift 6.3 writes, so the binaries are profiled from
# stripped copies (symbols stay, line numbers go; callgrind-setup.sh).
set -euo pipefail
# A client that fails (exit status ≠ 0) stops the script: without this, the failure inside
# `$(per_request …)` went unnoticed and its row read as a few instructions per request.
shopt -s inherit_errexit
# shellcheck source=callgrind-setup.sh
. "$(dirname "${BASH_SOURCE[0]}")/callgrind-setup.sh"
callgrind_setup profile.sh "${1:-$(dirname "${BASH_SOURCE[0]}")/../.build/profile}" libcurl-bench servertrust-bench ahc-bench async-floor
pins=(--pin "$BENCH_LEAF_PIN" --pin "$BENCH_INTERMEDIATE_PIN")

# instructions NAME N CMD…: runs CMD --requests N under callgrind, prints the total.
instructions() {
    local name=$1 count=$2 output
    shift 2
    output=$(valgrind --tool=callgrind --callgrind-out-file="$out/$name-$count.out" "$@" --requests "$count" 2>&1) || {
        echo "profile.sh: $name with --requests $count failed:" >&2
        grep -v '^==' <<<"$output" | tail -n 5 >&2
        return 1
    }
    awk '/Collected :/ { print $NF }' <<<"$output"
}
# per_request NAME N1 N2 CMD…
per_request() {
    local name=$1 n1=$2 n2=$3 a b
    shift 3
    a=$(instructions "$name" "$n1" "$@")
    b=$(instructions "$name" "$n2" "$@")
    echo $(((b - a) / (n2 - n1)))
}

hs=https://localhost:$BENCH_HANDSHAKE_PORT/
h1=https://localhost:$BENCH_H1_PORT/
echo "instructions per request (callgrind; N1/N2 = 100/300 handshakes, 1000/3000 kept-alive requests)"
lc_hs=$(per_request lc-handshake 100 300 "$out/libcurl-bench" handshake "$hs" --cacert "$BENCH_ROOT")
st_hs=$(per_request st-handshake-default 100 300 "$out/servertrust-bench" handshake "$hs" --cacert "$BENCH_ROOT" --policy default)
st_full=$(per_request st-handshake-full 100 300 "$out/servertrust-bench" handshake "$hs" --cacert "$BENCH_ROOT" --policy pins-staple "${pins[@]}")
ahc_hs=$(per_request ahc-handshake 100 300 "$out/ahc-bench" handshake "$hs" --cacert "$BENCH_ROOT")
nostaple=https://localhost:$BENCH_HANDSHAKE_NO_STAPLE_PORT/
st_pins=$(per_request st-handshake-pins 100 300 "$out/servertrust-bench" handshake "$nostaple" --cacert "$BENCH_ROOT" --policy pins "${pins[@]}")
st_warm=$(per_request st-handshake-ocsp-warm 100 300 "$out/servertrust-bench" handshake "$nostaple" --cacert "$BENCH_ROOT" --policy pins-ocsp-warm "${pins[@]}")
lc_ka=$(per_request lc-keepalive 1000 3000 "$out/libcurl-bench" keepalive "$h1" --cacert "$BENCH_ROOT")
st_ka=$(per_request st-keepalive 1000 3000 "$out/servertrust-bench" keepalive "$h1" --cacert "$BENCH_ROOT" --policy pins-staple "${pins[@]}")
st_ka_loop=$(per_request st-keepalive-loop 1000 3000 "$out/servertrust-bench" keepalive "$h1" --cacert "$BENCH_ROOT" --policy pins-staple "${pins[@]}" --executor loop)
floor_ka=$(per_request async-floor-keepalive 1000 3000 "$out/async-floor" keepalive "$h1" --cacert "$BENCH_ROOT")
floor_ka_global=$(per_request async-floor-keepalive-global 1000 3000 "$out/async-floor" keepalive "$h1" --cacert "$BENCH_ROOT" --executor global)
h2=https://localhost:$BENCH_H2_PORT/
lc_m1=$(per_request lc-multi-h1 1000 3000 "$out/libcurl-bench" multi "$h1" --cacert "$BENCH_ROOT" --inflight 64)
st_m1=$(per_request st-multi-h1 1000 3000 "$out/servertrust-bench" multi "$h1" --cacert "$BENCH_ROOT" --inflight 64 --policy pins-staple "${pins[@]}")
st_m1_loop=$(per_request st-multi-h1-loop 1000 3000 "$out/servertrust-bench" multi "$h1" --cacert "$BENCH_ROOT" --inflight 64 --policy pins-staple "${pins[@]}" --executor loop)
floor_m1=$(per_request async-floor-multi-h1 1000 3000 "$out/async-floor" multi "$h1" --cacert "$BENCH_ROOT" --inflight 64)
floor_m1_global=$(per_request async-floor-multi-h1-global 1000 3000 "$out/async-floor" multi "$h1" --cacert "$BENCH_ROOT" --inflight 64 --executor global)
lc_m2=$(per_request lc-multi-h2 1000 3000 "$out/libcurl-bench" multi "$h2" --cacert "$BENCH_ROOT" --inflight 64 --http2)
st_m2=$(per_request st-multi-h2 1000 3000 "$out/servertrust-bench" multi "$h2" --cacert "$BENCH_ROOT" --inflight 64 --http2 --policy pins-staple "${pins[@]}")
floor_m2=$(per_request async-floor-multi-h2 1000 3000 "$out/async-floor" multi "$h2" --cacert "$BENCH_ROOT" --inflight 64 --http2)
floor_m2_global=$(per_request async-floor-multi-h2-global 1000 3000 "$out/async-floor" multi "$h2" --cacert "$BENCH_ROOT" --inflight 64 --http2 --executor global)
st_m2_loop=$(per_request st-multi-h2-loop 1000 3000 "$out/servertrust-bench" multi "$h2" --cacert "$BENCH_ROOT" --inflight 64 --http2 --policy pins-staple "${pins[@]}" --executor loop)
row() { printf '%-44s %12s %8s\n' "$1" "$2" "$(awk -v a="$2" -v b="$3" 'BEGIN { printf "%.2f", a / b }')"; }
printf '%-44s %12s %8s\n' workload instructions ÷libcurl
row "full handshake, raw libcurl" "$lc_hs" "$lc_hs"
row "full handshake, ServerTrust default" "$st_hs" "$lc_hs"
row "full handshake, ServerTrust pins + staple" "$st_full" "$lc_hs"
row "full handshake, AsyncHTTPClient" "$ahc_hs" "$lc_hs"
row "full handshake, ServerTrust pins, no staple" "$st_pins" "$lc_hs"
row "  + live OCSP from a warm cache" "$st_warm" "$lc_hs"
printf '%-44s %21s\n' "  warm OCSP cache ÷ pins alone" "$(awk -v a="$st_warm" -v b="$st_pins" 'BEGIN { printf "%.3f", a / b }')"
row "kept-alive request, raw libcurl" "$lc_ka" "$lc_ka"
row "kept-alive request, ServerTrust pins + staple" "$st_ka" "$lc_ka"
row "  … from Session.taskExecutor" "$st_ka_loop" "$lc_ka"
row "kept-alive, async floor (no ServerTrust)" "$floor_ka" "$lc_ka"
row "  … from the global executor" "$floor_ka_global" "$lc_ka"
row "64 in flight, HTTP/1.1, raw libcurl multi" "$lc_m1" "$lc_m1"
row "64 in flight, HTTP/1.1, ServerTrust" "$st_m1" "$lc_m1"
row "  … from Session.taskExecutor" "$st_m1_loop" "$lc_m1"
row "64 in flight, HTTP/1.1, async floor" "$floor_m1" "$lc_m1"
row "  … from the global executor" "$floor_m1_global" "$lc_m1"
row "64 in flight, HTTP/2, raw libcurl multi" "$lc_m2" "$lc_m2"
row "64 in flight, HTTP/2, ServerTrust" "$st_m2" "$lc_m2"
row "  … from Session.taskExecutor" "$st_m2_loop" "$lc_m2"
row "64 in flight, HTTP/2, async floor" "$floor_m2" "$lc_m2"
row "  … from the global executor" "$floor_m2_global" "$lc_m2"
echo "callgrind files: $out"
