#!/usr/bin/env bash
# ServerTrust's benchmarks side by side with raw libcurl, curl's CURLOPT_PINNEDPUBLICKEY,
# FoundationNetworking's URLSession and AsyncHTTPClient, against one local nginx (nginx.sh).
#
#   Benchmarks/run.sh            build, then every workload, 5 runs, A/B interleaved: a table of
#                                medians and ratios against raw libcurl, then the ratio lines
#   Benchmarks/run.sh --quick    3 shorter runs, fewer memory workloads, no micro-benchmarks;
#                                under three minutes on two cores once built; prints
#                                `ratio NAME VALUE` lines
#   options: --runs N  --seconds S (measured per sample)  --skip-build
#
# Table: per workload, requests/s and the client process's CPU time per request (all threads),
# each also as a ratio to the group's base (raw libcurl, or pins without revocation).
#
# Interleaving: every run measures each group's clients one after the other (in an order that
# rotates from run to run), so the two sides of a ratio are seconds apart and see the same
# machine load. A ratio is the median over runs of the per-run ratio; a median is over runs.
# Absolute numbers move with whatever else the machine does; ratios much less.
#
# The URLSession workloads, and the "system CA bundle" ones, run in a private mount namespace
# (unshare -m, root needed) with a bundle bind-mounted over /etc/ssl/certs/ca-certificates.crt:
# FoundationNetworking has no API for anchors. Without unshare they are skipped.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
quick=0 runs=5 seconds=2 warmup=0.5 build=1
while [ $# -gt 0 ]; do
    case $1 in
        --quick) quick=1 runs=3 seconds=0.5 warmup=0.15 ;;
        --runs) runs=${2:?}; shift ;;
        --seconds) seconds=${2:?}; shift ;;
        --skip-build) build=0 ;;
        -h | --help) sed -n '2,22p' "$0"; exit 0 ;;
        *) echo "run.sh: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done

cd "$here"
work="$here/.build/bench-run"
data="$here/.build/bench-data"
[ -d "$work" ] && "$here/nginx.sh" stop "$work" >/dev/null 2>&1  # left by an interrupted run
rm -rf "$work"
mkdir -p "$work" "$data"
log="$work/log.txt"
: >"$log"
started=$(date +%s)
if [ $build = 1 ]; then
    echo "building (swift build -c release)…" >&2
    swift build -c release >>"$log" 2>&1 || { tail -40 "$log" >&2; echo "run.sh: build failed; see $log" >&2; exit 1; }
fi
bin=$(swift build -c release --show-bin-path)

cleanup() { "$here/nginx.sh" stop "$work" >/dev/null 2>&1 || true; }
trap cleanup EXIT
trap 'exit 130' INT TERM
"$here/nginx.sh" start "$work" >>"$log" 2>&1 || { tail -20 "$log" >&2; exit 1; }
# shellcheck disable=SC1091
. "$work/bench.env"

# A host name, as applications use (the leaf's SAN has localhost): no DNS server involved.
hs=https://localhost:$BENCH_HANDSHAKE_PORT/
hs_nostaple=https://localhost:$BENCH_HANDSHAKE_NO_STAPLE_PORT/
h1=https://localhost:$BENCH_H1_PORT/
h2=https://localhost:$BENCH_H2_PORT/
root=$BENCH_ROOT
curl_pin="sha256//${BENCH_LEAF_PIN#sha256/}"
pins=(--pin "$BENCH_LEAF_PIN" --pin "$BENCH_INTERMEDIATE_PIN")
timing=(--seconds "$seconds" --warmup "$warmup")
multi=(--inflight 64 --connections 64)

namespaces=1
unshare -m true 2>/dev/null || { namespaces=0; echo "run.sh: unshare -m unavailable: URLSession and system-bundle workloads skipped" >&2; }
# with_bundle FILE CMD…: CMD in a private mount namespace where FILE is the system CA bundle.
with_bundle() {
    unshare -m sh -c 'mount --bind "$0" /etc/ssl/certs/ca-certificates.crt && exec "$@"' "$@"
}

