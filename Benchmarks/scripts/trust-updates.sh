#!/usr/bin/env bash
# What trust updates (#35) cost a request, counted by callgrind as profile.sh counts (N1 and N2
# requests, (I(N2) - I(N1)) / (N2 - N1) instructions per request, process start-up cancelled):
#
#   kept-alive requests (pins + stapled OCSP, as profile.sh's row) with the trust manager
#     compiled in (Session(configuration:trustManager:)), from a LiveTrustManager replaced once
#     (generation 2: the policy "from an update", built the same way), and the latter with a
#     deny-list of 1,000 SPKI hashes + 100 issuer/serial entries; N1/N2 = 1000/3000;
#   full handshakes (a new connection per request, pins + stapled OCSP) with an empty deny-list
#     and with the 1,000 + 100 one: every evaluation checks the presented and the validated
#     chain against it; N1/N2 = 100/300.
#
#   Benchmarks/scripts/trust-updates.sh [OUT-DIR] [WALL-RUNS]   (after `swift build -c release`
#                                       in Benchmarks/; WALL-RUNS default 5, 0 for none)
#
# Then, as supporting evidence only, WALL-RUNS interleaved wall-clock runs of the same five
# workloads (1 s per sample, in an order that rotates from run to run): each ratio is the median
# over runs of the per-run ratio, as in run.sh and keepalive.sh. The .out files stay in OUT-DIR
# for `callgrind_annotate --inclusive=yes FILE | swift demangle`. servertrust-bench's options:
# --trust compiled|live, --deny-list K,C (Sources/servertrust-bench/TrustSources.swift).
set -euo pipefail
shopt -s inherit_errexit
# shellcheck source=callgrind-setup.sh
. "$(dirname "${BASH_SOURCE[0]}")/callgrind-setup.sh"
callgrind_setup trust-updates.sh "${1:-$(dirname "${BASH_SOURCE[0]}")/../.build/trust-updates}" servertrust-bench
wall_runs=${2:-5}
pins=(--pin "$BENCH_LEAF_PIN" --pin "$BENCH_INTERMEDIATE_PIN")
deny=(--deny-list 1000,100)

# instructions NAME N CMD…: runs CMD --requests N under callgrind, prints the total.
instructions() {
    local name=$1 count=$2 output
    shift 2
    output=$(valgrind --tool=callgrind --callgrind-out-file="$out/$name-$count.out" "$@" --requests "$count" 2>&1) || {
        echo "trust-updates.sh: $name with --requests $count failed:" >&2
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

h1=https://localhost:$BENCH_H1_PORT/
hs=https://localhost:$BENCH_HANDSHAKE_PORT/
st=("$out/servertrust-bench")
ka=(keepalive "$h1" --cacert "$BENCH_ROOT" --policy pins-staple "${pins[@]}")
handshake=(handshake "$hs" --cacert "$BENCH_ROOT" --policy pins-staple "${pins[@]}")
echo "instructions per request (callgrind; N1/N2 = 1000/3000 kept-alive requests, 100/300 handshakes)"
ka_compiled=$(per_request ka-compiled 1000 3000 "${st[@]}" "${ka[@]}" --trust compiled)
ka_live=$(per_request ka-live 1000 3000 "${st[@]}" "${ka[@]}" --trust live)
ka_live_deny=$(per_request ka-live-deny 1000 3000 "${st[@]}" "${ka[@]}" --trust live "${deny[@]}")
hs_empty=$(per_request hs-deny-empty 100 300 "${st[@]}" "${handshake[@]}")
hs_full=$(per_request hs-deny-full 100 300 "${st[@]}" "${handshake[@]}" "${deny[@]}")
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.4f", a / b }'; }
row() { printf '%-58s %12s %8s\n' "$1" "$2" "$(ratio "$2" "$3")"; }
printf '%-58s %12s %8s\n' workload instructions ratio
row "kept-alive, compiled-in manager" "$ka_compiled" "$ka_compiled"
row "kept-alive, live manager, generation 2 (÷ compiled-in)" "$ka_live" "$ka_compiled"
row "  + deny-list 1,000 SPKI + 100 issuer/serial (÷ compiled)" "$ka_live_deny" "$ka_compiled"
row "handshake, empty deny-list" "$hs_empty" "$hs_empty"
row "handshake, deny-list 1,000 + 100 (÷ empty)" "$hs_full" "$hs_empty"
printf '%-58s %12s\n' "  instructions the deny-list adds per handshake" "$((hs_full - hs_empty))"
echo "callgrind files: $out"

[ "$wall_runs" -gt 0 ] || exit 0
timing=(--seconds 1 --warmup 0.2)
sample() {  # NAME RUN: appends `NAME RUN KEY VALUE` for each line the client prints
    case $1 in
        ka-compiled) "${st[@]}" "${ka[@]}" --trust compiled "${timing[@]}" ;;
        ka-live) "${st[@]}" "${ka[@]}" --trust live "${timing[@]}" ;;
        ka-live-deny) "${st[@]}" "${ka[@]}" --trust live "${deny[@]}" "${timing[@]}" ;;
        hs-empty) "${st[@]}" "${handshake[@]}" "${timing[@]}" ;;
        hs-full) "${st[@]}" "${handshake[@]}" "${deny[@]}" "${timing[@]}" ;;
    esac | awk -v c="$1" -v r="$2" 'NF == 2 { print c, r, $1, $2 }' >>"$out/wall.txt"
}
clients=(ka-compiled ka-live ka-live-deny hs-empty hs-full)
: >"$out/wall.txt"
for run in $(seq "$wall_runs"); do
    for index in 0 1 2 3 4; do sample "${clients[$(((index + run) % 5))]}" "$run"; done
done
median() { sort -g | awk '{ a[NR] = $1 } END { if (NR == 0) print "NA"; else if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
wall_ratio() {  # A B KEY: median over runs of A's KEY ÷ B's
    awk -v a="$1" -v b="$2" -v k="$3" '$3 == k && $1 == a { A[$2] = $4 } $3 == k && $1 == b { B[$2] = $4 }
        END { for (r in A) if ((r in B) && B[r] > 0) print A[r] / B[r] }' "$out/wall.txt" | median
}
value() { awk -v c="$1" -v k="$2" '$1 == c && $3 == k { print $4 }' "$out/wall.txt" | median; }
echo "wall clock (supporting), $wall_runs interleaved runs of 1 s, load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-14s %9s %12s %16s\n' workload "req/s" "CPU µs/req" "CPU ÷ baseline"
for client in "${clients[@]}"; do
    case $client in ka-*) base=ka-compiled ;; *) base=hs-empty ;; esac
    printf '%-14s %9.0f %12.1f %16.3f\n' "$client" "$(value "$client" rate)" "$(value "$client" cpu_us)" \
        "$(wall_ratio "$client" "$base" cpu_us)"
done
