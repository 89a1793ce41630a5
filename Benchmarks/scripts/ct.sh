#!/usr/bin/env bash
# What enforcing Certificate Transparency adds to a full handshake (#45): ServerTrust with pins
# against pins + CT enforced (`--policy pins-ct`, the log list loaded once: a warm log store), on
# nginx.sh's CT port, whose leaf embeds SCTs from SERVERTRUST_BENCH_CT_SCTS test logs (default 2)
# of distinct operators, so the only difference between the two is CT.
#
#   Benchmarks/scripts/ct.sh [RUNS] [SECONDS] [OUT-DIR]   (after `swift build -c release --product
#                                                          servertrust-bench` in Benchmarks/;
#                                                          defaults 12 runs of 2 s per sample)
#
# 1. Instructions per handshake under callgrind, as profile.sh: N1/N2 = 100/300 handshakes,
#    (I(N2) - I(N1)) / (N2 - N1), for both, and their ratio.
# 2. Throughput: RUNS interleaved runs of SECONDS per client, the order alternating from run to
#    run; a ratio is the median over runs of the per-run ratio (as keepalive.sh).
set -euo pipefail
shopt -s inherit_errexit
runs=${1:-12}
seconds=${2:-2}
# shellcheck source=callgrind-setup.sh
. "$(dirname "${BASH_SOURCE[0]}")/callgrind-setup.sh"
callgrind_setup ct.sh "${3:-$(dirname "${BASH_SOURCE[0]}")/../.build/ct}" servertrust-bench
url=https://localhost:$BENCH_CT_PORT/
common=(--cacert "$BENCH_ROOT" --pin "$BENCH_LEAF_PIN" --pin "$BENCH_INTERMEDIATE_PIN")
client() {  # pins|pins-ct
    case $1 in
        pins) echo --policy pins ;;
        pins-ct) echo --policy pins-ct --ct-log-list "$BENCH_CT_LOG_LIST" ;;
    esac
}

instructions() {  # NAME N CMD…: the total of CMD --requests N under callgrind
    local name=$1 count=$2 output
    shift 2
    output=$(valgrind --tool=callgrind --callgrind-out-file="$out/$name-$count.out" "$@" --requests "$count" 2>&1) || {
        echo "ct.sh: $name with --requests $count failed:" >&2
        grep -v '^==' <<<"$output" | tail -n 5 >&2
        return 1
    }
    awk '/Collected :/ { print $NF }' <<<"$output"
}
per_request() {  # NAME N1 N2 CMD…
    local name=$1 n1=$2 n2=$3 a b
    shift 3
    a=$(instructions "$name" "$n1" "$@")
    b=$(instructions "$name" "$n2" "$@")
    echo $(((b - a) / (n2 - n1)))
}

echo "Certificate Transparency, full handshakes, ${SERVERTRUST_BENCH_CT_SCTS:-2} embedded SCTs (OpenSSL $(openssl version | cut -d' ' -f2))"
# shellcheck disable=SC2046
pins=$(per_request ct-pins 100 300 "$out/servertrust-bench" handshake "$url" "${common[@]}" $(client pins))
# shellcheck disable=SC2046
ct=$(per_request ct-pins-ct 100 300 "$out/servertrust-bench" handshake "$url" "${common[@]}" $(client pins-ct))
printf '%-36s %12s\n' "instructions per handshake" ""
printf '%-36s %12s\n' "  pins" "$pins" "  pins + CT enforced" "$ct"
printf '%-36s %12s  (%s %%)\n' "  added by CT" "$((ct - pins))" "$(awk -v a="$ct" -v b="$pins" 'BEGIN { printf "%+.2f", (a / b - 1) * 100 }')"

: >"$out/results"
for run in $(seq "$runs"); do
    echo "run $run of $runs" >&2
    order=(pins pins-ct)
    [ $((run % 2)) = 0 ] && order=(pins-ct pins)
    for name in "${order[@]}"; do
        # shellcheck disable=SC2046
        "$out/servertrust-bench" handshake "$url" "${common[@]}" $(client "$name") --seconds "$seconds" \
            | awk -v c="$name" -v r="$run" 'NF == 2 { print c, r, $1, $2 }' >>"$out/results"
    done
done
median() { sort -g | awk '{ a[NR] = $1 } END { if (NR == 0) print "NA"; else if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
ratio() {  # KEY: median over runs of pins-ct's KEY ÷ pins'
    awk -v k="$1" '$3 == k && $1 == "pins-ct" { A[$2] = $4 } $3 == k && $1 == "pins" { B[$2] = $4 }
        END { for (r in A) if ((r in B) && B[r] > 0) print A[r] / B[r] }' "$out/results" | median
}
value() { awk -v c="$1" -v k="$2" '$1 == c && $3 == k { print $4 }' "$out/results" | median; }
echo "throughput, $runs interleaved runs of ${seconds}s, load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-22s %12s %12s\n' client "handshakes/s" "CPU µs/hs"
for name in pins pins-ct; do printf '%-22s %12.0f %12.1f\n' "$name" "$(value "$name" rate)" "$(value "$name" cpu_us)"; done
printf 'pins-ct ÷ pins: rate %.3f, CPU %.3f (medians of per-run ratios)\n' "$(ratio rate)" "$(ratio cpu_us)"
echo "callgrind files: $out"
