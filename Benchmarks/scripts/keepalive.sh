#!/usr/bin/env bash
# The kept-alive group alone, with more runs than run.sh gives it: raw libcurl, ServerTrust from
# the global executor and from Session.taskExecutor, and the async floor from each executor, in
# an order that rotates from run to run. A ratio is the median over runs of the per-run ratio,
# as in run.sh; on a machine whose load moves, a dozen runs give a steadier median than five.
#
#   Benchmarks/scripts/keepalive.sh [RUNS] [SECONDS]   (after `swift build -c release` in Benchmarks/;
#                                                      defaults 12 runs of 2 s per sample)
set -euo pipefail
runs=${1:-12}
seconds=${2:-2}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin="$here/.build/release"
for binary in libcurl-bench servertrust-bench async-floor; do
    [ -x "$bin/$binary" ] || { echo "keepalive.sh: $bin/$binary is missing (swift build -c release in Benchmarks/)" >&2; exit 1; }
done
out=$(mktemp -d /tmp/keepalive.XXXXXX)
trap '"$here/nginx.sh" stop "$out/nginx" >/dev/null 2>&1 || true; rm -rf "$out"' EXIT
"$here/nginx.sh" start "$out/nginx" >/dev/null
# shellcheck disable=SC1091
. "$out/nginx/bench.env"
url=https://localhost:$BENCH_H1_PORT/
pins=(--pin "$BENCH_LEAF_PIN" --pin "$BENCH_INTERMEDIATE_PIN")
timing=(--seconds "$seconds")
sample() {  # CLIENT RUN: appends `CLIENT RUN KEY VALUE` for each line the client prints
    case $1 in
        libcurl) "$bin/libcurl-bench" keepalive "$url" --cacert "$BENCH_ROOT" "${timing[@]}" ;;
        st) "$bin/servertrust-bench" keepalive "$url" --cacert "$BENCH_ROOT" --policy pins-staple "${pins[@]}" "${timing[@]}" ;;
        st-loop) "$bin/servertrust-bench" keepalive "$url" --cacert "$BENCH_ROOT" --policy pins-staple "${pins[@]}" --executor loop "${timing[@]}" ;;
        floor) "$bin/async-floor" keepalive "$url" --cacert "$BENCH_ROOT" "${timing[@]}" ;;
        floor-global) "$bin/async-floor" keepalive "$url" --cacert "$BENCH_ROOT" --executor global "${timing[@]}" ;;
    esac | awk -v c="$1" -v r="$2" 'NF == 2 { print c, r, $1, $2 }' >>"$out/results"
}
clients=(libcurl st st-loop floor floor-global)
: >"$out/results"
for run in $(seq "$runs"); do
    echo "run $run of $runs" >&2
    for index in 0 1 2 3 4; do sample "${clients[$(((index + run) % 5))]}" "$run"; done
done
median() { sort -g | awk '{ a[NR] = $1 } END { if (NR == 0) print "NA"; else if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
ratio() {  # A B KEY: median over runs of A's KEY ÷ B's
    awk -v a="$1" -v b="$2" -v k="$3" '$3 == k && $1 == a { A[$2] = $4 } $3 == k && $1 == b { B[$2] = $4 }
        END { for (r in A) if ((r in B) && B[r] > 0) print A[r] / B[r] }' "$out/results" | median
}
value() { awk -v c="$1" -v k="$2" '$1 == c && $3 == k { print $4 }' "$out/results" | median; }
echo "kept-alive, $runs interleaved runs of ${seconds}s, load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-14s %9s %9s %12s %9s\n' client "req/s" "÷libcurl" "CPU µs/req" "÷libcurl"
for client in "${clients[@]}"; do
    printf '%-14s %9.0f %9.2f %12.1f %9.2f\n' "$client" "$(value "$client" rate)" "$(ratio "$client" libcurl rate)" \
        "$(value "$client" cpu_us)" "$(ratio "$client" libcurl cpu_us)"
done
printf 'ServerTrust ÷ its floor, global executor: rate %.2f, CPU %.2f\n' "$(ratio st floor-global rate)" "$(ratio st floor-global cpu_us)"
printf 'ServerTrust ÷ its floor, taskExecutor:    rate %.2f, CPU %.2f\n' "$(ratio st-loop floor rate)" "$(ratio st-loop floor cpu_us)"