# One sample of one workload: its command. Every client gets the same URL and settings.
command_for() {
    local st="$bin/servertrust-bench" lc="$bin/libcurl-bench" ahc="$bin/ahc-bench" us="$bin/urlsession-bench"
    case $1 in
        hs.libcurl) "$lc" handshake "$hs" --cacert "$root" "${timing[@]}" ;;
        hs.libcurl-pinned) "$lc" handshake "$hs" --cacert "$root" --pin "$curl_pin" "${timing[@]}" ;;
        hs.st-default) "$st" handshake "$hs" --cacert "$root" --policy default "${timing[@]}" ;;
        hs.st-pins) "$st" handshake "$hs" --cacert "$root" --policy pins "${pins[@]}" "${timing[@]}" ;;
        hs.st-full) "$st" handshake "$hs" --cacert "$root" --policy pins-staple "${pins[@]}" "${timing[@]}" ;;
        hs.urlsession) with_bundle "$root" "$us" handshake "$hs" "${timing[@]}" ;;
        hs.ahc) "$ahc" handshake "$hs" --cacert "$root" "${timing[@]}" ;;
        sys.libcurl) with_bundle "$BENCH_SYSTEM_PLUS_ROOT" "$lc" handshake "$hs" "${timing[@]}" ;;
        sys.st-default) with_bundle "$BENCH_SYSTEM_PLUS_ROOT" "$st" handshake "$hs" --policy default "${timing[@]}" ;;
        sys.st-full) with_bundle "$BENCH_SYSTEM_PLUS_ROOT" "$st" handshake "$hs" --policy pins-staple "${pins[@]}" "${timing[@]}" ;;
        sys.ahc) with_bundle "$BENCH_SYSTEM_PLUS_ROOT" "$ahc" handshake "$hs" "${timing[@]}" ;;
        ka.libcurl) "$lc" keepalive "$h1" --cacert "$root" "${timing[@]}" ;;
        ka.st) "$st" keepalive "$h1" --cacert "$root" --policy pins-staple "${pins[@]}" "${timing[@]}" ;;
        ka.st-loop) "$st" keepalive "$h1" --cacert "$root" --policy pins-staple "${pins[@]}" --executor loop "${timing[@]}" ;;
        ka.urlsession) with_bundle "$root" "$us" keepalive "$h1" "${timing[@]}" ;;
        ka.ahc) "$ahc" keepalive "$h1" --cacert "$root" "${timing[@]}" ;;
        ka.floor) "$bin/async-floor" keepalive "$h1" --cacert "$root" "${timing[@]}" ;;
        ka.floor-global) "$bin/async-floor" keepalive "$h1" --cacert "$root" --executor global "${timing[@]}" ;;
        h1.libcurl) "$lc" multi "$h1" --cacert "$root" "${multi[@]}" "${timing[@]}" ;;
        h1.st) "$st" multi "$h1" --cacert "$root" --policy pins-staple "${pins[@]}" "${multi[@]}" "${timing[@]}" ;;
        h1.st-loop) "$st" multi "$h1" --cacert "$root" --policy pins-staple "${pins[@]}" "${multi[@]}" --executor loop "${timing[@]}" ;;
        h1.urlsession) with_bundle "$root" "$us" multi "$h1" "${multi[@]}" "${timing[@]}" ;;
        h1.ahc) "$ahc" multi "$h1" --cacert "$root" "${multi[@]}" "${timing[@]}" ;;
        h1.floor) "$bin/async-floor" multi "$h1" --cacert "$root" "${multi[@]}" "${timing[@]}" ;;
        h1.floor-global) "$bin/async-floor" multi "$h1" --cacert "$root" "${multi[@]}" --executor global "${timing[@]}" ;;
        h2.libcurl) "$lc" multi "$h2" --cacert "$root" --http2 "${multi[@]}" "${timing[@]}" ;;
        h2.st) "$st" multi "$h2" --cacert "$root" --http2 --policy pins-staple "${pins[@]}" "${multi[@]}" "${timing[@]}" ;;
        h2.st-loop) "$st" multi "$h2" --cacert "$root" --http2 --policy pins-staple "${pins[@]}" "${multi[@]}" --executor loop "${timing[@]}" ;;
        h2.urlsession) with_bundle "$root" "$us" multi "$h2" --http2 "${multi[@]}" "${timing[@]}" ;;
        h2.ahc) "$ahc" multi "$h2" --cacert "$root" --http2 "${multi[@]}" "${timing[@]}" ;;
        h2.floor) "$bin/async-floor" multi "$h2" --cacert "$root" --http2 "${multi[@]}" "${timing[@]}" ;;
        h2.floor-global) "$bin/async-floor" multi "$h2" --cacert "$root" --http2 "${multi[@]}" --executor global "${timing[@]}" ;;
        ocsp.st-pins) "$st" handshake "$hs_nostaple" --cacert "$root" --policy pins "${pins[@]}" "${timing[@]}" ;;
        ocsp.st-warm) "$st" handshake "$hs_nostaple" --cacert "$root" --policy pins-ocsp-warm "${pins[@]}" "${timing[@]}" ;;
        ocsp.st-cold) "$st" handshake "$hs_nostaple" --cacert "$root" --policy pins-ocsp-cold "${pins[@]}" "${timing[@]}" ;;
        mem.libcurl) "$lc" memory "$h1" --cacert "$root" --counts 10000,50000 ;;
        mem.st) "$st" memory "$h1" --cacert "$root" --policy pins-staple "${pins[@]}" --counts 10000,50000 ;;
        mem.ahc) "$ahc" memory "$h1" --cacert "$root" --counts 10000,50000 ;;
        mem.urlsession) with_bundle "$root" "$us" memory "$h1" --counts 10000,50000 ;;
        memhs.st) "$st" memory "$hs" --cacert "$root" --policy pins-staple "${pins[@]}" --counts 1000,5000 ;;
        memhs.libcurl) "$lc" memory "$hs" --cacert "$root" --counts 1000,5000 ;;
        *) echo "run.sh: no workload $1" >&2; return 2 ;;
    esac
}

results="$work/results.txt"
: >"$results"
# sample NAME RUN: runs the workload once and appends `NAME.KEY RUN VALUE` for each line it prints.
sample() {
    local name=$1 run=$2 output
    case $name in *urlsession* | sys.*) [ $namespaces = 1 ] || return 0 ;; esac
    if output=$(command_for "$name" 2>>"$log"); then
        echo "$output" | awk -v n="$name" -v r="$run" 'NF == 2 { print n "." $1, r, $2 }' >>"$results"
    else
        echo "run.sh: $name failed in run $run (see $log)" >&2
        echo "--- $name run $run failed" >>"$log"
    fi
}

groups=(
    "hs.libcurl hs.libcurl-pinned hs.st-default hs.st-pins hs.st-full hs.urlsession hs.ahc"
    "sys.libcurl sys.st-default sys.st-full sys.ahc"
    "ka.libcurl ka.st ka.st-loop ka.urlsession ka.ahc ka.floor ka.floor-global"
    "h1.libcurl h1.st h1.st-loop h1.urlsession h1.ahc h1.floor h1.floor-global"
    "h2.libcurl h2.st h2.st-loop h2.urlsession h2.ahc h2.floor h2.floor-global"
    "ocsp.st-pins ocsp.st-warm ocsp.st-cold"
)
[ $quick = 1 ] && groups[1]="sys.st-full sys.ahc"
for run in $(seq "$runs"); do
    echo "run $run of $runs… ($(($(date +%s) - started))s)" >&2
    for group in "${groups[@]}"; do
        read -r -a members <<<"$group"
        count=${#members[@]}
        for index in $(seq 0 $((count - 1))); do
            sample "${members[$(((index + run - 1) % count))]}" "$run"
        done
    done
done

echo "memory… ($(($(date +%s) - started))s)" >&2
memory=(mem.libcurl mem.st)
[ $quick = 0 ] && memory+=(mem.ahc mem.urlsession memhs.libcurl memhs.st)
for name in "${memory[@]}"; do sample "$name" 1; done

echo "CRLs… ($(($(date +%s) - started))s)" >&2
crl_sizes="1000 100000 1000000"
"$here/scripts/make-crls.sh" "$data/crl" $crl_sizes >>"$log" 2>&1 || echo "run.sh: CRL generation failed (see $log)" >&2
crl_seconds=$([ $quick = 1 ] && echo 0.5 || echo 2)
sample_crl() { "$bin/servertrust-bench" crl - --crl-dir "$data/crl" --sizes "${crl_sizes// /,}" --seconds "$crl_seconds"; }
if output=$(sample_crl 2>>"$log"); then
    echo "$output" | awk 'NF == 2 { print "crl." $1, 1, $2 }' >>"$results"
else
    echo "run.sh: CRL workload failed (see $log)" >&2
fi

echo "manager lookups… ($(($(date +%s) - started))s)" >&2
if output=$("$bin/servertrust-bench" lookup - --seconds "$crl_seconds" 2>>"$log"); then
    echo "$output" | awk 'NF == 2 { print "lookup." $1, 1, $2 }' >>"$results"
else
    echo "run.sh: lookup workload failed (see $log)" >&2
fi

[ $quick = 0 ] && echo "micro-benchmarks… ($(($(date +%s) - started))s)" >&2
micro="$work/micro.txt"
# The benchmark executable runs on its own and prints each benchmark's histograms ("Debug
# results for NAME:", then "Time (wall clock):" rows of value, percentile, …): keep the p50,
# in ns per operation. `swift package benchmark --target ServerTrustMicro` prints the same
# benchmarks as a table, but first rebuilds its tools, which costs a --quick run a minute.
if [ $quick = 1 ]; then
    : # the lookup ratios above are what --quick reports; the micro-benchmarks take a minute
elif "$bin/ServerTrustMicro" >"$work/micro-raw.txt" 2>>"$log"; then
    awk '
        /^Debug results for / { name = substr($0, 19); sub(/:$/, "", name); section = ""; next }
        /^[A-Za-z].*:$/ { section = $0; done = 0; next }
        section == "Time (wall clock):" && !done && $2 + 0 >= 0.5 { print name ": " $1 " ns"; done = 1 }
    ' "$work/micro-raw.txt" | sort >"$micro"
else
    echo "run.sh: micro-benchmarks failed (see $log)" >&2
fi

# ---------------------------------------------------------------------------------------------
median() { sort -g | awk '{ a[NR] = $1 } END { if (NR == 0) print "NA"; else if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
values() { awk -v n="$1" '$1 == n { print $3 }' "$results"; }
med() { values "$1" | median; }
# per-run ratio A/B, median over the runs that have both
ratio_of() {
    awk -v a="$1" -v b="$2" '$1 == a { A[$2] = $3 } $1 == b { B[$2] = $3 } END { for (r in A) if ((r in B) && B[r] > 0) print A[r] / B[r] }' "$results" | median
}
fmt() { [ "$1" = NA ] && echo NA || printf "%.${2:-2}f" "$1"; }

echo
echo "ServerTrust benchmarks — $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores ($(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)),"
echo "load average $(cut -d' ' -f1-3 /proc/loadavg), $runs runs of ${seconds}s per sample, $(curl --version | head -1 | cut -d' ' -f1-5)"
if [ $quick = 0 ]; then
    echo
    printf '%-34s %-28s %9s %9s %11s %9s   %s\n' workload client "req/s" "÷base" "CPU µs/req" "÷base" "req/s samples"
    row() {  # label client key baseline (keys NAME.rate, NAME.cpu_us)
        local m r c rc
        m=$(med "$3.rate")
        c=$(med "$3.cpu_us")
        r=$([ -n "${4:-}" ] && ratio_of "$3.rate" "$4.rate" || echo NA)
        rc=$([ -n "${4:-}" ] && ratio_of "$3.cpu_us" "$4.cpu_us" || echo NA)
        printf '%-34s %-28s %9s %9s %11s %9s   %s\n' "$1" "$2" "$(fmt "$m" 0)" "$(fmt "$r")" "$(fmt "$c" 0)" "$(fmt "$rc")" \
            "$(values "$3.rate" | xargs printf '%.0f ' 2>/dev/null)"
    }
    b=hs.libcurl
    row "full handshakes/s (test root)" "raw libcurl" $b $b
    row "" "curl PINNEDPUBLICKEY" hs.libcurl-pinned $b
    row "" "ServerTrust default" hs.st-default $b
    row "" "ServerTrust SPKI pins" hs.st-pins $b
    row "" "ServerTrust pins + staple" hs.st-full $b
    row "" "URLSession" hs.urlsession $b
    row "" "AsyncHTTPClient" hs.ahc $b
    b=sys.libcurl
    row "full handshakes/s (system bundle)" "raw libcurl (CAINFO+CAPATH)" $b $b
    row "" "ServerTrust default" sys.st-default $b
    row "" "ServerTrust pins + staple" sys.st-full $b
    row "" "AsyncHTTPClient" sys.ahc $b
    b=ka.libcurl
    row "kept-alive req/s, sequential" "raw libcurl" $b $b
    row "" "ServerTrust (async)" ka.st $b
    row "" "ServerTrust (async, taskExecutor)" ka.st-loop $b
    row "" "URLSession" ka.urlsession $b
    row "" "AsyncHTTPClient" ka.ahc $b
    row "" "async floor (no ServerTrust)" ka.floor $b
    row "" "async floor, global executor" ka.floor-global $b
    b=h1.libcurl
    row "req/s, 64 in flight, HTTP/1.1" "libcurl multi" $b $b
    row "" "ServerTrust" h1.st $b
    row "" "ServerTrust (taskExecutor)" h1.st-loop $b
    row "" "URLSession" h1.urlsession $b
    row "" "AsyncHTTPClient" h1.ahc $b
    row "" "async floor (no ServerTrust)" h1.floor $b
    row "" "async floor, global executor" h1.floor-global $b
    b=h2.libcurl
    row "req/s, 64 in flight, HTTP/2" "libcurl multi" $b $b
    row "" "ServerTrust" h2.st $b
    row "" "ServerTrust (taskExecutor)" h2.st-loop $b
    row "" "URLSession" h2.urlsession $b
    row "" "AsyncHTTPClient" h2.ahc $b
    row "" "async floor (no ServerTrust)" h2.floor $b
    row "" "async floor, global executor" h2.floor-global $b
    b=ocsp.st-pins
    row "full handshakes/s, no staple" "ServerTrust SPKI pins" $b $b
    row "" "+ live OCSP, warm cache" ocsp.st-warm $b
    row "" "+ live OCSP, cold cache" ocsp.st-cold $b
    echo "(base: the first row of each group; ratios are medians of per-run ratios)"
    echo
    printf '%-34s %-30s %14s %14s %14s\n' "memory (KiB)" client "peak@10k" "rss@10k" "rss@50k"
    for client in libcurl st ahc urlsession; do
        printf '%-34s %-30s %14s %14s %14s\n' "kept-alive requests" "$client" "$(med mem.$client.peak_rss_kb_after_10000)" \
            "$(med mem.$client.rss_kb_after_10000)" "$(med mem.$client.rss_kb_after_50000)"
    done
    for client in libcurl st; do
        printf '%-34s %-30s %14s %14s %14s\n' "full handshakes (@1k, @5k)" "$client" "$(med memhs.$client.peak_rss_kb_after_1000)" \
            "$(med memhs.$client.rss_kb_after_1000)" "$(med memhs.$client.rss_kb_after_5000)"
    done
    echo
    printf '%-34s %24s %24s\n' "CRLs (µs per handshake's check)" "TrustAnchors(revocation-" "RevocationTrustEvaluator"
    printf '%-34s %12s %11s %12s %11s\n' "entries" "load ms" "validation" "load ms" "evaluation"
    printf '%-34s %12s %11s %12s %11s\n' "none" "-" "$(med crl.validation_us_no_crl)" "-" "-"
    for size in $crl_sizes; do
        printf '%-34s %12s %11s %12s %11s\n' "$size" "$(med crl.crl_load_ms_$size)" "$(med crl.crl_validation_us_$size)" \
            "$(med crl.crl_evaluator_load_ms_$size)" "$(med crl.crl_evaluator_us_$size)"
    done
    printf '\n%-34s %10s %10s %10s\n' "manager lookup, ns (interleaved)" 10 1000 10000
    for kind in exact deep; do
        printf '%-34s %10s %10s %10s\n' "$kind" "$(med lookup.lookup_ns_${kind}_10)" "$(med lookup.lookup_ns_${kind}_1000)" "$(med lookup.lookup_ns_${kind}_10000)"
    done
    if [ -s "$micro" ]; then
        echo
        echo "micro-benchmarks (ordo-one/benchmark, wall clock p50):"
        sed 's/^/  /' "$micro"
    fi
    echo
fi

# One line per comparison: ratio NAME VALUE.
line() { echo "ratio $1 $(fmt "$2")"; }
r() { line "$1" "$(ratio_of "$2" "$3")"; }
r curl-pinned-handshake-vs-libcurl hs.libcurl-pinned.rate hs.libcurl.rate
r default-handshake-vs-libcurl hs.st-default.rate hs.libcurl.rate
r pinned-handshake-vs-libcurl hs.st-pins.rate hs.libcurl.rate
r full-handshake-vs-libcurl hs.st-full.rate hs.libcurl.rate
r full-handshake-vs-curl-pinned hs.st-full.rate hs.libcurl-pinned.rate
r full-handshake-vs-urlsession hs.st-full.rate hs.urlsession.rate
r full-handshake-vs-ahc hs.st-full.rate hs.ahc.rate
r urlsession-handshake-vs-libcurl hs.urlsession.rate hs.libcurl.rate
r ahc-handshake-vs-libcurl hs.ahc.rate hs.libcurl.rate
r system-bundle-full-handshake-vs-ahc sys.st-full.rate sys.ahc.rate
[ $quick = 0 ] && r system-bundle-libcurl-handshake-vs-ahc sys.libcurl.rate sys.ahc.rate
r keepalive-vs-libcurl ka.st.rate ka.libcurl.rate
r keepalive-task-executor-vs-libcurl ka.st-loop.rate ka.libcurl.rate
r keepalive-vs-urlsession ka.st.rate ka.urlsession.rate
r keepalive-vs-ahc ka.st.rate ka.ahc.rate
# The least any async Swift client over this libcurl reaches (async-floor), and ServerTrust beside it.
r keepalive-async-floor-vs-libcurl ka.floor.rate ka.libcurl.rate
r keepalive-task-executor-vs-async-floor ka.st-loop.rate ka.floor.rate
# The same floor from Swift's global executor, where every async client over a loop thread pays
# two cross-thread hand-offs per request, and ServerTrust from the global executor beside it.
r keepalive-async-floor-global-vs-libcurl ka.floor-global.rate ka.libcurl.rate
r keepalive-vs-async-floor-global ka.st.rate ka.floor-global.rate
r http1-64-in-flight-vs-libcurl-multi h1.st.rate h1.libcurl.rate
r http1-64-in-flight-task-executor-vs-libcurl-multi h1.st-loop.rate h1.libcurl.rate
r http1-64-in-flight-vs-urlsession h1.st.rate h1.urlsession.rate
r http1-64-in-flight-vs-ahc h1.st.rate h1.ahc.rate
r http2-64-in-flight-vs-libcurl-multi h2.st.rate h2.libcurl.rate
r http2-64-in-flight-task-executor-vs-libcurl-multi h2.st-loop.rate h2.libcurl.rate
r http2-64-in-flight-vs-urlsession h2.st.rate h2.urlsession.rate
r http2-64-in-flight-vs-ahc h2.st.rate h2.ahc.rate
# The 64-in-flight floors: the same async floor with 64 closed loops, from the loop thread and
# from the global executor, and ServerTrust beside each.
for proto in http1:h1 http2:h2; do
    name=${proto%%:*} key=${proto##*:}
    r "$name-64-in-flight-async-floor-vs-libcurl-multi" "$key.floor.rate" "$key.libcurl.rate"
    r "$name-64-in-flight-task-executor-vs-async-floor" "$key.st-loop.rate" "$key.floor.rate"
    r "$name-64-in-flight-async-floor-global-vs-libcurl-multi" "$key.floor-global.rate" "$key.libcurl.rate"
    r "$name-64-in-flight-vs-async-floor-global" "$key.st.rate" "$key.floor-global.rate"
done
# CPU time per request (all threads of the client process), client ÷ baseline: lower is better,
# and much less sensitive to machine load than throughput.
r cpu-per-request-default-handshake-vs-libcurl hs.st-default.cpu_us hs.libcurl.cpu_us
r cpu-per-request-full-handshake-vs-libcurl hs.st-full.cpu_us hs.libcurl.cpu_us
r cpu-per-request-full-handshake-vs-ahc hs.st-full.cpu_us hs.ahc.cpu_us
r cpu-per-request-keepalive-vs-libcurl ka.st.cpu_us ka.libcurl.cpu_us
r cpu-per-request-keepalive-task-executor-vs-libcurl ka.st-loop.cpu_us ka.libcurl.cpu_us
r cpu-per-request-keepalive-vs-ahc ka.st.cpu_us ka.ahc.cpu_us
r cpu-per-request-keepalive-async-floor-vs-libcurl ka.floor.cpu_us ka.libcurl.cpu_us
r cpu-per-request-keepalive-async-floor-global-vs-libcurl ka.floor-global.cpu_us ka.libcurl.cpu_us
r cpu-per-request-http1-64-in-flight-vs-libcurl-multi h1.st.cpu_us h1.libcurl.cpu_us
r cpu-per-request-http1-64-in-flight-task-executor-vs-libcurl-multi h1.st-loop.cpu_us h1.libcurl.cpu_us
r cpu-per-request-http2-64-in-flight-vs-libcurl-multi h2.st.cpu_us h2.libcurl.cpu_us
r cpu-per-request-http2-64-in-flight-task-executor-vs-libcurl-multi h2.st-loop.cpu_us h2.libcurl.cpu_us
r cpu-per-request-http1-64-in-flight-async-floor-vs-libcurl-multi h1.floor.cpu_us h1.libcurl.cpu_us
r cpu-per-request-http2-64-in-flight-async-floor-vs-libcurl-multi h2.floor.cpu_us h2.libcurl.cpu_us
r ocsp-warm-cache-handshake-vs-no-revocation ocsp.st-warm.rate ocsp.st-pins.rate
r ocsp-cold-cache-handshake-vs-no-revocation ocsp.st-cold.rate ocsp.st-pins.rate
for client in libcurl st ahc urlsession; do
    [ -n "$(values mem.$client.rss_kb_after_50000)" ] || continue
    r "memory-rss-50k-vs-10k-$client" mem.$client.rss_kb_after_50000 mem.$client.rss_kb_after_10000
done
r memory-peak-rss-10k-servertrust-vs-libcurl mem.st.peak_rss_kb_after_10000 mem.libcurl.peak_rss_kb_after_10000
for client in libcurl st; do
    [ -n "$(values memhs.$client.rss_kb_after_5000)" ] || continue
    r "memory-rss-5k-vs-1k-handshakes-$client" memhs.$client.rss_kb_after_5000 memhs.$client.rss_kb_after_1000
done
# CRL checking, time per check ÷ validation without CRLs (lower is better; 1.00 = free).
for size in $crl_sizes; do
    r "crl-trustanchors-$size-validation-vs-no-crl" crl.crl_validation_us_$size crl.validation_us_no_crl
    r "crl-evaluator-$size-evaluation-vs-no-crl" crl.crl_evaluator_us_$size crl.validation_us_no_crl
done
# Interleaved in one process (servertrust-bench lookup): per-lookup time with 10,000 patterns ÷ 10.
line manager-lookup-10000-vs-10-patterns-exact "$(med lookup.lookup_ratio_exact_10000_vs_10)"
line manager-lookup-10000-vs-10-patterns-deep-wildcard "$(med lookup.lookup_ratio_deep_10000_vs_10)"
echo "elapsed $(($(date +%s) - started))s" >&2
